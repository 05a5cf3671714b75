//! `sqz mcp`: the MCP server. It answers the handshake era (`initialize`, negotiating among the
//! dated versions below, `ping`) and the stateless era (`server/discover`, `_meta` on every
//! request), serves `tools/list` and `tools/call` in both, asks the client for its roots when
//! it can, and keeps serving after any bad line or panic. Only protocol goes to stdout.

use super::rpc::{self, Message};
use super::tools::{self, Context};
use super::workspace::Workspace;
use crate::env::Env;
use crate::json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Dated protocol versions of the `initialize` handshake, newest first. A client asking for
/// another one is answered with the newest, as the handshake prescribes.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Stateless revisions, served to requests that name one in `_meta` (no handshake; the client
/// finds them with `server/discover`).
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// How long a client may cache the tool list: it never changes while the server runs.
const TOOLS_TTL_MS: i64 = 3_600_000;
/// How long a file tool waits for the client's answer to `roots/list` before it checks paths
/// against the roots it already knows.
const ROOTS_WAIT: Duration = Duration::from_secs(2);

const INSTRUCTIONS: &str = "sqz keeps tool output small without losing it. Prefer sqz_read_file, sqz_grep and sqz_list_dir for files you may read more than once: a repeat comes back as §ref:HASH§ (you already have that text), §ref:HASH:La-b§ (lines a-b of an earlier read) or §delta:HASH§ (the changes since an earlier read). Markers like [… N lines · sqz expand HASH:La-b] name what was folded. Call expand with any ref or hash to get the original bytes.";

pub struct Options {
    pub allow: Vec<PathBuf>,
}

pub struct Server {
    ctx: Context,
    /// The client said it can answer `roots/list`.
    client_has_roots: bool,
    /// The id of our unanswered `roots/list` request.
    roots_pending: Option<String>,
    roots_asked: u64,
    /// The transport can carry requests to the client (stdio can; plain HTTP answers cannot).
    can_ask_client: bool,
}

impl Server {
    pub fn new(options: &Options, env: &Env) -> Server {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let store = open_store(env);
        Server {
            ctx: Context {
                store,
                env: env.clone(),
                workspace: Workspace::new(cwd, &options.allow),
            },
            client_has_roots: false,
            roots_pending: None,
            roots_asked: 0,
            can_ask_client: true,
        }
    }

    /// A server that never sends the client requests of its own (for transports without a
    /// stream back to the client): it then keeps to the roots it was started with.
    pub fn without_client_requests(mut self) -> Server {
        self.can_ask_client = false;
        self
    }

    /// Whether a file tool call should wait for the roots the client is about to send.
    pub fn awaiting_roots(&self) -> bool {
        self.roots_pending.is_some()
    }

    /// Handles one line from the client and returns the lines to send back, in order.
    pub fn handle_line(&mut self, line: &[u8]) -> Vec<String> {
        match rpc::parse(line) {
            Err(rejected) => vec![rejected.answer()],
            Ok(Message::Request { id, method, params }) => {
                let asked = asked_version(params.as_ref());
                let modern = method == "server/discover" || asked.is_some();
                if let Some(asked) = asked.filter(|v| !MODERN_VERSIONS.contains(v)) {
                    return vec![unsupported_version(&id, asked)];
                }
                // A panic inside a request is answered, and its report goes to stderr as one
                // line; the process's panic hook (set once, in main) is never swapped.
                let handled = crate::fault::catch(|| self.request(&method, params.as_ref()))
                    .inspect_err(|report| eprintln!("[sqz] mcp: internal error: {report}"));
                vec![match handled {
                    Ok(Ok(result)) if modern => {
                        rpc::result_line(&id, modern_result(&method, result))
                    }
                    Ok(Ok(result)) => rpc::result_line(&id, result),
                    Ok(Err((code, message))) => rpc::error_line(Some(&id), code, &message),
                    Err(_) => rpc::error_line(
                        Some(&id),
                        rpc::INTERNAL_ERROR,
                        &format!("internal error while handling {method}; the server goes on"),
                    ),
                }]
            }
            Ok(Message::Notification { method, .. }) => self.notification(&method),
            Ok(Message::Response { id, result, .. }) => {
                self.response(&id, result.as_ref());
                Vec::new()
            }
        }
    }

