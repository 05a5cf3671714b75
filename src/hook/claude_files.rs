//! Claude Code's file tools in `sqz hook claude-post` (PostToolUse). A Read of lines the agent
//! already holds comes back as a ranged reference, a re-read after an edit as a delta, a Grep
//! or Glob answer seen before as a reference; Write and Edit only tell sqz what the agent now
//! holds, and change nothing. A replacement keeps the tool's own output shape with every field
//! but the text copied, or Claude Code silently ignores it; anything unexpected is left alone.

use super::answer::{self, Answer};
use crate::json::Value;
use crate::serve::read::{Lossless, Notes, Shown};
use crate::serve::Backend;
use crate::store::EventKind;

/// Answers a PostToolUse payload of Read, Grep, Glob, Write or Edit.
pub fn answer(tool: &str, payload: &Value, backend: &mut dyn Backend) -> Answer {
    let input = payload
        .get("tool_input")
        .filter(|v| v.as_object().is_some());
    let response = payload
        .get("tool_response")
        .filter(|v| v.as_object().is_some());
    let (Some(input), Some(response)) = (input, response) else {
        return Answer::bad("tool_input or tool_response is not an object");
    };
    match tool {
        "Read" => read(response, backend),
        "Grep" => listing(tool, input, response, backend),
        "Glob" => listing(tool, input, response, backend),
        "Write" => {
            if let (Some(path), Some(text)) =
                (text_at(input, "file_path"), text_at(input, "content"))
            {
                backend.agent_wrote(path, text);
            }
            Answer::unchanged()
        }
        "Edit" => {
            if let Some((path, text)) = edited(input, response) {
                backend.agent_wrote(path, &text);
            }
            Answer::unchanged()
        }
        _ => Answer::leave("not a tool sqz serves"),
    }
}

fn text_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn number_at(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// The file as the Edit left it: the original with the old string replaced by the new one (every
/// occurrence with `replace_all`), when the response carries the original and the old string is
/// in it.
fn edited<'a>(input: &'a Value, response: &Value) -> Option<(&'a str, String)> {
    let path = text_at(input, "file_path")?;
    let original = text_at(response, "originalFile")?;
    let old = text_at(input, "old_string")?;
    let new = text_at(input, "new_string")?;
    if old.is_empty() || !original.contains(old) {
        return None;
    }
    let all = input.get("replace_all").and_then(Value::as_bool) == Some(true);
    Some((
        path,
        if all {
            original.replace(old, new)
        } else {
            original.replacen(old, new, 1)
        },
    ))
}

/// A text Read: `{"type":"text","file":{filePath, content, numLines, startLine, totalLines}}`.
fn read(response: &Value, backend: &mut dyn Backend) -> Answer {
    // Images, PDFs, notebooks and Claude Code's own "file unchanged" answers pass untouched.
    if text_at(response, "type") != Some("text") {
        return Answer::unchanged();
    }
    let Some(file) = response.get("file").filter(|f| f.as_object().is_some()) else {
        return Answer::bad("a text Read without a file object");
    };
    let (Some(path), Some(content), Some(start), Some(lines), Some(total)) = (
        text_at(file, "filePath"),
        text_at(file, "content"),
        number_at(file, "startLine"),
        number_at(file, "numLines"),
        number_at(file, "totalLines"),
    ) else {
        return Answer::bad("a text Read without filePath, content and line counts");
    };
    if content.is_empty() {
        return Answer::unchanged();
    }
    let whole = start == 1 && lines >= total;
    // A range that stops before the end of the file is whole lines of it, each with its line
    // break, though the tool leaves the last one off: that is the text served and stored, so
    // that `sqz expand` of a slice gives these lines exactly as the file has them.
    let ends_file = start + lines > total;
    let lines_text;
    let content = if !ends_file && !content.ends_with('\n') {
        lines_text = format!("{content}\n");
        lines_text.as_str()
    } else {
        content
    };
    let label = format!("Read {path}");
    let notes = Notes {
        repeat: " unchanged since you last read or wrote this file".into(),
        slice: " these lines were in your earlier read of this file".into(),
        delta: "[sqz] changed since you last read or wrote this file: the delta below turns that text into this one\n".into(),
    };
    let item = Lossless {
        label: &label,
        original: content,
        body: content,
        path_key: Some(path),
        partial: !whole,
        deltas: whole,
        notes: &notes,
    };
    let text = match backend.lossless(&item) {
        Shown::Repeat(token) => format!("{token}{}\n", notes.repeat),
        Shown::Slice(token) => format!("{token}{}\n", notes.slice),
        Shown::Delta(delta) => format!("{}{delta}", notes.delta),
        Shown::Whole | Shown::Unstored => return Answer::unchanged(),
    };
    let mut replaced = response.clone();
    let mut new_file = file.clone();
    new_file.set("content", Value::str(&text));
    replaced.set("file", new_file);
    Answer::changed(answer::specific(
        "PostToolUse",
        "updatedToolOutput",
        replaced,
    ))
}

/// A Grep or Glob answer: its text is the matched content (Grep's content mode) or the file
/// names. It goes through `compress` as the listing it is (`grep -rn`, `find`): a repeat of an
/// earlier answer becomes a reference, and bulk directories and long match lists fold into
/// counted markers that `sqz expand` restores.
fn listing(tool: &str, input: &Value, response: &Value, backend: &mut dyn Backend) -> Answer {
    let field = if text_at(response, "mode") == Some("content") {
        "content"
    } else {
        "filenames"
    };
    let text = match response.get(field) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            match names {
                Some(names) => names.join("\n"),
                None => return Answer::bad("filenames holds something other than strings"),
            }
        }
        _ => return Answer::unchanged(),
    };
    if text.is_empty() {
        return Answer::unchanged();
    }
    let served = backend.compress(&listing_label(tool, input), text.as_bytes());
    let Ok(out) = String::from_utf8(served.stdout) else {
        return Answer::unchanged();
    };
    let out = out.trim_end_matches('\n');
    let stand_in = match served.kind {
        EventKind::Ref | EventKind::Slice => {
            format!("{out} the same as in an earlier answer of this search")
        }
        EventKind::Delta => {
            format!("[sqz] changed since an earlier answer: apply the delta to it\n{out}")
        }
        EventKind::Formatter | EventKind::Generic | EventKind::Template => out.to_string(),
        _ => return Answer::unchanged(),
    };
    if stand_in.len() >= text.len() {
        return Answer::unchanged();
    }
    let mut replaced = response.clone();
    match field {
        "content" => replaced.set("content", Value::str(&stand_in)),
        _ => replaced.set(
            "filenames",
            Value::Array(stand_in.lines().map(Value::str).collect()),
        ),
    }
    Answer::changed(answer::specific(
        "PostToolUse",
        "updatedToolOutput",
        replaced,
    ))
}

/// The shell command a Grep or Glob answer reads as, so the listing formatters claim it.
pub fn listing_label(tool: &str, input: &Value) -> String {
    let pattern = text_at(input, "pattern").unwrap_or("");
    let path = text_at(input, "path").unwrap_or(".");
    match tool {
        "Glob" => format!("find {path} -path {pattern}"),
        _ => format!("grep -rn {pattern} {path}"),
    }
}
