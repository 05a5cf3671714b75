//! `sqz proxy` on a loopback port, driven as an SDK would drive it: request bodies of the three
//! providers built around real tool outputs from `fixtures/`, large and chunked uploads,
//! concurrent clients, a six-turn conversation for cache safety, and forwarding to a fake
//! upstream that streams server-sent events.

mod common;

use common::Scratch;
use sqz::json::{parse, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(common::fixtures_dir().join(name).join("input.txt")).expect("fixture")
}

fn facts(name: &str) -> Vec<String> {
    std::fs::read_to_string(common::fixtures_dir().join(name).join("facts.txt"))
        .expect("facts")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// A running `sqz proxy`, stopped on drop.
struct Proxy {
    child: Child,
    port: u16,
    _scratch: Scratch,
}

impl Proxy {
    fn start(extra: &[&str]) -> Proxy {
        let scratch = Scratch::new("proxy");
        let mut child = Command::new(bin())
            .args(["proxy", "--port", "0"])
            .args(extra)
            .env("SQZ_DB_PATH", scratch.db())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn sqz proxy");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("listening line");
        let port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        // Keep draining stderr so the proxy never blocks on it.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = stderr.read_to_string(&mut sink);
        });
        Proxy {
            child,
            port,
            _scratch: scratch,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response: status, headers (lower-case names) and body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        parse(std::str::from_utf8(&self.body).expect("UTF-8")).expect("JSON answer")
    }
}

fn read_response(stream: &mut impl BufRead) -> Response {
    let mut status_line = String::new();
    stream.read_line(&mut status_line).expect("status line");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    stream.read_exact(&mut body).expect("body");
    Response {
        status,
        headers,
        body,
    }
}

/// POSTs `body` to `path`, by `Content-Length` or in chunks of `chunk` bytes.
fn post(port: u16, path: &str, body: &[u8], chunk: Option<usize>) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nx-api-key: test-key\r\n"
    );
    match chunk {
        None => head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len())),
        Some(_) => head.push_str("Transfer-Encoding: chunked\r\n\r\n"),
    }
    // A refused body may be answered before it is all sent: writing then fails, and the
    // answer is read all the same.
    let _ = (|| -> std::io::Result<()> {
        stream.write_all(head.as_bytes())?;
        match chunk {
            None => stream.write_all(body)?,
            Some(size) => {
                for piece in body.chunks(size) {
                    write!(stream, "{:x}\r\n", piece.len())?;
                    stream.write_all(piece)?;
                    stream.write_all(b"\r\n")?;
                }
                stream.write_all(b"0\r\n\r\n")?;
            }
        }
        Ok(())
    })();
    read_response(&mut BufReader::new(stream))
}

fn string(s: &str) -> String {
    let mut out = String::new();
    sqz::json::write_string(&mut out, s);
    out
}

/// An Anthropic Messages body: a cached system prompt, a user turn, then for each output a
/// `tool_use` of `bash` with its command and the `tool_result` that answers it. `messages`
/// comes last, as the history grows there.
fn anthropic_body(calls: &[(&str, &str)]) -> String {
    anthropic_body_marked(calls, false)
}

/// `anthropic_body`, with `cache_control` on the newest tool result when `marked`, as Claude
/// Code sends it: the marker sits on a different block in every turn.
fn anthropic_body_marked(calls: &[(&str, &str)], marked: bool) -> String {
    let mut messages = vec![
        r#"{"role":"user","content":[{"type":"text","text":"Run the tests and fix what fails."}]}"#
            .to_string(),
    ];
    for (k, (command, output)) in calls.iter().enumerate() {
        messages.push(format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"Running {k}."}},{{"type":"tool_use","id":"toolu_{k:02}","name":"bash","input":{{"command":{}}}}}]}}"#,
            string(command)
        ));
        let marker = if marked && k + 1 == calls.len() {
            r#","cache_control":{"type":"ephemeral"}"#
        } else {
            ""
        };
        messages.push(format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{k:02}","content":{}{marker}}}]}}"#,
            string(output)
        ));
    }
    format!(
        r#"{{"model":"claude-sonnet-4-5","max_tokens":8192,"temperature":0.20,"system":[{{"type":"text","text":"You are a careful engineer.","cache_control":{{"type":"ephemeral"}}}}],"tools":[{{"name":"bash","description":"Run a shell command","input_schema":{{"type":"object","properties":{{"command":{{"type":"string"}}}},"required":["command"]}}}}],"messages":[{}]}}"#,
        messages.join(",")
    )
}

