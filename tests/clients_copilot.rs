//! GitHub Copilot CLI 1.0.102 (`tests/clients/copilot`), `copilot -p` offline against a scripted
//! OpenAI-style chat completions server on 127.0.0.1 (its BYOK provider:
//! `COPILOT_PROVIDER_BASE_URL` with `COPILOT_OFFLINE=true`, no GitHub sign-in), run once without
//! sqz and once after `sqz init`, with a user's allow rule for the shell and with `--yolo`. What
//! the model saw of each call is compared: no call denied or failed by sqz, the same exit status
//! (the closing `<shellId: N completed with exit code X>` line), never more tokens, and the
//! credential canary never stored.

#[path = "clients/harness.rs"]
mod harness;

use harness::{Call, Model, Scratch, Shown, Wire, COMMANDS};
use std::time::Duration;

fn script() -> Vec<Call> {
    COMMANDS
        .iter()
        .map(|c| Call {
            tool: "bash".into(),
            args: format!(
                r#"{{"command":{},"description":"Scripted step"}}"#,
                harness::quote(c)
            ),
        })
        .collect()
}

/// One `copilot -p`; the results the model saw, the client's output, and the scratch tree.
fn session(yolo: bool, with_sqz: bool) -> (Vec<Shown>, String, Scratch) {
    let copilot = harness::client("copilot", "copilot");
    let scratch = Scratch::new(if with_sqz { "copilot-sqz" } else { "copilot" });
    if with_sqz {
        scratch.init("copilot");
    }
    let model = Model::start(Wire::OpenAi, script());
    let mut cmd = scratch.command(&copilot);
    cmd.args(["-p", "Run the scripted steps.", "--no-auto-update"])
        // Repository hooks load only in a folder the user trusts, as they would have.
        .arg("--trust-folder")
        .env("COPILOT_OFFLINE", "true")
        .env(
            "COPILOT_PROVIDER_BASE_URL",
            format!("http://127.0.0.1:{}/v1", model.port),
        )
        .env("COPILOT_PROVIDER_API_KEY", "scripted")
        .env("COPILOT_MODEL", "gpt-4.1")
        .env("COPILOT_AUTO_UPDATE", "false");
    if yolo {
        cmd.arg("--yolo");
    } else {
        cmd.args(["--allow-tool", "shell"]);
    }
    let (stdout, stderr, code) = harness::run(cmd, Duration::from_secs(300));
    assert_eq!(
        code,
        Some(0),
        "copilot exited {code:?}:\n{stdout}\n{stderr}"
    );
    let results = harness::openai_results(&model.last_turn());
    assert_eq!(
        results.len(),
        COMMANDS.len(),
        "{results:#?}\n{stdout}\n{stderr}"
    );
    (results, format!("{stdout}{stderr}"), scratch)
}

/// The exit status in the closing line Copilot writes after the output.
fn exit(text: &str) -> Option<String> {
    let line = text.lines().last()?;
    let code = line
        .strip_prefix("<shellId: ")?
        .split(" exit code ")
        .nth(1)?;
    Some(code.trim_end_matches('>').to_string())
}

fn paired(yolo: bool) {
    let (without, _, _) = session(yolo, false);
    assert!(
        without.iter().all(|r| exit(&r.text).is_some()),
        "{without:#?}"
    );
    let (with, output, scratch) = session(yolo, true);
    for line in output.lines().map(str::to_lowercase) {
        assert!(
            !(line.contains("hook") && line.contains("fail")),
            "hook trouble: {line}"
        );
    }
    let volatile = |t: &str| harness::zero_after(t, &[" tests in "]);
    let (before, after) = harness::compare("copilot", &without, &with, exit, volatile);
    assert!(
        after < before,
        "nothing was compressed: {before} -> {after}"
    );
    for fact in [
        "FAIL: test_discount_caps",
        "FAILED (failures=2)",
        "exit code 1>",
    ] {
        assert!(with[0].text.contains(fact), "{fact} in {}", with[0].text);
    }
    let expanded = &with[COMMANDS.len() - 1];
    assert_eq!(
        exit(&expanded.text).as_deref(),
        Some("0"),
        "{}",
        expanded.text
    );
    let original = ["invoice-line-renderer-component-0", "test_rounding_half_up"];
    assert!(
        original.iter().any(|o| expanded.text.contains(o)),
        "{}",
        expanded.text
    );
    assert!(
        !scratch.canary_stored(),
        "the .env credential reached the store"
    );
    // Copilot masks a token it recognises before anyone sees it (`GITHUB_TOKEN=******`); the
    // model sees the same `.env` either way.
    assert_eq!(with[8].text, without[8].text);
}

#[test]
fn copilot_with_an_allow_rule_compresses_after_the_tool() {
    paired(false);
}

#[test]
fn copilot_yolo_compresses_after_the_tool() {
    paired(true);
}
