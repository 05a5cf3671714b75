//! `sqz discover --replay`: every tool result of agent sessions (Claude Code, Codex CLI,
//! Copilot CLI, OpenCode, Gemini CLI; each file's client told by its content), in order, through
//! sqz in a throwaway store per session, counted against what the client showed the model. Two
//! columns: the hook path (what that client's installed hooks change, per `clients::CLIENTS`)
//! and routed (every result through `compress`, as an MCP proxy would see it). Every reference
//! and delta either column served is expanded again and checked. Nothing here prints:
//! `cmd/discover.rs` does, from the `Report`.

pub mod claude;
pub mod clients;
pub mod codex;
pub mod copilot;
pub mod gemini;
mod hooks;
pub mod opencode;
pub mod report;
pub mod transcript;

use crate::engine::delta;
use crate::env::Env;
use crate::error::Error;
use crate::json::Value;
use crate::serve::{self, expand, Live};
use crate::store::{EventKind, Store};
pub use clients::Row;
use clients::{Client, Hook, CLIENTS};
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use transcript::{Call, Event};

/// What current Claude Code answers a Read of an unchanged file with the same range.
pub const STUB: &str =
    "Wasted call — file unchanged since your last Read. Refer to that earlier tool_result instead.";

/// The replay clock for lines without a timestamp: call i at START + 1000·i.
const CLOCK_START: i64 = 1_000_000_000_000;

/// What a call came out as in one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    FirstSeen,
    ExactRepeat,
    LineRange,
    NearRepeat,
    /// The client's own answer to an unchanged re-read.
    Stub,
    /// sqz did not change it: a tool no hook sees, a failed call, the hook answered `{}`, or
    /// what sqz would send is larger than the preview the client showed.
    Unchanged,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::FirstSeen,
        Kind::ExactRepeat,
        Kind::LineRange,
        Kind::NearRepeat,
        Kind::Stub,
        Kind::Unchanged,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::FirstSeen => "first-seen",
            Kind::ExactRepeat => "exact repeat",
            Kind::LineRange => "line range",
            Kind::NearRepeat => "near-repeat",
            Kind::Stub => "stub",
            Kind::Unchanged => "unchanged",
        }
    }

    fn of_event(kind: EventKind) -> Kind {
        match kind {
            EventKind::Ref => Kind::ExactRepeat,
            EventKind::Slice => Kind::LineRange,
            EventKind::Delta => Kind::NearRepeat,
            _ => Kind::FirstSeen,
        }
    }

    /// The kind of a hook's replacement text, from the tokens it holds.
    fn of_text(text: &str) -> Kind {
        if text.lines().any(crate::doc::reference::is_delta_head) {
            Kind::NearRepeat
        } else if crate::doc::reference::refs_in(text)
            .iter()
            .any(|t| t.contains(":L"))
        {
            Kind::LineRange
        } else if !crate::doc::reference::refs_in(text).is_empty() {
            Kind::ExactRepeat
        } else {
            Kind::FirstSeen
        }
    }
}

/// The two columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Hook,
    Routed,
}

impl Column {
    pub fn name(self) -> &'static str {
        match self {
            Column::Hook => "hook",
            Column::Routed => "routed",
        }
    }
}

/// Calls and tokens: raw is what the client shows without sqz, out what sqz would send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub calls: usize,
    pub raw: usize,
    pub out: usize,
}

/// One row's sums, and the client's own names of the tools in it, in order of first use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolRow {
    pub tool: &'static str,
    pub calls: usize,
    pub raw: usize,
    pub hook: usize,
    pub routed: usize,
    pub names: Vec<String>,
}

impl ToolRow {
    fn add(&mut self, other: &ToolRow) {
        self.calls += other.calls;
        self.raw += other.raw;
        self.hook += other.hook;
        self.routed += other.routed;
        for name in &other.names {
            if !self.names.contains(name) {
                self.names.push(name.clone());
            }
        }
    }
}

/// The rows' sum, named `name`.
fn sum<'a>(name: &'static str, rows: impl IntoIterator<Item = &'a ToolRow>) -> ToolRow {
    let mut total = ToolRow {
        tool: name,
        ..ToolRow::default()
    };
    rows.into_iter().for_each(|r| total.add(r));
    total
}

