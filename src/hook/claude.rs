//! Claude Code hooks. `sqz hook claude` (PreToolUse on Bash) rewrites a command so its output
//! is compressed; `sqz hook claude-post` (PostToolUse on Bash) compresses the successful output
//! of a command that was not routed through sqz. Both let the command run as written on any
//! doubt and never decide permissions. The allow-rule check is the one file read a hook makes;
//! `cmd/hook.rs` hands it to `pre_answer`.

use super::answer::{self, Answer};
use super::rewrite::{decide, wrap, Decision, Shape, ALLOW_RULES, LEGACY_RULE};
use crate::json::{self, Value};
use crate::serve::{Backend, Served};
use crate::store::EventKind;
use std::path::{Path, PathBuf};

/// The settings files whose `permissions.allow` may hold the rules, lowest precedence first.
pub fn settings_files(
    home: Option<&Path>,
    config_dir: Option<&Path>,
    cwd: Option<&Path>,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    match (config_dir, home) {
        (Some(dir), _) => files.push(dir.join("settings.json")),
        (None, Some(home)) => files.push(home.join(".claude").join("settings.json")),
        (None, None) => {}
    }
    if let Some(cwd) = cwd {
        files.push(cwd.join(".claude").join("settings.json"));
        files.push(cwd.join(".claude").join("settings.local.json"));
    }
    files
}

/// The rewrite the allow rules in the files' `permissions.allow` accept: `Shape::Trap` with
/// every rule in `ALLOW_RULES`, `Shape::Printf` with the rules of an install made before the
/// trap, none without them.
pub fn allowed_shape(files: &[PathBuf]) -> Option<Shape> {
    let mut found = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(value) = json::parse(&text) else {
            continue;
        };
        let allow = value
            .get("permissions")
            .and_then(|p| p.get("allow"))
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        found.extend(allow.iter().filter_map(Value::as_str).map(str::to_string));
    }
    let has = |rule: &str| found.iter().any(|f| f == rule);
    if !has(ALLOW_RULES[0]) {
        None
    } else if has(ALLOW_RULES[1]) {
        Some(Shape::Trap)
    } else if has(LEGACY_RULE) {
        Some(Shape::Printf)
    } else {
        None
    }
}

/// The payload as a JSON object.
fn parse_object(payload: &str) -> Result<Value, Answer> {
    let value = answer::parse(payload)?;
    if value.as_object().is_none() {
        return Err(Answer::bad("payload is not a JSON object"));
    }
    Ok(value)
}

/// Checks the parts common to both events; returns the payload and the command.
fn bash_call(payload: &str) -> Result<(Value, String), Answer> {
    bash_command(parse_object(payload)?)
}

fn bash_command(value: Value) -> Result<(Value, String), Answer> {
    match value.get("tool_name").and_then(Value::as_str) {
        Some("Bash") => {}
        Some(_) => return Err(Answer::leave("not a Bash call")),
        None => return Err(Answer::bad("no tool_name in the payload")),
    }
    let command = value
        .get("tool_input")
        .and_then(|t| t.get("command"))
        .and_then(Value::as_str)
        .map(str::to_string);
    match command {
        Some(c) if !c.trim().is_empty() => Ok((value, c)),
        _ => Err(Answer::leave("empty command")),
    }
}

/// The PreToolUse answer; `allowed` says, for the payload's `cwd`, which rewrite the allow
/// rules in the user's settings accept (see `allowed_shape`).
pub fn pre_answer(payload: &str, allowed: impl FnOnce(Option<&Path>) -> Option<Shape>) -> Answer {
    let (value, command) = match bash_call(payload) {
        Ok(call) => call,
        Err(answer) => return answer,
    };
    let Some(input) = value.get("tool_input").filter(|t| t.as_object().is_some()) else {
        return Answer::bad("tool_input is not an object");
    };
    if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
        return Answer::unchanged();
    }
    let Decision::Rewrite(mut new) = decide(&command) else {
        return Answer::unchanged();
    };
    let cwd = value.get("cwd").and_then(Value::as_str).map(Path::new);
    match allowed(cwd) {
        Some(Shape::Trap) => {}
        Some(Shape::Printf) => new = wrap(&command, Shape::Printf),
        None => return Answer::leave("the allow rules are missing (run sqz init)"),
    }
    let mut updated = input.clone();
    updated.set("command", Value::str(&new));
    Answer::changed(answer::specific("PreToolUse", "updatedInput", updated))
}

