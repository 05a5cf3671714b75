//! `sqz mcp` and `sqz mcp proxy` as clients reach them: the official MCP SDK client (npm
//! `@modelcontextprotocol/sdk`) drives the scenarios in `tests/mcp/*.mjs` against the real
//! binary and real upstream servers from npm; raw stdio covers what no SDK would send.

mod common;

use common::Scratch;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/mcp/node_modules`, installed from the committed lock file on first use.
fn node_modules() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let dir = repo().join("tests/mcp");
            let installed = ["sdk", "client", "server-everything", "server-filesystem"]
                .iter()
                .all(|p| {
                    dir.join("node_modules/@modelcontextprotocol")
                        .join(p)
                        .join("package.json")
                        .exists()
                });
            if !installed {
                let status = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .status()
                    .expect("npm is needed for the MCP tests (install Node.js 20 and npm)");
                assert!(status.success(), "npm ci in tests/mcp failed");
            }
            dir.join("node_modules")
        })
        .clone()
}

fn upstream(package: &str) -> String {
    node_modules()
        .join("@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .to_string_lossy()
        .into_owned()
}

/// Runs one scenario script under node with `env`, failing the test with its output.
fn scenario(script: &str, env: &[(&str, &Path)], db: &Path) {
    node_modules();
    let mut cmd = Command::new("node");
    cmd.arg(repo().join("tests/mcp").join(script))
        .env("SQZ_BIN", bin())
        .env("SQZ_DB_PATH", db)
        // Nothing a scenario starts may fall back to the user's own store or config.
        .env("HOME", db.parent().unwrap_or(db))
        .env_remove("SQZ_NO_DEDUP")
        .env_remove("SQZ_REF_TTL_SECS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(": ok"),
        "{script} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

#[test]
fn sdk_client_drives_the_server_tools() {
    let s = Scratch::new("mcp-server");
    let work = s.dir.join("work");
    let elsewhere = s.dir.join("elsewhere");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let source = repo().join("fixtures/cat-rust-source/input.txt");
    std::fs::copy(&source, work.join("lib.rs")).unwrap();
    let outside = elsewhere.join("notes.txt");
    std::fs::write(&outside, "not for the agent\n").unwrap();
    std::os::unix::fs::symlink(&outside, work.join("escape-link")).unwrap();
    std::fs::write(work.join("colour.log"), coloured_grep(&source)).unwrap();
    let fixture = repo().join("fixtures/cargo-test-failing/input.txt");
    let project = repo();
    let env: [(&str, &Path); 6] = [
        ("SCRATCH", &work),
        ("PROJECT", &project),
        ("OUTSIDE", &outside),
        ("FIXTURE", &fixture),
        ("FIXTURE_CMD", Path::new("cargo test")),
        ("HOME", &s.dir),
    ];
    scenario("server.mjs", &env, &s.db());
}

/// Real coloured output: `grep --color=always` over a source file.
fn coloured_grep(file: &Path) -> Vec<u8> {
    let out = Command::new("grep")
        .args(["--color=always", "-n", "fn "])
        .arg(file)
        .output()
        .expect("run grep");
    assert!(out.stdout.contains(&0x1b), "grep printed colour codes");
    out.stdout
}

#[test]
fn without_a_store_a_read_is_byte_for_byte() {
    let s = Scratch::new("mcp-nostore");
    let work = s.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let coloured = coloured_grep(&repo().join("fixtures/cat-rust-source/input.txt"));
    std::fs::write(work.join("colour.log"), &coloured).unwrap();
    let mut child = Command::new(bin())
        .arg("mcp")
        .current_dir(&work)
        .env("SQZ_DB_PATH", "/dev/null/no/store.db")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sqz_read_file\",\"arguments\":{\"path\":\"colour.log\"}}}\n";
    child.stdin.take().unwrap().write_all(request).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("sqz: cannot open"), "{stderr}");
    let answer = parse(String::from_utf8_lossy(&out.stdout).trim());
    let text = tool_text(&answer);
    let body = text.split_once('\n').unwrap().1;
    assert_eq!(
        body.as_bytes(),
        &coloured[..],
        "colour codes kept when nothing is stored"
    );
}

#[test]
fn sdk_2_client_speaks_the_stateless_revision() {
    let s = Scratch::new("mcp-modern");
    let work = s.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::copy(
        repo().join("fixtures/cat-rust-source/input.txt"),
        work.join("lib.rs"),
    )
    .unwrap();
    let fs_server = PathBuf::from(upstream("server-filesystem"));
    scenario(
        "modern.mjs",
        &[("SCRATCH", &work), ("FS_SERVER", &fs_server)],
        &s.db(),
    );
}

#[test]
fn stateless_requests_get_the_revision_s_result_shape() {
    let s = Scratch::new("mcp-modern-raw");
    let mut session = Session::start(&["mcp"], &s.db(), &[]);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    session.send(format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{{{meta}}}}}\n").as_bytes());
    let v = parse(&session.next());
    let r = v.get("result").unwrap();
    assert_eq!(
        r.get("supportedVersions").unwrap().to_compact(),
        r#"["2026-07-28"]"#
    );
    assert_eq!(
        r.get("resultType").and_then(|t| t.as_str()),
        Some("complete")
    );
    assert!(r.get("ttlMs").and_then(|t| t.as_i64()).is_some());
    session.send(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{{{meta}}}}}\n"
        )
        .as_bytes(),
    );
    let v = parse(&session.next());
    let r = v.get("result").unwrap();
    assert_eq!(r.get("cacheScope").and_then(|t| t.as_str()), Some("public"));
    assert!(r
        .get("_meta")
        .unwrap()
        .get("io.modelcontextprotocol/serverInfo")
        .is_some());
    // A version this server does not speak: -32022 naming the supported ones.
    session.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}
"#);
    let v = parse(&session.next());
    assert_eq!(error_code(&v), Some(-32022));
    let data = v.get("error").unwrap().get("data").unwrap();
    assert_eq!(
        data.get("requested").and_then(|r| r.as_str()),
        Some("2099-01-01")
    );
    // Legacy requests never carry the new members, which strict 2025 clients reject.
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}\n");
    let v = parse(&session.next());
    let r = v.get("result").unwrap();
    assert!(r.get("ttlMs").is_none() && r.get("resultType").is_none() && r.get("_meta").is_none());
    let (_, code) = session.finish();
    assert_eq!(code, 0);
}

#[test]
fn sdk_client_drives_the_proxy_in_front_of_real_servers() {
    let s = Scratch::new("mcp-proxy");
    let work = s.dir.join("files");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::copy(
        repo().join("fixtures/docker-logs/input.txt"),
        work.join("access.log"),
    )
    .unwrap();
    std::fs::copy(
        repo().join("fixtures/cat-env/input.txt"),
        work.join("settings.env"),
    )
    .unwrap();
    let fs_server = PathBuf::from(upstream("server-filesystem"));
    let everything = PathBuf::from(upstream("server-everything"));
    let env: [(&str, &Path); 3] = [
        ("SCRATCH", &work),
        ("FS_SERVER", &fs_server),
        ("EVERYTHING_SERVER", &everything),
    ];
    scenario("proxy.mjs", &env, &s.db());
}

/// A running `sqz` child with line access to its stdout.
struct Session {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Session {
    fn start(args: &[&str], db: &Path, env: &[(&str, &str)]) -> Session {
        let mut cmd = Command::new(bin());
        cmd.args(args)
            .env("SQZ_DB_PATH", db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn sqz");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session { child, lines }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("an answer within 20 s")
    }

    /// Closes stdin, then collects every remaining line and the exit status.
    fn finish(mut self) -> (Vec<String>, i32) {
        drop(self.child.stdin.take());
        let rest: Vec<String> = self.lines.iter().collect();
        let status = self.child.wait().unwrap();
        (rest, status.code().unwrap_or(-1))
    }
}

fn parse(line: &str) -> sqz::json::Value {
    sqz::json::parse(line).unwrap_or_else(|e| panic!("not JSON on stdout: {line:?}: {e}"))
}

/// The text of a `tools/call` answer's first content item.
fn tool_text(answer: &sqz::json::Value) -> String {
    let content = answer.get("result").and_then(|r| r.get("content"));
    let first = content.and_then(|c| c.as_array()).and_then(|c| c.first());
    let text = first
        .and_then(|item| item.get("text"))
        .and_then(|t| t.as_str());
    text.unwrap_or_else(|| panic!("no text in {}", answer.to_compact()))
        .to_string()
}

fn error_code(v: &sqz::json::Value) -> Option<i64> {
    v.get("error")?.get("code")?.as_i64()
}

#[test]
fn raw_stdio_bad_lines_unknown_methods_panics_and_eof() {
    let s = Scratch::new("mcp-raw");
    let mut session = Session::start(&["mcp"], &s.db(), &[]);
    session.send(b"this is not json\n");
    let v = parse(&session.next());
    assert_eq!(error_code(&v), Some(-32700));
    assert!(v.get("id").unwrap().is_null());
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\xfe\"}\n");
    let v = parse(&session.next());
    assert_eq!(error_code(&v), Some(-32700));
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/templates/list\"}\n");
    let v = parse(&session.next());
    assert_eq!(error_code(&v), Some(-32601));
    assert_eq!(v.get("id").and_then(|i| i.as_i64()), Some(2));
    // A notification is never answered, even an unknown one.
    session.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}\n");
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"sqz/test-panic\"}\n");
    let v = parse(&session.next());
    assert_eq!(error_code(&v), Some(-32603));
    assert_eq!(v.get("id").and_then(|i| i.as_str()), Some("p"));
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"passthrough\",\"arguments\":{\"text\":\"still here\"}}}\n");
    let v = parse(&session.next());
    let text = tool_text(&v);
    assert_eq!(text, "still here");
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}\n");
    assert_eq!(error_code(&parse(&session.next())), Some(-32602));
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
    let (rest, code) = session.finish();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(parse(&rest[0]).get("id").and_then(|i| i.as_i64()), Some(5));
    assert_eq!(code, 0, "exits 0 on end of input");
}

/// Regression: the `compress` tool once swapped the process's panic hook and restored the
/// default one, so a later panicking request reached stderr as the default multi-line report.
/// After a `compress` call, a panicking request is still answered, reported in one line, and
/// the next request is served.
#[test]
fn a_panic_after_the_compress_tool_is_answered_in_one_line_and_serving_goes_on() {
    let s = Scratch::new("mcp-panic-hook");
    let log: String = (1..=40)
        .map(|n| format!("   Compiling crate{n} v0.1.{n}\n"))
        .collect();
    let mut text = String::new();
    sqz::json::write_string(&mut text, &log);
    let requests = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"compress\",\"arguments\":{{\"text\":{text},\"label\":\"cargo build\"}}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sqz/test-panic\"}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{{\"name\":\"passthrough\",\"arguments\":{{\"text\":\"still here\"}}}}}}\n"
    );
    let out = common::sqz(bin(), &s.db(), &["mcp"], requests.as_bytes(), &[]);
    let answers: Vec<sqz::json::Value> = out.stdout_text().lines().map(parse).collect();
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert!(tool_text(&answers[0]).contains("sqz expand"), "{answers:?}");
    assert_eq!(error_code(&answers[1]), Some(-32603));
    assert_eq!(tool_text(&answers[2]), "still here");
    let stderr = &out.stderr;
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("internal error"))
        .collect();
    assert_eq!(reports.len(), 1, "{stderr}");
    assert!(
        reports[0].starts_with("[sqz] mcp: internal error: ")
            && reports[0].contains("sqz/test-panic was called"),
        "{stderr}"
    );
    assert!(
        !stderr
            .lines()
            .any(|l| l.starts_with("thread '") || l.starts_with("note: run with")),
        "the default panic report reached stderr: {stderr}"
    );
}

#[test]
fn initialize_negotiates_dated_versions() {
    let s = Scratch::new("mcp-versions");
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut session = Session::start(&["mcp"], &s.db(), &[]);
        session.send(format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{asked}\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"t\",\"version\":\"1\"}}}}}}\n").as_bytes());
        let v = parse(&session.next());
        let result = v.get("result").unwrap();
        assert_eq!(
            result.get("protocolVersion").and_then(|p| p.as_str()),
            Some(answered)
        );
        session.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
        let v = parse(&session.next());
        let tools = v
            .get("result")
            .unwrap()
            .get("tools")
            .unwrap()
            .as_array()
            .unwrap()
            .to_vec();
        assert_eq!(tools.len(), 7);
        let (_, code) = session.finish();
        assert_eq!(code, 0);
    }
}

#[test]
fn invoked_as_sqz_mcp_is_the_server() {
    let s = Scratch::new("mcp-alias");
    let link = s.dir.join("sqz-mcp");
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let out = Command::new(&link).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("sqz "));
    let run = common::sqz(
        &link,
        &s.db(),
        &["--transport", "stdio"],
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
        &[],
    );
    assert_eq!(
        run.stdout_text(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
    );
    assert_eq!(run.code, 0);
}

#[test]
fn proxy_delivers_a_result_produced_before_shutdown() {
    let s = Scratch::new("mcp-proxy-raw");
    let node = "node".to_string();
    let everything = upstream("server-everything");
    let mut session = Session::start(&["mcp", "proxy", "--", &node, &everything], &s.db(), &[]);
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n");
    let init = parse(&session.next());
    let instructions = init
        .get("result")
        .unwrap()
        .get("instructions")
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(instructions.contains("sqz_expand"), "{instructions}");
    session.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    session.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"get-sum\",\"arguments\":{\"a\":2,\"b\":40}}}\n");
    let started = Instant::now();
    let (rest, code) = session.finish();
    let answer = rest
        .iter()
        .map(|l| parse(l))
        .find(|v| v.get("id").and_then(|i| i.as_i64()) == Some(2))
        .unwrap_or_else(|| panic!("the call in flight was answered: {rest:?}"));
    assert!(answer.get("result").is_some(), "{rest:?}");
    assert_eq!(code, 0);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn mcp_usage_errors_are_one_line() {
    let s = Scratch::new("mcp-usage");
    for args in [
        &["mcp", "proxy"][..],
        &["mcp", "--allow", "/no/such/dir"],
        &["mcp", "--transport", "carrier-pigeon"],
        &["mcp", "--port", "http"],
    ] {
        let run = common::sqz(bin(), &s.db(), args, b"", &[]);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.starts_with("sqz: "), "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let run = common::sqz(
        bin(),
        &s.db(),
        &["mcp", "proxy", "--", "/no/such/server"],
        b"",
        &[],
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("cannot start the upstream server"),
        "{}",
        run.stderr
    );
}

#[test]
fn http_transport_serves_loopback_and_refuses_other_hosts() {
    let s = Scratch::new("mcp-http");
    let (mut child, first, second) = start_http(&s, &["--transport".as_ref(), "http".as_ref()]);
    let url = first.trim().rsplit(' ').next().unwrap().to_string();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|_| panic!("port in {first:?}"));
    let token = second
        .trim()
        .trim_end_matches('\'')
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(token.len(), 64, "{second:?}");
    let raw = |request: String| -> String {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        out
    };
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let post = |host: &str, extra: &str| {
        format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())
    };
    let ok = raw(post(&format!("127.0.0.1:{port}"), &bearer));
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(
        ok.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        "{ok}"
    );
    // Another user of this machine reaches the port but has no token.
    let anonymous = raw(post(&format!("127.0.0.1:{port}"), ""));
    assert!(anonymous.starts_with("HTTP/1.1 401"), "{anonymous}");
    assert!(
        anonymous.contains("WWW-Authenticate: Bearer"),
        "{anonymous}"
    );
    let wrong = raw(post(
        &format!("127.0.0.1:{port}"),
        &format!("Authorization: Bearer {}0\r\n", &token[1..]),
    ));
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let evil_host = raw(post("evil.example", ""));
    assert!(evil_host.starts_with("HTTP/1.1 403"), "{evil_host}");
    let evil_origin = raw(post(
        &format!("localhost:{port}"),
        &format!("Origin: https://evil.example\r\n{bearer}"),
    ));
    assert!(evil_origin.starts_with("HTTP/1.1 403"), "{evil_origin}");
    let get = raw(format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost:{port}\r\n{bearer}\r\n"
    ));
    assert!(get.starts_with("HTTP/1.1 405"), "{get}");
    let port_text = port.to_string();
    scenario(
        "http.mjs",
        &[
            (
                "MCP_URL",
                Path::new(&format!("http://127.0.0.1:{port_text}/mcp")),
            ),
            ("MCP_TOKEN", Path::new(&token)),
        ],
        &s.db(),
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `sqz mcp` on stdio in the workspace `work`, with the store at `db` and extra environment.
fn stdio_server(work: &Path, db: &Path, env: &[(&str, &str)]) -> std::process::Child {
    Command::new(bin())
        .arg("mcp")
        .current_dir(work)
        .env("SQZ_DB_PATH", db)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn no_dedup_reads_are_whole_and_never_stored() {
    let s = Scratch::new("mcp-nodedup");
    let work = s.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let source = std::fs::read(repo().join("fixtures/cat-rust-source/input.txt")).unwrap();
    std::fs::write(work.join("lib.rs"), &source).unwrap();
    let mut child = stdio_server(&work, &s.db(), &[("SQZ_NO_DEDUP", "1")]);
    let read = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sqz_read_file\",\"arguments\":{\"path\":\"lib.rs\"}}}\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(read.repeat(2).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let answers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(answers.len(), 2);
    for answer in &answers {
        let v = parse(answer);
        let text = tool_text(&v);
        assert!(
            text.ends_with(std::str::from_utf8(&source).unwrap()),
            "{text}"
        );
    }
    let expand = common::sqz(
        bin(),
        &s.db(),
        &["expand", &common::hash16(&source)],
        b"",
        &[],
    );
    assert_eq!(expand.code, 1, "nothing was stored");
}

/// `sqz mcp --port 0 EXTRA…` over HTTP, and the two lines it says first: where it listens,
/// and how to pass its token.
fn start_http(s: &Scratch, extra: &[&std::ffi::OsStr]) -> (std::process::Child, String, String) {
    let mut child = Command::new(bin())
        .args(["mcp", "--port", "0"])
        .args(extra)
        .env("SQZ_DB_PATH", s.db())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (mut first, mut second) = (String::new(), String::new());
    stderr.read_line(&mut first).unwrap();
    stderr.read_line(&mut second).unwrap();
    (child, first, second)
}

#[test]
fn http_transport_keeps_its_token_in_a_file_only_its_owner_reads() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("mcp-token");
    let file = s.dir.join("token");
    let start = || {
        let (mut child, _, second) = start_http(&s, &["--token-file".as_ref(), file.as_os_str()]);
        let _ = child.kill();
        let _ = child.wait();
        second
    };
    let said = start();
    assert!(said.contains(&file.display().to_string()), "{said}");
    let token = std::fs::read_to_string(&file).unwrap();
    assert!(
        !said.contains(token.trim()),
        "the token itself is not printed: {said}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    start();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        token,
        "reused, not replaced"
    );
}

#[test]
fn http_transport_caps_idle_connections_and_serves_again_once_they_close() {
    let s = Scratch::new("mcp-cap");
    let (mut child, first, second) = start_http(&s, &[]);
    let port: u16 = first
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let token = second
        .trim()
        .trim_end_matches('\'')
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    // 64 connections that send nothing hold every slot; the next is turned away at once
    // instead of costing one more thread.
    let idle: Vec<std::net::TcpStream> = (0..64)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let mut extra = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut answer = String::new();
    extra.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop(idle);
    // Once they close, their slots free up (asked again until then, for up to 10 s).
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let ping = || {
        let mut real = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _ = write!(
            real,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = real.shutdown(std::net::Shutdown::Write);
        let mut ok = String::new();
        let _ = real.read_to_string(&mut ok);
        ok
    };
    let mut ok = ping();
    for _ in 0..100 {
        if ok.starts_with("HTTP/1.1 200") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        ok = ping();
    }
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_fifo_in_the_workspace_is_answered_not_waited_on() {
    let s = Scratch::new("mcp-fifo");
    let work = s.dir.join("ws");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "the needle is here\n").unwrap();
    let made = Command::new("mkfifo")
        .arg(work.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut child = stdio_server(&work, &s.db(), &[]);
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sqz_read_file","arguments":{"path":"fifo"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sqz_grep","arguments":{"pattern":"needle"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    ];
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{}\n", requests.join("\n")).as_bytes())
        .unwrap();
    // A server that blocks on the FIFO never answers: give up on it after 20 s.
    let (done, wait) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(out).read_to_string(&mut text);
        let _ = done.send(text);
    });
    let answers = wait.recv_timeout(std::time::Duration::from_secs(20));
    let _ = child.kill();
    let _ = child.wait();
    let answers = answers.expect("the server answered instead of blocking on the FIFO");
    let lines: Vec<&str> = answers.lines().collect();
    assert_eq!(lines.len(), 3, "{answers}");
    assert!(lines[0].contains("not a regular file"), "{}", lines[0]);
    let grep = tool_text(&parse(lines[1]));
    assert!(grep.contains("notes.txt:1:the needle is here"), "{grep}");
    assert!(grep.contains("1 FIFOs, sockets or devices"), "{grep}");
    assert!(lines[2].contains(r#""result":{}"#), "{}", lines[2]);
}

#[test]
fn a_few_lines_of_a_huge_log_are_read_without_holding_the_file() {
    let s = Scratch::new("mcp-huge");
    let work = s.dir.join("ws");
    std::fs::create_dir_all(&work).unwrap();
    // About 60 MB of log lines.
    let mut log = String::with_capacity(61 << 20);
    let mut n = 0;
    while log.len() < 60 << 20 {
        n += 1;
        log.push_str(&format!(
            "2026-12-04T07:00:00.{n:06}Z INFO worker-{} processed batch {n} of the nightly export run\n",
            n % 7
        ));
    }
    std::fs::write(work.join("big.log"), &log).unwrap();
    drop(log);
    let mut child = stdio_server(&work, &s.db(), &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"sqz_read_file","arguments":{{"path":"big.log","offset":1000,"limit":5}}}}}}"#
    )
    .unwrap();
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    let peak_kb: u64 = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    drop(stdin);
    let _ = child.wait();
    let text = tool_text(&parse(&answer));
    assert!(
        text.contains(&format!("lines=1000-1004 of {n}]")),
        "{}",
        &text[..200]
    );
    assert!(text.contains("batch 1000 of the nightly"), "{text}");
    assert!(text.contains("batch 1004 of the nightly"), "{text}");
    assert!(!text.contains("batch 1005 of"), "{text}");
    assert!(
        peak_kb < 30 * 1024,
        "peak {peak_kb} kB for a 5-line read of 60 MB"
    );
}
