//! The Codex CLI rollout reader: one `{timestamp, type, payload}` object per line. A
//! `response_item` whose payload is a `function_call`, `custom_tool_call`, `local_shell_call`
//! or `tool_search_call` names a call by `call_id`; the `…_output` payload with that `call_id`
//! is what the model was shown. `session_meta` gives the session and its directory,
//! `turn_context` a later directory, and a `compacted` line is a compaction. Hosted tools
//! (`web_search_call`) run at the provider and have no result here. Codex cuts each output at
//! about 40k characters in the rollout; that cut text is the text.

use super::transcript::{json_lines, str_at, timestamp_ms, Call, Event, Transcript};
use crate::json::{self, Value};
use std::collections::HashMap;

/// The top-level `type`s of a rollout line.
const LINE_TYPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// Whether one line is Codex CLI's: a known rollout line type with an object payload.
pub fn claims(line: &Value) -> bool {
    LINE_TYPES.contains(&str_at(line, "type"))
        && line.get("payload").and_then(Value::as_object).is_some()
}

/// Reads one rollout. `Err` is a line that is not JSON (a last line still being written aside).
pub fn parse(text: &str) -> Result<Transcript, String> {
    let mut pending: HashMap<String, Call> = HashMap::new();
    // The command each running process (`Process running with session ID N`) was started with,
    // so `write_stdin` to it reads that command's output.
    let mut running: HashMap<String, String> = HashMap::new();
    let mut events = Vec::new();
    let (mut session_id, mut cwd) = (String::new(), String::new());
    for (_, line) in json_lines(text)? {
        let Some(payload) = line.get("payload") else {
            continue;
        };
        let at = timestamp_ms(str_at(&line, "timestamp"));
        match str_at(&line, "type") {
            "session_meta" => {
                session_id = str_at(payload, "id").to_string();
                cwd = str_at(payload, "cwd").to_string();
            }
            "turn_context" if !str_at(payload, "cwd").is_empty() => {
                cwd = str_at(payload, "cwd").to_string();
            }
            "compacted" => events.push(Event::Compaction(at)),
            "response_item" => {
                let call_id = str_at(payload, "call_id");
                match str_at(payload, "type") {
                    "function_call" | "custom_tool_call" | "local_shell_call"
                    | "tool_search_call" => {
                        let call = request(payload, &running);
                        pending.insert(call_id.to_string(), call);
                    }
                    "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                        let Some(mut call) = pending.remove(call_id) else {
                            continue;
                        };
                        call.text = output_text(payload);
                        call.is_error = exit_code(&call.text).is_some_and(|code| code != 0);
                        call.at = at;
                        call.session_id = session_id.clone();
                        call.cwd = cwd.clone();
                        if let (Some(command), Some(process)) =
                            (&call.command, running_process(&call.text))
                        {
                            running.insert(process.to_string(), command.clone());
                        }
                        events.push(Event::Call(Box::new(call)));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(Transcript {
        events,
        unanswered: pending.len(),
    })
}

/// A call as its request line names it: the tool, its arguments, and the shell command it
/// runs or reads from.
fn request(payload: &Value, running: &HashMap<String, String>) -> Call {
    let kind = str_at(payload, "type");
    let (tool, input) = match kind {
        "function_call" => {
            let raw = str_at(payload, "arguments");
            let args = json::parse(raw).unwrap_or_else(|_| Value::str(raw));
            (str_at(payload, "name").to_string(), args)
        }
        "custom_tool_call" => (
            str_at(payload, "name").to_string(),
            Value::str(str_at(payload, "input")),
        ),
        "local_shell_call" => (
            "local_shell".to_string(),
            payload.get("action").cloned().unwrap_or_else(Value::object),
        ),
        _ => (
            "tool_search".to_string(),
            payload
                .get("arguments")
                .cloned()
                .unwrap_or_else(Value::object),
        ),
    };
    let mut call = Call::new(&tool, str_at(payload, "call_id"), input);
    call.command = match tool.as_str() {
        "exec_command" => call.input_string("cmd"),
        "shell_command" => call.input_string("command"),
        "shell" | "local_shell" => call.input.get("command").and_then(argv_command),
        "write_stdin" => call
            .input
            .get("session_id")
            .map(|id| id.as_str().map(str::to_string).unwrap_or(id.to_compact()))
            .and_then(|id| running.get(&id).cloned()),
        _ => None,
    };
    call
}

/// The command an argument vector runs: the script of `bash -lc SCRIPT` (or `sh -c`), else the
/// words joined.
fn argv_command(argv: &Value) -> Option<String> {
    let words: Vec<&str> = argv.as_array()?.iter().filter_map(Value::as_str).collect();
    match words.as_slice() {
        [shell, flag, script] if shell.ends_with("sh") && flag.ends_with('c') => {
            Some(script.to_string())
        }
        _ if !words.is_empty() => Some(words.join(" ")),
        _ => None,
    }
}

/// What the model was shown of an output: the string, the text items of a content list, the
/// `content` of an object, or (a tool search) the tools it found as JSON.
fn output_text(payload: &Value) -> String {
    match payload.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other @ Value::Object(_)) => match other.get("content") {
            Some(Value::String(s)) => s.clone(),
            _ => other.to_compact(),
        },
        _ => payload
            .get("tools")
            .map(Value::to_compact)
            .unwrap_or_default(),
    }
}

/// The header lines of an output: everything before its `Output:` line (the first few lines).
fn header(text: &str) -> impl Iterator<Item = &str> {
    text.lines().take(6).take_while(|l| *l != "Output:")
}

/// The exit code an output's header reports (`Process exited with code N`, `Exit code: N`).
fn exit_code(text: &str) -> Option<i64> {
    header(text).find_map(|line| {
        line.strip_prefix("Process exited with code ")
            .or_else(|| line.strip_prefix("Exit code: "))
            .and_then(|n| n.trim().parse().ok())
    })
}

/// The process a still-running command left behind (`Process running with session ID N`).
fn running_process(text: &str) -> Option<&str> {
    header(text).find_map(|line| line.strip_prefix("Process running with session ID "))
}

/// Where the command's own output sits in a shell result: after the header's `Output:` line.
pub fn frame(text: &str) -> std::ops::Range<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n').take(6) {
        at += line.len();
        if line == "Output:\n" {
            return at..text.len();
        }
    }
    0..text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines in the shapes of the rollouts in `../shared/sessions/codex` (Codex CLI 0.141 and
    /// 0.142), cut down.
    const ROLLOUT: &str = concat!(
        r#"{"timestamp":"2026-06-22T12:11:14.981Z","type":"session_meta","payload":{"id":"s1","cwd":"/repo","cli_version":"0.141.0"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:11:20.240Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make test\",\"workdir\":\"/repo\"}","call_id":"c1"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:11:21.522Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: 85c2b9\nWall time: 10.0021 seconds\nProcess running with session ID 11712\nOriginal token count: 3\nOutput:\nrunning 2 tests\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:11:30.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":11712,\"chars\":\"\"}","call_id":"c2"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:11:31.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Chunk ID: a88db0\nWall time: 8.0405 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\n1 failed\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:12:00.000Z","type":"compacted","payload":{"message":"summary"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:13:00.000Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"c3","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:13:01.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c3","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:14:00.000Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"open_page"}}}"#,
        "\n",
        r#"{"timestamp":"2026-06-22T12:15:00.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 9\"}","call_id":"c4"}}"#,
        "\n",
    );

    #[test]
    fn calls_meet_outputs_and_write_stdin_reads_its_command() {
        let t = parse(ROLLOUT).unwrap();
        assert_eq!(t.unanswered, 1);
        let calls: Vec<&Call> = t.calls().collect();
        assert_eq!(t.events.len(), 4);
        assert!(matches!(t.events[2], Event::Compaction(Some(_))));
        let names: Vec<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(names, ["exec_command", "write_stdin", "apply_patch"]);
        assert_eq!(calls[0].command.as_deref(), Some("make test"));
        assert_eq!(calls[1].command.as_deref(), Some("make test"));
        assert_eq!(calls[2].command, None);
        assert_eq!(
            calls.iter().map(|c| c.is_error).collect::<Vec<_>>(),
            [false, true, false]
        );
        assert_eq!(
            (calls[0].session_id.as_str(), calls[0].cwd.as_str()),
            ("s1", "/repo")
        );
        assert_eq!(&calls[1].text[frame(&calls[1].text)], "1 failed\n");
        assert!(claims(
            &json::parse(ROLLOUT.lines().next().unwrap()).unwrap()
        ));
    }

    #[test]
    fn shell_argv_is_its_script() {
        let argv = json::parse(r#"["bash","-lc","git status"]"#).unwrap();
        assert_eq!(argv_command(&argv).as_deref(), Some("git status"));
        let argv = json::parse(r#"["ls","-la"]"#).unwrap();
        assert_eq!(argv_command(&argv).as_deref(), Some("ls -la"));
        assert_eq!(frame("no header"), 0..9);
    }
}
