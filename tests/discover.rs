//! `sqz discover --replay` through the real binary, on a small transcript in Claude Code's line
//! shapes written here: a repeated Bash output, an unchanged re-read (the client's stub), old
//! `N→line` numbering, a compaction between two identical outputs, a file that is not JSON,
//! and a directory with no transcripts.

mod common;

use common::{sqz, Scratch};
use sqz::json::{self, Value};
use std::path::Path;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn quoted(s: &str) -> String {
    let mut out = String::new();
    json::write_string(&mut out, s);
    out
}

/// The Claude Code lines of one call: the assistant's tool_use, then the user's tool_result
/// with `toolUseResult` on the same line.
fn call(at: u32, id: &str, tool: &str, input: &str, text: &str, result: &str) -> String {
    let ts = |s: u32| format!("\"2026-02-12T10:{:02}:{:02}.000Z\"", s / 60, s % 60);
    format!(
        concat!(
            r#"{{"type":"assistant","timestamp":{},"sessionId":"s1","cwd":"/proj","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"{}","name":"{}","input":{}}}]}}}}"#,
            "\n",
            r#"{{"type":"user","timestamp":{},"sessionId":"s1","cwd":"/proj","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{}","content":{}}}]}},"toolUseResult":{}}}"#,
            "\n"
        ),
        ts(at),
        id,
        tool,
        input,
        ts(at + 1),
        id,
        quoted(text),
        result
    )
}

