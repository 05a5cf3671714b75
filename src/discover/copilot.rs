//! The Copilot CLI events reader: one `{type, data, id, timestamp}` event per line.
//! `tool.execution_start` names a call (`toolCallId`, `toolName`, `arguments`);
//! `tool.execution_complete` with the same `toolCallId` carries what the model was shown:
//! `result.content` when `success`, else `error.message`. `session.start` gives the session
//! and its directory; `session.compaction_complete` is a compaction.

use super::transcript::{json_lines, str_at, timestamp_ms, Call, Event, Transcript};
use crate::json::Value;
use std::collections::HashMap;

/// Whether one line is Copilot CLI's: a dotted event type with an object `data`.
pub fn claims(line: &Value) -> bool {
    str_at(line, "type").contains('.') && line.get("data").and_then(Value::as_object).is_some()
}

/// Reads one events file. `Err` is a line that is not JSON (a last line still being written
/// aside).
pub fn parse(text: &str) -> Result<Transcript, String> {
    let mut pending: HashMap<String, Call> = HashMap::new();
    let mut events = Vec::new();
    let (mut session_id, mut cwd) = (String::new(), String::new());
    for (_, line) in json_lines(text)? {
        let Some(data) = line.get("data") else {
            continue;
        };
        let at = timestamp_ms(str_at(&line, "timestamp"));
        match str_at(&line, "type") {
            "session.start" => {
                session_id = str_at(data, "sessionId").to_string();
                cwd = data
                    .get("context")
                    .map(|c| str_at(c, "cwd"))
                    .unwrap_or("")
                    .to_string();
            }
            "session.compaction_complete" => events.push(Event::Compaction(at)),
            "tool.execution_start" => {
                let tool = str_at(data, "toolName");
                let id = str_at(data, "toolCallId");
                let input = data.get("arguments").cloned().unwrap_or_else(Value::object);
                let mut call = Call::new(tool, id, input);
                if tool == "bash" {
                    call.command = call.input_string("command");
                }
                pending.insert(id.to_string(), call);
            }
            "tool.execution_complete" => {
                let Some(mut call) = pending.remove(str_at(data, "toolCallId")) else {
                    continue;
                };
                call.is_error = data.get("success").and_then(Value::as_bool) != Some(true);
                call.text = if call.is_error {
                    match data.get("error") {
                        Some(Value::String(s)) => s.clone(),
                        Some(e) => str_at(e, "message").to_string(),
                        None => String::new(),
                    }
                } else {
                    data.get("result")
                        .map(|r| str_at(r, "content"))
                        .unwrap_or("")
                        .to_string()
                };
                call.at = at;
                call.session_id = session_id.clone();
                call.cwd = cwd.clone();
                events.push(Event::Call(Box::new(call)));
            }
            _ => {}
        }
    }
    Ok(Transcript {
        events,
        unanswered: pending.len(),
    })
}

/// Where the command's own output sits in a bash result: before the client's closing
/// `<shellId: N completed with exit code N>` (or `<command with shellId …>`) line.
pub fn frame(text: &str) -> std::ops::Range<usize> {
    match text.rfind('\n') {
        Some(nl) if text[nl + 1..].starts_with('<') && text.ends_with('>') => 0..nl,
        _ => 0..text.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events in the shapes of `../shared/sessions/copilot-cli` (Copilot CLI 1.0.64), cut down.
    const EVENTS: &str = concat!(
        r#"{"type":"session.start","data":{"sessionId":"s1","copilotVersion":"1.0.64","context":{"cwd":"/repo"}},"id":"e1","timestamp":"2026-06-25T01:50:34.403Z"}"#,
        "\n",
        r#"{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"bash","arguments":{"command":"git status","description":"status"}},"id":"e2","timestamp":"2026-06-25T01:50:51.197Z"}"#,
        "\n",
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"clean\n<shellId: 1 completed with exit code 0>","detailedContent":"clean"}},"id":"e3","timestamp":"2026-06-25T01:50:52.000Z"}"#,
        "\n",
        r#"{"type":"tool.execution_start","data":{"toolCallId":"t2","toolName":"read_bash","arguments":{"shellId":"30"}},"id":"e4","timestamp":"2026-06-25T01:51:00.000Z"}"#,
        "\n",
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"t2","success":false,"error":{"message":"shellId: 30 was already stopped"}},"id":"e5","timestamp":"2026-06-25T01:51:01.000Z"}"#,
        "\n",
        r#"{"type":"session.compaction_complete","data":{"success":true},"id":"e6","timestamp":"2026-06-25T01:52:00.000Z"}"#,
        "\n",
        r#"{"type":"tool.execution_start","data":{"toolCallId":"t3","toolName":"view","arguments":{"path":"/repo/a"}},"id":"e7","timestamp":"2026-06-25T01:53:00.000Z"}"#,
        "\n",
    );

    #[test]
    fn completions_meet_their_starts() {
        let t = parse(EVENTS).unwrap();
        let calls: Vec<&Call> = t.calls().collect();
        assert_eq!(t.unanswered, 1);
        assert_eq!(t.events.len(), 3);
        let bash = calls[0];
        assert_eq!(bash.command.as_deref(), Some("git status"));
        assert_eq!(&bash.text[frame(&bash.text)], "clean");
        assert_eq!(
            (bash.session_id.as_str(), bash.cwd.as_str()),
            ("s1", "/repo")
        );
        let failed = calls[1];
        assert!(failed.is_error && failed.command.is_none());
        assert_eq!(failed.text, "shellId: 30 was already stopped");
        assert!(matches!(t.events[2], Event::Compaction(Some(_))));
        assert_eq!(frame("<command with id: 22 stopped>"), 0..29);
    }
}
