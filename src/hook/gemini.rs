//! `sqz hook gemini`: Gemini CLI `AfterTool` on `run_shell_command`. Gemini 0.61 has no field
//! that replaces a tool's result in place (`decision: "deny"` turns it into an error, and a
//! `BeforeTool` rewrite makes the client ask and append a notice), but a `tailToolCallRequest`
//! runs one more tool whose result stands in for the shell's. So the compressed result is
//! written to a file in the project's temp directory, where `read_file` may read without
//! asking, and the answer asks for that read. The command is never touched; `Exit Code:` and
//! the other lines Gemini puts after the output are kept verbatim.
//! A `BeforeTool` payload, from an install made before this, is answered `{}`.

use crate::hook::after;
use crate::hook::answer::{self, Answer};
use crate::json::Value;
use crate::serve::Backend;
use std::path::{Path, PathBuf};

/// What the handler needs done: answer now, or write `text` to `path` and then answer
/// `tail_call(path)`.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    Now(Answer),
    Write { path: PathBuf, text: String },
}

/// The directory, under the project's temp directory, that holds the replacements.
pub const DIR: &str = "sqz";

/// The largest result the client shows whole: Gemini cuts a longer shell result to this many
/// characters (`tools.truncateToolOutputThreshold`, default 40,000), and a replacement is never
/// longer than what the client would have shown.
const SHOWN_WHOLE: usize = 40_000;

/// `read_file` cuts past this many lines, and each line past this many characters.
const READ_LIMIT: usize = 2_000;

/// The lines Gemini writes after `Output: …`, by their start.
const TRAILING: [&str; 4] = [
    "Exit Code: ",
    "Signal: ",
    "Background PIDs: ",
    "Process Group PGID: ",
];

const OPEN: &str = "<untrusted_context>\n";
const CLOSE: &str = "\n</untrusted_context>";
const ESCAPED_CLOSE: &str = "&lt;/untrusted_context&gt;";

/// Answers one hook payload; `backend` compresses and records.
pub fn respond(payload: &str, backend: &mut dyn Backend) -> Reply {
    let doc = match answer::parse(payload) {
        Ok(doc) => doc,
        Err(answer) => return Reply::Now(answer),
    };
    match doc.get("hook_event_name").and_then(Value::as_str) {
        Some("AfterTool") => {}
        Some("BeforeTool") => {
            return Reply::Now(Answer::leave(
                "BeforeTool is no longer used (run sqz init to move to AfterTool)",
            ))
        }
        _ => return Reply::Now(Answer::bad("not an AfterTool payload")),
    }
    if doc.get("tool_name").and_then(Value::as_str) != Some("run_shell_command") {
        return Reply::Now(Answer::leave("not run_shell_command"));
    }
    let Some(command) = doc
        .get("tool_input")
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
    else {
        return Reply::Now(Answer::bad("tool_input has no command string"));
    };
    let Some(response) = doc.get("tool_response").filter(|r| r.as_object().is_some()) else {
        return Reply::Now(Answer::bad("no tool_response object"));
    };
    if response.get("error").is_some_and(|e| *e != Value::Null) {
        // A tail call's result is a success: an error must reach the model as one.
        return Reply::Now(Answer::unchanged());
    }
    let Some(content) = response.get("llmContent").and_then(Value::as_str) else {
        return Reply::Now(Answer::unchanged());
    };
    let Some(dir) = doc
        .get("transcript_path")
        .and_then(Value::as_str)
        .and_then(|t| temp_dir(Path::new(t)))
    else {
        return Reply::Now(Answer::leave(
            "no transcript_path in the project's temp directory",
        ));
    };
    let Some(shell) = Shell::parse(content) else {
        return Reply::Now(Answer::leave("the shell result has an unknown layout"));
    };
    let Some(served) = after::shorter(command, &shell.output(), backend) else {
        return Reply::Now(Answer::unchanged());
    };
    let text = shell.with_output(&served);
    if !readable_whole(&text) {
        return Reply::Now(Answer::unchanged());
    }
    let name = format!("{}.txt", crate::text::hash16(text.as_bytes()));
    Reply::Write {
        path: dir.join(DIR).join(name),
        text,
    }
}