fn empty_rows() -> Vec<ToolRow> {
    Row::ALL
        .iter()
        .map(|row| ToolRow {
            tool: row.name(),
            ..ToolRow::default()
        })
        .collect()
}

/// One client's share of the replay.
pub struct ClientReport {
    pub client: &'static str,
    pub hook_says: &'static str,
    /// Files recognised as this client's sessions, and those replayed.
    pub files: usize,
    pub sessions: usize,
    /// One per `Row`, in order.
    pub tools: Vec<ToolRow>,
}

impl ClientReport {
    pub fn total(&self) -> ToolRow {
        sum("total", &self.tools)
    }
}

/// A call whose sqz version cost more tokens than the raw result.
pub struct Larger {
    pub column: Column,
    pub client: &'static str,
    pub file: String,
    pub tool: String,
    pub label: String,
    pub raw: usize,
    pub out: usize,
}

/// One call as both columns served it.
pub struct CallRow {
    pub client: &'static str,
    pub file: String,
    pub tool: String,
    pub row: Row,
    pub label: String,
    pub raw: usize,
    pub hook: usize,
    pub hook_kind: Kind,
    pub routed: usize,
    pub routed_kind: Kind,
}

/// A reference or delta that did not expand to what it stands for.
pub struct Failure {
    pub column: Column,
    pub client: &'static str,
    pub file: String,
    pub tool: String,
    pub label: String,
    pub token: String,
    pub reason: String,
}

/// Everything a replay found.
pub struct Report {
    /// Session files found (a `.json` file found in a directory counts only when its content
    /// is a known client's session).
    pub files: usize,
    /// Files replayed (the others are in `skipped`, with the reason).
    pub sessions: usize,
    pub skipped: Vec<(String, String)>,
    pub calls: usize,
    pub compactions: usize,
    /// Tool calls with no result in the file.
    pub unanswered: usize,
    /// Claude Code results without `toolUseResult` (subagent transcripts): the PostToolUse
    /// hook is given no `tool_response` for them, so it leaves them as they are.
    pub without_tool_use_result: usize,
    /// One per client in `CLIENTS`, in order.
    pub clients: Vec<ClientReport>,
    pub hook_kinds: Vec<(Kind, Tally)>,
    pub routed_kinds: Vec<(Kind, Tally)>,
    pub larger: Vec<Larger>,
    /// Every call, in replay order.
    pub each: Vec<CallRow>,
    /// References and deltas expanded and compared.
    pub checked: usize,
    pub failures: Vec<Failure>,
}

impl Report {
    fn new() -> Report {
        let kinds = || Kind::ALL.iter().map(|k| (*k, Tally::default())).collect();
        Report {
            files: 0,
            sessions: 0,
            skipped: Vec::new(),
            calls: 0,
            compactions: 0,
            unanswered: 0,
            without_tool_use_result: 0,
            clients: CLIENTS
                .iter()
                .map(|c| ClientReport {
                    client: c.name,
                    hook_says: c.hook_says,
                    files: 0,
                    sessions: 0,
                    tools: empty_rows(),
                })
                .collect(),
            hook_kinds: kinds(),
            routed_kinds: kinds(),
            larger: Vec::new(),
            each: Vec::new(),
            checked: 0,
            failures: Vec::new(),
        }
    }

    /// The tool rows summed over every client.
    pub fn tools(&self) -> Vec<ToolRow> {
        let mut rows = empty_rows();
        for client in &self.clients {
            for (row, theirs) in rows.iter_mut().zip(&client.tools) {
                row.add(theirs);
            }
        }
        rows
    }

    /// The sum of every call.
    pub fn total(&self) -> ToolRow {
        sum("total", &self.tools())
    }

    fn client(&mut self, name: &str) -> &mut ClientReport {
        let at = self.clients.iter().position(|c| c.client == name);
        &mut self.clients[at.expect("every client has a report")]
    }
}

