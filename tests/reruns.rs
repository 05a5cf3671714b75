//! What the agent already has: a test re-run and a re-read after an edit come back as deltas,
//! through `sqz compress` and through `sqz hook claude-post`; a ranged Read of a file read in
//! full is a ranged reference; what the agent wrote with Write or Edit is a reference or a
//! delta base for a later Read. The re-runs in `tests/reruns/` are real output
//! (`tests/reruns/capture.sh`).

mod common;

use common::{compress, expand, sqz, Scratch};
use sqz::json::{self, Value};
use std::path::{Path, PathBuf};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn rerun(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reruns")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The base hash a delta names on its first line.
fn delta_base(out: &str) -> Option<String> {
    let rest = out.strip_prefix("§delta:")?;
    Some(rest.split_once('§')?.0.to_string())
}

/// What the agent holds once it applies `delta` to the text it was shown for `base`.
fn applied(db: &Path, base: &str, delta: &str) -> String {
    let (store, _) = sqz::store::Store::open(db, 0).unwrap();
    let shown = store
        .served(base)
        .unwrap()
        .expect("the delta's base is stored");
    sqz::engine::delta::apply(&String::from_utf8(shown).unwrap(), delta)
        .expect("the delta applies to its base")
}

/// A re-run through `sqz compress` comes back as a delta that shows every failure line that is
/// new or changed, costs less than the run, applies to what the agent was shown, and expands to
/// the run byte for byte.
fn rerun_is_a_delta(label: &str, first: &[u8], second: &[u8]) {
    let s = Scratch::new("rerun");
    let one = compress(bin(), &s.db(), label, first);
    assert_eq!(one.code, 0);
    let two = compress(bin(), &s.db(), label, second);
    let out = two.stdout_text();
    let base = delta_base(&out).unwrap_or_else(|| panic!("not a delta:\n{out}"));
    assert!(
        two.stderr
            .starts_with("[sqz] changed since an earlier output"),
        "{}",
        two.stderr
    );
    let before = String::from_utf8_lossy(first);
    let after = String::from_utf8_lossy(second);
    let old_lines: std::collections::HashSet<&str> = before.lines().collect();
    for line in after.lines().filter(|l| sqz::doc::facts::is_fact(l)) {
        if !old_lines.contains(line) {
            assert!(
                out.contains(line),
                "a new or changed fact is missing: {line}\n{out}"
            );
        }
    }
    let (cost, raw) = (
        sqz::tokens::count(&out) + sqz::tokens::count(&two.stderr),
        sqz::tokens::count_bytes(second),
    );
    // Removed failure blocks are listed as `-` lines, so the saving grows with what stays.
    assert!(
        cost * 4 < raw * 3,
        "the delta costs {cost} of {raw} tokens:\n{out}"
    );
    let held = applied(&s.db(), &base, &out);
    for line in after.lines().filter(|l| sqz::doc::facts::is_fact(l)) {
        assert!(held.contains(line), "the applied delta lost a fact: {line}");
    }
    let shown = two.stderr.trim().rsplit(' ').next().unwrap();
    assert_eq!(expand(bin(), &s.db(), shown).stdout, second);
}

#[test]
fn a_pytest_rerun_with_fewer_failures_is_a_delta() {
    rerun_is_a_delta("pytest", &rerun("pytest-1.txt"), &rerun("pytest-2.txt"));
}

#[test]
fn a_cargo_test_rerun_with_fewer_failures_is_a_delta() {
    rerun_is_a_delta(
        "cargo test",
        &rerun("cargo-test-1.txt"),
        &rerun("cargo-test-2.txt"),
    );
}

/// A real source file, and the same file with three lines edited.
fn source_and_edit() -> (String, String) {
    let path = common::fixtures_dir().join("cat-rust-source/input.txt");
    let source = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    for n in [20, 21, 90] {
        lines[n] = format!("{} // edited", lines[n]);
    }
    (source, lines.join("\n") + "\n")
}

#[test]
fn a_cat_after_a_three_line_edit_is_a_delta() {
    let s = Scratch::new("cat-edit");
    let (source, edited) = source_and_edit();
    let label = "cat src/packed/rabinkarp.rs";
    let first = compress(bin(), &s.db(), label, source.as_bytes());
    assert_eq!(
        first.stdout,
        source.as_bytes(),
        "a first read goes out whole"
    );
    let second = compress(bin(), &s.db(), label, edited.as_bytes());
    let out = second.stdout_text();
    let base = delta_base(&out).unwrap_or_else(|| panic!("not a delta:\n{out}"));
    assert_eq!(
        out.lines().filter(|l| l.starts_with('+')).count(),
        3,
        "{out}"
    );
    assert_eq!(applied(&s.db(), &base, &out), edited);
}

/// A Claude Code PostToolUse payload.
fn post(tool: &str, input: Value, response: Value) -> String {
    let mut v = Value::object();
    v.set("session_id", Value::str("s1"));
    v.set("cwd", Value::str("/home/dev/app"));
    v.set("hook_event_name", Value::str("PostToolUse"));
    v.set("tool_name", Value::str(tool));
    v.set("tool_input", input);
    v.set("tool_response", response);
    v.set("tool_use_id", Value::str("toolu_1"));
    v.to_compact()
}

fn object(pairs: &[(&str, Value)]) -> Value {
    let mut v = Value::object();
    for (k, x) in pairs {
        v.set(k, x.clone());
    }
    v
}

fn num(n: usize) -> Value {
    json::parse(&n.to_string()).unwrap()
}

/// A Read's payload for lines `start..start+count` of `content` (the whole file is `total` lines).
fn read_payload(path: &str, content: &str, start: usize, total: usize, offset: bool) -> String {
    let count = content.lines().count();
    let mut input = object(&[("file_path", Value::str(path))]);
    if offset {
        input.set("offset", num(start));
        input.set("limit", num(count));
    }
    let file = object(&[
        ("filePath", Value::str(path)),
        ("content", Value::str(content)),
        ("numLines", num(count)),
        ("startLine", num(start)),
        ("totalLines", num(total)),
    ]);
    post(
        "Read",
        input,
        object(&[("type", Value::str("text")), ("file", file)]),
    )
}

/// `sqz hook claude-post` on a payload: the answer's JSON.
fn hook(db: &Path, payload: &str) -> Value {
    let run = sqz(bin(), db, &["hook", "claude-post"], payload.as_bytes(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    json::parse(run.stdout_text().trim()).unwrap()
}

/// The replaced Read: its `file` object.
fn replaced_file(answer: &Value) -> &Value {
    let specific = answer
        .get("hookSpecificOutput")
        .expect("the output was replaced");
    assert_eq!(
        specific.get("hookEventName").and_then(Value::as_str),
        Some("PostToolUse")
    );
    let out = specific.get("updatedToolOutput").unwrap();
    assert_eq!(out.get("type").and_then(Value::as_str), Some("text"));
    out.get("file").unwrap()
}

const PATH: &str = "/home/dev/app/src/packed/rabinkarp.rs";

#[test]
fn a_read_after_a_three_line_edit_is_a_delta_in_the_read_shape() {
    let s = Scratch::new("read-edit");
    let (source, edited) = source_and_edit();
    let total = source.lines().count();
    assert_eq!(
        hook(&s.db(), &read_payload(PATH, &source, 1, total, false)).to_compact(),
        "{}"
    );
    let answer = hook(&s.db(), &read_payload(PATH, &edited, 1, total, false));
    let file = replaced_file(&answer);
    for field in ["filePath", "numLines", "startLine", "totalLines"] {
        assert!(file.get(field).is_some(), "{field} was not kept");
    }
    let content = file.get("content").and_then(Value::as_str).unwrap();
    let delta = &content[content.find("§delta:").expect("a delta")..];
    let base = delta_base(delta).unwrap();
    assert_eq!(applied(&s.db(), &base, delta), edited);
}

#[test]
fn a_ranged_read_of_a_file_read_in_full_is_a_ranged_reference() {
    let s = Scratch::new("read-range");
    let (source, _) = source_and_edit();
    let total = source.lines().count();
    hook(&s.db(), &read_payload(PATH, &source, 1, total, false));
    let range: String = source
        .lines()
        .skip(40)
        .take(40)
        .map(|l| format!("{l}\n"))
        .collect();
    let answer = hook(&s.db(), &read_payload(PATH, &range, 41, total, true));
    let file = replaced_file(&answer);
    assert_eq!(file.get("startLine").and_then(Value::as_u64), Some(41));
    let content = file.get("content").and_then(Value::as_str).unwrap();
    assert!(
        content.starts_with("§ref:") && content.contains(":L41-80§"),
        "{content}"
    );
    let token = &content[..content.find("§ ").unwrap() + "§".len()];
    assert_eq!(expand(bin(), &s.db(), token).stdout, range.as_bytes());
}

#[test]
fn what_the_agent_wrote_is_what_it_has() {
    let s = Scratch::new("wrote");
    let (source, edited) = source_and_edit();
    let total = source.lines().count();
    // Write, then a Read of the same bytes: a reference to what the agent wrote.
    let write = post(
        "Write",
        object(&[
            ("file_path", Value::str(PATH)),
            ("content", Value::str(&source)),
        ]),
        object(&[
            ("type", Value::str("create")),
            ("filePath", Value::str(PATH)),
        ]),
    );
    assert_eq!(hook(&s.db(), &write).to_compact(), "{}");
    let answer = hook(&s.db(), &read_payload(PATH, &source, 1, total, false));
    let content = replaced_file(&answer)
        .get("content")
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        content.starts_with(&format!("§ref:{}§", common::hash16(source.as_bytes()))),
        "{content}"
    );
    // Edit, then a Read: a delta against the file as the edit left it, which here is the
    // whole change, so the read is a reference to it.
    let lines: Vec<&str> = source.lines().collect();
    let (old, new) = (lines[20], format!("{} // edited", lines[20]));
    let edit = post(
        "Edit",
        object(&[
            ("file_path", Value::str(PATH)),
            ("old_string", Value::str(old)),
            ("new_string", Value::str(&new)),
        ]),
        object(&[
            ("filePath", Value::str(PATH)),
            ("oldString", Value::str(old)),
            ("newString", Value::str(&new)),
            ("originalFile", Value::str(&source)),
        ]),
    );
    assert_eq!(hook(&s.db(), &edit).to_compact(), "{}");
    let after_edit = source.replacen(old, &new, 1);
    let answer = hook(&s.db(), &read_payload(PATH, &after_edit, 1, total, false));
    let content = replaced_file(&answer)
        .get("content")
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        content.starts_with(&format!("§ref:{}§", common::hash16(after_edit.as_bytes()))),
        "{content}"
    );
    // The file then changed on disk beyond the edit (a formatter ran): a delta against it.
    let answer = hook(&s.db(), &read_payload(PATH, &edited, 1, total, false));
    let content = replaced_file(&answer)
        .get("content")
        .and_then(Value::as_str)
        .unwrap();
    let delta = &content[content.find("§delta:").expect("a delta")..];
    assert_eq!(
        delta_base(delta).unwrap(),
        common::hash16(after_edit.as_bytes())
    );
    assert_eq!(applied(&s.db(), &delta_base(delta).unwrap(), delta), edited);
}

#[test]
fn malformed_or_unknown_post_payloads_are_answered_with_nothing_changed() {
    let s = Scratch::new("post-bad");
    for payload in [
        "{not json".to_string(),
        "[]".to_string(),
        r#"{"tool_name":"Read"}"#.to_string(),
        r#"{"tool_name":"Read","tool_input":{},"tool_response":{"type":"image","file":{}}}"#
            .to_string(),
        r#"{"tool_name":"Read","tool_input":{},"tool_response":{"type":"text","file":{"filePath":7}}}"#
            .to_string(),
        r#"{"tool_name":"Grep","tool_input":{"pattern":"x"},"tool_response":{"mode":"content","content":3}}"#
            .to_string(),
        r#"{"tool_name":"NotebookEdit","tool_input":{},"tool_response":{}}"#.to_string(),
        r#"{"tool_name":"Edit","tool_input":{"file_path":"/a","old_string":"zz","new_string":"y"},"tool_response":{"originalFile":"abc"}}"#.to_string(),
    ] {
        let run = sqz(bin(), &s.db(), &["hook", "claude-post"], payload.as_bytes(), &[]);
        assert_eq!(run.code, 0, "{payload}");
        assert_eq!(run.stdout_text(), "{}\n", "{payload}");
        assert!(run.stderr.lines().count() <= 1, "{payload}: {}", run.stderr);
    }
}

/// The replaced listing of a Grep or Glob answer: its updated output.
fn updated(answer: &Value) -> &Value {
    answer
        .get("hookSpecificOutput")
        .and_then(|h| h.get("updatedToolOutput"))
        .expect("the output was replaced")
}

#[test]
fn a_grep_answer_is_grouped_by_file_then_a_repeat_is_a_reference() {
    let s = Scratch::new("grep");
    let content: String = (1..=30)
        .map(|n| format!("src/lib.rs:{n}:    let value_{n} = compute({n});\n"))
        .collect();
    let grep = post(
        "Grep",
        object(&[
            ("pattern", Value::str("compute")),
            ("output_mode", Value::str("content")),
        ]),
        object(&[
            ("mode", Value::str("content")),
            ("numFiles", num(1)),
            ("filenames", Value::Array(Vec::new())),
            ("content", Value::str(&content)),
            ("numLines", num(30)),
        ]),
    );
    let first = hook(&s.db(), &grep);
    let out = updated(&first);
    assert_eq!(out.get("numLines").and_then(Value::as_u64), Some(30));
    let text = out.get("content").and_then(Value::as_str).unwrap();
    for n in 1..=30 {
        assert!(
            text.contains(&format!("{n}:    let value_{n} = compute({n});")),
            "{text}"
        );
    }
    let again = hook(&s.db(), &grep);
    let text = updated(&again)
        .get("content")
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        text.starts_with(&format!("§ref:{}§", common::hash16(content.as_bytes()))),
        "{text}"
    );
}

