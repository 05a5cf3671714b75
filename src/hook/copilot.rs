//! `sqz hook copilot`: Copilot CLI `preToolUse` (the camelCase payload). `toolArgs` may arrive
//! as a JSON-encoded string. A rewrite answers `modifiedArgs`, which replaces the arguments
//! wholesale, so every other field is copied; anything else answers `{}`. Never a decision.

use crate::hook::answer::{self, Answer};
use crate::hook::rewrite::Decision;
use crate::json::{self, Value};

/// Answers one `preToolUse` payload, with `decide` judging the command.
pub fn respond(payload: &str, decide: impl Fn(&str) -> Decision) -> Answer {
    let doc = match answer::parse(payload) {
        Ok(doc) => doc,
        Err(answer) => return answer,
    };
    match doc.get("toolName").and_then(Value::as_str) {
        Some("bash") => {}
        // The rewrite is POSIX shell; a PowerShell command stays as written.
        Some(_) => return Answer::leave("not the bash tool"),
        None => return Answer::bad("no toolName (not a camelCase preToolUse payload)"),
    }
    let args = match doc.get("toolArgs") {
        Some(Value::String(encoded)) => match json::parse(encoded) {
            Ok(args) => args,
            Err(e) => return Answer::bad(&format!("toolArgs is not JSON ({e})")),
        },
        Some(args) => args.clone(),
        None => return Answer::bad("no toolArgs"),
    };
    if args.as_object().is_none() {
        return Answer::bad("toolArgs is not an object");
    }
    let Some(command) = args.get("command").and_then(Value::as_str) else {
        return Answer::bad("toolArgs has no command string");
    };
    match decide(command) {
        Decision::Leave(why) => Answer::leave(why),
        Decision::Rewrite(rewritten) => {
            let mut modified = args.clone();
            modified.set("command", Value::str(&rewritten));
            let mut out = Value::object();
            out.set("modifiedArgs", modified);
            Answer::changed(out.to_compact())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::test_decide as decide;

    const ENCODED: &str = r#"{"sessionId":"s1","timestamp":1704614600000,"cwd":"/repo","toolName":"bash","toolArgs":"{\"command\":\"git status\",\"description\":\"Show status\",\"timeoutSec\":30}"}"#;
    const OBJECT: &str = r#"{"sessionId":"s1","timestamp":1704614600000,"cwd":"/repo","toolName":"bash","toolArgs":{"command":"git status","description":"Show status","timeoutSec":30}}"#;

    #[test]
    fn rewrite_copies_every_other_argument() {
        for payload in [ENCODED, OBJECT] {
            let answer = respond(payload, decide);
            assert!(answer.rewrote(), "{payload}");
            assert_eq!(
                answer.json,
                r#"{"modifiedArgs":{"command":"REWRITTEN git status","description":"Show status","timeoutSec":30}}"#
            );
            assert!(!answer.json.contains("permissionDecision"));
        }
    }

    #[test]
    fn everything_else_runs_as_written() {
        let other = OBJECT.replace("git status", "ls -la");
        let powershell = OBJECT.replace("\"toolName\":\"bash\"", "\"toolName\":\"powershell\"");
        let view = OBJECT.replace("\"toolName\":\"bash\"", "\"toolName\":\"view\"");
        let empty = ENCODED.replace("git status", "");
        let snake = r#"{"tool_name":"bash","tool_input":{"command":"git status"}}"#;
        for payload in [
            other.as_str(),
            powershell.as_str(),
            view.as_str(),
            empty.as_str(),
            snake,
            "{not json",
            "",
            r#"{"toolName":"bash","toolArgs":"{broken"}"#,
            r#"{"toolName":"bash","toolArgs":"[1]"}"#,
            r#"{"toolName":"bash"}"#,
        ] {
            let answer = respond(payload, decide);
            assert_eq!(answer.json, "{}", "{payload}");
            assert!(answer.left.is_some(), "{payload}");
        }
    }
}
