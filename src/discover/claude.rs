//! The Claude Code transcript reader: one JSON object per line. A `tool_use` item of an
//! assistant line names the call; the `tool_result` item of a later user line carries the text
//! the model was shown, and the same line's `toolUseResult` the structured result the
//! PostToolUse hook receives. A `system` line of subtype `compact_boundary` is a compaction. A
//! result the client saved to a file shows the model only a `<persisted-output>` preview: that
//! preview is the text.

use super::transcript::{json_lines, str_at, timestamp_ms, Call, Event, Transcript};
use crate::json::Value;
use std::collections::HashMap;

/// Whether one line is Claude Code's: a user or assistant line with its `message`.
pub fn claims(line: &Value) -> bool {
    matches!(str_at(line, "type"), "user" | "assistant")
        && line.get("message").and_then(Value::as_object).is_some()
}

/// Reads one transcript. `Err` is why the file is not one: a line that is not JSON (a last
/// line still being written, with no line break yet, is ignored), or no Claude Code line.
pub fn parse(text: &str) -> Result<Transcript, String> {
    let mut uses: HashMap<String, (String, Value)> = HashMap::new();
    let mut events = Vec::new();
    let mut recognised = false;
    for (_, value) in json_lines(text)? {
        let str_of = |k: &str| str_at(&value, k);
        match str_of("type") {
            "assistant" | "user" => recognised = true,
            "system" if str_of("subtype") == "compact_boundary" => {
                events.push(Event::Compaction(timestamp_ms(str_of("timestamp"))));
                continue;
            }
            _ => continue,
        }
        let items = value
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        let results = items.iter().filter(|i| kind_of(i) == "tool_result").count();
        for item in items {
            match kind_of(item) {
                "tool_use" => {
                    let input = item.get("input").cloned().unwrap_or_else(Value::object);
                    let (id, name) = (str_at(item, "id"), str_at(item, "name"));
                    uses.insert(id.to_string(), (name.to_string(), input));
                }
                "tool_result" => {
                    let id = str_at(item, "tool_use_id");
                    let Some((tool, input)) = uses.remove(id) else {
                        continue;
                    };
                    let mut call = Call::new(&tool, id, input);
                    if tool == "Bash" {
                        call.command = call.input_string("command");
                    }
                    call.text = result_text(item.get("content"));
                    call.preview = call.text.trim_start().starts_with("<persisted-output>");
                    call.is_error = item.get("is_error").and_then(Value::as_bool) == Some(true);
                    // With several results on one line it is unclear whose it is.
                    call.response = (results == 1)
                        .then(|| value.get("toolUseResult").cloned())
                        .flatten();
                    call.at = timestamp_ms(str_of("timestamp"));
                    call.session_id = str_of("sessionId").to_string();
                    call.cwd = str_of("cwd").to_string();
                    events.push(Event::Call(Box::new(call)));
                }
                _ => {}
            }
        }
    }
    if !recognised {
        return Err("no Claude Code user or assistant line".into());
    }
    Ok(Transcript {
        events,
        unanswered: uses.len(),
    })
}

fn kind_of(item: &Value) -> &str {
    str_at(item, "type")
}

/// The text of a tool_result's `content`: a string, or its text items joined with "\n".
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|i| kind_of(i) == "text")
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_meet_their_calls_and_a_cut_last_line_is_ignored() {
        let text = concat!(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#,
            "\n",
            r#"{"type":"user","timestamp":"1970-01-01T00:00:01Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]},"toolUseResult":{"stdout":"a\nb"}}"#,
            "\n",
            r#"{"type":"system","subtype":"compact_boundary"}"#,
            "\n",
            r#"{"type":"user","mess"#,
        );
        let t = parse(text).unwrap();
        let calls: Vec<&Call> = t.calls().collect();
        assert_eq!(t.unanswered, 1);
        assert_eq!(t.events.len(), 2);
        let call = calls[0];
        assert_eq!((call.tool.as_str(), call.text.as_str()), ("Bash", "a\nb"));
        assert_eq!(call.command.as_deref(), Some("ls"));
        assert_eq!(call.at, Some(1000));
        assert!(call.response.is_some() && !call.preview);
        assert!(matches!(t.events[1], Event::Compaction(None)));
        let bad = parse("{}\nnot json\n{}\n").err().unwrap();
        assert!(bad.contains("line 2"), "{bad}");
        assert!(parse("{\"type\":\"summary\"}\n").is_err());
    }

    #[test]
    fn a_persisted_output_preview_is_the_text() {
        let preview = "<persisted-output>\nOutput too large (85.4KB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\nline 1\n...\n</persisted-output>";
        let text = format!(
            "{}\n{}\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"seq 99999"}}]}}"#,
            format_args!(
                r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"t1","content":{}}}]}},"toolUseResult":{{"stdout":"1\n2\n3"}}}}"#,
                crate::json::Value::str(preview).to_compact()
            )
        );
        let t = parse(&text).unwrap();
        let calls: Vec<&Call> = t.calls().collect();
        let call = calls[0];
        assert!(call.preview);
        assert_eq!(call.text, preview);
    }
}
