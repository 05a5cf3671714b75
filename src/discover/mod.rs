//! `sqz discover --replay`: every tool result of agent transcripts, in order, through sqz in a
//! throwaway store per session, counted against what a current client shows the model. Two
//! columns: the hook path (what the installed Claude Code hooks change) and routed (every result
//! through `compress`, as an MCP proxy would see it). Every reference and delta either column
//! served is expanded again and compared byte for byte. Nothing here prints: `cmd/discover.rs`
//! does, from the `Report`.

pub mod claude;
pub mod report;

use crate::engine::delta;
use crate::env::Env;
use crate::error::Error;
use crate::hook::claude::{post_answer, pre_answer};
use crate::json::{self, Value};
use crate::serve::{self, expand, Live};
use crate::store::{EventKind, Store};
use claude::{Call, Event};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What current Claude Code answers a Read of an unchanged file with the same range.
pub const STUB: &str =
    "Wasted call — file unchanged since your last Read. Refer to that earlier tool_result instead.";

/// The replay clock for lines without a timestamp: call i at START + 1000·i.
const CLOCK_START: i64 = 1_000_000_000_000;

/// The tool rows, in order; every other tool counts as `other`.
pub const TOOLS: [&str; 8] = [
    "Bash", "Read", "Grep", "Glob", "Edit", "Write", "Task", "other",
];

/// What a call came out as in one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    FirstSeen,
    ExactRepeat,
    LineRange,
    NearRepeat,
    /// The client's own answer to an unchanged re-read.
    Stub,
    /// sqz did not change it: a tool no hook sees, a failed call, or the hook answered `{}`.
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

/// One tool's row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolRow {
    pub tool: &'static str,
    pub calls: usize,
    pub raw: usize,
    pub hook: usize,
    pub routed: usize,
}

/// A call whose sqz version cost more tokens than the raw result.
pub struct Larger {
    pub column: Column,
    pub file: String,
    pub tool: String,
    pub label: String,
    pub raw: usize,
    pub out: usize,
}

/// One call as both columns served it.
pub struct CallRow {
    pub file: String,
    pub tool: String,
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
    pub file: String,
    pub tool: String,
    pub label: String,
    pub token: String,
    pub reason: String,
}

