//! `sqz discover --replay` through the real binary: on a small transcript in Claude Code's line
//! shapes written here (a repeated Bash output, an unchanged re-read (the client's stub), old
//! `N→line` numbering, a compaction between two identical outputs, a `<persisted-output>`
//! preview, a file that is not JSON, and a directory with no transcripts), and on the ten real
//! sessions of four clients kept in `../shared/sessions`, counted here on their own.

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

/// `sqz discover --replay --json PATH`: the report, and what it said on stderr.
fn replay_json(scratch: &Scratch, path: &Path) -> (Value, String) {
    let run = sqz(
        bin(),
        &scratch.db(),
        &["discover", "--replay", "--json", path.to_str().unwrap()],
        b"",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json::parse(run.stdout_text().trim()).unwrap();
    (report, run.stderr)
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
    let (v, stderr) = replay_json(&scratch, &root);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("[sqz] discover: skipped ")
            && lines[0].contains("broken.jsonl: line 2 is not JSON"),
        "{stderr}"
    );
    let root = root.to_str().unwrap();
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
    let reads = row(v.get("tools").unwrap(), "tool", "read");
    assert_eq!(number(reads, &["calls"]), 3);
    assert_eq!(
        number(reads, &["raw"]),
        2 * tabbed + sqz::tokens::count(sqz::discover::STUB) as u64
    );
    let bash_row = row(v.get("tools").unwrap(), "tool", "shell");
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

/// Lines of made-up words from a fixed sequence: text no stage of sqz can fold.
fn unfoldable(lines: usize) -> String {
    let mut x: u64 = 12345;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as usize
    };
    let words: Vec<String> = (0..300)
        .map(|_| {
            let len = 2 + next() % 8;
            (0..len)
                .map(|_| (b'a' + (next() % 26) as u8) as char)
                .collect()
        })
        .collect();
    (0..lines)
        .map(|_| {
            let n = 3 + next() % 10;
            let line: Vec<&str> = (0..n).map(|_| words[next() % 300].as_str()).collect();
            format!("{}\n", line.join(" "))
        })
        .collect()
}

#[test]
fn a_persisted_output_preview_is_the_raw_baseline_and_the_most_the_hook_sends() {
    let scratch = Scratch::new("discover-preview");
    let dir = scratch.dir.join("projects");
    std::fs::create_dir_all(&dir).unwrap();
    let stdout = unfoldable(1200);
    assert!(stdout.len() > 50_000);
    // What Claude Code shows the model of an output it saved to a file: a 2 KB preview.
    let preview = format!(
        "<persisted-output>\nOutput too large ({:.1}KB). Full output saved to: /home/u/.claude/projects/p/s/tool-results/b1.txt\n\nPreview (first 2KB):\n{}\n...\n</persisted-output>",
        stdout.len() as f64 / 1024.0,
        &stdout[..2000]
    );
    let input = r#"{"command":"./gen-report","description":"report"}"#;
    let result = format!(
        r#"{{"stdout":{},"stderr":"","interrupted":false,"isImage":false}}"#,
        quoted(&stdout)
    );
    let transcript = call(0, "b1", "Bash", input, &preview, &result);
    std::fs::write(dir.join("session.jsonl"), transcript).unwrap();
    let (v, _) = replay_json(&scratch, &dir);
    let calls = v.get("calls").and_then(Value::as_array).unwrap();
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    let raw = sqz::tokens::count(&preview) as u64;
    assert_eq!(number(c, &["raw"]), raw);
    // sqz would send the whole output, far more than the preview: the hook leaves it.
    assert!(sqz::tokens::count(&stdout) as u64 > 10 * raw);
    assert_eq!(
        c.get("hook_kind").and_then(Value::as_str),
        Some("unchanged")
    );
    assert_eq!(number(c, &["hook"]), raw);
    assert!(number(c, &["routed"]) <= raw);
    assert_eq!(number(&v, &["larger", "hook"]), 0);
    assert_eq!(number(&v, &["larger", "routed"]), 0);
}