/// The answer once the replacement is at `path`: `read_file` of it stands in for the result.
pub fn tail_call(path: &Path) -> Answer {
    let mut args = Value::object();
    args.set("file_path", Value::str(&path.to_string_lossy()));
    let mut request = Value::object();
    request.set("name", Value::str("read_file"));
    request.set("args", args);
    Answer::changed(answer::specific(
        "AfterTool",
        "tailToolCallRequest",
        request,
    ))
}

/// The project's temp directory, the parent of the `chats` directory that holds the transcript.
fn temp_dir(transcript: &Path) -> Option<PathBuf> {
    let chats = transcript.parent()?;
    (chats.file_name()? == "chats" && transcript.is_absolute())
        .then(|| chats.parent().map(Path::to_path_buf))
        .flatten()
}

/// Whether `read_file` returns `text` exactly as written, and the client would have shown that
/// much: no line or length limit reached, no byte it may treat differently.
fn readable_whole(text: &str) -> bool {
    text.encode_utf16().count() <= SHOWN_WHOLE
        && text.lines().count() <= READ_LIMIT
        && text.lines().all(|l| l.encode_utf16().count() <= READ_LIMIT)
        && !text.contains(['\0', '\r'])
}

/// One shell result as Gemini lays it out: `Output: OUT`, then the lines in `TRAILING`, inside
/// `<untrusted_context>` when the client wraps it.
struct Shell<'a> {
    wrapped: bool,
    output: &'a str,
    trailing: &'a str,
}