/// Everything a replay found.
pub struct Report {
    /// Transcript files found.
    pub files: usize,
    /// Files replayed (the others are in `skipped`, with the reason).
    pub sessions: usize,
    pub skipped: Vec<(String, String)>,
    pub calls: usize,
    pub compactions: usize,
    /// Tool calls with no result in the file.
    pub unanswered: usize,
    /// Results without `toolUseResult` (subagent transcripts): the PostToolUse hook is given
    /// no `tool_response` for them, so it leaves them as they are.
    pub without_tool_use_result: usize,
    pub tools: Vec<ToolRow>,
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
    fn new(files: usize) -> Report {
        let kinds = || Kind::ALL.iter().map(|k| (*k, Tally::default())).collect();
        Report {
            files,
            sessions: 0,
            skipped: Vec::new(),
            calls: 0,
            compactions: 0,
            unanswered: 0,
            without_tool_use_result: 0,
            tools: TOOLS
                .iter()
                .map(|tool| ToolRow {
                    tool,
                    ..ToolRow::default()
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

    /// The sum of the tool rows.
    pub fn total(&self) -> ToolRow {
        self.tools.iter().fold(
            ToolRow {
                tool: "total",
                ..ToolRow::default()
            },
            |mut t, r| {
                t.calls += r.calls;
                t.raw += r.raw;
                t.hook += r.hook;
                t.routed += r.routed;
                t
            },
        )
    }
}

/// The `.jsonl` files `paths` name, directories searched recursively, sorted by path.
pub fn transcripts(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
        } else if path.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            found.push(path);
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Replays each file as its own session, with its own throwaway stores under `scratch`
/// (removed after each session).
pub fn replay(files: &[PathBuf], env: &Env, scratch: &Path) -> Result<Report, Error> {
    let mut report = Report::new(files.len());
    for (i, file) in files.iter().enumerate() {
        let name = file.display().to_string();
        let transcript = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_string()))
            .and_then(|text| claude::parse(&text));
        let transcript = match transcript {
            Ok(t) => t,
            Err(reason) => {
                report.skipped.push((name, reason));
                continue;
            }
        };
        let dir = scratch.join(format!("session-{i}"));
        let replayed = Session::open(&dir, env, name, &transcript, &mut report)
            .map(|mut session| session.run(&transcript.events));
        let _ = std::fs::remove_dir_all(&dir);
        replayed?;
        report.sessions += 1;
        report.unanswered += transcript.unanswered;
    }
    Ok(report)
}

/// One session being replayed.
struct Session<'a> {
    env: &'a Env,
    file: String,
    hook: Store,
    routed: Store,
    clock: i64,
    /// The last Read text of each (path, offset, limit) the client still holds.
    reads: HashMap<(String, String, String), String>,
    report: &'a mut Report,
}

/// What one column sends for one call.
struct Sent {
    text: String,
    kind: Kind,
}

impl<'a> Session<'a> {
    fn open(
        dir: &Path,
        env: &'a Env,
        file: String,
        transcript: &claude::Transcript,
        report: &'a mut Report,
    ) -> Result<Session<'a>, Error> {
        let first = transcript.events.iter().find_map(|e| match e {
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

    fn call(&mut self, c: &Call, now: i64) {
        let is_read = c.tool == "Read" && !c.is_error;
        let raw_text = if is_read {
            renumber(&c.text)
        } else {
            c.text.clone()
        };
        let path = input_str(c, "file_path").to_string();
        let label = label(c);
        self.report.calls += 1;
        self.report.without_tool_use_result += usize::from(c.response.is_none());
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
            let hook = self.hook_path(c, &raw_text, now);
            let routed = self.routed(c, &label, &raw_text, now);
            (crate::tokens::count(&raw_text), hook, routed)
        };
        if matches!(c.tool.as_str(), "Edit" | "Write" | "MultiEdit") && !c.is_error {
            self.reads.retain(|key, _| key.0 != path);
        }
        let (hook_out, routed_out) = (
            crate::tokens::count(&hook.text),
            crate::tokens::count(&routed.text),
        );
        let report = &mut *self.report;
        report.each.push(CallRow {
            file: self.file.clone(),
            tool: c.tool.clone(),
            label: label.clone(),
            raw,
            hook: hook_out,
            hook_kind: hook.kind,
            routed: routed_out,
            routed_kind: routed.kind,
        });
        let row = TOOLS
            .iter()
            .position(|t| *t == c.tool)
            .unwrap_or(TOOLS.len() - 1);
        let row = &mut report.tools[row];
        row.calls += 1;
        row.raw += raw;
        row.hook += hook_out;
        row.routed += routed_out;
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
                    file: self.file.clone(),
                    tool: c.tool.clone(),
                    label: label.clone(),
                    raw,
                    out,
                });
            }
        }
    }

    /// Whether the client would answer this Read with `STUB`: the same path and range as an
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

    /// What the installed hooks send for this call.
    fn hook_path(&mut self, c: &Call, raw_text: &str, now: i64) -> Sent {
        let unchanged = || Sent {
            text: raw_text.to_string(),
            kind: Kind::Unchanged,
        };
        match c.tool.as_str() {
            "Bash" => {
                let pre = pre_answer(&payload(c, "PreToolUse"), |_| {
                    Some(crate::hook::rewrite::Shape::Trap)
                });
                if pre.rewrote() {
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

    /// The PostToolUse hook, `sqz hook claude-post`, on the column's store; `None` when it
    /// answers `{}`.
    fn post(&mut self, column: Column, c: &Call, now: i64) -> Option<Sent> {
        let store = match column {
            Column::Hook => &mut self.hook,
            Column::Routed => &mut self.routed,
        };
        let answer = post_answer(
            &payload(c, "PostToolUse"),
            self.env.bash_max_output_length,
            &mut Live {
                store: Some(store),
                env: self.env,
                now,
            },
        );
        if !answer.rewrote() {
            return None;
        }
        let value = json::parse(&answer.json).ok()?;
        let updated = value.get("hookSpecificOutput")?.get("updatedToolOutput")?;
        let (text, body) = render(&c.tool, updated)?;
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

    /// Every result through sqz. A file read goes the way sqz serves file reads (the MCP read
    /// tool and the post hook share it: ranged references, deltas, what the agent wrote), and
    /// Write and Edit tell it what the agent wrote; every other result, Write's and Edit's own
    /// messages included, goes through `compress` as an MCP proxy would see it.
    fn routed(&mut self, c: &Call, label: &str, raw_text: &str, now: i64) -> Sent {
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
        for (token, reason) in failures {
            self.report.failures.push(Failure {
                column,
                file: self.file.clone(),
                tool: c.tool.clone(),
                label: label(c),
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

/// The label a routed result goes to `compress` with.
fn label(c: &Call) -> String {
    match c.tool.as_str() {
        "Bash" => input_str(c, "command").to_string(),
        // A Read's text is the file with its lines numbered, as `cat -n` prints it: labelled so,
        // it is a file read (source stays verbatim; its line ranges are slices).
        "Read" => format!("cat -n {}", input_str(c, "file_path")),
        // Grep and Glob answers read as the listings they are, as the post hook reads them.
        "Grep" | "Glob" => crate::hook::claude_files::listing_label(&c.tool, &c.input),
        tool => tool.to_string(),
    }
}

/// The hook payload for this call, as Claude Code sends it.
fn payload(c: &Call, event: &str) -> String {
    let mut p = Value::object();
    p.set("session_id", Value::str(&c.session_id));
    p.set("cwd", Value::str(&c.cwd));
    p.set("hook_event_name", Value::str(event));
    p.set("tool_name", Value::str(&c.tool));
    p.set("tool_input", c.input.clone());
    if event == "PostToolUse" {
        if let Some(response) = &c.response {
            p.set("tool_response", response.clone());
        }
    }
    p.set("tool_use_id", Value::str(&c.id));
    p.to_compact()
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
