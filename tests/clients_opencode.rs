//! OpenCode 1.18.33 (`tests/clients/opencode`), `opencode run` against a scripted OpenAI-style
//! chat completions server on 127.0.0.1 (a custom provider with a `baseURL`), run once without
//! sqz and once after `sqz init`, in its default permissions and with `--auto`. What the model saw
//! of each call is compared: no call denied or failed by sqz, the same exit status (OpenCode keeps
//! it in the call's metadata, not in the text), never more tokens, and the credential canary
//! never stored.

#[path = "clients/harness.rs"]
mod harness;

use harness::{Call, Model, Scratch, Shown, Wire, COMMANDS};
use sqz::json::Value;
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

/// One `opencode run`; the results the model saw, the exit status of each bash call, and the
/// scratch tree.
fn session(auto: bool, with_sqz: bool) -> (Vec<Shown>, Vec<String>, Scratch) {
    let opencode = harness::client("opencode", "opencode");
    let scratch = Scratch::new(if with_sqz { "opencode-sqz" } else { "opencode" });
    let model = Model::start(Wire::OpenAi, script());
    let config = format!(
        r#"{{"$schema":"https://opencode.ai/config.json","provider":{{"scripted":{{"npm":"@ai-sdk/openai-compatible","name":"Scripted","options":{{"baseURL":"http://127.0.0.1:{}/v1","apiKey":"scripted"}},"models":{{"m1":{{"name":"M1","tool_call":true}}}}}}}},"model":"scripted/m1","small_model":"scripted/m1","autoupdate":false,"share":"disabled"}}"#,
        model.port
    );
    std::fs::create_dir_all(scratch.home().join(".config/opencode")).unwrap();
    std::fs::write(
        scratch.home().join(".config/opencode/opencode.json"),
        config,
    )
    .unwrap();
    if with_sqz {
        scratch.init("opencode");
    }
    let mut cmd = scratch.command(&opencode);
    cmd.args(["run", "Run the scripted steps.", "--format", "json"])
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
    if auto {
        cmd.arg("--auto");
    }
    let (stdout, stderr, code) = harness::run(cmd, Duration::from_secs(300));
    assert_eq!(
        code,
        Some(0),
        "opencode exited {code:?}:\n{stdout}\n{stderr}"
    );
    let results = harness::openai_results(&model.last_turn());
    assert_eq!(results.len(), COMMANDS.len(), "{results:#?}\n{stderr}");
    (results, exits(&stdout), scratch)
}

/// The exit status of each bash call, from the run's JSON events.
fn exits(events: &str) -> Vec<String> {
    events
        .lines()
        .filter_map(|l| sqz::json::parse(l).ok())
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|e| {
            let state = e.get("part").and_then(|p| p.get("state"));
            let status = state.and_then(|s| s.get("status")).and_then(Value::as_str);
            let exit = state
                .and_then(|s| s.get("metadata"))
                .and_then(|m| m.get("exit"))
                .map(Value::to_compact);
            format!("{} {}", status.unwrap_or("?"), exit.unwrap_or_default())
        })
        .collect()
}

fn paired(auto: bool) {
    // One OpenCode at a time: two started at once on a fresh install (the first run of its
    // 185 MB binary) hung in CI until their time ran out.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (without, exits_without, _) = session(auto, false);
    let (with, exits_with, scratch) = session(auto, true);
    assert_eq!(exits_without.len(), COMMANDS.len(), "{exits_without:?}");
    // Every call completed as it did without sqz, with the same exit status (the last is
    // `sqz expand` of a hash only the run with sqz was shown).
    let n = COMMANDS.len() - 1;
    assert_eq!(exits_with[..n], exits_without[..n]);
    assert!(
        exits_with.iter().all(|e| e.starts_with("completed ")),
        "{exits_with:?}"
    );
    let text_exit = |_: &str| None;
    // Timings, and the file OpenCode saves a cut output to, differ between any two runs.
    let volatile = |t: &str| {
        let t = harness::zero_after(t, &[" tests in "]);
        t.lines()
            .map(|l| match l.find("Full output saved to: ") {
                Some(at) => &l[..at],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (before, after) = harness::compare("opencode", &without, &with, text_exit, volatile);
    assert!(
        after < before,
        "nothing was compressed: {before} -> {after}"
    );
    for fact in ["FAIL: test_discount_caps", "FAILED (failures=2)"] {
        assert!(with[0].text.contains(fact), "{fact} in {}", with[0].text);
    }
    assert_eq!(
        exits_with[n], "completed 0",
        "sqz expand failed: {}",
        with[n].text
    );
    let original = ["invoice-line-renderer-component-0", "test_rounding_half_up"];
    assert!(
        original.iter().any(|o| with[n].text.contains(o)),
        "{}",
        with[n].text
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
fn opencode_default_permissions_compress_after_the_tool() {
    paired(false);
}

#[test]
fn opencode_auto_compresses_after_the_tool() {
    paired(true);
}