    /// Whether `line` is a call of a tool that checks paths against the roots.
    pub fn needs_roots(line: &[u8]) -> bool {
        match rpc::parse(line) {
            Ok(Message::Request { method, params, .. }) if method == "tools/call" => params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|n| matches!(n, "sqz_read_file" | "sqz_grep" | "sqz_list_dir")),
            _ => false,
        }
    }

    fn request(&mut self, method: &str, params: Option<&Value>) -> Result<Value, (i64, String)> {
        let empty = Value::object();
        let params = params.unwrap_or(&empty);
        match method {
            "initialize" => Ok(self.initialize(params)),
            "server/discover" => Ok(Value::Object(vec![
                (
                    "supportedVersions".into(),
                    Value::Array(MODERN_VERSIONS.iter().map(|v| Value::str(v)).collect()),
                ),
                ("capabilities".into(), capabilities()),
                ("instructions".into(), Value::str(INSTRUCTIONS)),
            ])),
            "ping" => Ok(Value::object()),
            // Debug builds only (what `cargo test` runs): shows that a panicking request is
            // answered and the next one still served. The release binary has no such method.
            "sqz/test-panic" if cfg!(debug_assertions) => panic!("sqz/test-panic was called"),
            "tools/list" => Ok(tools::list()),
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).ok_or((
                    rpc::INVALID_PARAMS,
                    "tools/call needs params.name".to_string(),
                ))?;
                if !tools::exists(name) {
                    return Err((rpc::INVALID_PARAMS, format!("unknown tool: {name}")));
                }
                let args = match params.get("arguments") {
                    None | Some(Value::Null) => Value::object(),
                    Some(v @ Value::Object(_)) => v.clone(),
                    Some(_) => {
                        return Err((
                            rpc::INVALID_PARAMS,
                            "tools/call params.arguments must be an object".into(),
                        ))
                    }
                };
                Ok(tools::call(&mut self.ctx, name, &args).to_value())
            }
            _ => Err((rpc::METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    fn initialize(&mut self, params: &Value) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = asked
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        self.client_has_roots = params
            .get("capabilities")
            .and_then(|c| c.get("roots"))
            .is_some_and(|r| r.as_object().is_some());
        Value::Object(vec![
            ("protocolVersion".into(), Value::str(version)),
            ("capabilities".into(), capabilities()),
            ("serverInfo".into(), server_info()),
            ("instructions".into(), Value::str(INSTRUCTIONS)),
        ])
    }

    fn notification(&mut self, method: &str) -> Vec<String> {
        match method {
            "notifications/initialized" | "notifications/roots/list_changed"
                if self.client_has_roots && self.can_ask_client =>
            {
                self.roots_asked += 1;
                let id = format!("sqz-roots-{}", self.roots_asked);
                let line = rpc::request_line(&id, "roots/list");
                self.roots_pending = Some(id);
                vec![line]
            }
            _ => Vec::new(),
        }
    }

    fn response(&mut self, id: &Value, result: Option<&Value>) {
        if self.roots_pending.as_deref() != id.as_str() {
            return;
        }
        self.roots_pending = None;
        let uris = result
            .and_then(|r| r.get("roots"))
            .and_then(Value::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|root| root.get("uri").and_then(Value::as_str));
        self.ctx.workspace.set_client_roots(uris);
    }

    /// Stops waiting for roots that did not come.
    fn give_up_on_roots(&mut self) {
        self.roots_pending = None;
    }
}

/// The protocol version a stateless-era request names in its `_meta`.
pub(super) fn asked_version(params: Option<&Value>) -> Option<&str> {
    params?.get("_meta")?.get(VERSION_KEY)?.as_str()
}

fn capabilities() -> Value {
    Value::Object(vec![(
        "tools".into(),
        Value::Object(vec![("listChanged".into(), Value::Bool(false))]),
    )])
}

fn server_info() -> Value {
    Value::Object(vec![
        ("name".into(), Value::str("sqz")),
        ("version".into(), Value::str(env!("CARGO_PKG_VERSION"))),
    ])
}

