//! Shared by the Claude Code client tests (`tests/clients_claude.rs`, headless, and
//! `tests/clients_claude_tui.rs`, the TUI in tmux): the pinned client installed on first use,
//! one run of a node runner in this folder, and the tool calls of its report.
#![allow(dead_code)]

use sqz::json::{parse, Value};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The pinned client version; `npm ci` installs it from the committed lock file.
pub const CLAUDE_VERSION: &str = "2.1.328";

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

pub fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/claude")
}

/// `tests/clients/claude/node_modules`, installed with `npm ci` on first use.
pub fn installed() -> &'static Path {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        let dir = suite_dir();
        let manifest = dir.join("node_modules/@anthropic-ai/claude-code/package.json");
        let pinned = std::fs::read_to_string(&manifest)
            .map(|t| t.contains(&format!("\"version\": \"{CLAUDE_VERSION}\"")))
            .unwrap_or(false);
        if !pinned || !dir.join("node_modules/.bin/claude").exists() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir)
                .status()
                .unwrap_or_else(|e| {
                    panic!("npm is needed for the Claude Code client tests (install Node.js and npm): {e}")
                });
            assert!(status.success(), "npm ci in tests/clients/claude failed");
        }
        dir.join("node_modules")
    })
}

/// Runs `node tests/clients/claude/RUNNER --out OUT ARGS… --sqz BIN`, OUT being a fresh
/// scratch directory named after `name`, and returns OUT and its parsed `OUT/report.json`. A
/// failed runner stops the test with its output; `label` names the run.
pub fn runner(runner: &str, name: &str, args: &[&str], label: &str) -> (PathBuf, Value) {
    installed();
    let out = std::env::temp_dir().join(format!("sqz-claude-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new("node")
        .arg(suite_dir().join(runner))
        .arg("--out")
        .arg(&out)
        .args(args)
        .args([OsStr::new("--sqz"), bin().as_os_str()])
        .output()
        .unwrap_or_else(|e| {
            panic!("node is needed for the Claude Code client tests (install Node.js): {e}")
        });
    let report_path = out.join("report.json");
    assert!(
        output.status.success() && report_path.exists(),
        "the {label} run failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report =
        parse(&std::fs::read_to_string(&report_path).expect("report")).expect("report JSON");
    (out, report)
}

pub fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key)
        .unwrap_or_else(|| panic!("report has no {key:?}: {}", v.to_compact()))
}

pub fn text(v: &Value, key: &str) -> String {
    get(v, key).as_str().unwrap_or_default().to_string()
}

pub fn flag(v: &Value, key: &str) -> bool {
    get(v, key).as_bool().unwrap_or(false)
}

pub fn number(v: &Value, key: &str) -> usize {
    get(v, key).as_u64().unwrap_or(0) as usize
}

pub fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    get(v, key).as_array().unwrap_or(&[])
}

/// One tool call of the script, as the model saw its result in the next request.
#[derive(Debug)]
pub struct ToolCall {
    pub step: usize,
    pub id: String,
    pub tool: String,
    pub input: String,
    pub expand: bool,
    pub answered: bool,
    pub text: String,
    pub is_error: bool,
}

impl ToolCall {
    /// A call of a report's `calls`, with the text the model saw taken from `text_key`.
    pub fn from_report(c: &Value, text_key: &str) -> ToolCall {
        ToolCall {
            step: number(c, "step"),
            id: text(c, "id"),
            tool: text(c, "tool"),
            input: get(c, "input").to_compact(),
            expand: flag(c, "expand"),
            answered: flag(c, "answered"),
            text: text(c, text_key),
            is_error: flag(c, "is_error"),
        }
    }

    /// `step N (Tool input)`, for messages.
    pub fn name(&self) -> String {
        format!("step {} ({} {})", self.step, self.tool, self.input)
    }

    /// The `Exit code N` line the client puts first for a failed command.
    pub fn exit_line(&self) -> Option<&str> {
        self.text
            .lines()
            .next()
            .filter(|l| l.starts_with("Exit code "))
    }

    /// For the script's `sqz expand` step: why it did not give the model a reference's text.
    /// The step runs `sqz expand` only where a reference reached the model.
    pub fn expand_problem(&self) -> Option<String> {
        let name = self.name();
        // Through Bash (`sqz expand HASH`) or the MCP server's tool (`{"ref": HASH}`).
        let ran = self.input.contains("sqz expand")
            || (self.input.contains("\"ref\"") && !self.input.contains("\"none\""));
        if !ran {
            Some(format!(
                "{name}: no §ref:HASH§ reached the model, so `sqz expand` was never run"
            ))
        } else if self.is_error || self.text.trim().is_empty() {
            Some(format!(
                "{name}: `sqz expand` gave the model an error or nothing: {}",
                self.text
            ))
        } else {
            None
        }
    }

    /// Where this call (with sqz) ended differently from `base` (without): the error flag or
    /// the `Exit code N` line.
    pub fn status_problems(&self, base: &ToolCall) -> Vec<String> {
        let name = self.name();
        let mut problems = Vec::new();
        if self.is_error != base.is_error {
            problems.push(format!(
                "{name}: is_error {} with sqz, {} without; with sqz the model saw: {}",
                self.is_error,
                base.is_error,
                self.text.chars().take(300).collect::<String>()
            ));
        }
        if self.exit_line() != base.exit_line() {
            problems.push(format!(
                "{name}: exit status {:?} with sqz, {:?} without",
                self.exit_line(),
                base.exit_line()
            ));
        }
        problems
    }
}
