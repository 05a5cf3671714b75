//! The real Codex CLI (npm `@openai/codex`, pinned in `tests/clients/codex`) run headless
//! against a scripted Responses API on loopback (`tests/clients/codex/fake-responses.mjs`),
//! once as a user has it and once after `sqz init`, in Codex's default mode (`codex exec`:
//! read-only sandbox, approval `never`) and with `--dangerously-bypass-approvals-and-sandbox`.
//! What the model saw is compared call by call: the same verdict and exit status, no more
//! tokens, no hook failure, no credential in the store. The first run installs the client
//! with `npm ci`; node, npm, git and python3 must be there.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sqz::json::{self, Value};

fn bin() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_sqz")).expect("the sqz binary")
}

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/codex")
}

/// Fails the test with one line when a program the suite needs is missing.
fn need(program: &str) {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found,
        "{program} is needed for the Codex client tests and is not on PATH"
    );
}

/// The native Codex binary, installed from the committed lock file on first use.
fn codex() -> &'static Path {
    static CODEX: OnceLock<PathBuf> = OnceLock::new();
    CODEX.get_or_init(|| {
        for program in ["node", "npm", "git", "python3"] {
            need(program);
        }
        let modules = suite().join("node_modules/@openai");
        if find_codex(&modules).is_none() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(suite())
                .status()
                .expect("npm runs");
            assert!(status.success(), "npm ci in tests/clients/codex failed");
        }
        find_codex(&modules).expect("npm ci installed no native codex binary for this platform")
    })
}

/// `@openai/codex-PLATFORM/vendor/TRIPLE/bin/codex`.
fn find_codex(modules: &Path) -> Option<PathBuf> {
    for package in std::fs::read_dir(modules).ok()?.flatten() {
        let vendor = package.path().join("vendor");
        for triple in std::fs::read_dir(vendor).into_iter().flatten().flatten() {
            let binary = triple.path().join("bin/codex");
            if binary.is_file() {
                return Some(binary);
            }
        }
    }
    None
}

/// A scratch HOME, CODEX_HOME, TMPDIR and project, removed on drop.
struct World {
    root: PathBuf,
}

const CANARY: &str = "sk_live_CANARY9f3c1d7e5b2a4c6e8d0f";

