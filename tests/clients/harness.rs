//! What the real-client tests share: the pinned client installed from its lock file on first
//! use, a scripted fake model on 127.0.0.1 that records every request, the scratch project the
//! script works in, and reading back what the model saw of each tool call.
#![allow(dead_code)]

use sqz::json::Value;
use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/clients/NAME/node_modules/.bin/PROGRAM`, installed with `npm ci` from the committed
/// lock file when it is missing, one install at a time (the tests of one client run in
/// parallel). A lock file that names only this machine's platform package of a client whose
/// binary comes in per-platform packages (OpenCode) fails `npm ci` on npm 11, which wants them
/// all; then `npm install --no-save` installs the same exact pins. No npm, or a failed install,
/// fails the test in one line.
pub fn client(name: &str, program: &str) -> PathBuf {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = repo().join("tests/clients").join(name);
    let path = dir.join("node_modules/.bin").join(program);
    let npm = |args: &[&str]| {
        Command::new("npm")
            .args(args)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .unwrap_or_else(|e| {
                panic!("npm not found ({e}): the {name} client test needs Node.js 20 and npm")
            })
    };
    if !path.exists() && !npm(&["ci"]).success() {
        eprintln!(
            "npm ci in tests/clients/{name} failed; installing the same pins with npm install"
        );
        assert!(
            npm(&["install", "--no-save"]).success(),
            "npm install in tests/clients/{name} failed"
        );
    }
    assert!(path.exists(), "{} missing after npm ci", path.display());
    path
}

/// The API the fake model speaks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Gemini `generateContent` / `streamGenerateContent?alt=sse`.
    Gemini,
    /// OpenAI chat completions, streamed.
    OpenAi,
}

/// One scripted tool call: the tool's name and its arguments as JSON text. `{EXPAND}` in the
/// arguments becomes the first `sqz expand HASH` hash the model has been shown, if any.
#[derive(Clone)]
pub struct Call {
    pub tool: String,
    pub args: String,
}

/// The fake model: answers each request that offers tools with the next call of the script
/// (then a closing text), anything else (titles, routing) with a short text, and records every
/// request body.
pub struct Model {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Model {
    pub fn start(wire: Wire, script: Vec<Call>) -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(Mutex::new(0usize));
        let (recorded, script) = (requests.clone(), Arc::new(script));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (recorded, state, script) = (recorded.clone(), state.clone(), script.clone());
                std::thread::spawn(move || serve(stream, wire, &script, &state, &recorded));
            }
        });
        Model { port, requests }
    }

    /// The last request that offered tools: it holds the whole conversation.
    pub fn last_turn(&self) -> Value {
        let requests = self.requests.lock().unwrap();
        requests
            .iter()
            .rev()
            .find(|(_, body)| offers_tools(body))
            .map(|(_, body)| body.clone())
            .expect("the client sent no request with tools")
    }
}

fn offers_tools(body: &Value) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
}

fn serve(
    stream: TcpStream,
    wire: Wire,
    script: &[Call],
    state: &Mutex<usize>,
    recorded: &Mutex<Vec<(String, Value)>>,
) {
    let mut writer = stream.try_clone().expect("clone stream");
    let mut reader = BufReader::new(stream);
    while let Ok(Some(request)) = sqz::http::read_request(&mut reader, 256 << 20) {
        let body = sqz::json::parse(&String::from_utf8_lossy(&request.body)).unwrap_or(Value::Null);
        recorded
            .lock()
            .unwrap()
            .push((request.path.clone(), body.clone()));
        let call = if offers_tools(&body) {
            let mut next = state.lock().unwrap();
            *next += 1;
            script.get(*next - 1).cloned().map(|c| Call {
                args: c
                    .args
                    .replace("{EXPAND}", &first_expand(&body.to_compact())),
                ..c
            })
        } else {
            None
        };
        let (kind, text) = match wire {
            Wire::Gemini => gemini_answer(&request.path, offers_tools(&body), call),
            Wire::OpenAi => openai_answer(&body, call),
        };
        if sqz::http::respond(&mut writer, 200, kind, text.as_bytes()).is_err() {
            return;
        }
    }
}

/// The hash in the first `sqz expand HASH` of `text`, or one that names nothing.
fn first_expand(text: &str) -> String {
    for (at, _) in text.match_indices("sqz expand ") {
        let hash: String = text[at + 11..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        if hash.len() >= 8 {
            return hash;
        }
    }
    "0000000000000000".into()
}

pub fn quote(text: &str) -> String {
    let mut out = String::new();
    sqz::json::write_string(&mut out, text);
    out
}

fn gemini_answer(path: &str, main: bool, call: Option<Call>) -> (&'static str, String) {
    if path.contains(":countTokens") {
        return ("application/json", r#"{"totalTokens":10}"#.into());
    }
    let part = match (main, call) {
        (true, Some(call)) => format!(
            r#"{{"functionCall":{{"name":{},"args":{}}}}}"#,
            quote(&call.tool),
            call.args
        ),
        (true, None) => r#"{"text":"done"}"#.into(),
        // Routing and other side requests ask for JSON: one object with what they look for.
        (false, _) => format!(
            r#"{{"text":{}}}"#,
            quote(
                r#"{"reasoning":"scripted","next_speaker":"user","model_choice":"flash","complexity_reasoning":"scripted","complexity_score":1}"#
            )
        ),
    };
    let chunk = format!(
        r#"{{"candidates":[{{"content":{{"role":"model","parts":[{part}]}},"finishReason":"STOP","index":0}}],"usageMetadata":{{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}},"modelVersion":"gemini-2.5-pro"}}"#
    );
    if path.contains("alt=sse") {
        ("text/event-stream", format!("data: {chunk}\r\n\r\n"))
    } else {
        ("application/json", chunk)
    }
}

fn openai_answer(body: &Value, call: Option<Call>) -> (&'static str, String) {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("m1");
    let (delta, finish) = match call {
        Some(call) if offers_tools(body) => (
            format!(
                r#"{{"role":"assistant","tool_calls":[{{"index":0,"id":"call_{}","type":"function","function":{{"name":{},"arguments":{}}}}}]}}"#,
                sqz::text::hash16(call.args.as_bytes()),
                quote(&call.tool),
                quote(&call.args)
            ),
            "tool_calls",
        ),
        _ if offers_tools(body) => (r#"{"role":"assistant","content":"done"}"#.into(), "stop"),
        _ => (
            r#"{"role":"assistant","content":"Scripted run"}"#.into(),
            "stop",
        ),
    };
    let head = format!(
        r#""id":"c1","object":"chat.completion.chunk","created":1,"model":{}"#,
        quote(model)
    );
    let text = format!(
        "data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n\
         data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{finish}\"}}],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}}}\n\n\
         data: [DONE]\n\n"
    );
    ("text/event-stream", text)
}

/// What the model was shown for one tool call.
#[derive(Debug, Clone)]
pub struct Shown {
    pub text: String,
    /// The client sent it as an error.
    pub error: bool,
}

/// Every tool result in a Gemini request, in order.
pub fn gemini_results(turn: &Value) -> Vec<Shown> {
    let mut out = Vec::new();
    for content in turn
        .get("contents")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        for part in content
            .get("parts")
            .and_then(Value::as_array)
            .unwrap_or(&[])
        {
            let Some(response) = part.get("functionResponse").and_then(|f| f.get("response"))
            else {
                continue;
            };
            let (text, error) = match (response.get("output"), response.get("error")) {
                (Some(output), _) => (output, false),
                (None, Some(error)) => (error, true),
                (None, None) => (response, false),
            };
            let text = text
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| text.to_compact());
            out.push(Shown { text, error });
        }
    }
    out
}

/// Every tool result in an OpenAI chat request, in order.
pub fn openai_results(turn: &Value) -> Vec<Shown> {
    let mut out = Vec::new();
    for message in turn
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&[])
    {
        if message.get("role").and_then(Value::as_str) != Some("tool") {
            continue;
        }
        let text = match message.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        };
        out.push(Shown { text, error: false });
    }
    out
}

/// The approximate tokens of `text`, as `sqz tokens` counts them.
pub fn tokens(text: &str) -> usize {
    let mut child = Command::new(bin())
        .arg("tokens")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sqz tokens");
    let mut stdin = child.stdin.take().unwrap();
    let data = text.as_bytes().to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("sqz tokens prints a number")
}

/// A scratch HOME, project and store for one run, with `sqz` on PATH; removed on drop.
pub struct Scratch {
    pub root: PathBuf,
}

/// A credential that must never reach the store.
pub const CANARY: &str = "ghp_Zq8rT2vX9kLm4Np7Qs1Wd6Yh3Jc5Fb0Ge2Ak";

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let root = std::env::temp_dir().join(format!(
            "sqz-client-{tag}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        for dir in ["home", "project", "bin", "store"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(bin(), root.join("bin/sqz")).unwrap();
        let scratch = Scratch { root };
        scratch.project_files();
        scratch
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    pub fn db(&self) -> PathBuf {
        self.root.join("store/sessions.db")
    }

    /// PATH with this run's `sqz` first.
    pub fn path_var(&self) -> String {
        format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            self.root.join("bin").display()
        )
    }

    /// A command with nothing of the caller's environment but PATH, HOME and the store.
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", self.path_var())
            .env("HOME", self.home())
            .env("SQZ_DB_PATH", self.db())
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .current_dir(self.project());
        cmd
    }

    /// `sqz init --only CLIENT` in the project, as a user would run it.
    pub fn init(&self, client: &str) {
        let out = self
            .command(bin())
            .args(["init", "--only", client])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sqz init: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A git project with a failing test suite, a change, an untracked file, a directory with
    /// thousands of entries and a `.env`.
    fn project_files(&self) {
        let p = self.project();
        let mut tests = String::from("import unittest\n\n\nclass Invoice(unittest.TestCase):\n");
        for n in 0..60 {
            tests.push_str(&format!(
                "    def test_line_{n:02}(self):\n        self.assertEqual(round({n} * 1.19, 2), {})\n\n",
                (n as f64 * 1.19 * 100.0).round() / 100.0
            ));
        }
        tests.push_str("    def test_rounding_half_up(self):\n        self.assertEqual(round(2.675, 2), 2.68)\n\n");
        tests.push_str("    def test_discount_caps(self):\n        self.assertEqual(max(0, 10 - 25), -15)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n");
        std::fs::write(p.join("test_invoice.py"), tests).unwrap();
        std::fs::write(
            p.join("README.md"),
            "# Invoices\n\nRounding rules for invoice lines.\n",
        )
        .unwrap();
        // What the clients and `sqz init` add to a project stays out of `git status`.
        std::fs::write(
            p.join(".gitignore"),
            ".env\n__pycache__/\n.opencode/\nopencode.json\n.github/\n",
        )
        .unwrap();
        let big = p.join("generated");
        std::fs::create_dir_all(&big).unwrap();
        for n in 0..4_000 {
            std::fs::write(
                big.join(format!("invoice-line-renderer-component-{n:05}.ts")),
                "",
            )
            .unwrap();
        }
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.name=Dev", "-c", "user.email=dev@example.com"])
                .args(args)
                .current_dir(&p)
                .output()
                .expect("git is needed for the client tests");
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "Invoices"]);
        std::fs::write(
            p.join("README.md"),
            "# Invoices\n\nRounding rules for invoice lines.\nHalf-up rounding applies to VAT.\n",
        )
        .unwrap();
        std::fs::write(p.join("notes.txt"), "todo: shipping\n").unwrap();
        std::fs::write(p.join(".env"), format!("GITHUB_TOKEN={CANARY}\nDEBUG=1\n")).unwrap();
    }

    /// Whether the canary is in any of the store's files.
    pub fn canary_stored(&self) -> bool {
        std::fs::read_dir(self.root.join("store"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                std::fs::read(e.path())
                    .is_ok_and(|b| b.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()))
            })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The shell commands of the script, the same for every client.
pub const COMMANDS: [&str; 10] = [
    "python3 -m unittest -v",
    "python3 -m unittest -v",
    "git status",
    "git diff",
    "ls -1 generated",
    "true",
    "cd generated && ls -1 | head -n 40",
    "git status --short",
    "cat .env",
    "sqz expand {EXPAND}",
];

/// Runs `cmd` to its end or `limit`, whichever comes first; stdout and stderr as text.
pub fn run(mut cmd: Command, limit: Duration) -> (String, String, Option<i32>) {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the client");
    let id = child.id();
    let started = Instant::now();
    let done = Arc::new(Mutex::new(false));
    let flag = done.clone();
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < limit {
            if *flag.lock().unwrap() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
    });
    let out = child.wait_with_output().unwrap();
    *done.lock().unwrap() = true;
    let _ = watchdog.join();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// One call of a paired run: what the model saw without sqz and with it.
pub struct Pair<'a> {
    pub command: &'a str,
    pub without: &'a Shown,
    pub with: &'a Shown,
}

/// The figures of one paired run, one line per call, and the per-call checks every client
/// shares: the same number of results, no call denied or turned into an error that was not
/// before, the same exit status (`exit` reads it from the text), and no call that costs more
/// tokens with sqz (numbers that differ between any two runs, such as process ids and
/// timings, are read as `0` first).
pub fn compare(
    client: &str,
    without: &[Shown],
    with: &[Shown],
    exit: impl Fn(&str) -> Option<String>,
    volatile: impl Fn(&str) -> String,
) -> (usize, usize) {
    assert_eq!(
        without.len(),
        with.len(),
        "{client}: the model saw {} results without sqz and {} with it",
        without.len(),
        with.len()
    );
    let (mut total_without, mut total_with) = (0, 0);
    let mut table = String::new();
    for (n, (w, s)) in without.iter().zip(with).enumerate() {
        let command = COMMANDS.get(n).copied().unwrap_or("?");
        assert!(
            !s.error || w.error,
            "{client} call {n} ({command}) is an error only with sqz: {}",
            s.text
        );
        assert!(
            !s.text.contains("modified by a hook") && !s.text.contains("hook_context"),
            "{client} call {n} ({command}) carries a client notice: {}",
            s.text
        );
        let (a, b) = (tokens(&volatile(&w.text)), tokens(&volatile(&s.text)));
        table.push_str(&format!("{client} {n:>2} {a:>6} -> {b:>6}  {command}\n"));
        if command.starts_with("sqz expand") {
            continue;
        }
        assert_eq!(
            exit(&w.text),
            exit(&s.text),
            "{client} call {n} ({command}): exit status differs"
        );
        assert!(
            b <= a,
            "{client} call {n} ({command}): {a} tokens without sqz, {b} with:\n{}\n---\n{}",
            w.text,
            s.text
        );
        total_without += a;
        total_with += b;
    }
    eprintln!("{table}{client} total {total_without} -> {total_with} tokens");
    (total_without, total_with)
}

/// `text` with the number after each of `prefixes` read as `0`: process ids, shell ids and
/// timings differ between any two runs, and so may their token counts.
pub fn zero_after(text: &str, prefixes: &[&str]) -> String {
    let mut out = text.to_string();
    for prefix in prefixes {
        let mut from = 0;
        while let Some(at) = out[from..].find(prefix) {
            let start = from + at + prefix.len();
            let len = out[start..]
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(out.len() - start);
            out.replace_range(start..start + len, "0");
            from = start + 1;
        }
    }
    out
}