/// The `.jsonl` and `.json` files `paths` name, directories searched recursively, sorted by
/// path.
pub fn transcripts(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
        } else if path.is_file() && (is_ext(&path, "jsonl") || is_ext(&path, "json")) {
            found.push(path);
        }
    }
    found.sort();
    found.dedup();
    found
}

fn is_ext(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e == ext)
}

/// Replays each file as its own session, with its own throwaway stores under `scratch`
/// (removed after each session).
pub fn replay(files: &[PathBuf], env: &Env, scratch: &Path) -> Result<Report, Error> {
    let mut report = Report::new();
    for (i, file) in files.iter().enumerate() {
        let name = file.display().to_string();
        let text = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_string()));
        let text = match text {
            Ok(text) => text,
            Err(reason) => {
                report.files += 1;
                report.skipped.push((name, reason));
                continue;
            }
        };
        let Some(client) = clients::detect(&text) else {
            // Any JSON document may sit beside sessions; only a `.jsonl` file is taken for one.
            if is_ext(file, "jsonl") {
                report.files += 1;
                let names: Vec<&str> = CLIENTS.iter().map(|c| c.name).collect();
                let reason = format!("no line of a known session ({})", names.join(", "));
                report.skipped.push((name, reason));
            }
            continue;
        };
        report.files += 1;
        report.client(client.name).files += 1;
        let transcript = match (client.read)(&text) {
            Ok(t) => t,
            Err(reason) => {
                let reason = format!("{reason} (a {} session)", client.name);
                report.skipped.push((name, reason));
                continue;
            }
        };
        let dir = scratch.join(format!("session-{i}"));
        let replayed = Session::open(&dir, env, client, name, &transcript.events, &mut report)
            .map(|mut session| session.run(&transcript.events));
        let _ = std::fs::remove_dir_all(&dir);
        replayed?;
        report.sessions += 1;
        report.client(client.name).sessions += 1;
        report.unanswered += transcript.unanswered;
    }
    Ok(report)
}

/// One session being replayed.
struct Session<'a> {
    env: &'a Env,
    client: &'static Client,
    file: String,
    hook: Store,
    routed: Store,
    clock: i64,
    /// The last Read text of each (path, offset, limit) Claude Code still holds.
    reads: HashMap<(String, String, String), String>,
    report: &'a mut Report,
}

/// What one column sends for one call.
struct Sent {
    text: String,
    kind: Kind,
}

impl Sent {
    fn unchanged(raw_text: &str) -> Sent {
        Sent {
            text: raw_text.to_string(),
            kind: Kind::Unchanged,
        }
    }
}