/// Counts, per session file, the tool calls that got a result, each format read here on its
/// own terms: Claude Code `tool_result` items answering an earlier `tool_use`; Codex CLI
/// `…_output` items answering an earlier call; OpenCode tool parts that completed or failed;
/// Copilot CLI `tool.execution_complete` events answering a `tool.execution_start`.
fn answered_calls(client: &str, text: &str) -> usize {
    let lines = || {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| json::parse(l).expect("a JSON line"))
    };
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut asked = std::collections::HashSet::new();
    let mut answered = 0;
    match client {
        "Claude Code" => {
            for line in lines() {
                let items = line
                    .get("message")
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                    .unwrap_or(&[]);
                for item in items {
                    match s(item, "type").as_str() {
                        "tool_use" => {
                            asked.insert(s(item, "id"));
                        }
                        "tool_result" => {
                            answered += usize::from(asked.remove(&s(item, "tool_use_id")))
                        }
                        _ => {}
                    }
                }
            }
        }
        "Codex CLI" => {
            for line in lines() {
                let p = line.get("payload").unwrap();
                let kind = s(p, "type");
                if kind.ends_with("_call") {
                    asked.insert(s(p, "call_id"));
                } else if kind.ends_with("_output") {
                    answered += usize::from(asked.remove(&s(p, "call_id")));
                }
            }
        }
        "Copilot CLI" => {
            for line in lines() {
                let id = line
                    .get("data")
                    .map(|d| s(d, "toolCallId"))
                    .unwrap_or_default();
                match s(&line, "type").as_str() {
                    "tool.execution_start" => {
                        asked.insert(id);
                    }
                    "tool.execution_complete" => answered += usize::from(asked.remove(&id)),
                    _ => {}
                }
            }
        }
        "OpenCode" => {
            let doc = json::parse(text).unwrap();
            for message in doc.get("messages").and_then(Value::as_array).unwrap() {
                for part in message.get("parts").and_then(Value::as_array).unwrap() {
                    let status = part.get("state").map(|st| s(st, "status"));
                    answered += usize::from(
                        s(part, "type") == "tool"
                            && matches!(status.as_deref(), Some("completed" | "error")),
                    );
                }
            }
        }
        other => panic!("no count for {other}"),
    }
    answered
}

#[test]
fn every_session_in_shared_sessions_is_read_with_no_call_larger_and_every_reference_exact() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join("sessions");
    assert!(
        root.is_dir(),
        "{} is missing: the real sessions this test reads live beside the repository",
        root.display()
    );
    // The client of each file, by where SOURCE.md says it came from.
    let by_dir = [
        ("claude-code", "Claude Code"),
        ("codex", "Codex CLI"),
        ("copilot-cli", "Copilot CLI"),
        ("opencode", "OpenCode"),
    ];
    let mut expected: Vec<(String, &str, usize)> = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "jsonl" || e == "json")
            {
                let rel = path.strip_prefix(&root).unwrap();
                let top = rel.iter().next().unwrap().to_str().unwrap();
                let client = by_dir.iter().find(|(d, _)| *d == top).unwrap().1;
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.display().to_string();
                expected.push((name, client, answered_calls(client, &text)));
            }
        }
    }
    assert_eq!(expected.len(), 10, "{expected:?}");

    let scratch = Scratch::new("discover-sessions");
    let (v, stderr) = replay_json(&scratch, &root);
    assert_eq!(stderr, "", "no file is skipped");
    assert_eq!(number(&v, &["files"]), 10);
    assert_eq!(number(&v, &["sessions"]), 10);
    assert_eq!(v.get("skipped").and_then(Value::as_array).unwrap().len(), 0);

    let calls = v.get("calls").and_then(Value::as_array).unwrap();
    for (file, client, count) in &expected {
        let of_file: Vec<&Value> = calls
            .iter()
            .filter(|c| c.get("file").and_then(Value::as_str) == Some(file.as_str()))
            .collect();
        assert_eq!(of_file.len(), *count, "{file}");
        assert!(*count > 0, "{file}");
        for c in of_file {
            assert_eq!(
                c.get("client").and_then(Value::as_str),
                Some(*client),
                "{file}"
            );
            assert!(number(c, &["hook"]) <= number(c, &["raw"]), "{file}: {c}");
            assert!(number(c, &["routed"]) <= number(c, &["raw"]), "{file}: {c}");
        }
    }
    let clients = v.get("clients").unwrap();
    for (_, client) in by_dir {
        let want: usize = expected
            .iter()
            .filter(|(_, c, _)| *c == client)
            .map(|(_, _, n)| n)
            .sum();
        let report = row(clients, "client", client);
        let files = expected.iter().filter(|(_, c, _)| *c == client).count();
        assert_eq!(number(report, &["sessions"]), files as u64, "{client}");
        assert_eq!(number(report, &["total", "calls"]), want as u64, "{client}");
        // The hook column changes something for every client.
        assert!(
            number(report, &["total", "hook"]) < number(report, &["total", "raw"]),
            "{client}"
        );
    }
    let total: usize = expected.iter().map(|(_, _, n)| n).sum();
    assert_eq!(number(&v, &["tool_calls"]), total as u64);
    assert_eq!(number(&v, &["larger", "hook"]), 0);
    assert_eq!(number(&v, &["larger", "routed"]), 0);
    assert!(number(&v, &["expanded", "checked"]) > 100);
    assert_eq!(
        number(&v, &["expanded", "failed"]),
        0,
        "{}",
        v.get("expanded").unwrap()
    );
}
