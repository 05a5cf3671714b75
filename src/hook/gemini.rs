//! `sqz hook gemini`: Gemini CLI `BeforeTool` on `run_shell_command`. A rewrite answers
//! `hookSpecificOutput.tool_input`, which Gemini merges over the call's arguments; anything
//! else answers `{}`, so the command runs as written. Never a decision, never a block.

use crate::hook::answer::{self, Answer};
use crate::hook::rewrite::Decision;
use crate::json::Value;

/// Answers one `BeforeTool` payload, with `decide` judging the command.
pub fn respond(payload: &str, decide: impl Fn(&str) -> Decision) -> Answer {
    let doc = match answer::parse(payload) {
        Ok(doc) => doc,
        Err(answer) => return answer,
    };
    if doc.get("tool_name").and_then(Value::as_str) != Some("run_shell_command") {
        return Answer::leave("not run_shell_command");
    }
    let Some(tool_input) = doc.get("tool_input").filter(|v| v.as_object().is_some()) else {
        return Answer::bad("tool_input is not an object");
    };
    if tool_input.get("is_background").and_then(Value::as_bool) == Some(true) {
        return Answer::leave("a background command");
    }
    let Some(command) = tool_input.get("command").and_then(Value::as_str) else {
        return Answer::bad("tool_input has no command string");
    };
    match decide(command) {
        Decision::Leave(why) => Answer::leave(why),
        Decision::Rewrite(rewritten) => {
            let mut merged = tool_input.clone();
            merged.set("command", Value::str(&rewritten));
            Answer::changed(answer::specific("BeforeTool", "tool_input", merged))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::test_decide as decide;

    const DOC_PAYLOAD: &str = r#"{"session_id":"s1","transcript_path":"/tmp/t.json","cwd":"/repo","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"git status","description":"Show status","dir_path":"sub","is_background":false},"mcp_context":null,"original_request_name":"run_shell_command"}"#;

    #[test]
    fn rewrite_merges_only_the_command() {
        let answer = respond(DOC_PAYLOAD, decide);
        assert!(answer.rewrote());
        assert_eq!(
            answer.json,
            r#"{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"REWRITTEN git status","description":"Show status","dir_path":"sub","is_background":false}}}"#
        );
        assert!(!answer.json.contains("decision"));
    }

    #[test]
    fn everything_else_runs_as_written() {
        let other = DOC_PAYLOAD.replace("git status", "ls -la");
        let background = DOC_PAYLOAD.replace("\"is_background\":false", "\"is_background\":true");
        let read_file = DOC_PAYLOAD.replace(
            "\"tool_name\":\"run_shell_command\"",
            "\"tool_name\":\"read_file\"",
        );
        let empty = DOC_PAYLOAD.replace("git status", "");
        for payload in [
            other.as_str(),
            background.as_str(),
            read_file.as_str(),
            empty.as_str(),
            "{not json",
            "",
            "[]",
            r#"{"tool_name":"run_shell_command","tool_input":"git status"}"#,
            r#"{"tool_name":"run_shell_command","tool_input":{"command":7}}"#,
        ] {
            let answer = respond(payload, decide);
            assert_eq!(answer.json, "{}", "{payload}");
            assert!(answer.left.is_some(), "{payload}");
        }
    }
}