/// A result as the stateless revision shapes it: `resultType`, the server in `_meta`, and a
/// cache lifetime on lists and discovery. Earlier revisions never see these members (a strict
/// 2025 client may reject a result that carries them).
pub(super) fn modern_result(method: &str, mut result: Value) -> Value {
    let Some(members) = result.as_object_mut() else {
        return result;
    };
    members.push(("resultType".into(), Value::str("complete")));
    if matches!(method, "tools/list" | "server/discover") {
        members.push(("ttlMs".into(), Value::int(TOOLS_TTL_MS)));
        members.push(("cacheScope".into(), Value::str("public")));
    }
    members.push((
        "_meta".into(),
        Value::Object(vec![(SERVER_INFO_KEY.into(), server_info())]),
    ));
    result
}

fn unsupported_version(id: &Value, asked: &str) -> String {
    let supported = MODERN_VERSIONS.iter().map(|v| Value::str(v)).collect();
    rpc::error_line_with_data(
        Some(id),
        rpc::UNSUPPORTED_PROTOCOL_VERSION,
        &format!("unsupported protocol version {asked}"),
        Some(Value::Object(vec![
            ("supported".into(), Value::Array(supported)),
            ("requested".into(), Value::str(asked)),
        ])),
    )
}

/// The store for a server's life, or none (then every answer is sent whole): the reason it is
/// unavailable, or the notice that a corrupt store was moved aside, goes to stderr once.
pub fn open_store(env: &Env) -> Option<crate::store::Store> {
    match crate::serve::open_store(env, crate::clock::now_ms()) {
        Ok((store, notice)) => {
            if let Some(notice) = notice {
                eprintln!("{notice}");
            }
            Some(store)
        }
        Err(e) => {
            eprintln!("sqz: {e}");
            None
        }
    }
}

/// The stdio transport: one message per line in, one per line out, until end of input.
pub fn serve_stdio(options: &Options, env: &Env) -> u8 {
    let mut server = Server::new(options, env);
    let (lines_tx, lines) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            let mut line = Vec::new();
            match stdin.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if lines_tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut out = std::io::stdout().lock();
    // Calls held back while the client's roots are on their way, in arrival order.
    let mut deferred: VecDeque<Vec<u8>> = VecDeque::new();
    let mut deadline: Option<Instant> = None;
    let mut open = true;
    while open || !deferred.is_empty() {
        let next = match deadline {
            _ if !open => None,
            Some(at) => match lines.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(line) => Some(line),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    server.give_up_on_roots();
                    None
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    open = false;
                    None
                }
            },
            None => match lines.recv() {
                Ok(line) => Some(line),
                Err(_) => {
                    open = false;
                    None
                }
            },
        };
        if !open {
            server.give_up_on_roots();
        }
        if let Some(line) = next {
            let trimmed = trim_line(&line);
            if trimmed.is_empty() {
                continue;
            }
            let wait =
                !deferred.is_empty() || (server.awaiting_roots() && Server::needs_roots(trimmed));
            if wait {
                deadline.get_or_insert_with(|| Instant::now() + ROOTS_WAIT);
                // The roots answer itself is never held back.
                if matches!(rpc::parse(trimmed), Ok(Message::Response { .. })) {
                    if !write_lines(&mut out, server.handle_line(trimmed)) {
                        return 0;
                    }
                } else {
                    deferred.push_back(trimmed.to_vec());
                }
            } else if !write_lines(&mut out, server.handle_line(trimmed)) {
                return 0;
            }
        }
        if !server.awaiting_roots() {
            deadline = None;
            while let Some(line) = deferred.pop_front() {
                if !write_lines(&mut out, server.handle_line(&line)) {
                    return 0;
                }
            }
        }
    }
    0
}

/// The line without its line break (`\n` or `\r\n`).
pub fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Writes each message on its own line; false once stdout is closed.
fn write_lines(out: &mut impl Write, lines: Vec<String>) -> bool {
    for line in lines {
        if out
            .write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .is_err()
        {
            return false;
        }
    }
    true
}