impl<'a> Session<'a> {
    fn open(
        dir: &Path,
        env: &'a Env,
        client: &'static Client,
        file: String,
        events: &[Event],
        report: &'a mut Report,
    ) -> Result<Session<'a>, Error> {
        let first = events.iter().find_map(|e| match e {
            Event::Call(c) => c.at,
            Event::Compaction(at) => *at,
        });
        let clock = first.unwrap_or(CLOCK_START) - 1000;
        let open = |name: &str| {
            Store::open(&dir.join(name), clock)
                .map(|(store, _)| store)
                .map_err(|e| Error::store(format!("discover: cannot open a throwaway store: {e}")))
        };
        Ok(Session {
            env,
            client,
            file,
            hook: open("hook.db")?,
            routed: open("routed.db")?,
            clock,
            reads: HashMap::new(),
            report,
        })
    }

    /// The time of the next event: its own timestamp, or a second after the last one; always
    /// later than the last.
    fn tick(&mut self, at: Option<i64>) -> i64 {
        self.clock = at.unwrap_or(self.clock + 1000).max(self.clock + 1);
        self.clock
    }

    fn run(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::Compaction(at) => {
                    let now = self.tick(*at);
                    // As `sqz hook precompact` does; the client forgets its reads too.
                    let _ = self.hook.set_compaction_marker(now);
                    let _ = self.routed.set_compaction_marker(now);
                    self.reads.clear();
                    self.report.compactions += 1;
                }
                Event::Call(call) => {
                    let now = self.tick(call.at);
                    self.call(call, now);
                }
            }
        }
    }

    fn is_claude(&self) -> bool {
        matches!(self.client.hook, Hook::Claude)
    }

    fn call(&mut self, c: &Call, now: i64) {
        let row = self.client.row(&c.tool);
        let claude = self.is_claude();
        let is_read = claude && c.tool == "Read" && !c.is_error;
        let raw_text = if is_read {
            renumber(&c.text)
        } else {
            c.text.clone()
        };
        let path = input_str(c, "file_path").to_string();
        let label = label(c, claude);
        self.report.calls += 1;
        if claude {
            self.report.without_tool_use_result += usize::from(c.response.is_none());
        }
        let (raw, hook, routed) = if is_read && self.unchanged_reread(c, &path, &raw_text) {
            let stub = |kind| Sent {
                text: STUB.to_string(),
                kind,
            };
            (
                crate::tokens::count(STUB),
                stub(Kind::Stub),
                stub(Kind::Stub),
            )
        } else {
            let raw = crate::tokens::count(&raw_text);
            let hook = match self.client.hook {
                Hook::Claude => self.claude_hook(c, &raw_text, now),
                Hook::Shell { tools, frame } => match &c.command {
                    Some(command)
                        if tools.contains(&c.tool.as_str()) && hooks::shell_rewrites(command) =>
                    {
                        self.framed(Column::Hook, c, frame, command, &raw_text, now)
                    }
                    _ => Sent::unchanged(&raw_text),
                },
            };
            // Where the client showed a preview of an output it saved, that preview is all the
            // model would have read: a hook never sends more.
            let hook = if c.preview && crate::tokens::count(&hook.text) > raw {
                Sent::unchanged(&raw_text)
            } else {
                hook
            };
            let routed = match self.client.hook {
                Hook::Claude => self.claude_routed(c, &label, &raw_text, now),
                Hook::Shell { frame, .. } if row == Row::Shell => {
                    self.framed(Column::Routed, c, frame, &label, &raw_text, now)
                }
                Hook::Shell { .. } => self.compressed(Column::Routed, c, &label, &raw_text, now),
            };
            (raw, hook, routed)
        };
        if claude && matches!(c.tool.as_str(), "Edit" | "Write" | "MultiEdit") && !c.is_error {
            self.reads.retain(|key, _| key.0 != path);
        }
        self.count(c, row, label, raw, hook, routed);
    }

    /// Adds one call to the report.
    fn count(&mut self, c: &Call, row: Row, label: String, raw: usize, hook: Sent, routed: Sent) {
        let (hook_out, routed_out) = (
            crate::tokens::count(&hook.text),
            crate::tokens::count(&routed.text),
        );
        let client = self.client.name;
        let report = &mut *self.report;
        let tools = &mut report.client(client).tools;
        let sums = &mut tools[Row::ALL.iter().position(|r| *r == row).unwrap_or(0)];
        sums.calls += 1;
        sums.raw += raw;
        sums.hook += hook_out;
        sums.routed += routed_out;
        if !sums.names.contains(&c.tool) {
            sums.names.push(c.tool.clone());
        }
        for (column, sent, out) in [
            (Column::Hook, &hook, hook_out),
            (Column::Routed, &routed, routed_out),
        ] {
            let kinds = match column {
                Column::Hook => &mut report.hook_kinds,
                Column::Routed => &mut report.routed_kinds,
            };
            if let Some((_, tally)) = kinds.iter_mut().find(|(k, _)| *k == sent.kind) {
                tally.calls += 1;
                tally.raw += raw;
                tally.out += out;
            }
            if out > raw {
                report.larger.push(Larger {
                    column,
                    client,
                    file: self.file.clone(),
                    tool: c.tool.clone(),
                    label: label.clone(),
                    raw,
                    out,
                });
            }
        }
        report.each.push(CallRow {
            client,
            file: self.file.clone(),
            tool: c.tool.clone(),
            row,
            label,
            raw,
            hook: hook_out,
            hook_kind: hook.kind,
            routed: routed_out,
            routed_kind: routed.kind,
        });
    }

    /// Whether Claude Code would answer this Read with `STUB`: the same path and range as an
    /// earlier Read it still holds (no Edit or Write of the path, no compaction since), with the
    /// same content. Remembers this Read otherwise.
    fn unchanged_reread(&mut self, c: &Call, path: &str, text: &str) -> bool {
        let arg = |k: &str| c.input.get(k).map(Value::to_compact).unwrap_or_default();
        let key = (path.to_string(), arg("offset"), arg("limit"));
        if self.reads.get(&key).is_some_and(|last| last == text) {
            return true;
        }
        self.reads.insert(key, text.to_string());
        false
    }

    /// What Claude Code's installed hooks send for this call.
    fn claude_hook(&mut self, c: &Call, raw_text: &str, now: i64) -> Sent {
        let unchanged = || Sent::unchanged(raw_text);
        match c.tool.as_str() {
            "Bash" => {
                if hooks::claude_pre_rewrites(c) {
                    self.rewritten(c, raw_text, now).unwrap_or_else(unchanged)
                } else if c.is_error {
                    // PostToolUseFailure cannot replace the output.
                    unchanged()
                } else {
                    self.post(Column::Hook, c, now).unwrap_or_else(unchanged)
                }
            }
            "Read" | "Grep" | "Glob" | "Write" | "Edit" if !c.is_error => {
                self.post(Column::Hook, c, now).unwrap_or_else(unchanged)
            }
            _ => unchanged(),
        }
    }

    /// A Bash call the PreToolUse hook routed through `sqz compress`: its merged output went
    /// through sqz, and the header line reaches the model on stderr. A failed command keeps the
    /// client's `Exit code N` line; a call that failed without one never ran.
    fn rewritten(&mut self, c: &Call, raw_text: &str, now: i64) -> Option<Sent> {
        let (prefix, body) = if c.is_error {
            let first = raw_text.split('\n').next()?;
            let code = first.strip_prefix("Exit code ")?;
            if code.is_empty() || !code.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let cut = (first.len() + 1).min(raw_text.len());
            (&raw_text[..cut], raw_text[cut..].to_string())
        } else {
            let field = |k| {
                c.response
                    .as_ref()
                    .and_then(|r| r.get(k))
                    .and_then(Value::as_str)
            };
            match field("stdout") {
                Some(stdout) => match field("stderr").unwrap_or("") {
                    "" => ("", stdout.to_string()),
                    stderr => ("", format!("{stdout}\n{stderr}")),
                },
                None => ("", raw_text.to_string()),
            }
        };
        let sent = self.compressed(Column::Hook, c, input_str(c, "command"), &body, now);
        Some(Sent {
            text: format!("{prefix}{}", sent.text),
            kind: sent.kind,
        })
    }

    /// Claude Code's PostToolUse hook, `sqz hook claude-post`, on the column's store; `None`
    /// when it answers `{}`.
    fn post(&mut self, column: Column, c: &Call, now: i64) -> Option<Sent> {
        let store = match column {
            Column::Hook => &mut self.hook,
            Column::Routed => &mut self.routed,
        };
        let mut live = Live {
            store: Some(store),
            env: self.env,
            now,
        };
        let updated = hooks::claude_post(c, self.env, &mut live)?;
        let (text, body) = render(&c.tool, &updated)?;
        let original = c.response.as_ref().and_then(|r| render(&c.tool, r));
        let mut originals: Vec<String> = original.into_iter().map(|(_, b)| b).collect();
        // A Read of lines that stop before the end of the file is those lines, each with its
        // line break, though the tool leaves the last one off (what sqz serves and stores).
        if c.tool == "Read" {
            if let Some(cut) = originals.first().filter(|b| !b.ends_with('\n')) {
                originals.push(format!("{cut}\n"));
            }
        }
        let originals: Vec<&str> = originals.iter().map(String::as_str).collect();
        self.verify(column, c, &body, &originals, None, now);
        Some(Sent {
            kind: Kind::of_text(&body),
            text,
        })
    }

    /// Every Claude Code result through sqz. A file read goes the way sqz serves file reads
    /// (the MCP read tool and the post hook share it: ranged references, deltas, what the agent
    /// wrote), and Write and Edit tell it what the agent wrote; every other result, Write's and
    /// Edit's own messages included, goes through `compress` as an MCP proxy would see it.
    fn claude_routed(&mut self, c: &Call, label: &str, raw_text: &str, now: i64) -> Sent {
        match c.tool.as_str() {
            "Read" if !c.is_error && c.response.is_some() => {
                self.post(Column::Routed, c, now).unwrap_or_else(|| Sent {
                    text: raw_text.to_string(),
                    kind: Kind::FirstSeen,
                })
            }
            "Write" | "Edit" if !c.is_error => {
                let _ = self.post(Column::Routed, c, now);
                self.compressed(Column::Routed, c, label, raw_text, now)
            }
            _ => self.compressed(Column::Routed, c, label, raw_text, now),
        }
    }

    /// A shell result whose command's own output (the part `frame` finds) went through
    /// `compress`, the client's wrapper around it as it was.
    fn framed(
        &mut self,
        column: Column,
        c: &Call,
        frame: fn(&str) -> Range<usize>,
        label: &str,
        text: &str,
        now: i64,
    ) -> Sent {
        let body = frame(text);
        let sent = self.compressed(column, c, label, &text[body.clone()], now);
        Sent {
            text: format!("{}{}{}", &text[..body.start], sent.text, &text[body.end..]),
            kind: sent.kind,
        }
    }

    /// `body` through `compress` in the column's store, its references checked; what the
    /// model sees is stdout and the header line (stderr) after it.
    fn compressed(&mut self, column: Column, c: &Call, label: &str, body: &str, now: i64) -> Sent {
        let store = match column {
            Column::Hook => &mut self.hook,
            Column::Routed => &mut self.routed,
        };
        let served = serve::compress(label, body.as_bytes(), Some(store), false, self.env, now);
        // What the agent holds of this output from now on, when that is not the output itself
        // (a near-repeat's delta stands for the new text as sqz served it).
        let held = store
            .served(&served.hash)
            .ok()
            .flatten()
            .and_then(|b| String::from_utf8(b).ok());
        let stdout = String::from_utf8_lossy(&served.stdout).into_owned();
        self.verify(column, c, &stdout, &[body], held.as_deref(), now);
        let text = match served.header {
            Some(header) => format!("{}\n{header}", stdout.trim_end_matches('\n')),
            None => stdout,
        };
        Sent {
            text,
            kind: Kind::of_event(served.kind),
        }
    }

    /// Expands every reference and delta in `body` from the column's store: each must resolve,
    /// a body that is one reference must expand to an original byte for byte, and a delta
    /// applied to what the agent was shown of its base must give an original, or `held`, the
    /// text the agent holds of this output now.
    fn verify(
        &mut self,
        column: Column,
        c: &Call,
        body: &str,
        originals: &[&str],
        held: Option<&str>,
        now: i64,
    ) {
        let mut failures = Vec::new();
        let mut checked = 0;
        let store = match column {
            Column::Hook => &mut self.hook,
            Column::Routed => &mut self.routed,
        };
        let delta_at = line_starts(body).find(|&at| {
            crate::doc::reference::is_delta_head(body[at..].lines().next().unwrap_or(""))
        });
        let refs_part = &body[..delta_at.unwrap_or(body.len())];
        for token in crate::doc::reference::refs_in(refs_part) {
            checked += 1;
            match expand::lookup(store, &token, now) {
                Ok((_, bytes)) => {
                    let whole = refs_part.trim() == token && delta_at.is_none();
                    if whole && !originals.iter().any(|o| o.as_bytes() == bytes) {
                        failures.push((token, "expands to other bytes than the output".into()));
                    }
                }
                Err(e) => failures.push((token, e.to_string())),
            }
        }
        if let Some(at) = delta_at {
            checked += 1;
            let delta_text = &body[at..];
            let head = delta_text.lines().next().unwrap_or("").to_string();
            let outcome = expand::lookup(store, &head, now)
                .map_err(|e| e.to_string())
                .and_then(|(hash, original)| {
                    let shown = store.served(&hash).ok().flatten().unwrap_or(original);
                    String::from_utf8(shown).map_err(|_| "base not UTF-8".into())
                })
                .and_then(|base| delta::apply(&base, delta_text))
                .and_then(|new| {
                    (originals.iter().any(|o| *o == new) || held == Some(new.as_str()))
                        .then_some(())
                        .ok_or_else(|| "applied to its base, it is not the original".to_string())
                });
            if let Err(reason) = outcome {
                failures.push((head, reason));
            }
        }
        self.report.checked += checked;
        let label = label(c, self.is_claude());
        for (token, reason) in failures {
            self.report.failures.push(Failure {
                column,
                client: self.client.name,
                file: self.file.clone(),
                tool: c.tool.clone(),
                label: label.clone(),
                token,
                reason,
            });
        }
    }
}

