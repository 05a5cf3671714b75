//! `sqz mcp proxy -- CMD…`: relays between an MCP client and the stdio server CMD, compressing
//! successful text results of `tools/call` through the engine, compacting `tools/list`
//! descriptions and answering `sqz_expand` itself. Errors, non-text content, notifications and
//! every client-to-server message pass through byte for byte.

use super::rpc::{self, Message};
use super::server::trim_line;
use super::tools::{self, Context};
use super::workspace::Workspace;
use crate::env::Env;
use crate::error::Error;
use crate::json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// After the client closes, the upstream gets this long to finish and exit on its own.
const GRACE: Duration = Duration::from_secs(3);
const DESCRIPTION_CAP: usize = 400;
const LAZY_DESCRIPTION_CAP: usize = 160;

const NOTE: &str = "Tool results pass through sqz, which keeps them small without losing anything: §ref:HASH§ stands for content you already received earlier in this session, and a marker like [… N lines · sqz expand HASH:La-b] names lines that were folded. Call sqz_expand with the ref, hash or HASH:La-b to get the original text.";
const LAZY_NOTE: &str = "Tool descriptions are shortened to their first sentence; call sqz_tool_help with a tool's name for its full description.";

pub struct ProxyOptions {
    pub lazy_tools: bool,
    pub no_desc: bool,
    pub no_cache: bool,
    pub command: Vec<OsString>,
}

enum Event {
    Client(Vec<u8>),
    ClientClosed,
    Upstream(Vec<u8>),
    UpstreamClosed,
}

/// What a forwarded client request was, to know how to treat its answer.
enum Pending {
    Initialize,
    ToolsList { first_page: bool },
    ToolsCall { tool: String },
    Other,
}

struct Proxy {
    options: ProxyOptions,
    ctx: Context,
    pending: HashMap<String, Pending>,
    /// Full descriptions of tools shortened by `--lazy-tools`, for `sqz_tool_help`.
    full_descriptions: HashMap<String, String>,
}

pub fn run(options: ProxyOptions, env: &Env) -> Result<u8, Error> {
    let Some((program, args)) = options.command.split_first() else {
        return Err(Error::usage("mcp proxy needs the upstream command after -- (usage: sqz mcp proxy [--lazy-tools] [--no-desc] [--no-cache] -- CMD ARGS…)"));
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return Err(Error::failed(format!(
                "cannot start the upstream server '{}': {e}",
                program.to_string_lossy()
            )))
        }
    };
    let store = if options.no_cache || env.no_dedup {
        None
    } else {
        super::server::open_store(env)
    };
    let (events_tx, events) = mpsc::channel();
    let upstream_out = child.stdout.take().expect("stdout is piped");
    spawn_reader(
        std::io::stdin(),
        events_tx.clone(),
        Event::Client,
        Event::ClientClosed,
    );
    spawn_reader(
        upstream_out,
        events_tx,
        Event::Upstream,
        Event::UpstreamClosed,
    );
    let mut upstream_in = child.stdin.take();
    let mut proxy = Proxy {
        ctx: Context {
            store,
            env: env.clone(),
            workspace: Workspace::new(std::path::PathBuf::from("."), &[]),
        },
        options,
        pending: HashMap::new(),
        full_descriptions: HashMap::new(),
    };
    let mut out = std::io::stdout().lock();
    let mut closing_since: Option<Instant> = None;
    loop {
        let event = match closing_since {
            Some(at) => match events.recv_timeout(GRACE.saturating_sub(at.elapsed())) {
                Ok(event) => event,
                Err(_) => break,
            },
            None => match events.recv() {
                Ok(event) => event,
                Err(_) => break,
            },
        };
        match event {
            Event::Client(line) => {
                let line = trim_line(&line);
                if line.is_empty() {
                    continue;
                }
                match proxy.on_client_line(line) {
                    Route::Answer(answer) => {
                        let _ = send(&mut out, answer.as_bytes());
                    }
                    Route::Forward => {
                        let written = upstream_in
                            .as_mut()
                            .is_some_and(|up| send(up, line).is_ok());
                        if !written {
                            proxy.fail_pending(
                                &mut out,
                                "the upstream server is not accepting input",
                            );
                        }
                    }
                }
            }
            Event::ClientClosed => {
                // Closing stdin is the MCP way to ask a stdio server to exit.
                upstream_in = None;
                closing_since.get_or_insert_with(Instant::now);
            }
            Event::Upstream(line) => {
                let line = trim_line(&line);
                if line.is_empty() {
                    continue;
                }
                let relayed = match proxy.on_upstream_line(line) {
                    Some(changed) => send(&mut out, changed.as_bytes()),
                    None => send(&mut out, line),
                };
                if relayed.is_err() && closing_since.is_none() {
                    upstream_in = None;
                    closing_since = Some(Instant::now());
                }
            }
            Event::UpstreamClosed => {
                let status = wait_briefly(&mut child);
                if closing_since.is_some() {
                    return Ok(0);
                }
                let why = format!("the upstream server exited ({status}) before answering");
                proxy.fail_pending(&mut out, &why);
                return Err(Error::failed(why));
            }
        }
    }
    // The grace period is over: stop the upstream.
    let _ = child.kill();
    let _ = child.wait();
    Ok(0)
}