/// A Glob that lists a dependency tree (the real `find` output of a Node project): the bulk
/// directory folds into a counted marker, the project's own files stay, and `sqz expand`
/// gives every name back.
#[test]
fn a_glob_through_node_modules_folds_the_bulk_directory() {
    let s = Scratch::new("glob");
    let listing =
        std::fs::read_to_string(common::fixtures_dir().join("find-node-project/input.txt"))
            .unwrap();
    let files: Vec<&str> = listing
        .lines()
        .filter(|l| l.ends_with(".js") || l.ends_with(".json"))
        .collect();
    assert!(files.iter().any(|f| f.contains("node_modules")));
    let glob = post(
        "Glob",
        object(&[("pattern", Value::str("**/*.js"))]),
        object(&[
            (
                "filenames",
                Value::Array(files.iter().map(|f| Value::str(f)).collect()),
            ),
            ("durationMs", num(12)),
            ("numFiles", num(files.len())),
            ("truncated", Value::Bool(false)),
        ]),
    );
    let answer = hook(&s.db(), &glob);
    let out = updated(&answer);
    assert_eq!(
        out.get("numFiles").and_then(Value::as_u64),
        Some(files.len() as u64)
    );
    assert_eq!(out.get("truncated").and_then(Value::as_bool), Some(false));
    let shown: Vec<&str> = out
        .get("filenames")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(shown.len() < files.len() / 2, "{shown:?}");
    for own in files.iter().filter(|f| !f.contains("node_modules")) {
        assert!(shown.contains(own), "a project file was folded: {own}");
    }
    let marker = shown
        .iter()
        .find(|l| l.contains("sqz expand"))
        .expect("a marker");
    let hash = marker.rsplit(' ').next().unwrap().trim_end_matches(']');
    let hash = hash.split(':').next().unwrap();
    assert_eq!(expand(bin(), &s.db(), hash).stdout_text(), files.join("\n"));
}