fn openai_body(command: &str, output: &str) -> String {
    format!(
        r#"{{"model":"gpt-4.1","messages":[{{"role":"system","content":"Be brief."}},{{"role":"user","content":"check the build"}},{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"shell","arguments":{}}}}}]}},{{"role":"tool","tool_call_id":"call_1","content":{}}}],"tools":[{{"type":"function","function":{{"name":"shell","parameters":{{"type":"object","properties":{{"command":{{"type":"string"}}}}}}}}}}],"top_p":1.0}}"#,
        string(&format!(r#"{{"command":{}}}"#, string(command))),
        string(output)
    )
}

fn google_body(command: &str, output: &str) -> String {
    format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"text":"list the pods"}}]}},{{"role":"model","parts":[{{"functionCall":{{"name":"run_shell_command","args":{{"command":{}}}}}}}]}},{{"role":"user","parts":[{{"functionResponse":{{"name":"run_shell_command","response":{{"output":{}}}}}}}]}}],"generationConfig":{{"temperature":0.0}}}}"#,
        string(command),
        string(output)
    )
}

/// The tool-result strings of an Anthropic body, in order.
fn tool_results(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in v.get("messages").and_then(Value::as_array).unwrap_or(&[]) {
        for b in m.get("content").and_then(Value::as_array).unwrap_or(&[]) {
            if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                out.push(
                    b.get("content")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                );
            }
        }
    }
    out
}

/// Every tool result of `provider` blanked, so two bodies can be compared outside them.
fn blank(provider: &str, body: &Value) -> String {
    let provider = sqz::proxy::rewrite::Provider::for_path(provider).expect("provider path");
    let mut v = body.clone();
    sqz::proxy::rewrite::rewrite(provider, &mut v, &mut |_| Some("·".to_string()));
    v.to_compact()
}

fn compressed_body(r: &Response) -> Value {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
        .get("compressed_body")
        .cloned()
        .expect("compressed_body")
}

#[test]
fn tool_results_compress_and_nothing_else_changes_for_all_three_providers() {
    let proxy = Proxy::start(&[]);
    let test_run = fixture("cargo-test-failing");
    let cases = [
        ("/v1/messages", anthropic_body(&[("cargo test", &test_run)])),
        ("/v1/chat/completions", openai_body("cargo test", &test_run)),
        (
            "/v1beta/models/gemini-2.5-pro:generateContent",
            google_body("cargo test", &test_run),
        ),
    ];
    for (path, body) in &cases {
        let r = post(proxy.port, path, body.as_bytes(), None);
        let saved: usize = r
            .header("x-sqz-tokens-saved")
            .and_then(|v| v.parse().ok())
            .expect("x-sqz-tokens-saved");
        assert!(saved > 100, "{path}: saved {saved}");
        let answer = r.json();
        assert_eq!(
            answer
                .get("tool_results_compressed")
                .and_then(Value::as_u64),
            Some(1)
        );
        let original = parse(body).unwrap();
        let compressed = compressed_body(&r);
        // JSON-equal outside the tool results, keys in their order, numbers in their text.
        assert_eq!(blank(path, &original), blank(path, &compressed), "{path}");
        // The facts of the test run are all in what the model now reads.
        let text = compressed.to_compact();
        let mut seen = String::new();
        sqz::proxy::rewrite::rewrite(
            sqz::proxy::rewrite::Provider::for_path(path).unwrap(),
            &mut compressed.clone(),
            &mut |b| {
                seen.push_str(b.text);
                None
            },
        );
        for fact in facts("cargo-test-failing") {
            assert!(seen.contains(&fact), "{path}: lost {fact:?}");
        }
        assert!(text.len() < body.len());
    }
}