enum Route {
    Answer(String),
    Forward,
}

impl Proxy {
    fn on_client_line(&mut self, line: &[u8]) -> Route {
        let Ok(Message::Request { id, method, params }) = rpc::parse(line) else {
            return Route::Forward;
        };
        // The proxy's own answers take the shape of the client's protocol era.
        let answer = |result: Value| {
            let result = match super::server::asked_version(params.as_ref()) {
                Some(_) => super::server::modern_result("tools/call", result),
                None => result,
            };
            Route::Answer(rpc::result_line(&id, result))
        };
        let empty = Value::object();
        let params_or_empty = params.as_ref().unwrap_or(&empty);
        let pending = match method.as_str() {
            "initialize" => Pending::Initialize,
            "tools/list" => Pending::ToolsList {
                first_page: params_or_empty.get("cursor").is_none(),
            },
            "tools/call" => {
                let tool = params_or_empty
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let args = params_or_empty
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(Value::object);
                if tool == "sqz_expand" {
                    return answer(tools::call(&mut self.ctx, "expand", &args).to_value());
                }
                if tool == "sqz_tool_help" && self.options.lazy_tools {
                    return answer(self.tool_help(&args).to_value());
                }
                Pending::ToolsCall {
                    tool: tool.to_string(),
                }
            }
            _ => Pending::Other,
        };
        self.pending.insert(id.to_compact(), pending);
        Route::Forward
    }

    /// The changed message, or `None` to relay the line as it came.
    fn on_upstream_line(&mut self, line: &[u8]) -> Option<String> {
        let Ok(Message::Response { id, result, error }) = rpc::parse(line) else {
            return None;
        };
        let pending = self.pending.remove(&id.to_compact())?;
        if error.is_some() {
            return None;
        }
        let mut result = result?;
        let changed = match pending {
            Pending::Initialize => self.note_instructions(&mut result),
            Pending::ToolsList { first_page } => self.compact_tools(&mut result, first_page),
            Pending::ToolsCall { tool } => self.compress_result(&tool, &mut result),
            Pending::Other => false,
        };
        changed.then(|| rpc::result_line(&id, result))
    }

    fn note_instructions(&self, result: &mut Value) -> bool {
        let Some(members) = result.as_object_mut() else {
            return false;
        };
        let mut note = NOTE.to_string();
        if self.options.lazy_tools {
            note = format!("{note} {LAZY_NOTE}");
        }
        match members.iter_mut().find(|(k, _)| k == "instructions") {
            Some((_, Value::String(existing))) if !existing.trim().is_empty() => {
                existing.push_str("\n\n");
                existing.push_str(&note);
            }
            Some((_, other)) => *other = Value::String(note),
            None => members.push(("instructions".into(), Value::String(note))),
        }
        true
    }

