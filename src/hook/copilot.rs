//! `sqz hook copilot`: Copilot CLI `postToolUse` (the camelCase payload) on `bash`. Copilot 1.0.102
//! takes a command hook's `modifiedResult` as the result the model sees, so the output part of
//! `toolResult.textResultForLlm` is compressed and the client's closing
//! `<shellId: N completed with exit code X>` line is kept verbatim; every other field of
//! `toolResult` is copied. The command is never touched. A `preToolUse` payload, from an install
//! made before this, is answered `{}`.

use crate::hook::after;
use crate::hook::answer::{self, Answer};
use crate::json::Value;
use crate::serve::Backend;

/// Answers one hook payload; `backend` compresses and records.
pub fn respond(payload: &str, backend: &mut dyn Backend) -> Answer {
    let doc = match answer::parse(payload) {
        Ok(doc) => doc,
        Err(answer) => return answer,
    };
    match doc.get("toolName").and_then(Value::as_str) {
        Some("bash") => {}
        Some(_) => return Answer::leave("not the bash tool"),
        None => return Answer::bad("no toolName (not a camelCase postToolUse payload)"),
    }
    let Some(result) = doc.get("toolResult").filter(|r| r.as_object().is_some()) else {
        return Answer::leave("no toolResult: preToolUse is no longer used (run sqz init)");
    };
    let args = match doc.get("toolArgs") {
        Some(Value::String(encoded)) => crate::json::parse(encoded).ok(),
        Some(args) => Some(args.clone()),
        None => None,
    };
    let Some(command) = args
        .as_ref()
        .and_then(|a| a.get("command"))
        .and_then(Value::as_str)
    else {
        return Answer::bad("toolArgs has no command string");
    };
    if result.get("resultType").and_then(Value::as_str) != Some("success") {
        return Answer::unchanged();
    }
    let Some(text) = result.get("textResultForLlm").and_then(Value::as_str) else {
        return Answer::unchanged();
    };
    let Some((output, closing)) = split_closing(text) else {
        return Answer::leave("the shell result has no closing exit-code line");
    };
    let Some(served) = after::shorter(command, output, backend) else {
        return Answer::unchanged();
    };
    let mut served = served;
    if !output.ends_with('\n') && served.ends_with('\n') {
        served.pop();
    }
    let mut modified = result.clone();
    modified.set(
        "textResultForLlm",
        Value::str(&format!("{served}\n{closing}")),
    );
    let mut out = Value::object();
    out.set("modifiedResult", modified);
    Answer::changed(out.to_compact())
}

/// The output and the client's closing line `<shellId: N completed with exit code X>`.
fn split_closing(text: &str) -> Option<(&str, &str)> {
    let (output, closing) = text.rsplit_once('\n')?;
    let status = closing.strip_prefix("<shellId: ")?.strip_suffix('>')?;
    let (id, code) = status.split_once(" completed with exit code ")?;
    let numeric = |s: &str| {
        let s = s.strip_prefix('-').unwrap_or(s);
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
    };
    (numeric(id) && numeric(code)).then_some((output, closing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::after::{fold_lines, Fake};
    use crate::json;
    use crate::store::EventKind;

    fn payload(command: &str, text: &str) -> String {
        let (mut c, mut t) = (String::new(), String::new());
        json::write_string(&mut c, command);
        json::write_string(&mut t, text);
        format!(
            r#"{{"sessionId":"s1","timestamp":1704614600000,"cwd":"/repo","toolName":"bash","toolArgs":{{"command":{c},"description":"d"}},"toolResult":{{"resultType":"success","textResultForLlm":{t}}}}}"#
        )
    }

    fn long() -> String {
        "line\n".repeat(60) + "FAILED test_a"
    }

    #[test]
    fn the_output_is_replaced_and_the_exit_line_kept() {
        let text = format!("{}\n<shellId: 3 completed with exit code 1>", long());
        let answer = respond(&payload("pytest", &text), &mut Fake(fold_lines));
        assert_eq!(
            answer.json,
            r#"{"modifiedResult":{"resultType":"success","textResultForLlm":"[line ×many]\nFAILED test_a\n<shellId: 3 completed with exit code 1>"}}"#
        );
        assert!(!answer.json.contains("permissionDecision"));
        // toolArgs as a JSON string, as the docs describe it.
        let encoded = payload("pytest", &text).replace(
            r#""toolArgs":{"command":"pytest","description":"d"}"#,
            r#""toolArgs":"{\"command\":\"pytest\"}""#,
        );
        assert!(respond(&encoded, &mut Fake(fold_lines)).rewrote());
    }

    #[test]
    fn everything_else_stays_as_the_client_made_it() {
        let closing = "\n<shellId: 0 completed with exit code 0>";
        let never =
            &mut Fake(|_: &str, _: &[u8]| -> (EventKind, Vec<u8>) { panic!("must not compress") });
        let pre = r#"{"sessionId":"s1","timestamp":1,"cwd":"/repo","toolName":"bash","toolArgs":{"command":"git status"}}"#;
        for payload in [
            payload("sqz expand 0123", &(long() + closing)),
            payload("pytest", &long()),
            payload("pytest", &(long() + "\n<shellId: 0 still running>")),
            payload("pytest", &(long() + closing)).replace(r#""bash""#, r#""powershell""#),
            payload("pytest", &(long() + closing)).replace("success", "failure"),
            payload("ls", closing),
            pre.to_string(),
            r#"{"tool_name":"bash","tool_input":{"command":"ls"}}"#.to_string(),
            "{not json".to_string(),
            String::new(),
        ] {
            assert_eq!(respond(&payload, never).json, "{}", "{payload}");
        }
        assert!(respond(pre, never).left.unwrap().contains("sqz init"));
    }
}