#[test]
fn cache_safe_each_turn_begins_with_the_turn_before() {
    let proxy = Proxy::start(&[]);
    let outputs = [
        ("cargo test", fixture("cargo-test-failing")),
        ("git status", fixture("git-status-long")),
        ("cat worker.log", fixture("cat-worker-log")),
        // The same test run again: it points back at the first, within the request.
        ("cargo test", fixture("cargo-test-failing")),
        ("npm install", fixture("npm-install")),
        ("pytest", fixture("pytest-fail")),
    ];
    let mut previous: Option<String> = None;
    for turn in 1..=outputs.len() {
        let calls: Vec<(&str, &str)> = outputs[..turn]
            .iter()
            .map(|(c, o)| (*c, o.as_str()))
            .collect();
        let body = anthropic_body(&calls);
        let r = post(proxy.port, "/v1/messages", body.as_bytes(), None);
        let now = compressed_body(&r).to_compact();
        if let Some(before) = &previous {
            // The earlier body without its closing `]}` starts the new one byte for byte.
            let open = before.strip_suffix("]}").expect("messages last");
            assert!(
                now.starts_with(open),
                "turn {turn} changed an earlier block"
            );
        }
        if turn == 4 {
            let results = tool_results(&parse(&now).unwrap());
            assert!(results[3].starts_with("§ref:"), "{}", results[3]);
        }
        previous = Some(now);
    }
    // The same conversation sent again gets the same bytes.
    let calls: Vec<(&str, &str)> = outputs.iter().map(|(c, o)| (*c, o.as_str())).collect();
    let again = post(
        proxy.port,
        "/v1/messages",
        anthropic_body(&calls).as_bytes(),
        None,
    );
    assert_eq!(Some(compressed_body(&again).to_compact()), previous);
}

#[test]
fn a_tool_result_gets_the_same_bytes_whether_or_not_it_carries_cache_control() {
    let proxy = Proxy::start(&[]);
    let outputs = [
        ("cargo test", fixture("cargo-test-failing")),
        ("git status", fixture("git-status-long")),
        ("cat worker.log", fixture("cat-worker-log")),
        ("pytest", fixture("pytest-fail")),
    ];
    let mut previous: Vec<String> = Vec::new();
    for turn in 1..=outputs.len() {
        let calls: Vec<(&str, &str)> = outputs[..turn]
            .iter()
            .map(|(c, o)| (*c, o.as_str()))
            .collect();
        let body = anthropic_body_marked(&calls, true);
        let r = post(proxy.port, "/v1/messages", body.as_bytes(), None);
        let results = tool_results(&compressed_body(&r));
        // The newest result, which carries the marker, is compressed from its first request on.
        let (newest, raw) = (&results[turn - 1], &outputs[turn - 1].1);
        assert!(
            sqz::tokens::count(newest) < sqz::tokens::count(raw),
            "turn {turn}: the marked block went out raw"
        );
        // Every earlier result keeps the bytes it had when it was the marked one.
        assert_eq!(
            &results[..turn - 1],
            &previous[..],
            "turn {turn} changed an earlier tool result"
        );
        previous = results;
    }
}

