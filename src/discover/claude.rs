//! The Claude Code transcript reader: one JSON object per line. A `tool_use` item of an
//! assistant line names the call; the `tool_result` item of a later user line carries the text
//! the model was shown, and the same line's `toolUseResult` the structured result the
//! PostToolUse hook receives. A `system` line of subtype `compact_boundary` is a compaction.

use crate::json::{self, Value};
use std::collections::HashMap;

/// One thing that happened in a session, in file order.
pub enum Event {
    Call(Call),
    /// A context compaction, at the line's time if it has one.
    Compaction(Option<i64>),
}

/// One tool call and its result.
pub struct Call {
    pub tool: String,
    pub id: String,
    pub input: Value,
    /// The tool_result text: the string, or the text items joined with "\n".
    pub text: String,
    pub is_error: bool,
    /// `toolUseResult`, when the line has one (it may be a string on errors).
    pub response: Option<Value>,
    /// The result line's `timestamp`, in ms since the epoch.
    pub at: Option<i64>,
    pub session_id: String,
    pub cwd: String,
}

/// A transcript's events, and how many calls never got a result.
pub struct Transcript {
    pub events: Vec<Event>,
    pub unanswered: usize,
}

/// Reads one transcript. `Err` is why the file is not one: a line that is not JSON (a last
/// line still being written, with no line break yet, is ignored), or no Claude Code line.
pub fn parse(text: &str) -> Result<Transcript, String> {
    let mut uses: HashMap<String, (String, Value)> = HashMap::new();
    let mut events = Vec::new();
    let mut recognised = false;
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        let value = match json::parse(line) {
            Ok(v) => v,
            Err(_) if lines.peek().is_none() => break,
            Err(e) => return Err(format!("line {} is not JSON ({e})", n + 1)),
        };
        let str_of = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
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
                    let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
                    let input = item.get("input").cloned().unwrap_or_else(Value::object);
                    uses.insert(field("id").to_string(), (field("name").to_string(), input));
                }
                "tool_result" => {
                    let id = item
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let Some((tool, input)) = uses.remove(id) else {
                        continue;
                    };
                    events.push(Event::Call(Call {
                        tool,
                        id: id.to_string(),
                        input,
                        text: result_text(item.get("content")),
                        is_error: item.get("is_error").and_then(Value::as_bool) == Some(true),
                        // With several results on one line it is unclear whose it is.
                        response: (results == 1)
                            .then(|| value.get("toolUseResult").cloned())
                            .flatten(),
                        at: timestamp_ms(str_of("timestamp")),
                        session_id: str_of("sessionId").to_string(),
                        cwd: str_of("cwd").to_string(),
                    }));
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
    item.get("type").and_then(Value::as_str).unwrap_or("")
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

/// `2026-02-12T10:11:12.345Z` (or with a `±HH:MM` offset) in ms since the epoch.
pub fn timestamp_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b' ') {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut at = 19;
    let mut millis = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        let frac = &s[at..at + digits];
        millis = format!("{frac:0<3}").get(..3)?.parse().ok()?;
        at += digits;
    }
    let offset_min = match b.get(at) {
        None | Some(b'Z') | Some(b'z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let h = num(at + 1, 2)?;
            let m = num(at + 4, 2).or_else(|| num(at + 3, 2)).unwrap_or(0);
            let total = h * 60 + m;
            if sign == b'+' {
                total
            } else {
                -total
            }
        }
        _ => return None,
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_min * 60;
    Some(secs * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            timestamp_ms("2026-02-12T10:11:12.345Z"),
            Some(1_770_891_072_345)
        );
        assert_eq!(
            timestamp_ms("2026-02-12T11:11:12.3+01:00"),
            Some(1_770_891_072_300)
        );
        assert_eq!(timestamp_ms("yesterday"), None);
    }

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
        assert_eq!(t.unanswered, 1);
        assert_eq!(t.events.len(), 2);
        let Event::Call(call) = &t.events[0] else {
            panic!()
        };
        assert_eq!((call.tool.as_str(), call.text.as_str()), ("Bash", "a\nb"));
        assert_eq!(call.at, Some(1000));
        assert!(call.response.is_some());
        assert!(matches!(t.events[1], Event::Compaction(None)));
        let bad = parse("{}\nnot json\n{}\n").err().unwrap();
        assert!(bad.contains("line 2"), "{bad}");
        assert!(parse("{\"type\":\"summary\"}\n").is_err());
    }
}