/// The byte offsets where lines of `text` start.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1))
}

fn input_str<'c>(c: &'c Call, key: &str) -> &'c str {
    c.input.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The label a result goes to `compress` with: a shell call's command, else the tool's name.
fn label(c: &Call, claude: bool) -> String {
    if let Some(command) = &c.command {
        return command.clone();
    }
    match c.tool.as_str() {
        // A Read's text is the file with its lines numbered, as `cat -n` prints it: labelled so,
        // it is a file read (source stays verbatim; its line ranges are slices).
        "Read" if claude => format!("cat -n {}", input_str(c, "file_path")),
        // Grep and Glob answers read as the listings they are, as the post hook reads them.
        "Grep" | "Glob" if claude => hooks::listing_label(c),
        tool => tool.to_string(),
    }
}

/// A structured tool result as the model sees it, and the part of it that may hold a
/// reference (Bash stdout, a Read's file content, Grep's and Glob's listing).
fn render(tool: &str, result: &Value) -> Option<(String, String)> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let names = |v: &Value| {
        v.get("filenames").and_then(Value::as_array).map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
    };
    match tool {
        "Bash" => {
            let stdout = s(result, "stdout")?;
            let text = match s(result, "stderr").unwrap_or_default() {
                e if e.is_empty() => stdout.clone(),
                e => format!("{stdout}\n{e}"),
            };
            Some((text, stdout))
        }
        "Read" => {
            let file = result.get("file")?;
            let content = s(file, "content")?;
            let start = file.get("startLine").and_then(Value::as_u64).unwrap_or(1);
            Some((numbered(&content, start), content))
        }
        "Grep" => {
            let body = match s(result, "mode").as_deref() {
                Some("content") => s(result, "content")?,
                _ => names(result)?,
            };
            Some((body.clone(), body))
        }
        "Glob" => {
            let body = names(result)?;
            Some((body.clone(), body))
        }
        _ => None,
    }
}