    fn compact_tools(&mut self, result: &mut Value, first_page: bool) -> bool {
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return false;
        };
        if !self.options.no_desc {
            for tool in tools.iter_mut() {
                let name = tool
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let Some(Value::String(description)) = tool.get_mut("description") else {
                    continue;
                };
                let short = if self.options.lazy_tools {
                    first_sentence(description, LAZY_DESCRIPTION_CAP)
                } else {
                    compact_description(description, DESCRIPTION_CAP)
                };
                if self.options.lazy_tools && short != *description {
                    self.full_descriptions.insert(name, description.clone());
                }
                *description = short;
            }
        }
        if first_page {
            let has = |tools: &[Value], name: &str| {
                tools
                    .iter()
                    .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
            };
            if !has(tools, "sqz_expand") {
                tools.push(injected_tool(
                    "sqz_expand",
                    "Return the original text behind a §ref:HASH§, a hash prefix or HASH:La-b from a tool result that sqz shortened.",
                    "ref",
                ));
            }
            if self.options.lazy_tools && !has(tools, "sqz_tool_help") {
                tools.push(injected_tool(
                    "sqz_tool_help",
                    "Return the full description of a tool whose description was shortened.",
                    "name",
                ));
            }
        }
        true
    }

    fn tool_help(&self, args: &Value) -> tools::ToolOutput {
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        match self.full_descriptions.get(name) {
            Some(full) => tools::ToolOutput::text(full.clone()),
            None => tools::ToolOutput::error(format!(
                "no shortened description is known for '{name}'; its description in tools/list is complete"
            )),
        }
    }

    /// Compresses each text item of a successful result; everything else stays as it came.
    fn compress_result(&mut self, tool: &str, result: &mut Value) -> bool {
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return false;
        }
        let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) else {
            return false;
        };
        let label = format!("mcp:{tool}");
        let mut changed = false;
        for item in content.iter_mut() {
            if item.get("type").and_then(Value::as_str) != Some("text") {
                continue;
            }
            let Some(Value::String(text)) = item.get_mut("text") else {
                continue;
            };
            let no_cache = self.options.no_cache || self.ctx.store.is_none();
            let served = crate::serve::compress(
                &label,
                text.as_bytes(),
                self.ctx.store.as_mut(),
                no_cache,
                &self.ctx.env,
                crate::clock::now_ms(),
            );
            if served.stdout != text.as_bytes() {
                if let Ok(new_text) = String::from_utf8(served.stdout) {
                    *text = new_text;
                    changed = true;
                }
            }
        }
        changed
    }

    /// Answers every request still waiting for the upstream with an error.
    fn fail_pending(&mut self, out: &mut impl Write, why: &str) {
        let mut ids: Vec<String> = self.pending.drain().map(|(id, _)| id).collect();
        ids.sort();
        for id in ids {
            let id = crate::json::parse(&id).unwrap_or(Value::Null);
            let _ = send(
                out,
                rpc::error_line(Some(&id), rpc::INTERNAL_ERROR, why).as_bytes(),
            );
        }
    }
}

fn injected_tool(name: &str, description: &str, argument: &str) -> Value {
    let schema = format!(
        r#"{{"type":"object","properties":{{"{argument}":{{"type":"string"}}}},"required":["{argument}"]}}"#
    );
    Value::Object(vec![
        ("name".into(), Value::str(name)),
        ("description".into(), Value::str(description)),
        (
            "inputSchema".into(),
            crate::json::parse(&schema).unwrap_or_else(|_| Value::object()),
        ),
    ])
}

/// Whitespace collapsed; past `cap` characters, cut at the last sentence end beyond half the
/// cap, or at the cap with an ellipsis.
pub fn compact_description(description: &str, cap: usize) -> String {
    let collapsed = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= cap {
        return collapsed;
    }
    let cut: String = collapsed.chars().take(cap).collect();
    match cut.rfind(". ") {
        Some(end) if cut[..end].chars().count() > cap / 2 => format!("{}.", &cut[..end]),
        _ => format!("{}…", cut.trim_end()),
    }
}

/// The first sentence, at most `cap` characters.
pub fn first_sentence(description: &str, cap: usize) -> String {
    let collapsed = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = match collapsed.find(". ") {
        Some(end) => format!("{}.", &collapsed[..end]),
        None => collapsed,
    };
    compact_description(&sentence, cap)
}

fn send(out: &mut impl Write, line: &[u8]) -> std::io::Result<()> {
    out.write_all(line)?;
    out.write_all(b"\n")?;
    out.flush()
}

fn spawn_reader<R: Read + Send + 'static>(
    source: R,
    events: mpsc::Sender<Event>,
    line_event: fn(Vec<u8>) -> Event,
    closed: Event,
) {
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(source);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if events.send(line_event(line)).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = events.send(closed);
    });
}

/// The upstream's exit status once its output closed, as text for the error message.
fn wait_briefly(child: &mut Child) -> String {
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.to_string(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => return "its output closed".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_collapsed_and_cut_at_a_sentence() {
        assert_eq!(
            compact_description("Reads  a\n file.", 400),
            "Reads a file."
        );
        let long = format!("{}. {}", "a".repeat(300), "b".repeat(300));
        assert_eq!(
            compact_description(&long, 400),
            format!("{}.", "a".repeat(300))
        );
        let no_stop = "c".repeat(500);
        assert_eq!(compact_description(&no_stop, 400).chars().count(), 401);
        assert_eq!(
            first_sentence("Echo it back. Second part.", 160),
            "Echo it back."
        );
    }
}
