//! `sqz hook claude-post` on Bash outputs as Claude Code 2.1.328 sends them. An output over the
//! client's inline limit arrives cut at 30,000 characters with `persistedOutputPath` naming the
//! file that holds all of it; without a hook the model would see a 2 KB preview of that file.
//! sqz reads the whole file and answers with no more tokens than that preview, every line
//! either a line of the output or a marker whose range `sqz expand` returns exactly.

mod common;

use common::{expand, sqz, Scratch};
use sqz::json::{self, Value};
use std::path::{Path, PathBuf};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn fixture(name: &str) -> (String, String) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{name}/{f}: {e}"))
    };
    (read("cmd").trim().to_string(), read("input.txt"))
}

/// The PostToolUse payload of a successful Bash call whose output the client saved to `saved`.
fn persisted_payload(command: &str, whole: &str, saved: &Path) -> String {
    let cut: String = whole.chars().take(30_000).collect();
    let mut response = Value::object();
    response.set("stdout", Value::str(&cut));
    response.set("stderr", Value::str(""));
    response.set("interrupted", json::parse("false").unwrap());
    response.set("isImage", json::parse("false").unwrap());
    response.set("noOutputExpected", json::parse("false").unwrap());
    response.set("persistedOutputPath", Value::str(saved.to_str().unwrap()));
    response.set(
        "persistedOutputSize",
        json::parse(&whole.len().to_string()).unwrap(),
    );
    let mut input = Value::object();
    input.set("command", Value::str(command));
    input.set("description", Value::str("run it"));
    let mut p = Value::object();
    p.set("session_id", Value::str("s1"));
    p.set("cwd", Value::str("/home/dev/app"));
    p.set("permission_mode", Value::str("default"));
    p.set("hook_event_name", Value::str("PostToolUse"));
    p.set("tool_name", Value::str("Bash"));
    p.set("tool_input", input);
    p.set("tool_response", response);
    p.set("tool_use_id", Value::str("toolu_01"));
    p.to_compact()
}

/// The stdout of the answer's `updatedToolOutput`.
fn replaced_stdout(answer: &str) -> String {
    let v = json::parse(answer.trim()).unwrap_or_else(|e| panic!("{e}: {answer}"));
    let out = v
        .get("hookSpecificOutput")
        .and_then(|s| s.get("updatedToolOutput"))
        .unwrap_or_else(|| panic!("the output was not replaced: {answer}"));
    out.get("stdout")
        .and_then(Value::as_str)
        .unwrap()
        .to_string()
}

#[test]
fn a_saved_output_comes_back_no_larger_than_the_clients_preview_and_every_gap_expands() {
    let mut digests = 0;
    for name in [
        "pytest-v-more-itertools",
        "cargo-build-verbose",
        "cat-nginx-access-log",
        "find-node-project",
        "tail-postgres-log",
    ] {
        let s = Scratch::new("persisted");
        let (command, whole) = fixture(name);
        let saved = s.dir.join("tool-results").join("b5aco7dne.txt");
        std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
        std::fs::write(&saved, &whole).unwrap();
        let run = sqz(
            bin(),
            &s.db(),
            &["hook", "claude-post"],
            persisted_payload(&command, &whole, &saved).as_bytes(),
            &[],
        );
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let shown = replaced_stdout(&run.stdout_text());
        let preview = sqz::hook::claude::saved::preview(&whole, saved.to_str().unwrap());
        let (shown_tokens, preview_tokens) =
            (sqz::tokens::count(&shown), sqz::tokens::count(&preview));
        eprintln!("{name}: preview {preview_tokens} tokens, sqz {shown_tokens}");
        assert!(
            shown_tokens <= preview_tokens,
            "{name}: {shown_tokens} > {preview_tokens}\n{shown}"
        );
        let header = shown.lines().next().unwrap();
        if !header.contains("too long to show whole") {
            // The compressed form fitted: it is what `sqz compress` serves (the fixture tests
            // check those), after its header.
            assert!(
                header.starts_with("[sqz] ") && header.contains("sqz expand "),
                "{name}: {shown}"
            );
            continue;
        }
        digests += 1;
        // A digest: every line is a line of the output, a marker whose lines expand exactly,
        // or the one header line sqz adds.
        let lines: Vec<&str> = whole.lines().collect();
        let mut said = 0;
        for line in shown.lines() {
            if line.starts_with("[sqz]") {
                said += 1;
                continue;
            }
            if let Some(target) = line
                .strip_prefix("[… ")
                .and_then(|rest| rest.split("sqz expand ").nth(1))
                .map(|t| t.trim_end_matches(']'))
            {
                let got = expand(bin(), &s.db(), target);
                assert_eq!(got.code, 0, "{name}: {line}");
                let range = target.split(":L").nth(1).unwrap();
                let (a, b) = range.split_once('-').unwrap();
                let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
                let want: String = lines[a - 1..b].iter().map(|l| format!("{l}\n")).collect();
                assert_eq!(got.stdout_text(), want, "{name}: {line}");
                continue;
            }
            assert!(
                lines.contains(&line),
                "{name}: not a line of the output: {line}"
            );
        }
        assert!(said <= 1, "{name}: {shown}");
        // The whole output is stored and named.
        assert!(
            shown.contains("sqz expand ") || shown.contains(saved.to_str().unwrap()),
            "{name}: {shown}"
        );
    }
    assert!(digests >= 2, "the digest was made for {digests} outputs");
}

#[test]
fn a_saved_test_run_keeps_its_failures_and_counts_within_the_preview() {
    let s = Scratch::new("persisted-pytest");
    let (command, whole) = fixture("pytest-v-more-itertools");
    let saved = s.dir.join("out.txt");
    std::fs::write(&saved, &whole).unwrap();
    let run = sqz(
        bin(),
        &s.db(),
        &["hook", "claude-post"],
        persisted_payload(&command, &whole, &saved).as_bytes(),
        &[],
    );
    let shown = replaced_stdout(&run.stdout_text());
    let last = whole.lines().last().unwrap();
    assert!(shown.contains(last), "the summary line is kept:\n{shown}");
    // The client's own preview shows only the first 2 KB: the summary is not in it.
    let preview = sqz::hook::claude::saved::preview(&whole, saved.to_str().unwrap());
    assert!(!preview.contains(last));
}

#[test]
fn a_saved_output_that_cannot_be_read_leaves_the_clients_preview() {
    let s = Scratch::new("persisted-gone");
    let (command, whole) = fixture("find-node-project");
    let missing = s.dir.join("gone.txt");
    let run = sqz(
        bin(),
        &s.db(),
        &["hook", "claude-post"],
        persisted_payload(&command, &whole, &missing).as_bytes(),
        &[],
    );
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout_text().trim(), "{}");
}
