//! What every reader hands the replay: one session's tool calls and compactions in order, each
//! call with the text its model was shown. Readers fill it from their client's format; nothing
//! here knows a format beyond JSON lines and ISO 8601 times.

use crate::json::{self, Value};

/// One thing that happened in a session, in file order.
pub enum Event {
    Call(Box<Call>),
    /// A context compaction (or a rewind: the model no longer holds what came before), at the
    /// record's time if it has one.
    Compaction(Option<i64>),
}

/// One tool call and its result.
pub struct Call {
    /// The client's own name for the tool (`Bash`, `exec_command`, `view`, …).
    pub tool: String,
    pub id: String,
    pub input: Value,
    /// The shell command the call ran, or whose running output it read (Codex's `write_stdin`);
    /// `None` for every other tool.
    pub command: Option<String>,
    /// The result as the model was shown it.
    pub text: String,
    pub is_error: bool,
    /// Claude Code's `toolUseResult`, what its PostToolUse hook gets as `tool_response`.
    pub response: Option<Value>,
    /// The text is the client's preview of a larger output it saved to a file.
    pub preview: bool,
    /// The result's time, in ms since the epoch.
    pub at: Option<i64>,
    pub session_id: String,
    pub cwd: String,
}

impl Call {
    /// A call with everything but its name, id and input still to be filled.
    pub fn new(tool: &str, id: &str, input: Value) -> Call {
        Call {
            tool: tool.to_string(),
            id: id.to_string(),
            input,
            command: None,
            text: String::new(),
            is_error: false,
            response: None,
            preview: false,
            at: None,
            session_id: String::new(),
            cwd: String::new(),
        }
    }

    /// The string argument `key`, if the input has one.
    pub fn input_string(&self, key: &str) -> Option<String> {
        self.input
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// A session's events, and how many calls never got a result.
pub struct Transcript {
    pub events: Vec<Event>,
    pub unanswered: usize,
}

impl Transcript {
    /// The calls, in order.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.events.iter().filter_map(|e| match e {
            Event::Call(c) => Some(&**c),
            Event::Compaction(_) => None,
        })
    }
}

/// The JSON values of a JSON-lines file with their 1-based line numbers, blank lines left out.
/// A last line that is not JSON is a line still being written and is dropped; any other such
/// line is the error.
pub fn json_lines(text: &str) -> Result<Vec<(usize, Value)>, String> {
    let lines: Vec<(usize, &str)> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut values = Vec::with_capacity(lines.len());
    for (i, (n, line)) in lines.iter().enumerate() {
        match json::parse(line) {
            Ok(v) => values.push((n + 1, v)),
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => return Err(format!("line {} is not JSON ({e})", n + 1)),
        }
    }
    Ok(values)
}

/// The string at `key`, or "".
pub fn str_at<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
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
    fn a_cut_last_line_is_dropped_and_a_bad_middle_line_is_the_error() {
        let lines = json_lines("{\"a\":1}\n\n{\"b\":2}\n{\"c\"").unwrap();
        assert_eq!(lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 3]);
        let bad = json_lines("{}\nnot json\n{}\n").err().unwrap();
        assert!(bad.starts_with("line 2 is not JSON"), "{bad}");
    }
}
