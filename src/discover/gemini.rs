//! The Gemini CLI chat reader (the files its ChatRecordingService writes under
//! `~/.gemini/tmp/<project_hash>/chats/`). No capture of one is kept here: the fields come from
//! Gemini CLI's documented conversation record (`chatRecordingTypes.ts`). Two layouts:
//! - one JSON document `{sessionId, projectHash, startTime, lastUpdated, messages}` (older
//!   `session-*.json` files);
//! - JSON lines (`session-*.jsonl`): a first `{sessionId, projectHash, …}` line, then message
//!   records (a record whose `id` was seen before replaces that message where it stood),
//!   `{"$set": …}` metadata updates and `{"$rewindTo": id}` rewinds.
//!
//! A message of `type` `gemini` holds `toolCalls`: `{id, name, args, result, status,
//! timestamp}`. `result` is the Gemini API parts the model got back: a `functionResponse`'s
//! `response.output` (or `response.error`), and any text parts. A rewind is read as a
//! compaction: the model no longer holds what it cut off.

use super::transcript::{json_lines, str_at, timestamp_ms, Call, Event, Transcript};
use crate::json::{self, Value};
use std::collections::HashMap;

/// Whether a document or a line is Gemini CLI's: the session's first record, or a model
/// message record.
pub fn claims(v: &Value) -> bool {
    let string = |k: &str| v.get(k).and_then(Value::as_str).is_some();
    (string("sessionId") && string("projectHash"))
        || (str_at(v, "type") == "gemini" && string("id"))
}

/// One entry of the chat in order: a message (by id), or a rewind.
enum Entry {
    Message(String),
    Rewind,
}

/// Reads one chat file, either layout. `Err` is a line that is not JSON (a last line still
/// being written aside).
pub fn parse(text: &str) -> Result<Transcript, String> {
    let records: Vec<Value> = match json::parse(text) {
        Ok(doc) if doc.get("messages").and_then(Value::as_array).is_some() => {
            let mut records = vec![doc.clone()];
            records.extend(
                doc.get("messages")
                    .and_then(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .cloned(),
            );
            records
        }
        _ => json_lines(text)?.into_iter().map(|(_, v)| v).collect(),
    };
    let mut session_id = String::new();
    let mut entries = Vec::new();
    let mut latest: HashMap<String, Value> = HashMap::new();
    for record in records {
        if record.get("$rewindTo").is_some() {
            entries.push(Entry::Rewind);
        } else if let Some(id) = record.get("id").and_then(Value::as_str) {
            if !latest.contains_key(id) {
                entries.push(Entry::Message(id.to_string()));
            }
            latest.insert(id.to_string(), record);
        } else if let Some(id) = record.get("sessionId").and_then(Value::as_str) {
            session_id = id.to_string();
        }
    }
    let mut events = Vec::new();
    let mut unanswered = 0;
    let mut last_at = None;
    for entry in entries {
        let id = match entry {
            Entry::Rewind => {
                events.push(Event::Compaction(last_at));
                continue;
            }
            Entry::Message(id) => id,
        };
        let message = &latest[&id];
        last_at = timestamp_ms(str_at(message, "timestamp")).or(last_at);
        if str_at(message, "type") != "gemini" {
            continue;
        }
        let tool_calls = message
            .get("toolCalls")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        for tc in tool_calls {
            let Some(result) = tc.get("result").filter(|r| !r.is_null()) else {
                unanswered += 1;
                continue;
            };
            let tool = str_at(tc, "name");
            let input = tc.get("args").cloned().unwrap_or_else(Value::object);
            let mut call = Call::new(tool, str_at(tc, "id"), input);
            // The hook leaves a background command alone; its output is not the command's.
            let background = call.input.get("is_background").and_then(Value::as_bool) == Some(true);
            if tool == "run_shell_command" && !background {
                call.command = call.input_string("command");
            }
            call.text = result_text(result);
            call.is_error = matches!(str_at(tc, "status"), "error" | "cancelled");
            call.at = timestamp_ms(str_at(tc, "timestamp")).or(last_at);
            call.session_id = session_id.clone();
            events.push(Event::Call(Box::new(call)));
        }
    }
    Ok(Transcript { events, unanswered })
}

/// The text of a result's parts: a `functionResponse`'s `response.output` or
/// `response.error` (else the response as JSON), and text parts, joined with "\n".
fn result_text(result: &Value) -> String {
    let part_text = |part: &Value| -> Option<String> {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            return Some(text.to_string());
        }
        let response = part.get("functionResponse")?.get("response")?;
        Some(
            match response.get("output").or_else(|| response.get("error")) {
                Some(Value::String(s)) => s.clone(),
                _ => response.to_compact(),
            },
        )
    };
    match result {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(part_text)
            .collect::<Vec<_>>()
            .join("\n"),
        part => part_text(part).unwrap_or_default(),
    }
}

/// The fields Gemini CLI writes after a command's output, each on its own line.
const AFTER_OUTPUT: [&str; 5] = [
    "Error: ",
    "Exit Code: ",
    "Signal: ",
    "Background PIDs: ",
    "Process Group PGID: ",
];

