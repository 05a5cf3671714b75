//! Every target of `cargo xtask fuzz`, in the order they run, and the parser targets that are
//! not hooks or the engine: JSON, JSON-RPC framing and the MCP server, HTTP requests and the
//! proxy's reading of them, the exit trailer, references, deltas and the shell lexer.

use super::engine::{self, Engine};
use super::{hooks, Target};
use crate::common::{load_fixtures, Fixture};
use sqz::doc::reference;
use sqz::engine::{delta, trailer};
use sqz::hook::rewrite::{self, Decision, Shape};
use sqz::json::{self, Value};
use sqz::mcp::rpc::{self, Message};
use sqz::mcp::server::{self, Server};
use sqz::proxy::rewrite::{rewrite as rewrite_body, Provider};
use std::path::{Path, PathBuf};

pub fn all(root: &Path, scratch: &Path) -> Result<Vec<Target>, String> {
    let fixtures = load_fixtures(&root.join("fixtures"));
    if fixtures.is_empty() {
        return Err("no fixtures found".into());
    }
    let commands = hooks::commands(root, &fixtures);
    let mut targets = vec![
        json_target(&fixtures),
        jsonrpc(scratch, &fixtures)?,
        http(&fixtures),
        proxy(&fixtures),
        trailer_target(&fixtures),
        reference_target(scratch, &fixtures)?,
        delta_target(&fixtures),
        lexer(commands.clone()),
    ];
    targets.extend(hooks::targets(scratch, &fixtures, &commands)?);
    targets.push(engine::pipeline(scratch, &fixtures)?);
    targets.extend(engine::formatters(scratch, &fixtures)?);
    Ok(targets)
}

/// `s` as a JSON string literal.
pub fn string(s: &str) -> String {
    let mut out = String::new();
    json::write_string(&mut out, s);
    out
}

/// Fixtures small enough to embed in a payload or request many times over.
fn small(fixtures: &[Fixture]) -> impl Iterator<Item = &Fixture> {
    fixtures.iter().filter(|f| f.input.len() < 8 * 1024)
}

// ---------------------------------------------------------------------------------------------
// JSON

const JSON_TOKENS: &[&[u8]] = &[
    b"[table 3 rows: id,name]\n",
    b"[jsonl 3 rows: a,b]\n",
    b" rows: ",
    b"\\u00e9",
    b"\\uDBFF\\uDFFF",
    b"\\/",
    b"1.5e-300",
    b"-0.0E+0",
    b"true",
    b"false",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"{\"a\":{\"a\":{\"a\":{\"a\":",
    b"\"\":",
];