impl World {
    fn new(tag: &str) -> World {
        let root = std::env::temp_dir().join(format!("sqz-codex-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let world = World { root };
        for dir in ["home/.codex/rules", "project/logs", "project/src", "tmp"] {
            std::fs::create_dir_all(world.root.join(dir)).unwrap();
        }
        // A login shell (Codex runs `bash -lc`) finds sqz where an installer would put it.
        world.write(
            "home/.profile",
            &format!("PATH=\"{}:$PATH\"\n", bin().parent().unwrap().display()),
        );
        // The user's own command rules: Codex must apply them to a rewritten command too.
        world.write(
            "home/.codex/rules/user.rules",
            "prefix_rule(pattern = [\"git\", \"push\"], decision = \"forbidden\", justification = \"no pushing from here\")\n\
             prefix_rule(pattern = [\"git\", \"stash\"], decision = \"prompt\")\n\
             prefix_rule(pattern = [\"touch\"], decision = \"allow\")\n",
        );
        world.project_files();
        world
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn project(&self) -> PathBuf {
        self.path("project")
    }

    /// A small Python project with a failing test, uncommitted edits, a big log and a `.env`.
    fn project_files(&self) {
        let mut tests = String::from("import sys\n\ndef add(a, b):\n    return a + b\n\n");
        tests.push_str("results = []\nfor n in range(60):\n    ok = add(n, 1) == n + 1\n");
        tests.push_str("    print(f\"test_add_{n} ... {'ok' if ok else 'FAIL'}\")\n");
        tests.push_str("print('test_add_negative ... FAIL')\n");
        tests.push_str("print('AssertionError: add(-1, -1) == -3: expected -3, got -2')\n");
        tests.push_str("print('  File \"run_tests.py\", line 12, in test_add_negative')\n");
        tests.push_str("print('Ran 61 tests: 60 passed, 1 failed')\nsys.exit(1)\n");
        self.write("project/run_tests.py", &tests);
        let mut source = String::new();
        for n in 0..40 {
            source.push_str(&format!("def step_{n}(x):\n    return x * {n} + 1\n\n"));
        }
        self.write("project/src/steps.py", &source);
        self.write(
            "project/.env",
            &format!("DATABASE_URL=postgres://app@localhost/app\nSTRIPE_SECRET_KEY={CANARY}\n"),
        );
        self.write("project/.gitignore", ".env\n");
        let mut log = String::new();
        let mut n = 0u64;
        while log.len() < 150_000 {
            log.push_str(&format!(
                "2026-03-01T12:{:02}:{:02}Z INFO worker-{} processed batch {} in {}ms\n",
                n / 60 % 60,
                n % 60,
                n % 4,
                1000 + n,
                10 + n * 7 % 90
            ));
            n += 1;
        }
        self.write("project/logs/big.log", &log);
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(self.project())
                .env("HOME", self.path("home"))
                // The same commit hash in every world, so outputs compare.
                .env("GIT_AUTHOR_DATE", "2026-03-01T12:00:00Z")
                .env("GIT_COMMITTER_DATE", "2026-03-01T12:00:00Z")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        git(&[
            "-c",
            "user.email=dev@example.com",
            "-c",
            "user.name=Dev",
            "add",
            ".",
        ]);
        git(&[
            "-c",
            "user.email=dev@example.com",
            "-c",
            "user.name=Dev",
            "commit",
            "-qm",
            "start",
        ]);
        // Uncommitted edits for `git status` and `git diff`.
        self.write(
            "project/src/steps.py",
            &source
                .replace("x * 7 + 1", "x * 7 + 2")
                .replace("x * 31 + 1", "(x * 31) + 1"),
        );
        self.write("project/NOTES.md", "todo: fix add\n");
    }

    /// The environment every process of this world gets.
    fn env(&self, cmd: &mut Command) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin().parent().unwrap().to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("HOME", self.path("home"))
            .env("CODEX_HOME", self.path("home/.codex"))
            .env("TMPDIR", self.path("tmp"))
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("FAKE_API_KEY", "test-key")
            .env_remove("SQZ_DB_PATH")
            .env_remove("SQZ_QUIET")
            .env_remove("SQZ_NO_DEDUP")
            .env_remove("SQZ_REF_TTL_SECS")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
    }

    fn sqz_init(&self) {
        let mut cmd = Command::new(bin());
        self.env(&mut cmd);
        let out = cmd
            .args(["init", "--global", "--only", "codex"])
            .current_dir(self.project())
            .output()
            .unwrap();
        assert!(out.status.success(), "sqz init: {out:?}");
    }

    /// Codex's provider settings, pointing at the fake server, ahead of what init wrote.
    fn point_at(&self, port: u16) {
        let config = self.path("home/.codex/config.toml");
        let old = std::fs::read_to_string(&config).unwrap_or_default();
        let kept = match old.find("# provider end\n") {
            Some(at) => old[at + "# provider end\n".len()..].to_string(),
            None => old,
        };
        let provider = format!(
            "model = \"fake-model\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_API_KEY\"\n# provider end\n"
        );
        std::fs::write(config, provider + &kept).unwrap();
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The fake Responses API, killed on drop.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn start(world: &World, steps: &str) -> Server {
        let script = world.path("steps.json");
        let log = world.path("requests.jsonl");
        std::fs::write(&script, steps).unwrap();
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new("node")
            .arg(suite().join("fake-responses.mjs"))
            .args([
                "--script".as_ref(),
                script.as_os_str(),
                "--log".as_ref(),
                log.as_os_str(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("listening ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("fake server said {line:?}"));
        Server { child, port, log }
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| json::parse(l).unwrap())
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One shell call as the model saw it.
#[derive(Debug)]
struct Call {
    command: String,
    output: String,
}

/// What one `codex exec` run left: the calls, and Codex's own stderr.
struct Session {
    calls: Vec<Call>,
    stderr: String,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Default,
    Bypass,
}

fn run_codex(world: &World, steps: &str, mode: Mode) -> Session {
    let server = Server::start(world, steps);
    world.point_at(server.port);
    let mut cmd = Command::new(codex());
    world.env(&mut cmd);
    cmd.arg("exec");
    if mode == Mode::Bypass {
        cmd.arg("--dangerously-bypass-approvals-and-sandbox");
    }
    let mut child = cmd
        .arg("run the script")
        .current_dir(world.project())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("codex runs");
    let mut stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + Duration::from_secs(240);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("codex exec did not finish in 240 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let stderr = reader.join().unwrap();
    assert!(
        status.success(),
        "codex exec failed ({status}):\n{stdout}\n{stderr}"
    );
    let requests = server.requests();
    let last = requests.last().expect("codex sent no request");
    let input = last
        .get("body")
        .and_then(|b| b.get("input"))
        .and_then(Value::as_array)
        .expect("a request with input");
    let mut calls = Vec::new();
    for item in input {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let args =
                    json::parse(item.get("arguments").and_then(Value::as_str).unwrap()).unwrap();
                calls.push(Call {
                    command: args
                        .get("cmd")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    output: String::new(),
                });
            }
            Some("function_call_output") => {
                let output = item.get("output").unwrap();
                let text = output
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| output.to_compact());
                calls.last_mut().expect("an output after its call").output = text;
            }
            _ => {}
        }
    }
    Session { calls, stderr }
}

/// The steps the model takes: a failing test and its re-run, git, a big output, empty output,
/// `cd dir && cmd` and a later call, a pipeline, a secret, commands the user's rules refuse or
/// allow, one the sandbox refuses, and expanding what was served.
fn script() -> String {
    let commands = [
        "python3 run_tests.py",
        "python3 run_tests.py",
        "git status",
        "git diff",
        "cat logs/big.log",
        "true",
        "cd logs && wc -l big.log",
        "ls",
        "ls -a",
        "git log --oneline | head -3",
        "cat .env",
        "git push origin main",
        "git stash list",
        "touch allowed.flag",
        "mkdir blocked",
        "sqz expand {hash}",
    ];
    let mut steps: Vec<Value> = commands
        .iter()
        .map(|c| {
            let mut args = Value::object();
            args.set("cmd", Value::str(c));
            if *c == "ls -a" {
                // The model's other arguments survive the rewrite.
                args.set("workdir", Value::str("logs"));
            }
            let mut step = Value::object();
            step.set("tool", Value::str("exec_command"));
            step.set("arguments", args);
            step
        })
        .collect();
    let mut done = Value::object();
    done.set("text", Value::str("done"));
    steps.push(done);
    Value::Array(steps).to_compact()
}

/// How a call ended, as the model was told: `exit N`, or Codex's refusal.
fn verdict(output: &str) -> String {
    if let Some(at) = output.find("Process exited with code ") {
        let code: String = output[at + 25..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        return format!("exit {code}");
    }
    if output.contains("approval required by policy") {
        return "needs approval".into();
    }
    if let Some(at) = output.find("` rejected: ") {
        let reason: String = output[at + 12..]
            .chars()
            .take_while(|c| *c != '\\' && *c != '"')
            .collect();
        return format!("rejected: {reason}");
    }
    format!("other: {output}")
}

/// What the model saw of a call, less the two lines that vary from run to run.
fn seen(output: &str) -> String {
    output
        .lines()
        .filter(|l| !l.starts_with("Chunk ID: ") && !l.starts_with("Wall time: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn tokens(text: &str) -> usize {
    let run = common::sqz(
        &bin(),
        Path::new("/nonexistent/tokens.db"),
        &["tokens"],
        text.as_bytes(),
        &[],
    );
    run.stdout_text().trim().parse().unwrap()
}

/// Every file under `dir`, as bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

/// The PreToolUse runs Codex reported on stderr: (started, completed, other endings).
fn hook_runs(stderr: &str) -> (usize, usize, Vec<String>) {
    let mut started = 0;
    let mut completed = 0;
    let mut other = Vec::new();
    for line in stderr.lines().map(str::trim) {
        match line.strip_prefix("hook: PreToolUse") {
            Some("") => started += 1,
            Some(" Completed") => completed += 1,
            Some(rest) => other.push(rest.trim().to_string()),
            None => {}
        }
    }
    (started, completed, other)
}

/// The same script without sqz and after `sqz init`, in one mode; returns the tokens the
/// model saw over the script (without, with).
fn compare(mode: Mode) -> (usize, usize) {
    let tag = format!("{mode:?}").to_lowercase();
    let plain = World::new(&format!("{tag}-plain"));
    let without = run_codex(&plain, &script(), mode);
    let routed = World::new(&format!("{tag}-sqz"));
    routed.sqz_init();
    let with = run_codex(&routed, &script(), mode);

    assert_eq!(without.calls.len(), 16, "{:#?}", without.calls);
    assert_eq!(with.calls.len(), 16, "{:#?}", with.calls);
    assert_eq!(hook_runs(&without.stderr).0, 0, "no hooks without sqz");
    let (started, completed, other) = hook_runs(&with.stderr);
    assert_eq!(
        started, 16,
        "Codex ran the trusted hook for every call:\n{}",
        with.stderr
    );
    assert_eq!(
        completed, 16,
        "every hook run completed: {other:?}\n{}",
        with.stderr
    );
    // Codex ran the rewritten commands (it prints each command it runs); the pipeline and
    // `sqz expand` run as written.
    for command in [
        "python3 run_tests.py",
        "git status",
        "git diff",
        "cat logs/big.log",
        "cat .env",
        "touch allowed.flag",
    ] {
        let routed = format!(
            "-lc \"set -o pipefail; {command} | {} compress --cmd '{command}'\"",
            bin().display()
        );
        assert!(
            with.stderr.contains(&routed),
            "{routed} not run:\n{}",
            with.stderr
        );
    }
    assert!(
        with.stderr.contains("-lc 'git log --oneline | head -3'"),
        "{}",
        with.stderr
    );

    let (mut total_without, mut total_with) = (0, 0);
    let mut report = String::new();
    for (a, b) in without.calls.iter().zip(&with.calls) {
        let (va, vb) = (verdict(&a.output), verdict(&b.output));
        let (ta, tb) = (tokens(&seen(&a.output)), tokens(&seen(&b.output)));
        report.push_str(&format!("{:<28} {vb:<32} {ta:>6} -> {tb:>6}\n", b.command));
        if a.command.starts_with("sqz expand") {
            continue;
        }
        assert_eq!(a.command, b.command);
        assert!(
            !b.output.contains("sqz:") && !b.output.contains("cannot open store"),
            "an sqz error reached the model for {}:\n{}",
            b.command,
            b.output
        );
        assert_eq!(
            va, vb,
            "{}: without sqz\n{}\nwith sqz\n{}",
            a.command, a.output, b.output
        );
        if va.starts_with("rejected") || va == "needs approval" {
            // Codex quotes the command it refused, and that is the rewritten one.
            continue;
        }
        assert!(
            tb <= ta,
            "{}: {ta} tokens without sqz, {tb} with:\n{}\n---\n{}",
            a.command,
            a.output,
            b.output
        );
        total_without += ta;
        total_with += tb;
    }
    eprintln!("codex {mode:?} mode, tokens per call (without -> with sqz):\n{report}total {total_without} -> {total_with}");

    // What the user's rules and the sandbox decided, the same both ways.
    let by =
        |s: &Session, c: &str| verdict(&s.calls.iter().find(|x| x.command == c).unwrap().output);
    let listing = |s: &Session| {
        s.calls
            .iter()
            .find(|x| x.command == "ls -a")
            .unwrap()
            .output
            .clone()
    };
    assert!(
        listing(&with).contains("big.log"),
        "ran in logs/: {}",
        listing(&with)
    );
    assert_eq!(seen(&listing(&with)), seen(&listing(&without)));
    assert_eq!(
        by(&with, "git push origin main"),
        "rejected: no pushing from here"
    );
    assert_eq!(by(&with, "git stash list"), "needs approval");
    assert_eq!(by(&with, "touch allowed.flag"), "exit 0");
    assert!(routed.project().join("allowed.flag").exists());
    let sandboxed = mode == Mode::Default;
    assert_eq!(
        by(&with, "mkdir blocked"),
        if sandboxed { "exit 1" } else { "exit 0" }
    );

    // `sqz expand` brings back what a marker left out, when anything was left out; with no
    // store (the default read-only sandbox) nothing is, and there is nothing to expand.
    let expand = with.calls.last().unwrap();
    let served_marker = with.calls.iter().any(|c| c.output.contains("sqz expand "));
    if served_marker {
        assert!(!expand.command.ends_with("none"), "{expand:?}");
        assert_eq!(verdict(&expand.output), "exit 0", "{expand:?}");
    } else {
        assert_eq!(
            verdict(&expand.output),
            verdict(&without.calls.last().unwrap().output)
        );
    }
    assert_eq!(
        served_marker,
        mode == Mode::Bypass,
        "markers only where a store is writable"
    );

    // The secret went to the model as it would have, and never into a store.
    let env_call = with.calls.iter().find(|c| c.command == "cat .env").unwrap();
    assert!(env_call.output.contains(CANARY));
    for dir in ["home/.sqz", "tmp"] {
        for (path, bytes) in files_under(&routed.path(dir)) {
            assert!(
                !bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()),
                "the canary is in {}",
                path.display()
            );
        }
    }
    (total_without, total_with)
}

#[test]
fn codex_default_mode_with_sqz_changes_no_verdict_and_shows_no_more() {
    let (without, with) = compare(Mode::Default);
    assert!(with < without, "{without} -> {with}");
}

#[test]
fn codex_bypass_mode_with_sqz_changes_no_verdict_and_shows_no_more() {
    let (without, with) = compare(Mode::Bypass);
    assert!(with < without, "{without} -> {with}");
}

/// One `git status` call with the hooks a world has.
fn one_call(world: &World, command: &str) -> Session {
    let mut args = Value::object();
    args.set("cmd", Value::str(command));
    let mut step = Value::object();
    step.set("tool", Value::str("exec_command"));
    step.set("arguments", args);
    let session = run_codex(
        world,
        &Value::Array(vec![step, json::parse(r#"{"text":"done"}"#).unwrap()]).to_compact(),
        Mode::Default,
    );
    assert_eq!(session.calls.len(), 1, "{:?}", session.calls);
    session
}

#[test]
fn codex_skips_the_hook_silently_when_its_trust_entry_is_wrong_and_doctor_says_so() {
    let world = World::new("stale-hash");
    world.sqz_init();
    let config = world.path("home/.codex/config.toml");
    let trusted = std::fs::read_to_string(&config).unwrap();
    let at = trusted
        .find("trusted_hash = \"sha256:")
        .expect("a trust entry")
        + 23;
    let wrong = format!(
        "{}{}{}",
        &trusted[..at],
        "0".repeat(64),
        &trusted[at + 64..]
    );
    std::fs::write(&config, &wrong).unwrap();

    let session = one_call(&world, "git status");
    assert_eq!(
        hook_runs(&session.stderr),
        (0, 0, vec![]),
        "{}",
        session.stderr
    );
    assert!(
        !session.stderr.contains("compress --cmd"),
        "{}",
        session.stderr
    );
    let said: Vec<&str> = session
        .stderr
        .lines()
        .filter(|l| l.to_lowercase().contains("hook"))
        .collect();
    assert!(said.is_empty(), "Codex says nothing of the hook: {said:?}");

    let mut cmd = Command::new(bin());
    world.env(&mut cmd);
    let doctor = cmd
        .args(["doctor", "--global"])
        .current_dir(world.project())
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        doctor.contains("is for another entry, so Codex skips it silently"),
        "{doctor}"
    );

    // With the entry init writes, the same call goes through sqz.
    std::fs::write(&config, &trusted).unwrap();
    let session = one_call(&world, "git status");
    assert_eq!(hook_runs(&session.stderr).1, 1, "{}", session.stderr);
    assert!(
        session.stderr.contains("compress --cmd 'git status'"),
        "{}",
        session.stderr
    );
}

/// A hook of the test's own that answers `answer` to every PreToolUse, trusted the way init
/// trusts sqz's.
fn probe_hook(world: &World, answer: &str) {
    world.write("probe.json", answer);
    let hooks_json = std::fs::canonicalize(world.path("home/.codex"))
        .unwrap()
        .join("hooks.json");
    let command = format!("cat {}", world.path("probe.json").display());
    let mut doc = json::parse(&format!(
        r#"{{"hooks":{{"PreToolUse":[{{"matcher":"Bash","hooks":[{{"type":"command","command":{},"timeout":30}}]}}]}}}}"#,
        Value::str(&command).to_compact()
    ))
    .unwrap();
    std::fs::write(&hooks_json, doc.to_pretty()).unwrap();
    // The same hash init computes, for this handler.
    let groups = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("PreToolUse"))
        .unwrap();
    let key = format!("{}:pre_tool_use:0:0", hooks_json.display());
    let hash = sqz::setup::codex::handler_hash(
        Some("Bash"),
        &groups.as_array().unwrap()[0]
            .get("hooks")
            .unwrap()
            .as_array()
            .unwrap()[0],
    );
    world.write(
        "home/.codex/config.toml",
        &sqz::setup::codex::trust_table(&key, &hash),
    );
}

#[test]
fn codex_takes_a_hooks_new_command_only_with_allow_and_still_applies_its_rules() {
    let world = World::new("allow");
    let rewrite = |allow: bool, command: &str| {
        let decision = if allow {
            r#""permissionDecision":"allow","#
        } else {
            ""
        };
        format!(
            r#"{{"hookSpecificOutput":{{"hookEventName":"PreToolUse",{decision}"updatedInput":{{"command":{}}}}}}}"#,
            Value::str(command).to_compact()
        )
    };
    // Without allow, Codex reports the hook failed and runs the command as the model wrote it.
    probe_hook(&world, &rewrite(false, "echo REWRITTEN"));
    let session = one_call(&world, "echo original");
    assert_eq!(
        hook_runs(&session.stderr).2,
        vec!["Failed".to_string()],
        "{}",
        session.stderr
    );
    assert!(
        session.calls[0].output.contains("original"),
        "{:?}",
        session.calls
    );
    // With allow, it runs the new command...
    probe_hook(&world, &rewrite(true, "echo REWRITTEN"));
    let session = one_call(&world, "echo original");
    assert!(
        session.calls[0].output.contains("REWRITTEN"),
        "{:?}",
        session.calls
    );
    // ...and still judges it by the user's rules and runs it in its sandbox: allow approves
    // nothing.
    probe_hook(&world, &rewrite(true, "git push origin main"));
    let session = one_call(&world, "echo original");
    assert_eq!(
        verdict(&session.calls[0].output),
        "rejected: no pushing from here"
    );
    probe_hook(&world, &rewrite(true, "mkdir made-by-hook"));
    let session = one_call(&world, "echo original");
    assert_eq!(
        verdict(&session.calls[0].output),
        "exit 1",
        "{:?}",
        session.calls
    );
    assert!(!world.project().join("made-by-hook").exists());
}

#[test]
fn compress_in_codexs_sandbox_says_nothing_and_keeps_the_exit_status() {
    let world = World::new("sandbox");
    let big: String = (0..400)
        .map(|n| format!("INFO worker-{} processed batch {n} in 12ms\n", n % 4))
        .collect();
    world.write("project/out.txt", &big);
    let run = |mode: &str, with_store: bool| {
        let store = world.path("home/.sqz");
        let _ = std::fs::remove_dir_all(&store);
        let _ = std::fs::remove_dir_all(world.path("tmp"));
        std::fs::create_dir_all(world.path("tmp")).unwrap();
        if with_store {
            // A store made outside the sandbox earlier, which the sandbox mounts read-only.
            let mut cmd = Command::new(bin());
            world.env(&mut cmd);
            let out = cmd
                .args(["compress", "--cmd", "warm"])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success());
            assert!(store.join("sessions.db").exists());
        }
        let mut cmd = Command::new(codex());
        world.env(&mut cmd);
        let script = format!(
            "set -o pipefail; (cat out.txt; exit 3) | {0} compress --cmd 'cat out.txt'; echo \"status $?\"; printf 'short\\n' | {0} compress --cmd x",
            bin().display()
        );
        let out = cmd
            .args([
                "sandbox",
                "-c",
                &format!("sandbox_mode=\"{mode}\""),
                "--",
                "bash",
                "-c",
                &script,
            ])
            .current_dir(world.project())
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for with_store in [false, true] {
        // Read-only: no store anywhere, so the long output goes out as it came, and nothing is said.
        let (stdout, stderr) = run("read-only", with_store);
        assert_eq!(
            stdout,
            format!("{big}status 3\nshort\n"),
            "store existed: {with_store}"
        );
        let said: Vec<&str> = stderr.lines().filter(|l| l.contains("sqz")).collect();
        assert!(said.is_empty(), "{said:?}");
        // Workspace-write: the temp directory is writable, so sqz keeps its store there.
        let (stdout, stderr) = run("workspace-write", with_store);
        assert!(stdout.ends_with("status 3\nshort\n"), "{stdout}");
        assert!(
            stdout.len() < big.len() / 4,
            "compressed with a store: {stdout}"
        );
        assert!(stderr.contains("sqz expand "), "{stderr}");
        assert!(
            !stderr.contains("cannot open") && !stderr.contains("read-only"),
            "{stderr}"
        );
        assert!(world.path("tmp").read_dir().unwrap().next().is_some());
    }
}

/// The rewrite behaves as the command does in bash: the same exit status, stdout, stderr and
/// files (outputs here are short, so sqz passes them through).
#[test]
fn the_codex_rewrite_keeps_status_output_and_effects_in_bash() {
    let world = World::new("shapes");
    let sqz = bin().display().to_string();
    let cases = [
        "true",
        "false",
        "ls missing-file",
        "echo a && false || echo b",
        "false; echo after",
        "false && echo never",
        "cd src && ls && cd .. && ls -d src",
        "set -e\nfalse\necho unreached",
        "grep -c a 'src/a.txt' src/missing",
        "bash -c 'echo out; echo err >&2; exit 7'",
        "mkdir made && touch made/file; ls made",
        "echo \"a b\"c d",
        "python3 -c 'import sys; sys.exit(4)'",
    ];
    for (i, command) in cases.iter().enumerate() {
        let rewritten = match sqz::hook::codex::decide(command, &sqz) {
            sqz::hook::rewrite::Decision::Rewrite(new) => new,
            other => panic!("{command:?} was not rewritten: {other:?}"),
        };
        let run = |script: &str, dir: &str| {
            let dir = world.path(dir);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("src")).unwrap();
            std::fs::write(dir.join("src/a.txt"), "a\n").unwrap();
            let mut cmd = Command::new("bash");
            world.env(&mut cmd);
            let out = cmd.args(["-c", script]).current_dir(&dir).output().unwrap();
            let mut files: Vec<String> = files_under(&dir)
                .into_iter()
                .map(|(p, _)| p.strip_prefix(&dir).unwrap().display().to_string())
                .collect();
            files.sort();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
                files,
            )
        };
        let plain = run(command, &format!("plain{i}"));
        let routed = run(&rewritten, &format!("routed{i}"));
        assert_eq!(plain, routed, "{command:?} as {rewritten:?}");
    }
}