/// A body of about `size` bytes: real outputs repeated as successive tool results.
fn large_body(size: usize) -> String {
    let pool = [
        ("cat app.log", fixture("cat-nginx-access-log")),
        ("npm ls", fixture("npm-ls")),
        ("cargo build", fixture("cargo-build-many-deps")),
        ("ls -la", fixture("ls-la-big")),
    ];
    let mut calls = Vec::new();
    let mut total = 0;
    let mut k = 0;
    while total < size {
        let (c, o) = &pool[k % pool.len()];
        // Each repeat differs in its first line, so it is a new output, not a reference.
        let output = format!("run {k}\n{o}");
        total += output.len();
        calls.push((c.to_string(), output));
        k += 1;
    }
    let refs: Vec<(&str, &str)> = calls
        .iter()
        .map(|(c, o)| (c.as_str(), o.as_str()))
        .collect();
    anthropic_body(&refs)
}

#[test]
fn large_and_chunked_bodies_arrive_whole() {
    let proxy = Proxy::start(&[]);
    for (size, chunk) in [
        (150 << 10, None),
        (150 << 10, Some(7_000)),
        (5 << 20, Some(65_536)),
    ] {
        let body = large_body(size);
        let r = post(proxy.port, "/v1/messages", body.as_bytes(), chunk);
        let compressed = compressed_body(&r);
        let original = parse(&body).unwrap();
        assert_eq!(
            tool_results(&compressed).len(),
            tool_results(&original).len(),
            "{size} bytes, chunks {chunk:?}"
        );
        assert_eq!(
            blank("/v1/messages", &original),
            blank("/v1/messages", &compressed)
        );
        assert!(compressed.to_compact().len() < body.len() / 2, "{size}");
    }
}

#[test]
fn eight_clients_at_once_each_get_their_own_answer() {
    let proxy = Proxy::start(&[]);
    let port = proxy.port;
    let bodies: Vec<String> = (0..8)
        .map(|k| {
            let log = fixture("cat-worker-log");
            anthropic_body(&[("cat worker.log", &format!("client {k}\n{log}"))])
        })
        .collect();
    let handles: Vec<_> = bodies
        .iter()
        .cloned()
        .map(|body| {
            std::thread::spawn(move || post(port, "/v1/messages", body.as_bytes(), Some(4096)))
        })
        .collect();
    for (k, h) in handles.into_iter().enumerate() {
        let r = h.join().expect("client thread");
        let results = tool_results(&compressed_body(&r));
        assert!(
            results[0].starts_with(&format!("client {k}\n")),
            "{}",
            &results[0][..40]
        );
        assert!(
            results[0].contains("lines like"),
            "folded: {}",
            &results[0][..200]
        );
    }
}

#[test]
fn bad_bodies_fail_open_and_oversized_ones_get_413() {
    let proxy = Proxy::start(&["--max-body-mb", "1"]);
    let r = post(proxy.port, "/v1/messages", b"this is { not json", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"this is { not json");
    // JSON of a shape sqz does not know comes back byte for byte too.
    let odd = br#"{ "prompt": "hi",  "n": 1.50 }"#;
    let r = post(proxy.port, "/v1/messages", odd, None);
    assert_eq!((r.status, &r.body[..]), (200, &odd[..]));
    let body = large_body(2 << 20);
    let r = post(proxy.port, "/v1/messages", body.as_bytes(), None);
    assert_eq!(r.status, 413);
    let r = post(proxy.port, "/v1/messages", body.as_bytes(), Some(100_000));
    assert_eq!(r.status, 413);
    let mut health = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    write!(
        health,
        "GET /health HTTP/1.1\r\nHost: localhost:{}\r\n\r\n",
        proxy.port
    )
    .unwrap();
    let r = read_response(&mut BufReader::new(health));
    assert_eq!((r.status, &r.body[..]), (200, &b"{\"status\":\"ok\"}"[..]));
}

/// A fake upstream on loopback: takes one request, hands it to the test, then answers with an
/// SSE stream in chunked encoding, one event per chunk, sending the second event only after
/// the test says it has read the first, so nothing can have been gathered whole.
/// The fake upstream's port, the request it got (head and body), the switch that lets it
/// send each next event, and its thread.
type FakeUpstream = (
    u16,
    std::sync::mpsc::Receiver<(String, Vec<u8>)>,
    std::sync::mpsc::Sender<()>,
    std::thread::JoinHandle<()>,
);

