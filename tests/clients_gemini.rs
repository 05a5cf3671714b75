//! Gemini CLI 0.61.0 (`tests/clients/gemini`), headless against a scripted Gemini API on
//! 127.0.0.1, run once without sqz and once after `sqz init`, in its default approval mode with
//! the allow rules a user would have and in YOLO mode. What the model saw of each call is
//! compared: no call denied or turned into an error by sqz, the same exit status, no hook error
//! or client notice, never more tokens, and the credential canary never stored.

#[path = "clients/harness.rs"]
mod harness;

use harness::{Call, Model, Scratch, Shown, Wire, COMMANDS};
use std::time::Duration;

/// The shell commands a user would let Gemini run without asking.
const ALLOWED: [&str; 8] = ["python3", "git", "ls", "true", "cd", "head", "cat", "sqz"];

fn script() -> Vec<Call> {
    COMMANDS
        .iter()
        .map(|c| Call {
            tool: "run_shell_command".into(),
            args: format!(
                r#"{{"command":{},"description":"Scripted step"}}"#,
                harness::quote(c)
            ),
        })
        .collect()
}

/// One headless run; the results the model saw, the client's stderr, and the scratch tree.
fn session(yolo: bool, with_sqz: bool) -> (Vec<Shown>, String, Scratch) {
    let gemini = harness::client("gemini", "gemini");
    let scratch = Scratch::new(if with_sqz { "gemini-sqz" } else { "gemini" });
    let allowed: Vec<String> = ALLOWED
        .iter()
        .map(|c| harness::quote(&format!("run_shell_command({c})")))
        .collect();
    let settings = format!(
        r#"{{"security":{{"auth":{{"selectedType":"gemini-api-key"}}}},"tools":{{"allowed":[{}]}}}}"#,
        allowed.join(",")
    );
    std::fs::create_dir_all(scratch.home().join(".gemini")).unwrap();
    std::fs::write(scratch.home().join(".gemini/settings.json"), settings).unwrap();
    if with_sqz {
        scratch.init("gemini");
    } else {
        // The same untracked `.gemini/` in both runs, so `git status` shows the same files.
        std::fs::create_dir_all(scratch.project().join(".gemini")).unwrap();
        std::fs::write(scratch.project().join(".gemini/settings.json"), "{}\n").unwrap();
    }
    let model = Model::start(Wire::Gemini, script());
    let mut cmd = scratch.command(&gemini);
    cmd.args(["-p", "Run the scripted steps.", "-o", "json"])
        .env(
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("GEMINI_API_KEY", "scripted")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    if yolo {
        cmd.arg("--yolo");
    }
    let (stdout, stderr, code) = harness::run(cmd, Duration::from_secs(300));
    assert_eq!(code, Some(0), "gemini exited {code:?}:\n{stdout}\n{stderr}");
    let results = harness::gemini_results(&model.last_turn());
    assert_eq!(results.len(), COMMANDS.len(), "{results:#?}\n{stderr}");
    (results, stderr, scratch)
}

/// The exit status the model reads: the `Exit Code:` line, `0` without one, or the error.
fn exit(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("Exit Code: "))
        .map(str::to_string)
        .or(Some("0".into()))
}

fn volatile(text: &str) -> String {
    harness::zero_after(text, &["Process Group PGID: ", " tests in "])
}

fn paired(yolo: bool) {
    let (without, _, _) = session(yolo, false);
    assert!(
        without.iter().all(|r| !r.error),
        "a call failed without sqz: {without:#?}"
    );
    let (with, stderr, scratch) = session(yolo, true);
    // Gemini names the project's hooks on every start (a warning, not a question); a hook that
    // failed, timed out or answered something it could not read would say so.
    for line in stderr.lines().map(str::to_lowercase) {
        let trouble = ["fail", "error", "invalid", "timed out", "timeout"];
        assert!(
            !(line.contains("hook") && trouble.iter().any(|t| line.contains(t))),
            "hook trouble: {line}\n{stderr}"
        );
    }
    let (before, after) = harness::compare("gemini", &without, &with, exit, volatile);
    assert!(
        after < before,
        "nothing was compressed: {before} -> {after}"
    );
    // The failing run is shortened, and `sqz expand` through the client's shell brings an
    // original back.
    assert!(
        with[0].text.len() < without[0].text.len(),
        "{}",
        with[0].text
    );
    for fact in [
        "FAIL: test_discount_caps",
        "FAILED (failures=2)",
        "Exit Code: 1",
    ] {
        assert!(with[0].text.contains(fact), "{fact} in {}", with[0].text);
    }
    let expanded = &with[COMMANDS.len() - 1];
    assert!(
        !expanded.error && exit(&expanded.text).as_deref() == Some("0"),
        "{}",
        expanded.text
    );
    // It expands the first marker the model was shown: the listing or the test run.
    let original = ["invoice-line-renderer-component-0", "test_rounding_half_up"];
    assert!(
        original.iter().any(|o| expanded.text.contains(o)) && !expanded.text.contains("sqz:"),
        "{}",
        expanded.text
    );
    assert!(
        !scratch.canary_stored(),
        "the .env credential reached the store"
    );
    assert!(
        with[8].text.contains(harness::CANARY),
        "the model still sees the .env it asked for"
    );
}

#[test]
fn gemini_default_mode_compresses_after_the_tool_without_asking() {
    paired(false);
}

#[test]
fn gemini_yolo_mode_compresses_after_the_tool() {
    paired(true);
}