/// Every value parsed writes back, compact or pretty, to the same value; the agent form is
/// shorter and decodes back to the values it stands for.
fn json_target(fixtures: &[Fixture]) -> Target {
    let mut seeds: Vec<Vec<u8>> = fixtures
        .iter()
        .filter(|f| json::parse(&String::from_utf8_lossy(&f.input)).is_ok())
        .map(|f| f.input.clone())
        .collect();
    // JSON Lines, from the JSON fixtures' records.
    seeds.push(
        b"{\"level\":\"info\",\"msg\":\"a\",\"n\":1}\n{\"level\":\"warn\",\"msg\":\"b\",\"n\":2}\n{\"level\":\"error\",\"msg\":\"c\",\"n\":3}\n"
            .to_vec(),
    );
    seeds.push(br#"[{"id":1,"name":"a","tags":["x"]},{"id":2,"name":"b","tags":[]},{"id":3,"name":"c","tags":null}]"#.to_vec());
    seeds.extend(jsonrpc_lines(fixtures).into_iter().map(String::into_bytes));
    Target {
        name: "json".into(),
        seeds,
        inner: Vec::new(),
        wrap: None,
        tokens: JSON_TOKENS,
        check: Box::new(|case| check_json(&String::from_utf8_lossy(case))),
    }
}

fn check_json(text: &str) -> Result<(), String> {
    if let Ok(value) = json::parse(text) {
        for (form, written) in [
            ("compact", value.to_compact()),
            ("pretty", value.to_pretty()),
        ] {
            match json::parse(&written) {
                Ok(again) if again == value => {}
                Ok(_) => return Err(format!("{form} form parses to another value")),
                Err(e) => return Err(format!("{form} form does not parse: {e}")),
            }
        }
    }
    let _ = json::decode_agent_form(text);
    let Some(agent) = json::compact_for_agent(text) else {
        return Ok(());
    };
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
    if agent.len() >= trimmed.len() {
        return Err("the agent form is not shorter".into());
    }
    let decoded = json::decode_agent_form(&agent)
        .map_err(|e| format!("the agent form does not decode: {e}"))?;
    let Some(original) = json_values(text) else {
        return Err("an agent form of text that is neither JSON nor JSON Lines".into());
    };
    if decoded != original {
        return Err("the agent form decodes to other values".into());
    }
    Ok(())
}

/// The values of a JSON document, or of each line of JSON Lines.
pub fn json_values(text: &str) -> Option<Vec<Value>> {
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
    match json::parse(trimmed) {
        Ok(value) => Some(vec![value]),
        Err(_) => trimmed
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| json::parse(l).ok())
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC and the MCP server

const RPC_TOKENS: &[&[u8]] = &[
    b"\"jsonrpc\":\"2.0\"",
    b"\"id\":",
    b"\"method\":",
    b"\"params\":",
    b"\"result\":",
    b"\"error\":",
    b"tools/call",
    b"tools/list",
    b"initialize",
    b"notifications/initialized",
    b"server/discover",
    b"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}",
    b"sqz_read_file",
    b"sqz_grep",
    b"sqz_list_dir",
    b"sqz_recall",
    b"\"path\":\"../\"",
    b"\"regex\":true",
    b"(a|b)*",
    b"[^c]{2,3}",
    b"\\\\b",
    b"(?:",
    b"{99999,}",
    b"\"offset\":",
    b"\"limit\":",
    b"\"max_bytes\":",
    b"\"depth\":",
];

/// Lines a client sends: the handshake, every method and tool, responses and bad lines.
fn jsonrpc_lines(fixtures: &[Fixture]) -> Vec<String> {
    let mut lines: Vec<String> = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"server/discover"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#,
        r#"{"jsonrpc":"2.0","id":"sqz-roots-1","result":{"roots":[{"uri":"file:///tmp"}]}}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"sqz_read_file","arguments":{"path":"src/main.rs"}}}"#,
        r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"sqz_read_file","arguments":{"path":"logs/app.log","offset":3,"limit":5,"max_bytes":200}}}"#,
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"sqz_grep","arguments":{"pattern":"error","path":".","ignore_case":true}}}"#,
        r#"{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"sqz_grep","arguments":{"pattern":"(fn|let)\\s+\\w+[^;]{2,9}$","regex":true,"max_matches":3}}}"#,
        r#"{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"sqz_list_dir","arguments":{"path":".","depth":3}}}"#,
        r#"{"jsonrpc":"2.0","id":"f","method":"tools/call","params":{"name":"sqz_recall","arguments":{"query":"error main","limit":3}}}"#,
        r#"{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"expand","arguments":{"ref":"§ref:0123456789abcdef:L1-2§"}}}"#,
        r#"{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"passthrough","arguments":{"text":"hello"}}}"#,
        r#"{"jsonrpc":"2.0","id":"i","method":"tools/call","params":{"name":"nope","arguments":[]}}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"1.0","id":null,"method":7}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    for f in small(fixtures).step_by(5) {
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"compress","arguments":{{"text":{},"label":{}}}}}}}"#,
            string(&String::from_utf8_lossy(&f.input)),
            string(&f.cmd)
        ));
    }
    lines
}

/// A `tools/call` with a mutated string as one argument: reaches the tools past the framing.
fn tool_call(rng: &mut fastrand::Rng, value: &[u8]) -> Vec<u8> {
    let calls: [(&str, &[&str]); 7] = [
        ("sqz_read_file", &["path"]),
        ("sqz_grep", &["pattern", "path"]),
        ("sqz_list_dir", &["path"]),
        ("sqz_recall", &["query"]),
        ("expand", &["ref"]),
        ("compress", &["text", "label"]),
        ("passthrough", &["text"]),
    ];
    let (name, keys) = calls[rng.usize(..calls.len())];
    let key = keys[rng.usize(..keys.len())];
    let mut extra = String::new();
    if name == "sqz_grep" && rng.bool() {
        extra.push_str(",\"regex\":true");
    }
    if name == "sqz_grep" && key == "path" {
        extra.push_str(",\"pattern\":\"e\"");
    }
    if name == "compress" && key == "label" {
        extra.push_str(",\"text\":\"a\\nb\\na\\nb\\n\"");
    }
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{name}","arguments":{{{}:{}{extra}}}}}}}"#,
        rng.u32(..),
        string(key),
        string(&String::from_utf8_lossy(value))
    )
    .into_bytes()
}

