//! The OpenCode session export reader (`opencode export`): one JSON document
//! `{info, messages: [{info, parts}]}`. A part of `type` `tool` is one call: `tool`, `callID`,
//! and a `state` whose `input` are the arguments; a `completed` state's `output` is what the
//! model was shown, an `error` state's `error`. A part of `type` `compaction` is a compaction.
//! `info.id` and `info.directory` are the session and its directory.

use super::transcript::{str_at, Call, Event, Transcript};
use crate::json::{self, Value};

/// Whether a document is an OpenCode export: an `info` object and a `messages` list.
pub fn claims(doc: &Value) -> bool {
    doc.get("info").and_then(Value::as_object).is_some()
        && doc.get("messages").and_then(Value::as_array).is_some()
}

/// Reads one export. `Err` is a file that is not one JSON document.
pub fn parse(text: &str) -> Result<Transcript, String> {
    let doc = json::parse(text).map_err(|e| format!("not one JSON document ({e})"))?;
    let info = doc.get("info").cloned().unwrap_or_else(Value::object);
    let (session_id, cwd) = (str_at(&info, "id"), str_at(&info, "directory"));
    let mut events = Vec::new();
    let mut unanswered = 0;
    let messages = doc.get("messages").and_then(Value::as_array).unwrap_or(&[]);
    for message in messages {
        let created = message
            .get("info")
            .and_then(|i| i.get("time"))
            .and_then(|t| t.get("created"))
            .and_then(Value::as_i64);
        let parts = message
            .get("parts")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        for part in parts {
            match str_at(part, "type") {
                "compaction" => events.push(Event::Compaction(created)),
                "tool" => {
                    let state = part.get("state").cloned().unwrap_or_else(Value::object);
                    let text = match str_at(&state, "status") {
                        "completed" => str_at(&state, "output"),
                        "error" => str_at(&state, "error"),
                        _ => {
                            unanswered += 1;
                            continue;
                        }
                    };
                    let tool = str_at(part, "tool");
                    let input = state.get("input").cloned().unwrap_or_else(Value::object);
                    let mut call = Call::new(tool, str_at(part, "callID"), input);
                    if tool == "bash" {
                        call.command = call.input_string("command");
                    }
                    call.text = text.to_string();
                    call.is_error = str_at(&state, "status") == "error";
                    let time = state.get("time");
                    call.at = time
                        .and_then(|t| t.get("end").or_else(|| t.get("start")))
                        .and_then(Value::as_i64)
                        .or(created);
                    call.session_id = session_id.to_string();
                    call.cwd = cwd.to_string();
                    events.push(Event::Call(Box::new(call)));
                }
                _ => {}
            }
        }
    }
    Ok(Transcript { events, unanswered })
}

/// Where the command's own output sits in a bash result: all of it.
pub fn frame(text: &str) -> std::ops::Range<usize> {
    0..text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document in the shape of `../shared/sessions/opencode` (OpenCode 1.14.30), cut down.
    const EXPORT: &str = r#"{
  "info": {"id": "ses_1", "directory": "/repo", "version": "1.14.30", "time": {"created": 1777581153430}},
  "messages": [
    {"info": {"role": "assistant", "time": {"created": 1777581155637}}, "parts": [
      {"type": "step-start"},
      {"type": "tool", "tool": "bash", "callID": "c1", "state": {"status": "completed", "input": {"command": "git status --short", "description": "status"}, "output": " M a.ts\n", "metadata": {"exit": 0}, "time": {"start": 1777581163160, "end": 1777581163213}}},
      {"type": "tool", "tool": "apply_patch", "callID": "c2", "state": {"status": "error", "input": {"patchText": "*** Begin Patch"}, "error": "apply_patch verification failed", "time": {"start": 1777581163300, "end": 1777581163400}}},
      {"type": "tool", "tool": "read", "callID": "c3", "state": {"status": "running", "input": {"filePath": "/repo/a.ts"}}}
    ]},
    {"info": {"role": "user", "time": {"created": 1777581170000}}, "parts": [{"type": "compaction", "auto": true}]}
  ]
}"#;

    #[test]
    fn tool_parts_are_calls() {
        let t = parse(EXPORT).unwrap();
        let calls: Vec<&Call> = t.calls().collect();
        assert_eq!(t.unanswered, 1);
        assert_eq!(t.events.len(), 3);
        let bash = calls[0];
        assert_eq!(bash.command.as_deref(), Some("git status --short"));
        assert_eq!(bash.text, " M a.ts\n");
        assert_eq!(bash.at, Some(1777581163213));
        assert_eq!(
            (bash.session_id.as_str(), bash.cwd.as_str()),
            ("ses_1", "/repo")
        );
        let patch = calls[1];
        assert!(patch.is_error && patch.command.is_none());
        assert_eq!(patch.text, "apply_patch verification failed");
        assert!(matches!(
            t.events[2],
            Event::Compaction(Some(1777581170000))
        ));
        assert!(claims(&json::parse(EXPORT).unwrap()));
    }
}