fn bash(at: u32, id: &str, command: &str, stdout: &str) -> String {
    let input = format!(r#"{{"command":{},"description":"list"}}"#, quoted(command));
    let result = format!(
        r#"{{"stdout":{},"stderr":"","interrupted":false,"isImage":false}}"#,
        quoted(stdout)
    );
    call(at, id, "Bash", &input, stdout, &result)
}

fn read(at: u32, id: &str, path: &str, lines: &[String]) -> String {
    let old: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>6}→{l}", i + 1))
        .collect();
    let input = format!(r#"{{"file_path":{}}}"#, quoted(path));
    let result = format!(
        r#"{{"type":"text","file":{{"filePath":{},"content":{},"numLines":{n},"startLine":1,"totalLines":{n}}}}}"#,
        quoted(path),
        quoted(&lines.join("\n")),
        n = lines.len()
    );
    call(at, id, "Read", &input, &old.join("\n"), &result)
}

fn number(v: &Value, path: &[&str]) -> u64 {
    let mut at = v;
    for key in path {
        at = at.get(key).unwrap_or_else(|| panic!("no {key} in {v}"));
    }
    at.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a number"))
}

fn row<'a>(rows: &'a Value, key: &str, name: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r.get(key).and_then(Value::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn replay_counts_repeats_stubs_compactions_and_skips_bad_files() {
    let scratch = Scratch::new("discover");
    let dir = scratch.dir.join("projects").join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let listing: String = (0..40)
        .map(|n| format!("module_{n}_{}.rs\n", n * 7919 % 1000))
        .collect();
    let listing = listing.trim_end().to_string();
    let source: Vec<String> = (0..30)
        .map(|n| format!("pub fn handler_{n}(input: &str) -> usize {{ input.len() + {n} }}"))
        .collect();
    let mut transcript = String::new();
    transcript.push_str(r#"{"type":"file-history-snapshot","messageId":"m0"}"#);
    transcript.push('\n');
    transcript.push_str(&bash(0, "b1", "ls src", &listing));
    transcript.push_str(&bash(10, "b2", "ls src", &listing));
    transcript.push_str(&read(20, "r1", "/proj/src/lib.rs", &source));
    transcript.push_str(&read(30, "r2", "/proj/src/lib.rs", &source));
    transcript.push_str(
        r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","timestamp":"2026-02-12T10:00:40.000Z"}"#,
    );
    transcript.push('\n');
    transcript.push_str(&bash(50, "b3", "ls src", &listing));
    transcript.push_str(&read(60, "r3", "/proj/src/lib.rs", &source));
    std::fs::write(dir.join("session.jsonl"), &transcript).unwrap();
    std::fs::write(
        dir.join("broken.jsonl"),
        transcript.replacen('\n', "\nnot json at all\n", 1),
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "not a transcript").unwrap();

    let root = scratch.dir.join("projects");
    let root = root.to_str().unwrap();
    let run = sqz(
        bin(),
        &scratch.db(),
        &["discover", "--replay", "--json", root],
        b"",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].starts_with("[sqz] discover: skipped ")
            && lines[0].contains("broken.jsonl: line 2 is not JSON"),
        "{}",
        run.stderr
    );
    let v = json::parse(run.stdout_text().trim()).unwrap();
    assert_eq!(number(&v, &["files"]), 2);
    assert_eq!(number(&v, &["sessions"]), 1);
    assert_eq!(number(&v, &["tool_calls"]), 6);
    assert_eq!(number(&v, &["compactions"]), 1);

    // The repeat before the compaction is a reference in both columns; the one after is not.
    for column in ["hook", "routed"] {
        let kinds = v.get("kinds").unwrap().get(column).unwrap();
        assert_eq!(
            number(row(kinds, "kind", "exact repeat"), &["calls"]),
            1,
            "{column}"
        );
        let stub = row(kinds, "kind", "stub");
        let stub_tokens = sqz::tokens::count(sqz::discover::STUB) as u64;
        assert_eq!(number(stub, &["calls"]), 1, "{column}");
        assert_eq!(number(stub, &["raw"]), stub_tokens, "{column}");
        assert_eq!(number(stub, &["out"]), stub_tokens, "{column}");
        assert_eq!(number(&v, &["larger", column]), 0, "{column}");
    }
    let routed = v.get("kinds").unwrap().get("routed").unwrap();
    assert_eq!(number(row(routed, "kind", "first-seen"), &["calls"]), 4);

    // Old numbering is counted as the current `N<TAB>line` form: two reads and the stub.
    let tabbed: Vec<String> = source
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}\t{l}", i + 1))
        .collect();
    let tabbed = sqz::tokens::count(&tabbed.join("\n")) as u64;
    let reads = row(v.get("tools").unwrap(), "tool", "Read");
    assert_eq!(number(reads, &["calls"]), 3);
    assert_eq!(
        number(reads, &["raw"]),
        2 * tabbed + sqz::tokens::count(sqz::discover::STUB) as u64
    );
    let bash_row = row(v.get("tools").unwrap(), "tool", "Bash");
    assert_eq!(
        number(bash_row, &["raw"]),
        3 * sqz::tokens::count(&listing) as u64
    );
    assert!(number(bash_row, &["hook"]) < number(bash_row, &["raw"]));

    assert!(number(&v, &["expanded", "checked"]) >= 2);
    assert_eq!(number(&v, &["expanded", "failed"]), 0);

    let table = sqz(
        bin(),
        &scratch.db(),
        &["discover", "--replay", root],
        b"",
        &[],
    );
    assert_eq!(table.code, 0, "{}", table.stderr);
    let text = table.stdout_text();
    assert!(
        text.starts_with("sqz discover --replay: 2 files, 1 sessions, 6 tool calls, 1 compactions"),
        "{text}"
    );
    assert!(
        text.contains("calls larger than raw: hook 0, routed 0"),
        "{text}"
    );
    assert!(
        text.contains("references and deltas expanded byte for byte: "),
        "{text}"
    );
}

#[test]
fn no_transcripts_is_one_error_line_and_exit_one() {
    let scratch = Scratch::new("discover-empty");
    let empty = scratch.dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = sqz(
        bin(),
        &scratch.db(),
        &["discover", "--replay", empty.to_str().unwrap()],
        b"",
        &[],
    );
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].starts_with("sqz: discover: no transcripts under "),
        "{}",
        run.stderr
    );
    // With no PATH, HOME's Claude Code projects are searched.
    let home = sqz(
        bin(),
        &scratch.db(),
        &["discover", "--replay"],
        b"",
        &[("HOME", scratch.dir.to_str().unwrap())],
    );
    assert_eq!(home.code, 1);
    assert!(home.stderr.contains(".claude/projects"), "{}", home.stderr);
    let without = sqz(bin(), &scratch.db(), &["discover"], b"", &[]);
    assert_eq!(without.code, 2);
    assert!(
        without.stderr.contains("--replay is required"),
        "{}",
        without.stderr
    );
}