/// The MCP server in process, on a small workspace of its own, fed one case as a session:
/// one message per line. Every line gets exactly the answers the protocol asks for, each one
/// line of JSON-RPC, never the answer to a caught panic.
fn jsonrpc(scratch: &Path, fixtures: &[Fixture]) -> Result<Target, String> {
    let workspace = scratch.join("workspace");
    let files = [
        ("src/main.rs", "cat-rust-source"),
        ("logs/app.log", "cat-worker-log"),
        ("logs/nested/deeper/access.log", "cat-nginx-access-log"),
        ("README.md", "git-log"),
    ];
    for (path, fixture) in files {
        let file = workspace.join(path);
        let input = fixtures
            .iter()
            .find(|f| f.name == fixture)
            .map_or(&b"fn main() {}\n"[..], |f| &f.input[..]);
        std::fs::create_dir_all(file.parent().unwrap_or(&workspace))
            .and_then(|()| std::fs::write(&file, input))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }
    let mut sessions = Sessions {
        workspace,
        dir: scratch.join("jsonrpc"),
        server: None,
        cases: 0,
    };
    let lines = jsonrpc_lines(fixtures);
    let mut seeds: Vec<Vec<u8>> = lines.iter().map(|l| l.clone().into_bytes()).collect();
    seeds.push(lines[..8].join("\n").into_bytes());
    seeds.push(lines.join("\n").into_bytes());
    let inner = [
        "src/main.rs",
        "logs",
        "/etc/passwd",
        "../outside",
        "error",
        "(a|b)*c",
        "^\\s*fn\\b",
        "[^a-z]{2,}$",
        "§ref:0123456789ab§",
        "0123456789ab:L2-4",
        "main",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    Ok(Target {
        name: "jsonrpc".into(),
        seeds,
        inner,
        wrap: Some(tool_call),
        tokens: RPC_TOKENS,
        check: Box::new(move |case| check_jsonrpc(sessions.server()?, case)),
    })
}

/// The server the cases talk to, started again on an empty store every `CASES_PER_STORE`
/// cases: recall's time grows with the store (see `slow_recall`).
struct Sessions {
    workspace: PathBuf,
    dir: PathBuf,
    server: Option<Server>,
    cases: usize,
}

const CASES_PER_STORE: usize = 2_000;

impl Sessions {
    fn server(&mut self) -> Result<&mut Server, String> {
        self.cases += 1;
        if self.cases % CASES_PER_STORE == 1 {
            self.server = None;
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        if self.server.is_none() {
            // The server takes its working directory as the workspace root when it starts.
            let here = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
            std::env::set_current_dir(&self.workspace)
                .map_err(|e| format!("cannot enter the workspace: {e}"))?;
            let options = server::Options { allow: Vec::new() };
            let env = engine::env(&self.dir.join("sessions.db"));
            // Without requests to the client, it cannot widen the roots to the whole disk.
            let server = Server::new(&options, &env).without_client_requests();
            std::env::set_current_dir(here)
                .map_err(|e| format!("cannot leave the workspace: {e}"))?;
            self.server = Some(server);
        }
        self.server.as_mut().ok_or_else(|| "no server".to_string())
    }
}

fn check_jsonrpc(server: &mut Server, case: &[u8]) -> Result<(), String> {
    for raw in case.split(|&b| b == b'\n') {
        let line = server::trim_line(raw);
        if line.is_empty() || slow_recall(line) {
            continue;
        }
        let parsed = rpc::parse(line);
        let answers = server.handle_line(line);
        for answer in &answers {
            if answer.contains('\n') {
                return Err("an answer spans more than one line".into());
            }
            let value = json::parse(answer).map_err(|e| format!("an answer is not JSON: {e}"))?;
            if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Err("an answer is not JSON-RPC 2.0".into());
            }
            let code = value
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64);
            if code == Some(rpc::INTERNAL_ERROR) {
                return Err(format!("internal error: {}", engine::short(answer)));
            }
        }
        let expected = match &parsed {
            Ok(Message::Request { .. }) | Err(_) => 1,
            Ok(_) => 0,
        };
        if answers.len() != expected {
            return Err(format!(
                "{} answers to one line, not {expected}",
                answers.len()
            ));
        }
        if let Ok(Message::Request { id, .. }) = &parsed {
            let answered = json::parse(&answers[0])
                .ok()
                .and_then(|v| v.get("id").cloned());
            if answered.as_ref() != Some(id) {
                return Err("a request is answered under another id".into());
            }
        }
    }
    Ok(())
}