fn fake_upstream() -> FakeUpstream {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (got, requests) = std::sync::mpsc::channel();
    let (go_on, proceed) = std::sync::mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let len: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .expect("content-length");
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        got.send((head, body)).unwrap();
        writer
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            .unwrap();
        for (k, event) in [
            "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Fixed.\"}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ]
        .iter()
        .enumerate()
        {
            if k > 0 {
                proceed.recv().unwrap();
            }
            write!(writer, "{:x}\r\n{event}\r\n", event.len()).unwrap();
            writer.flush().unwrap();
        }
        writer.write_all(b"0\r\n\r\n").unwrap();
    });
    (port, requests, go_on, handle)
}

#[test]
fn forwarding_sends_the_compressed_body_and_streams_the_answer_back() {
    let body = anthropic_body(&[("cargo test", &fixture("cargo-test-failing"))]);
    // What the returning mode gives for this body.
    let returning = Proxy::start(&[]);
    let expected =
        compressed_body(&post(returning.port, "/v1/messages", body.as_bytes(), None)).to_compact();

    let (up_port, requests, go_on, upstream) = fake_upstream();
    let proxy = Proxy::start(&["--upstream", &format!("http://127.0.0.1:{up_port}")]);
    let mut stream = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nx-api-key: sk-test\r\nanthropic-version: 2023-06-01\r\nConnection: keep-alive\r\nContent-Length: {}\r\n\r\n",
        proxy.port,
        body.len()
    )
    .unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let (head, received) = requests.recv().expect("the upstream got a request");
    assert_eq!(String::from_utf8(received).unwrap(), expected);
    let head_lower = head.to_ascii_lowercase();
    assert!(head.starts_with("POST /v1/messages HTTP/1.1\r\n"), "{head}");
    assert!(head_lower.contains("x-api-key: sk-test"));
    assert!(head_lower.contains("anthropic-version: 2023-06-01"));
    assert!(
        !head_lower.contains("keep-alive"),
        "hop-by-hop header passed on: {head}"
    );
    assert!(head_lower.contains(&format!("content-length: {}", expected.len())));

    // The answer comes through as the upstream sends it, one event at a time.
    let mut reader = BufReader::new(stream);
    let mut seen = Vec::new();
    let mut line = String::new();
    while !String::from_utf8_lossy(&seen).contains("message_start\"}\n\n") {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "stream ended early"
        );
        seen.extend_from_slice(line.as_bytes());
    }
    go_on.send(()).unwrap();
    go_on.send(()).unwrap();
    reader.read_to_end(&mut seen).unwrap();
    upstream.join().unwrap();
    let text = String::from_utf8(seen).unwrap();
    let expected_stream =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert!(text.starts_with(expected_stream), "{text}");
    let start = text.find("message_start").unwrap();
    let delta = text.find("content_block_delta").unwrap();
    let stop = text.find("message_stop").unwrap();
    assert!(start < delta && delta < stop);
    assert!(text.ends_with("0\r\n\r\n"));
}

#[test]
fn an_upstream_error_reaches_the_client_as_it_was_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let up_port = listener.local_addr().unwrap().port();
    let answer = b"HTTP/1.1 529 Overloaded\r\nContent-Type: application/json\r\nContent-Length: 58\r\n\r\n{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}   ";
    let upstream = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let mut len = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        writer.write_all(answer).unwrap();
    });
    let proxy = Proxy::start(&["--upstream", &format!("http://127.0.0.1:{up_port}")]);
    let body = anthropic_body(&[("git status", &fixture("git-status-long"))]);
    let mut stream = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\n\r\n{body}",
        proxy.port,
        body.len()
    )
    .unwrap();
    let mut got = Vec::new();
    stream.read_to_end(&mut got).unwrap();
    upstream.join().unwrap();
    assert_eq!(got, answer);
}
