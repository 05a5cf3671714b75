//! Every call the replay makes into the hook handlers (`crate::hook`), in one place: the
//! Claude Code PreToolUse and PostToolUse answers for a call rebuilt as the client's payload,
//! the shell rewrite rule the other clients' hooks apply, and the label Grep and Glob answers
//! are read with. The replay never runs a hook process; it asks the same functions.

use super::transcript::Call;
use crate::env::Env;
use crate::hook::claude::{post_answer, pre_answer, Inline};
use crate::hook::rewrite::{self, Decision};
use crate::json::{self, Value};
use crate::serve::Live;

/// Whether Claude Code's PreToolUse hook rewrites this Bash call, with the allow rules
/// `sqz init` writes in effect.
pub fn claude_pre_rewrites(c: &Call) -> bool {
    pre_answer(&claude_payload(c, "PreToolUse"), |_, _| true).rewrote()
}

/// The `updatedToolOutput` Claude Code's PostToolUse hook answers for this call, on the
/// column's store; `None` when it answers `{}`.
pub fn claude_post(c: &Call, env: &Env, live: &mut Live) -> Option<Value> {
    // A transcript keeps no file the client saved a long output to.
    let inline = Inline {
        limit: env.bash_max_output_length,
        read_saved: &|_| None,
    };
    let answer = post_answer(&claude_payload(c, "PostToolUse"), &inline, live);
    if !answer.rewrote() {
        return None;
    }
    let value = json::parse(&answer.json).ok()?;
    value
        .get("hookSpecificOutput")?
        .get("updatedToolOutput")
        .cloned()
}

/// Whether a shell hook routes `command` through `sqz compress`: sqz's one rewrite rule.
pub fn shell_rewrites(command: &str) -> bool {
    matches!(rewrite::decide(command), Decision::Rewrite(_))
}

/// The shell command a Claude Code Grep or Glob answer reads as.
pub fn listing_label(c: &Call) -> String {
    crate::hook::claude_files::listing_label(&c.tool, &c.input)
}

/// The hook payload for this call, as Claude Code sends it.
fn claude_payload(c: &Call, event: &str) -> String {
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