/// A known hang, left out until it is fixed: the store's recall runs FTS5 `snippet()` on every
/// match, in time quadratic in the query's hits, so a query of many words (or one word many
/// times) over a stored output that repeats them takes minutes. Two words stay fuzzed.
fn slow_recall(line: &[u8]) -> bool {
    let Ok(Message::Request { params, .. }) = rpc::parse(line) else {
        return false;
    };
    let params = params.unwrap_or(Value::Null);
    if params.get("name").and_then(Value::as_str) != Some("sqz_recall") {
        return false;
    }
    let query = params
        .get("arguments")
        .and_then(|a| a.get("query"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let words = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .count();
    words > 2
}

// ---------------------------------------------------------------------------------------------
// HTTP requests and the proxy

const HTTP_TOKENS: &[&[u8]] = &[
    b"POST /mcp HTTP/1.1\r\n",
    b"GET /health HTTP/1.1\r\n",
    b"Host: 127.0.0.1:8765\r\n",
    b"Origin: http://localhost:8765\r\n",
    b"Origin: https://evil.example\r\n",
    b"Content-Length: ",
    b"Content-Length: 18446744073709551616\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Connection: close\r\n",
    b"\r\n\r\n",
    b"ffffffffffffffff\r\n",
    b"0\r\n\r\n",
    b"5;ext=1\r\n",
    b"/v1/messages",
    b"/v1/chat/completions",
    b"/v1/responses",
    b"/v1beta/models/gemini:generateContent",
    b"\"tool_result\"",
    b"\"tool_use_id\"",
    b"\"cache_control\":{\"type\":\"ephemeral\"}",
    b"\"role\":\"tool\"",
    b"\"function_call_output\"",
    b"\"functionResponse\"",
];

/// The largest body the fuzzed reader accepts: small, so 413 is reached too.
const HTTP_MAX_BODY: usize = 64 * 1024;

fn request(path: &str, body: &str, chunked: bool) -> Vec<u8> {
    let mut out = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nContent-Type: application/json\r\n"
    );
    if chunked {
        out.push_str("Transfer-Encoding: chunked\r\n\r\n");
        for chunk in body.as_bytes().chunks(700) {
            out.push_str(&format!("{:x}\r\n", chunk.len()));
            out.push_str(&String::from_utf8_lossy(chunk));
            out.push_str("\r\n");
        }
        out.push_str("0\r\n\r\n");
    } else {
        out.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    }
    out.into_bytes()
}

/// Request bodies of the four providers, with `command` and its `output` as the tool call.
fn provider_bodies(command: &str, output: &str) -> [(&'static str, String); 4] {
    let (c, o) = (string(command), string(output));
    let args = string(&format!("{{\"command\":{c}}}"));
    [
        (
            "/v1/messages",
            format!(
                r#"{{"model":"m","max_tokens":1024,"system":"be brief","messages":[{{"role":"user","content":"hi"}},{{"role":"assistant","content":[{{"type":"text","text":"running"}},{{"type":"tool_use","id":"t1","name":"bash","input":{{"command":{c}}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":{o}}},{{"type":"tool_result","tool_use_id":"t1","content":[{{"type":"text","text":{o}}}]}},{{"type":"tool_result","tool_use_id":"t1","content":"kept","cache_control":{{"type":"ephemeral"}}}}]}}],"temperature":0.70}}"#
            ),
        ),
        (
            "/v1/chat/completions",
            format!(
                r#"{{"model":"gpt-4.1","messages":[{{"role":"system","content":"Be brief."}},{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"shell","arguments":{args}}}}}]}},{{"role":"tool","tool_call_id":"call_1","content":{o}}}]}}"#
            ),
        ),
        (
            "/v1/responses",
            format!(
                r#"{{"input":[{{"type":"function_call","call_id":"x","name":"exec","arguments":{args}}},{{"type":"function_call_output","call_id":"x","output":{o}}}]}}"#
            ),
        ),
        (
            "/v1beta/models/gemini-2.5-pro:generateContent",
            format!(
                r#"{{"contents":[{{"role":"model","parts":[{{"functionCall":{{"name":"run_shell_command","args":{{"command":{c}}}}}}}]}},{{"role":"user","parts":[{{"functionResponse":{{"name":"run_shell_command","response":{{"output":{o}}}}}}}]}}]}}"#
            ),
        ),
    ]
}

fn proxy_requests(fixtures: &[Fixture]) -> Vec<Vec<u8>> {
    let mut requests = Vec::new();
    for (k, f) in small(fixtures).step_by(4).enumerate() {
        let output = String::from_utf8_lossy(&f.input);
        for (path, body) in provider_bodies(&f.cmd, &output) {
            requests.push(request(path, &body, k % 3 == 0));
        }
    }
    requests
}

/// One to several requests on one connection: each read whole or refused with 400 or 413 and
/// a line saying why; a body is never larger than the ceiling.
fn http(fixtures: &[Fixture]) -> Target {
    let mut seeds = proxy_requests(fixtures);
    seeds.truncate(24);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    seeds.push(request("/mcp", ping, false));
    seeds.push(request("/mcp", ping, true));
    let mut pipelined = request("/mcp", ping, false);
    pipelined.extend(
        b"GET /health HTTP/1.1\r\nHost: localhost:8765\r\nOrigin: http://evil.example\r\n\r\n",
    );
    pipelined.extend(request("/v1/messages", "{}", true));
    seeds.push(pipelined);
    seeds.push(b"\r\n\r\nGET / HTTP/1.0\n\n".to_vec());
    Target {
        name: "http".into(),
        seeds,
        inner: Vec::new(),
        wrap: None,
        tokens: HTTP_TOKENS,
        check: Box::new(check_http),
    }
}

fn check_http(case: &[u8]) -> Result<(), String> {
    let mut reader: &[u8] = case;
    for _ in 0..16 {
        match sqz::http::read_request(&mut reader, HTTP_MAX_BODY) {
            Ok(None) => break,
            Ok(Some(request)) => {
                if request.body.len() > HTTP_MAX_BODY {
                    return Err(format!("a body of {} bytes passed", request.body.len()));
                }
                let _ = sqz::http::foreign(&request, 8765);
            }
            Err(refused) => {
                if !matches!(refused.status, 400 | 413) || !refused.message.ends_with('\n') {
                    return Err(format!(
                        "refused with {}: {:?}",
                        refused.status, refused.message
                    ));
                }
                break;
            }
        }
    }
    Ok(())
}

/// The proxy's reading of a request: the body's tool results, found by provider. Handing
/// them back unchanged, or leaving them, changes nothing; every one found is offered.
fn proxy(fixtures: &[Fixture]) -> Target {
    let inner = small(fixtures)
        .step_by(6)
        .flat_map(|f| provider_bodies(&f.cmd, &String::from_utf8_lossy(&f.input)))
        .map(|(path, body)| format!("{path}\n{body}").into_bytes())
        .collect();
    Target {
        name: "proxy".into(),
        seeds: proxy_requests(fixtures),
        inner,
        wrap: Some(|rng, inner| {
            let text = String::from_utf8_lossy(inner);
            let (path, body) = text.split_once('\n').unwrap_or(("/v1/messages", &text));
            request(path, body, rng.u8(..4) == 0)
        }),
        tokens: HTTP_TOKENS,
        check: Box::new(check_proxy),
    }
}

fn check_proxy(case: &[u8]) -> Result<(), String> {
    let mut reader: &[u8] = case;
    let Ok(Some(request)) = sqz::http::read_request(&mut reader, 1 << 20) else {
        return Ok(());
    };
    let path = request.path.split('?').next().unwrap_or("");
    let Some(provider) = Provider::for_path(path) else {
        return Ok(());
    };
    let Ok(text) = std::str::from_utf8(&request.body) else {
        return Ok(());
    };
    let Ok(original) = json::parse(text) else {
        return Ok(());
    };
    let mut body = original.clone();
    let left = rewrite_body(provider, &mut body, &mut |_| None);
    if body != original || left.compressed != 0 {
        return Err("leaving every tool result changed the body".into());
    }
    let same = rewrite_body(provider, &mut body, &mut |block| {
        Some(block.text.to_string())
    });
    if body != original {
        return Err("handing every tool result back unchanged changed the body".into());
    }
    if same.compressed != same.tool_results || same.known != left.known {
        return Err(format!(
            "counts differ between passes: {left:?} then {same:?}"
        ));
    }
    let mut offered = 0;
    let replaced = rewrite_body(provider, &mut body, &mut |block| {
        offered += 1;
        (!block.position.is_empty()).then(|| format!("<{}>", block.text.len()))
    });
    if replaced.tool_results != offered || replaced.compressed != offered {
        return Err(format!("{offered} offered, counted {replaced:?}"));
    }
    if json::parse(&body.to_compact()).as_ref() != Ok(&body) {
        return Err("the rewritten body does not write back".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The exit trailer

/// `strip` takes only a final, well-formed trailer and exactly the line break before it, and
/// `strip_trapped` (the EXIT trap's form) exactly one marker line; the trailer the hook's
/// rewrite prints is always found after any output, whatever the line endings, and under the
/// trap with late output after it.
fn trailer_target(fixtures: &[Fixture]) -> Target {
    let mut seeds = Vec::new();
    for (k, f) in fixtures.iter().step_by(3).enumerate() {
        let mut s = f.input.clone();
        let crlf = if k % 4 == 0 { "\r\n" } else { "\n" };
        s.extend_from_slice(format!("{crlf}__SQZ_EXIT_{}__{crlf}", k * 37 % 300).as_bytes());
        seeds.push(s);
    }
    seeds.push(b"__SQZ_EXIT_3__\nmore output\n".to_vec());
    seeds.push(b"out\n__SQZ_EXIT_99999999999__\n".to_vec());
    seeds.push(b"__SQZ_EXIT_7__".to_vec());
    seeds.push(b"out\n__SQZ_EXIT_1__\nlate\n__SQZ_EXIT_2__\r\nlater".to_vec());
    Target {
        name: "trailer".into(),
        seeds,
        inner: Vec::new(),
        wrap: None,
        tokens: &[b"__SQZ_EXIT_0__", b"\r\n\r\n", b"__"],
        check: Box::new(check_trailer),
    }
}

fn check_trailer(case: &[u8]) -> Result<(), String> {
    let (body, code) = trailer::strip(case);
    if !case.starts_with(body) {
        return Err("the body is not a prefix of the input".into());
    }
    match code {
        None if body != case => return Err("no code, yet the input was cut".into()),
        None => {}
        Some(code) => {
            let rest = &case[body.len()..];
            let rest = rest
                .strip_prefix(b"\r\n")
                .or_else(|| rest.strip_prefix(b"\n"))
                .unwrap_or(rest);
            let well_formed = rest.strip_prefix(b"__SQZ_EXIT_").and_then(|r| {
                let digits = r.iter().take_while(|b| b.is_ascii_digit()).count();
                let number = std::str::from_utf8(&r[..digits])
                    .ok()?
                    .parse::<i32>()
                    .ok()?;
                let tail = r[digits..].strip_prefix(b"__")?;
                (number == code && tail.iter().all(|b| matches!(b, b'\r' | b'\n'))).then_some(())
            });
            if well_formed.is_none() {
                return Err(format!("code {code} from what is not a final trailer"));
            }
        }
    }
    let (kept, trapped) = trailer::strip_trapped(case);
    match trapped {
        None if kept.as_ref() != case => {
            return Err("trapped: no code, yet the input was cut".into())
        }
        None => {}
        Some(code) if !one_marker_removed(case, &kept, code) => {
            return Err(format!(
                "trapped: code {code}, but more or less than one marker line was taken out"
            ))
        }
        Some(_) => {}
    }
    let code = (case.len() % 256) as i32;
    for crlf in ["\n", "\r\n"] {
        let mut hooked = case.to_vec();
        hooked.extend_from_slice(format!("{crlf}__SQZ_EXIT_{code}__{crlf}").as_bytes());
        if trailer::strip(&hooked) != (case, Some(code)) {
            return Err(format!(
                "the hook's trailer ({crlf:?} line endings) is not stripped exactly"
            ));
        }
        // Under the EXIT trap, a background job may write after the trailer.
        hooked.extend_from_slice(b"late output\n");
        let mut want = case.to_vec();
        want.extend_from_slice(b"late output\n");
        let (kept, trapped) = trailer::strip_trapped(&hooked);
        if (kept.as_ref(), trapped) != (&want[..], Some(code)) {
            return Err(format!(
                "the trap's trailer ({crlf:?} line endings) with output after it is not taken out exactly"
            ));
        }
    }
    Ok(())
}

/// Whether `kept` is `input` without one marker line carrying `code` (and the line break
/// before it, and the line break or breaks after it).
fn one_marker_removed(input: &[u8], kept: &[u8], code: i32) -> bool {
    let Some(removed) = input.len().checked_sub(kept.len()).filter(|&r| r > 0) else {
        return false;
    };
    let prefix = input.iter().zip(kept).take_while(|(a, b)| a == b).count();
    let suffix = input
        .iter()
        .rev()
        .zip(kept.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let first = kept.len().saturating_sub(suffix);
    (first..=prefix.min(kept.len()))
        .any(|at| input[at + removed..] == kept[at..] && is_marker(&input[at..at + removed], code))
}

/// `\n__SQZ_EXIT_<code>__` with line breaks around it.
fn is_marker(bytes: &[u8], code: i32) -> bool {
    let inner = bytes
        .strip_prefix(b"\r\n")
        .or_else(|| bytes.strip_prefix(b"\n"))
        .unwrap_or(bytes);
    inner.strip_prefix(b"__SQZ_EXIT_").is_some_and(|r| {
        let digits = r.iter().take_while(|b| b.is_ascii_digit()).count();
        let number = std::str::from_utf8(&r[..digits])
            .ok()
            .and_then(|d| d.parse::<i32>().ok());
        let tail = r[digits..].strip_prefix(b"__");
        number == Some(code) && tail.is_some_and(|t| t.iter().all(|b| matches!(b, b'\r' | b'\n')))
    })
}

// ---------------------------------------------------------------------------------------------
// References

/// Every reference form parses to a lower-case hex prefix and a valid range, and writes back
/// to itself; expanding one against a store gives the stored bytes or exactly their lines.
fn reference_target(scratch: &Path, fixtures: &[Fixture]) -> Result<Target, String> {
    let mut engine = Engine::open(&scratch.join("reference"))?;
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for f in fixtures.iter().step_by(40) {
        let hash = engine.serve(&f.cmd, &f.input);
        let shown = sqz::text::shown_hash(&hash);
        for form in [
            reference::ref_token(&hash),
            reference::slice_token(shown, 2, 5),
            reference::delta_token(&hash),
            reference::lines_target(shown, 1, 3),
            format!("  ref:{}  ", hash.to_uppercase()),
            format!("{shown}:4-4"),
            format!("{}:L1-99999", &hash[..4]),
            format!(
                "output then {} and §ref:{shown}",
                reference::ref_token(shown)
            ),
        ] {
            seeds.push(form.into_bytes());
        }
    }
    Ok(Target {
        name: "reference".into(),
        seeds,
        inner: Vec::new(),
        wrap: None,
        tokens: &[
            b"\xc2\xa7",
            b"ref:",
            b"delta:",
            b":L",
            b"-",
            b"0123456789abcdef",
        ],
        check: Box::new(move |case| check_reference(&mut engine, case)),
    })
}

fn check_reference(engine: &mut Engine, case: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(case);
    let parsed = reference::parse(&text);
    if let Some(r) = &parsed {
        let hex = r
            .prefix
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if r.prefix.is_empty() || r.prefix.len() > 64 || !hex {
            return Err(format!("parsed to the prefix {:?}", r.prefix));
        }
        let written = match r.lines {
            Some((a, b)) if a == 0 || b < a => return Err(format!("parsed to the range {a}-{b}")),
            Some((a, b)) => vec![
                reference::slice_token(&r.prefix, a, b),
                reference::lines_target(&r.prefix, a, b),
            ],
            None => vec![
                reference::ref_token(&r.prefix),
                reference::delta_token(&r.prefix),
            ],
        };
        for form in written {
            if reference::parse(&form).as_ref() != Some(r) {
                return Err(format!(
                    "{form} does not parse back to what it was written from"
                ));
            }
        }
    }
    let _ = reference::normalize_hash(&text);
    let found = reference::refs_in(&text);
    for token in &found {
        if !token.starts_with("§ref:") || !token.ends_with('§') || !text.contains(token.as_str())
        {
            return Err(format!("found the token {token:?}"));
        }
    }
    if !found.is_empty() && !reference::holds_ref(&text) {
        return Err("holds_ref misses a token refs_in finds".into());
    }
    for line in text.lines() {
        let _ = (reference::is_delta_head(line), reference::opens_delta(line));
    }
    let now = engine.tick();
    let Ok((hash, bytes)) = sqz::serve::expand::lookup(&mut engine.store, &text, now) else {
        return Ok(());
    };
    let original = engine
        .store
        .original(&hash)
        .ok()
        .flatten()
        .unwrap_or_default();
    let want = match parsed.and_then(|r| r.lines) {
        Some((a, b)) => sqz::serve::expand::line_range(&original, a, b).unwrap_or_default(),
        None => &original[..],
    };
    if bytes != want {
        return Err(format!(
            "expand gives {} bytes, not {}",
            bytes.len(),
            want.len()
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Deltas

const DELTA_TOKENS: &[&[u8]] = &[
    "§delta:0123456789abcdef§\n".as_bytes(),
    b"@@ skip 3\n",
    b"@@ ",
    b"\n+",
    b"\n-",
    b"\n ",
    b"\\ No newline at end of file",
];

/// A case is a base text and a new one, split at the first NUL: the delta from one to the
/// other applies back to the new text, and any text read as a delta fails cleanly.
fn delta_target(fixtures: &[Fixture]) -> Target {
    let mut rng = fastrand::Rng::with_seed(11);
    let seeds = small(fixtures)
        .step_by(3)
        .map(|f| {
            let base: Vec<&[u8]> = f.input.split(|&b| b == b'\n').take(80).collect();
            let mut new: Vec<&[u8]> = base.clone();
            for _ in 0..rng.usize(1..5) {
                if new.is_empty() {
                    break;
                }
                let at = rng.usize(..new.len());
                match rng.u8(..3) {
                    0 => {
                        new.remove(at);
                    }
                    1 => new.insert(at, b"a line added here"),
                    _ => new[at] = b"a line changed",
                }
            }
            let mut case = base.join(&b'\n');
            case.push(0);
            case.extend(new.join(&b'\n'));
            case
        })
        .collect();
    Target {
        name: "delta".into(),
        seeds,
        inner: Vec::new(),
        wrap: None,
        tokens: DELTA_TOKENS,
        check: Box::new(check_delta),
    }
}

fn check_delta(case: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(case);
    let (base, new) = text.split_once('\0').unwrap_or((&text, ""));
    if let Some(d) = delta::encode("0123456789abcdef", base, new) {
        match delta::apply(base, &d) {
            Ok(applied) if applied == new => {}
            Ok(_) => return Err("the delta applied to its base gives another text".into()),
            Err(e) => return Err(format!("the delta does not apply to its base: {e}")),
        }
    }
    let _ = delta::apply(base, new);
    let _ = delta::worth_trying(base, new);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The shell lexer

/// The lexer reads any text; a rewrite holds the original verbatim, labelled with it, and
/// (sampled, where bash is there to ask) parses wherever the original parses.
fn lexer(commands: Vec<Vec<u8>>) -> Target {
    Target {
        name: "lexer".into(),
        seeds: commands,
        inner: Vec::new(),
        wrap: None,
        tokens: hooks::TOKENS,
        check: Box::new(move |case| {
            let command = String::from_utf8_lossy(case);
            let _ = sqz::hook::lexer::analyse(&command, |_, _| Ok(()));
            // One case in eight asks bash, chosen by its bytes so a saved case asks again.
            let sampled = super::fnv1a(case).is_multiple_of(8);
            let mut original_parses = None;
            for shape in [Shape::Trap, Shape::Printf] {
                let Decision::Rewrite(new) = rewrite::decide_as(&command, shape) else {
                    continue;
                };
                hooks::rewrite_keeps(Some(&command), Some(&new))?;
                if sampled
                    && *original_parses.get_or_insert_with(|| parses(&command)) == Some(true)
                    && parses(&new) == Some(false)
                {
                    return Err(format!(
                        "bash parses the command but not its {shape:?} rewrite: {:?}",
                        engine::short(&new)
                    ));
                }
            }
            Ok(())
        }),
    }
}

/// Whether `bash -n` reads `command` without a syntax error; `None` when bash cannot be asked.
/// The command goes in on stdin: an argument has a length limit that a long case passes.
fn parses(command: &str) -> Option<bool> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut bash = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // bash may stop reading at the first error; the pipe then closes under the write.
    let _ = bash.stdin.take()?.write_all(command.as_bytes());
    bash.wait().ok().map(|status| status.success())
}