/// The PostToolUse answer; `backend` compresses and records. Bash output is compressed; the
/// file tools are served in `claude_files`.
pub fn post_answer(payload: &str, truncation_limit: usize, backend: &mut dyn Backend) -> Answer {
    let value = match parse_object(payload) {
        Ok(value) => value,
        Err(answer) => return answer,
    };
    match value.get("tool_name").and_then(Value::as_str) {
        Some(tool @ ("Read" | "Grep" | "Glob" | "Write" | "Edit")) => {
            let tool = tool.to_string();
            super::claude_files::answer(&tool, &value, backend)
        }
        _ => match bash_command(value) {
            Ok((value, command)) => post_bash(&value, &command, truncation_limit, backend),
            Err(answer) => answer,
        },
    }
}

/// PostToolUse on Bash: the output of a command the PreToolUse rewrite left alone.
fn post_bash(
    value: &Value,
    command: &str,
    truncation_limit: usize,
    backend: &mut dyn Backend,
) -> Answer {
    if command.contains("sqz") {
        return Answer::unchanged();
    }
    let Some(response) = value
        .get("tool_response")
        .filter(|r| r.as_object().is_some())
    else {
        return Answer::bad("no tool_response object");
    };
    let flag = |k: &str| response.get(k).and_then(Value::as_bool) == Some(true);
    if flag("interrupted") || flag("isImage") {
        return Answer::unchanged();
    }
    let Some(stdout) = response.get("stdout").and_then(Value::as_str) else {
        return Answer::bad("tool_response has no stdout");
    };
    let stderr = response.get("stderr").and_then(Value::as_str).unwrap_or("");
    if stdout.is_empty() || stdout.chars().count() >= truncation_limit {
        // Nothing to do, or Claude Code already cut it down to a preview.
        return Answer::unchanged();
    }
    let Served {
        kind,
        stdout: served,
        ..
    } = backend.compress(command, stdout.as_bytes());
    if matches!(kind, EventKind::Ref | EventKind::Slice) {
        return Answer::unchanged();
    }
    let Ok(served) = String::from_utf8(served) else {
        return Answer::unchanged();
    };
    if served == stdout || crate::doc::reference::holds_ref(&served) || served.len() >= stdout.len()
    {
        return Answer::unchanged();
    }
    let mut output = Value::object();
    output.set("stdout", Value::str(&served));
    output.set("stderr", Value::str(stderr));
    output.set("interrupted", json::parse("false").expect("literal"));
    output.set("isImage", json::parse("false").expect("literal"));
    Answer::changed(answer::specific("PostToolUse", "updatedToolOutput", output))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pre_payload(command: &str, extra: &str) -> String {
        let mut cmd = String::new();
        json::write_string(&mut cmd, command);
        format!(
            r#"{{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":{cmd},"description":"Run it","timeout":120000{extra}}},"tool_use_id":"toolu_1"}}"#
        )
    }

    #[test]
    fn pre_rewrites_keeping_every_field() {
        let answer = pre_answer(&pre_payload("git status", ""), |cwd| {
            assert_eq!(cwd, Some(Path::new("/proj")));
            Some(Shape::Trap)
        });
        assert_eq!(answer.left, None);
        let v = json::parse(&answer.json).unwrap();
        let specific = v.get("hookSpecificOutput").unwrap();
        assert_eq!(
            specific.get("hookEventName").unwrap().as_str(),
            Some("PreToolUse")
        );
        assert!(specific.get("permissionDecision").is_none());
        let input = specific.get("updatedInput").unwrap();
        let Decision::Rewrite(expected) = decide("git status") else {
            panic!()
        };
        assert_eq!(
            input.get("command").unwrap().as_str(),
            Some(expected.as_str())
        );
        assert_eq!(input.get("description").unwrap().as_str(), Some("Run it"));
        assert_eq!(input.get("timeout").unwrap().as_i64(), Some(120000));
        assert!(!answer.json.contains("allow\""));
        // An install from before the EXIT trap still gets the form its rules accept.
        let legacy = pre_answer(&pre_payload("git status", ""), |_| Some(Shape::Printf));
        let v = json::parse(&legacy.json).unwrap();
        let input = v.get("hookSpecificOutput").unwrap().get("updatedInput");
        let command = input.unwrap().get("command").unwrap().as_str();
        assert_eq!(command, Some(wrap("git status", Shape::Printf).as_str()));
    }

    #[test]
    fn pre_leaves_without_the_allow_rules() {
        let answer = pre_answer(&pre_payload("git status", ""), |_| None);
        assert_eq!(answer.json, "{}");
        assert!(answer.left.unwrap().contains("sqz init"));
    }

    #[test]
    fn pre_leaves_what_it_must() {
        let cases = [
            pre_payload("git status", r#","run_in_background":true"#),
            pre_payload("cd src && make", ""),
            pre_payload("", ""),
            pre_payload("   ", ""),
            "{not json".to_string(),
            "[]".to_string(),
            "".to_string(),
            r#"{"tool_name":"Read","tool_input":{"file_path":"/a"}}"#.to_string(),
            r#"{"tool_name":"Bash","tool_input":{}}"#.to_string(),
            r#"{"tool_name":"Bash"}"#.to_string(),
        ];
        for payload in cases {
            let answer = pre_answer(&payload, |_| Some(Shape::Trap));
            assert_eq!(answer.json, "{}", "{payload}");
            assert!(!answer.json.contains("permissionDecision"));
        }
        let bad = pre_answer("{not json", |_| Some(Shape::Trap));
        assert!(bad.left.unwrap().contains("malformed"));
        let other = pre_answer(r#"{"tool_name":"Read","tool_input":{}}"#, |_| {
            Some(Shape::Trap)
        });
        assert!(other.left.unwrap().contains("not a Bash call"));
    }

    fn post_payload(command: &str, stdout: &str, extra: &str) -> String {
        let (mut c, mut o) = (String::new(), String::new());
        json::write_string(&mut c, command);
        json::write_string(&mut o, stdout);
        format!(
            r#"{{"session_id":"abc","cwd":"/proj","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":{c},"description":"d"}},"tool_response":{{"stdout":{o},"stderr":"warn","interrupted":false,"isImage":false{extra}}},"tool_use_id":"toolu_1"}}"#
        )
    }

    /// A backend whose compress is `f`; it stores nothing.
    struct Fake<F: FnMut(&str, &[u8]) -> (EventKind, Vec<u8>)>(F);

    impl<F: FnMut(&str, &[u8]) -> (EventKind, Vec<u8>)> Backend for Fake<F> {
        fn compress(&mut self, label: &str, body: &[u8]) -> Served {
            let (kind, stdout) = (self.0)(label, body);
            Served {
                stdout,
                header: None,
                kind,
                hash: String::new(),
                notice: None,
                reason: None,
            }
        }

        fn lossless(&mut self, _: &crate::serve::read::Lossless) -> crate::serve::read::Shown {
            crate::serve::read::Shown::Unstored
        }

        fn agent_wrote(&mut self, _: &str, _: &str) {}
    }

    #[test]
    fn post_replaces_output_in_the_bash_shape() {
        let answer = post_answer(
            &post_payload("cd x && make", "long\nlong\n", ""),
            30_000,
            &mut Fake(|label: &str, body: &[u8]| {
                assert_eq!(label, "cd x && make");
                assert_eq!(body, b"long\nlong\n");
                (EventKind::Generic, b"long x2\n".to_vec())
            }),
        );
        let v = json::parse(&answer.json).unwrap();
        let specific = v.get("hookSpecificOutput").unwrap();
        assert_eq!(
            specific.get("hookEventName").unwrap().as_str(),
            Some("PostToolUse")
        );
        let out = specific.get("updatedToolOutput").unwrap();
        assert_eq!(out.get("stdout").unwrap().as_str(), Some("long x2\n"));
        assert_eq!(out.get("stderr").unwrap().as_str(), Some("warn"));
        assert_eq!(out.get("interrupted").unwrap().as_bool(), Some(false));
        assert_eq!(out.get("isImage").unwrap().as_bool(), Some(false));
    }

    #[test]
    fn post_never_answers_with_a_reference_and_leaves_what_it_must() {
        let never = |_: &str, _: &[u8]| -> (EventKind, Vec<u8>) { panic!("must not compress") };
        let never = &mut Fake(never);
        for payload in [
            post_payload("{ ls 2>&1; } | sqz compress --cmd 'ls'", "a\n", ""),
            post_payload("ls", "a\n", "")
                .replace(r#""interrupted":false"#, r#""interrupted":true"#),
            post_payload("ls", "a\n", "").replace(r#""isImage":false"#, r#""isImage":true"#),
            post_payload("ls", "", ""),
            post_payload("ls", &"x".repeat(40), ""),
            "{bad".to_string(),
            r#"{"tool_name":"Grep","tool_input":{"command":"x"}}"#.to_string(),
            r#"{"tool_name":"Bash","tool_input":{"command":""},"tool_response":{"stdout":"a"}}"#
                .to_string(),
        ] {
            assert_eq!(post_answer(&payload, 30, never).json, "{}", "{payload}");
        }
        let reference = post_answer(
            &post_payload("ls", "a\nb\n", ""),
            30_000,
            &mut Fake(|_: &str, _: &[u8]| (EventKind::Ref, "§ref:abcd§\n".into())),
        );
        assert_eq!(reference.json, "{}");
        let unchanged = post_answer(
            &post_payload("ls", "a\nb\n", ""),
            30_000,
            &mut Fake(|_: &str, b: &[u8]| (EventKind::Fresh, b.to_vec())),
        );
        assert_eq!(unchanged.json, "{}");
    }

    #[test]
    fn settings_are_found_in_user_and_project_files() {
        let dir = std::env::temp_dir().join(format!("sqz-claude-settings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (home, proj) = (dir.join("home"), dir.join("proj"));
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(proj.join(".claude")).unwrap();
        let files = settings_files(Some(&home), None, Some(&proj));
        assert_eq!(allowed_shape(&files), None);
        let rule = |r: &str| {
            let mut s = String::new();
            json::write_string(&mut s, r);
            s
        };
        std::fs::write(
            home.join(".claude/settings.json"),
            format!(
                r#"{{"permissions":{{"allow":[{}]}}}}"#,
                rule(ALLOW_RULES[0])
            ),
        )
        .unwrap();
        assert_eq!(allowed_shape(&files), None);
        std::fs::write(
            proj.join(".claude/settings.json"),
            format!(r#"{{"permissions":{{"allow":[{}]}}}}"#, rule(LEGACY_RULE)),
        )
        .unwrap();
        assert_eq!(allowed_shape(&files), Some(Shape::Printf));
        std::fs::write(
            proj.join(".claude/settings.local.json"),
            format!(
                r#"{{"permissions":{{"allow":["Bash(ls:*)",{}]}}}}"#,
                rule(ALLOW_RULES[1])
            ),
        )
        .unwrap();
        assert_eq!(allowed_shape(&files), Some(Shape::Trap));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