/// A file's lines as current Claude Code shows a Read: `N<TAB>line`.
fn numbered(content: &str, start: u64) -> String {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| format!("{}\t{line}", start + i as u64))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A Read result from Claude Code before 2.1.86 (`     N→line`) in the current form
/// (`N<TAB>line`); other lines stay as they are.
pub fn renumber(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            let trimmed = line.trim_start_matches(' ');
            let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
            match trimmed[digits..].strip_prefix('→') {
                Some(rest) if digits > 0 => format!("{}\t{rest}", &trimmed[..digits]),
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_numbering_becomes_tabs() {
        assert_eq!(
            renumber("     1→fn a() {}\n    10→  x→y\nnote"),
            "1\tfn a() {}\n10\t  x→y\nnote"
        );
        assert_eq!(numbered("a\nb\n", 41), "41\ta\n42\tb");
    }

    #[test]
    fn tokens_and_kinds_are_read_from_text() {
        assert_eq!(
            crate::doc::reference::refs_in("x §ref:abc§ y §ref:def:L1-2§"),
            ["§ref:abc§", "§ref:def:L1-2§"]
        );
        assert_eq!(Kind::of_text("§ref:abc:L3-9§\n"), Kind::LineRange);
        assert_eq!(Kind::of_text("§ref:abc§\n"), Kind::ExactRepeat);
        assert_eq!(Kind::of_text("§delta:abc§\n+x\n"), Kind::NearRepeat);
        assert_eq!(Kind::of_text("plain"), Kind::FirstSeen);
    }
}