impl<'a> Shell<'a> {
    fn parse(content: &'a str) -> Option<Shell<'a>> {
        let (inner, wrapped) = match content
            .strip_prefix(OPEN)
            .and_then(|c| c.strip_suffix(CLOSE))
        {
            Some(inner) => (inner, true),
            None => (content, false),
        };
        let body = inner.strip_prefix("Output: ")?;
        // The trailing lines, taken from the end while they are ones Gemini writes.
        let mut end = body.len();
        for _ in 0..TRAILING.len() {
            let Some(cut) = body[..end].rfind('\n') else {
                break;
            };
            let line = &body[cut + 1..end];
            if !TRAILING.iter().any(|t| is_trailing(line, t)) {
                break;
            }
            end = cut;
        }
        let output = &body[..end];
        if output == "(empty)" {
            return None;
        }
        Some(Shell {
            wrapped,
            output,
            trailing: &body[end..],
        })
    }

    /// The command's output, as it was before the client escaped it.
    fn output(&self) -> String {
        if self.wrapped {
            self.output.replace(ESCAPED_CLOSE, "</untrusted_context>")
        } else {
            self.output.to_string()
        }
    }

    /// The same result with `served` as the output.
    fn with_output(&self, served: &str) -> String {
        let mut served = served.to_string();
        if !self.output.ends_with('\n') && served.ends_with('\n') {
            served.pop();
        }
        if self.wrapped {
            served = served.replace("</untrusted_context>", ESCAPED_CLOSE);
        }
        let inner = format!("Output: {served}{}", self.trailing);
        if self.wrapped {
            format!("{OPEN}{inner}{CLOSE}")
        } else {
            inner
        }
    }
}

fn is_trailing(line: &str, start: &str) -> bool {
    let Some(value) = line.strip_prefix(start) else {
        return false;
    };
    match start {
        "Signal: " => !value.is_empty(),
        "Exit Code: " => {
            let digits = value.strip_prefix('-').unwrap_or(value);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }
        _ => {
            !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b',' || b == b' ')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::after::{fold_lines, Fake};
    use crate::json;
    use crate::store::EventKind;

    fn payload(command: &str, content: &str, extra: &str) -> String {
        let (mut c, mut o) = (String::new(), String::new());
        json::write_string(&mut c, command);
        json::write_string(&mut o, content);
        format!(
            r#"{{"session_id":"s1","transcript_path":"/h/.gemini/tmp/proj/chats/session-1.jsonl","cwd":"/repo","hook_event_name":"AfterTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{{"command":{c},"description":"d"}},"tool_response":{{"llmContent":{o},"returnDisplay":"x"{extra}}}}}"#
        )
    }

    fn long() -> String {
        "line\n".repeat(60) + "FAILED test_a"
    }

    #[test]
    fn a_shorter_output_is_read_back_from_the_temp_directory() {
        let content = format!(
            "<untrusted_context>\nOutput: {}\nExit Code: 1\nProcess Group PGID: 4242\n</untrusted_context>",
            long()
        );
        let reply = respond(&payload("pytest", &content, ""), &mut Fake(fold_lines));
        let Reply::Write { path, text } = reply else {
            panic!("{reply:?}")
        };
        assert_eq!(
            text,
            "<untrusted_context>\nOutput: [line ×many]\nFAILED test_a\nExit Code: 1\nProcess Group PGID: 4242\n</untrusted_context>"
        );
        assert_eq!(path.parent(), Some(Path::new("/h/.gemini/tmp/proj/sqz")));
        let answer = tail_call(&path);
        assert_eq!(
            answer.json,
            format!(
                r#"{{"hookSpecificOutput":{{"hookEventName":"AfterTool","tailToolCallRequest":{{"name":"read_file","args":{{"file_path":"{}"}}}}}}}}"#,
                path.display()
            )
        );
        assert!(!answer.json.contains("decision"));
    }

    #[test]
    fn output_that_names_the_wrapper_keeps_it_escaped() {
        let content = format!(
            "<untrusted_context>\nOutput: {}\n&lt;/untrusted_context&gt;\nProcess Group PGID: 1\n</untrusted_context>",
            long()
        );
        let mut seen = String::new();
        let reply = respond(
            &payload("cat log", &content, ""),
            &mut Fake(|label: &str, body: &[u8]| {
                seen = String::from_utf8(body.to_vec()).unwrap();
                fold_lines(label, body)
            }),
        );
        assert!(
            seen.ends_with("FAILED test_a\n</untrusted_context>"),
            "{seen}"
        );
        let Reply::Write { text, .. } = reply else {
            panic!("{reply:?}")
        };
        assert!(text.ends_with("FAILED test_a\n&lt;/untrusted_context&gt;\nProcess Group PGID: 1\n</untrusted_context>"), "{text}");
    }

    #[test]
    fn everything_else_stays_as_the_client_made_it() {
        let wrapped = |out: &str| {
            format!(
                "<untrusted_context>\nOutput: {out}\nProcess Group PGID: 7\n</untrusted_context>"
            )
        };
        let never =
            &mut Fake(|_: &str, _: &[u8]| -> (EventKind, Vec<u8>) { panic!("must not compress") });
        let cases = [
            payload("ls", &wrapped("(empty)"), ""),
            payload("pytest", &wrapped(&long()), r#","error":{"message":"spawn failed","type":"shell_execute_error"}"#),
            payload("sqz expand 0123", &wrapped(&long()), ""),
            payload("pytest", "Some other layout", ""),
            payload("pytest", &wrapped(&long()), "").replace("run_shell_command", "read_file"),
            payload("pytest", &wrapped(&long()), "").replace("/chats/", "/elsewhere/"),
            payload("pytest", &wrapped(&long()), "").replace(r#""llmContent""#, r#""other""#),
            "{not json".into(),
            "".into(),
            r#"{"hook_event_name":"AfterTool","tool_name":"run_shell_command"}"#.into(),
            r#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"git status"}}"#.into(),
        ];
        for payload in cases {
            match respond(&payload, never) {
                Reply::Now(answer) => assert_eq!(answer.json, "{}", "{payload}"),
                other => panic!("{payload}: {other:?}"),
            }
        }
        // Too many lines for read_file to return whole: left to the client.
        let many = "x\n".repeat(2_500) + &"line\n".repeat(50);
        let reply = respond(&payload("seq", &wrapped(&many), ""), &mut Fake(fold_lines));
        assert_eq!(reply, Reply::Now(Answer::unchanged()));
    }

    #[test]
    fn the_trailing_lines_are_only_the_ones_gemini_writes() {
        let shell = Shell::parse("Output: a\nExit Code: 2\nSignal: SIGTERM\nBackground PIDs: 5, 6\nProcess Group PGID: 9").unwrap();
        assert_eq!(shell.output, "a");
        let shell = Shell::parse("Output: a\nExit Code: two\nProcess Group PGID: 9").unwrap();
        assert_eq!(shell.output, "a\nExit Code: two");
        assert_eq!(shell.with_output("b\n"), "Output: b\nProcess Group PGID: 9");
    }
}