/// Where the command's own output sits in a `run_shell_command` result: after `Output: ` and
/// before the trailing field lines (`Exit Code: …` and the rest).
pub fn frame(text: &str) -> std::ops::Range<usize> {
    let start = if let Some(rest) = text.strip_prefix("Output: ") {
        text.len() - rest.len()
    } else if let Some(at) = text.find("\nOutput: ") {
        at + "\nOutput: ".len()
    } else {
        return 0..text.len();
    };
    let mut end = text.len();
    while let Some(nl) = text[start..end].rfind('\n') {
        let line = &text[start + nl + 1..end];
        if !AFTER_OUTPUT.iter().any(|f| line.starts_with(f)) {
            break;
        }
        end = start + nl;
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    // Constructed from Gemini CLI's documented conversation record (ConversationRecord,
    // MessageRecord, ToolCallRecord in packages/core/src/services/chatRecordingTypes.ts), with
    // shell results in the `Command: … Output: … Exit Code: …` shape its shell tool documents.
    // These are not captures of a real session.

    const LEGACY: &str = r#"{
  "sessionId": "5b1c0e2a-7f1d-4c55-9d8e-0a1b2c3d4e5f",
  "projectHash": "3f2a",
  "startTime": "2026-03-01T09:00:00.000Z",
  "lastUpdated": "2026-03-01T09:05:00.000Z",
  "messages": [
    {"id": "m1", "timestamp": "2026-03-01T09:00:01.000Z", "type": "user", "content": "run the tests"},
    {"id": "m2", "timestamp": "2026-03-01T09:00:05.000Z", "type": "gemini", "content": "", "toolCalls": [
      {"id": "run_shell_command-1", "name": "run_shell_command", "args": {"command": "npm test", "description": "tests"},
       "result": [{"functionResponse": {"id": "run_shell_command-1", "name": "run_shell_command", "response": {"output": "Command: npm test\nDirectory: (root)\nOutput: 1 failed\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242"}}}],
       "status": "success", "timestamp": "2026-03-01T09:00:09.000Z", "resultDisplay": "1 failed"},
      {"id": "read_file-2", "name": "read_file", "args": {"file_path": "src/a.ts"},
       "result": [{"functionResponse": {"id": "read_file-2", "name": "read_file", "response": {"error": "File not found"}}}],
       "status": "error", "timestamp": "2026-03-01T09:00:10.000Z"},
      {"id": "glob-3", "name": "glob", "args": {"pattern": "*.ts"}, "status": "executing", "timestamp": "2026-03-01T09:00:11.000Z"}
    ]}
  ]
}"#;

    #[test]
    fn a_json_chat_file_gives_its_tool_calls() {
        let t = parse(LEGACY).unwrap();
        let calls: Vec<&Call> = t.calls().collect();
        assert_eq!(t.unanswered, 1);
        assert_eq!(t.events.len(), 2);
        let shell = calls[0];
        assert_eq!(shell.tool, "run_shell_command");
        assert_eq!(shell.command.as_deref(), Some("npm test"));
        assert_eq!(&shell.text[frame(&shell.text)], "1 failed");
        assert_eq!(shell.session_id, "5b1c0e2a-7f1d-4c55-9d8e-0a1b2c3d4e5f");
        assert_eq!(shell.at, timestamp_ms("2026-03-01T09:00:09.000Z"));
        let read = calls[1];
        assert!(read.is_error);
        assert_eq!(read.text, "File not found");
        assert!(claims(&json::parse(LEGACY).unwrap()));
    }

    #[test]
    fn a_jsonl_chat_file_keeps_the_last_version_of_each_message_and_reads_a_rewind() {
        let text = [
            r#"{"sessionId":"s2","projectHash":"3f2a","startTime":"2026-03-01T09:00:00.000Z","lastUpdated":"2026-03-01T09:00:00.000Z"}"#,
            r#"{"id":"m1","timestamp":"2026-03-01T09:00:01.000Z","type":"user","content":[{"text":"list"}]}"#,
            r#"{"id":"m2","timestamp":"2026-03-01T09:00:02.000Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"status":"executing","timestamp":"2026-03-01T09:00:02.000Z"}]}"#,
            r#"{"$set":{"lastUpdated":"2026-03-01T09:00:03.000Z"}}"#,
            r#"{"id":"m2","timestamp":"2026-03-01T09:00:02.000Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"status":"success","timestamp":"2026-03-01T09:00:03.000Z","result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Output: a.ts\nb.ts"}}}]}]}"#,
            r#"{"$rewindTo":"m1"}"#,
            r#"{"id":"m3","timestamp":"2026-03-01T09:01:00.000Z","type":"gemini","content":"","toolCalls":[{"id":"c2","name":"run_shell_command","args":{"command":"sleep 60","is_background":true},"status":"success","timestamp":"2026-03-01T09:01:01.000Z","result":[{"text":"Background command started."}]}]}"#,
        ]
        .join("\n");
        let t = parse(&text).unwrap();
        let calls: Vec<&Call> = t.calls().collect();
        assert_eq!(t.unanswered, 0);
        assert_eq!(t.events.len(), 3);
        let ls = calls[0];
        assert_eq!(
            (ls.text.as_str(), ls.session_id.as_str()),
            ("Output: a.ts\nb.ts", "s2")
        );
        assert_eq!(&ls.text[frame(&ls.text)], "a.ts\nb.ts");
        assert!(matches!(t.events[1], Event::Compaction(Some(_))));
        let background = calls[1];
        assert_eq!(background.command, None);
        assert_eq!(background.text, "Background command started.");
    }
}
