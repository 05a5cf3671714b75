//! The real Claude Code client's interactive TUI (npm `@anthropic-ai/claude-code`, pinned in
//! `tests/clients/claude/package.json`), driven through tmux by `tests/clients/claude/tui.mjs`
//! against a scripted model on loopback, once without sqz and once after `sqz init`, in the
//! `default` permission mode. Each run types one prompt and answers every dialog the client
//! shows; this file checks that sqz brought up no prompt or dialog the run without it did not,
//! and that every tool call's result reached the model with the same exit status.

#[path = "clients/claude/shared.rs"]
mod shared;

use shared::{flag, get, list, runner, text, ToolCall};
use std::path::PathBuf;
use std::process::Command;

/// How long the client may take over the whole script once the prompt is in, in seconds.
const TURN_TIMEOUT: &str = "90";

/// tmux, found, or the test stops naming it (node and the client: `shared::runner`).
fn tmux() {
    match Command::new("tmux").arg("-V").output() {
        Ok(out) if out.status.success() => {}
        _ => panic!("tmux is needed for the Claude Code TUI tests (Debian/Ubuntu package `tmux`)"),
    }
}

/// A dialog the client showed: what kind (`permission`, `mcp-server`, `trust`, …), at which
/// step of the script (-1: before the first request), and its lines.
#[derive(Debug, Clone)]
struct Dialog {
    kind: String,
    step: i64,
    lines: Vec<String>,
}

impl Dialog {
    fn describe(&self) -> String {
        let at = if self.step < 0 {
            "at start-up".to_string()
        } else {
            format!("at step {}", self.step)
        };
        format!(
            "{} dialog {at}:\n    {}",
            self.kind,
            self.lines.join("\n    ")
        )
    }
}

#[derive(Debug)]
struct Run {
    label: String,
    out: PathBuf,
    dialogs: Vec<Dialog>,
    calls: Vec<ToolCall>,
    /// The project's `.claude/settings.local.json` after the run, where "don't ask again" lands.
    settings_local: String,
    /// The MCP tools the client offered the model (`mcp__sqz__…` once sqz's server is approved).
    mcp_tools: Vec<String>,
}

/// Runs the TUI once (`variant` baseline or sqz; `rules` user or none, see tui.mjs) and reads
/// its report. A run that did not reach the final text stops the test with its last screen.
fn run(variant: &str, rules: &str) -> Run {
    tmux();
    let label = format!("TUI {variant}/rules {rules}");
    let args = [
        "--variant",
        variant,
        "--rules",
        rules,
        "--timeout",
        TURN_TIMEOUT,
    ];
    let (out, report) = runner("tui.mjs", &format!("tui-{variant}-{rules}"), &args, &label);
    let events: Vec<String> = list(&report, "events")
        .iter()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect();
    assert!(
        flag(&report, "finished"),
        "the {label} run never showed the final text ({}); its last screen:\n{}\n(files kept in {})",
        events.join("; "),
        text(&report, "last_screen"),
        out.display()
    );
    assert!(
        flag(&report, "manual_mode"),
        "the {label} run was not in the default (manual) permission mode; its last screen:\n{}",
        text(&report, "last_screen")
    );
    let dialogs = list(&report, "dialogs")
        .iter()
        .map(|d| Dialog {
            kind: text(d, "kind"),
            step: get(d, "step").as_i64().unwrap_or(-1),
            lines: list(d, "lines")
                .iter()
                .filter_map(|l| l.as_str().map(|l| l.trim().to_string()))
                .collect(),
        })
        .collect();
    let calls = list(&report, "calls")
        .iter()
        .map(|c| ToolCall::from_report(c, "text"))
        .collect();
    Run {
        label,
        out,
        dialogs,
        calls,
        settings_local: text(&report, "settings_local"),
        mcp_tools: list(&report, "mcp_tools")
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
    }
}

/// What the run with sqz did that the run without it did not, each naming where and why.
fn regressions(base: &Run, with: &Run) -> Vec<String> {
    let mut problems = Vec::new();
    // Each dialog kind at each step is matched once against the run without sqz.
    let mut unmatched: Vec<&Dialog> = base.dialogs.iter().collect();
    for d in &with.dialogs {
        match unmatched
            .iter()
            .position(|b| b.kind == d.kind && b.step == d.step)
        {
            Some(i) => {
                unmatched.remove(i);
            }
            None => problems.push(format!("not shown without sqz: {}", d.describe())),
        }
    }
    // No dialog must not mean a server left off: `sqz init` approves it as the client would.
    if !with.mcp_tools.iter().any(|t| t.starts_with("mcp__sqz__")) {
        problems.push(format!(
            "the sqz MCP server was not in use: the model was offered {:?}",
            with.mcp_tools
        ));
    }
    // Both runs follow one script, so their calls pair up one to one.
    for r in [base, with] {
        for c in r.calls.iter().filter(|c| !c.answered) {
            let name = c.name();
            problems.push(format!(
                "{}: {name}: its result never reached the model",
                r.label
            ));
        }
    }
    for (b, w) in base.calls.iter().zip(&with.calls) {
        if !(b.answered && w.answered) {
            continue;
        }
        if w.expand {
            problems.extend(w.expand_problem());
        } else {
            problems.extend(w.status_problems(b));
        }
    }
    problems
}

/// Prints each run's dialogs and calls to stderr.
fn table(base: &Run, with: &Run) {
    let mut t = String::new();
    for r in [base, with] {
        t.push_str(&format!("\n{} ({} dialogs)\n", r.label, r.dialogs.len()));
        for d in &r.dialogs {
            t.push_str(&format!("  {}\n", d.describe()));
        }
        for c in &r.calls {
            let first = c.text.lines().next().unwrap_or("");
            let first: String = first.chars().take(70).collect();
            t.push_str(&format!(
                "  {:<60} {} {}\n",
                c.name().chars().take(60).collect::<String>(),
                if c.is_error { "error" } else { "ok   " },
                first
            ));
        }
        t.push_str(&format!("  MCP tools offered: {}\n", r.mcp_tools.join(" ")));
        t.push_str(&format!(
            "  .claude/settings.local.json: {}\n",
            r.settings_local
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    eprint!("{t}");
}

fn check(rules: &str) {
    let base = run("baseline", rules);
    let with = run("sqz", rules);
    table(&base, &with);
    let problems = regressions(&base, &with);
    assert!(
        problems.is_empty(),
        "the Claude Code TUI with sqz is worse than without it in {} ways (files kept in {} and {}):\n- {}",
        problems.len(),
        base.out.display(),
        with.out.display(),
        problems.join("\n- ")
    );
    let _ = std::fs::remove_dir_all(&base.out);
    let _ = std::fs::remove_dir_all(&with.out);
}

/// The user's own settings allow python3 (as in `tests/clients_claude.rs`): neither run may ask
/// anything, and with sqz the MCP server's "New MCP server found" dialog must not show.
#[test]
fn tui_after_sqz_init_shows_no_new_prompt_or_dialog() {
    check("user");
}

/// No allow rule of the user's own: both runs ask before the first test run, and the user
/// answers "Yes, and don't ask again". With sqz the rule that answer records must cover the
/// later test run as it does without sqz.
#[test]
fn tui_dont_ask_again_covers_what_it_covers_without_sqz() {
    check("none");
}
