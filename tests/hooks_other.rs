//! The Gemini CLI, Copilot CLI and OpenCode after-tool hooks and `sqz resume`, through the
//! binary as the clients run them: an answer only ever offers a shorter output, exit 0.

mod common;

use common::{compress, sqz, Scratch};
use std::path::Path;
use std::process::Command;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

/// `sqz hook CLIENT` with `payload` on stdin.
fn hook(scratch: &Scratch, client: &str, payload: &str) -> common::Run {
    sqz(
        bin(),
        &scratch.db(),
        &["hook", client],
        payload.as_bytes(),
        &[],
    )
}

/// A captured failing `cargo test` run: what the clients' after-tool hooks get to shorten.
fn cargo_test_output() -> String {
    let path = common::fixtures_dir().join("cargo-test-failing/input.txt");
    std::fs::read_to_string(path).expect("fixture cargo-test-failing")
}

fn quoted(text: &str) -> String {
    let mut out = String::new();
    sqz::json::write_string(&mut out, text);
    out
}

/// Gemini CLI's `AfterTool` payload for `command`, its shell result laid out as 0.61 lays it.
fn gemini(transcript: &str, command: &str, output: &str) -> String {
    let content = format!(
        "<untrusted_context>\nOutput: {output}\nExit Code: 101\nProcess Group PGID: 4242\n</untrusted_context>"
    );
    format!(
        r#"{{"session_id":"s1","transcript_path":{},"cwd":"/repo","hook_event_name":"AfterTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{{"command":{},"description":"Run the tests"}},"tool_response":{{"llmContent":{},"returnDisplay":"x"}}}}"#,
        quoted(transcript),
        quoted(command),
        quoted(&content)
    )
}

/// Copilot CLI's `postToolUse` payload, as 1.0.102 sends it (`toolArgs` an object).
fn copilot(command: &str, output: &str) -> String {
    let text = format!("{output}\n<shellId: 0 completed with exit code 101>");
    format!(
        r#"{{"sessionId":"s1","timestamp":1704614600000,"cwd":"/repo","toolName":"bash","toolArgs":{{"command":{},"description":"d"}},"toolResult":{{"resultType":"success","textResultForLlm":{}}}}}"#,
        quoted(command),
        quoted(&text)
    )
}

#[test]
fn hooks_never_block_whatever_arrives() {
    let scratch = Scratch::new("hooks-other");
    let transcript = scratch.dir.join("gemini/tmp/proj/chats/session-1.jsonl");
    let transcript = transcript.to_str().unwrap();
    let small = "ok\n";
    let cases = vec![
        // Nothing worth shortening, a command through sqz, and payloads of the retired rewrites.
        ("gemini", gemini(transcript, "ls", small)),
        ("gemini", gemini(transcript, "sqz expand 0123", &cargo_test_output())),
        (
            "gemini",
            r#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"git status"}}"#.to_owned(),
        ),
        ("copilot", copilot("ls", small)),
        ("copilot", copilot("sqz expand 0123", &cargo_test_output())),
        (
            "copilot",
            r#"{"sessionId":"s1","timestamp":1,"cwd":"/repo","toolName":"bash","toolArgs":"{\"command\":\"git status\"}"}"#.to_owned(),
        ),
        ("copilot", copilot("cargo test", &cargo_test_output()).replace("\"bash\"", "\"view\"")),
        ("opencode", r#"{"tool":"bash","command":"git status"}"#.to_owned()),
        (
            "opencode",
            format!(r#"{{"tool":"read","command":"x","output":{}}}"#, quoted(&cargo_test_output())),
        ),
    ];
    for (client, input) in &cases {
        let run = hook(&scratch, client, input);
        assert_eq!(run.code, 0, "{client} {input}");
        assert_eq!(run.stdout_text(), "{}\n", "{client} {input}");
        assert!(run.stderr.lines().count() <= 1, "{client}: {}", run.stderr);
    }
    // A payload that cannot be read is said in one line and writes nothing.
    let unread = Scratch::new("hooks-other-bad");
    for client in ["gemini", "copilot", "opencode"] {
        for bad in ["{not json", "", "[]", "\u{0}\u{1}"] {
            let run = hook(&unread, client, bad);
            assert_eq!(
                (run.code, run.stdout_text().as_str()),
                (0, "{}\n"),
                "{client} {bad}"
            );
            assert_eq!(run.stderr.lines().count(), 1, "{client}: {}", run.stderr);
        }
    }
    assert!(!unread.db().exists());
}

#[test]
fn gemini_after_tool_hands_the_shorter_result_to_read_file() {
    let scratch = Scratch::new("hooks-gemini");
    let temp = scratch.dir.join("gemini/tmp/proj");
    let transcript = temp.join("chats/session-1.jsonl");
    let output = cargo_test_output();
    let payload = gemini(
        transcript.to_str().unwrap(),
        "cargo test",
        output.trim_end(),
    );
    let run = hook(&scratch, "gemini", &payload);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer = sqz::json::parse(run.stdout_text().trim()).unwrap();
    let specific = answer.get("hookSpecificOutput").unwrap();
    assert_eq!(
        specific.get("hookEventName").unwrap().as_str(),
        Some("AfterTool")
    );
    assert!(answer.get("decision").is_none(), "{}", run.stdout_text());
    let tail = specific.get("tailToolCallRequest").unwrap();
    assert_eq!(tail.get("name").unwrap().as_str(), Some("read_file"));
    let file = tail
        .get("args")
        .unwrap()
        .get("file_path")
        .unwrap()
        .as_str()
        .unwrap();
    assert!(Path::new(file).starts_with(temp.join("sqz")), "{file}");
    let shown = std::fs::read_to_string(file).unwrap();
    assert!(
        shown.starts_with("<untrusted_context>\nOutput: "),
        "{shown}"
    );
    assert!(
        shown.ends_with("\nExit Code: 101\nProcess Group PGID: 4242\n</untrusted_context>"),
        "{shown}"
    );
    assert!(shown.len() < output.len(), "{shown}");
    for fact in ["test result: FAILED", "panicked at"] {
        assert!(shown.contains(fact), "{fact} in {shown}");
    }
    // The original is one `sqz expand` away.
    let expanded = common::expand(
        bin(),
        &scratch.db(),
        &common::hash16(output.trim_end().as_bytes()),
    );
    assert_eq!(expanded.code, 0, "{}", expanded.stderr);
    assert_eq!(expanded.stdout, output.trim_end().as_bytes());
    // A re-run with the same output is answered the same, from the same file.
    let again = hook(&scratch, "gemini", &payload);
    assert_eq!(again.stdout_text(), run.stdout_text());
    assert_eq!(std::fs::read_dir(temp.join("sqz")).unwrap().count(), 1);
}

#[test]
fn copilot_post_tool_use_replaces_the_output_and_keeps_the_exit_line() {
    let scratch = Scratch::new("hooks-copilot");
    let output = cargo_test_output();
    let run = hook(
        &scratch,
        "copilot",
        &copilot("cargo test", output.trim_end()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer = sqz::json::parse(run.stdout_text().trim()).unwrap();
    let result = answer.get("modifiedResult").unwrap();
    assert_eq!(result.get("resultType").unwrap().as_str(), Some("success"));
    let text = result.get("textResultForLlm").unwrap().as_str().unwrap();
    assert!(
        text.ends_with("\n<shellId: 0 completed with exit code 101>"),
        "{text}"
    );
    assert!(
        text.len() < output.len() && text.contains("test result: FAILED"),
        "{text}"
    );
    assert!(!run.stdout_text().contains("permissionDecision"));
}

#[test]
fn resume_with_no_store_says_so_in_one_line() {
    let scratch = Scratch::new("resume-empty");
    let run = sqz(bin(), &scratch.db(), &["resume"], b"", &[]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout_text().lines().count(),
        1,
        "{}",
        run.stdout_text()
    );
}

#[test]
fn resume_lists_what_compress_served() {
    let scratch = Scratch::new("resume");
    let mut log = String::new();
    for n in 0..80 {
        log.push_str(&format!("   Compiling dependency-{n} v0.{n}.3\n"));
    }
    log.push_str("error[E0308]: mismatched types\n  --> src/main.rs:4:5\n");
    let served = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    assert_eq!(served.code, 0, "{}", served.stderr);
    let hash = common::hash16(log.as_bytes());

    let payload = r#"{"session_id":"s1","hook_event_name":"SessionStart","source":"compact"}"#;
    let run = sqz(bin(), &scratch.db(), &["resume"], payload.as_bytes(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let guide = run.stdout_text();
    assert!(guide.contains("cargo build"), "{guide}");
    assert!(guide.contains("error[E0308]: mismatched types"), "{guide}");
    assert!(
        guide.contains(&format!("sqz expand {}", &hash[..12])),
        "{guide}"
    );
    assert!(
        guide.len() <= 2048 && guide.lines().count() <= 40,
        "{guide}"
    );

    // The expand command it gives brings the original back.
    let expanded = common::expand(bin(), &scratch.db(), &hash[..12]);
    assert_eq!(expanded.stdout, log.as_bytes());
}

/// Node.js, which the plugin test runs the plugin under; its absence fails the test.
fn node() -> &'static str {
    let found = Command::new("node").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "node not found: the OpenCode plugin test needs Node.js 20 or later on PATH"
    );
    "node"
}

#[test]
fn opencode_plugin_swaps_in_the_output_the_hook_answers() {
    let node = node();
    let scratch = Scratch::new("opencode-plugin");
    let printed = sqz(bin(), &scratch.db(), &["print-opencode-plugin"], b"", &[]);
    assert_eq!(printed.code, 0);
    let plugin = printed.stdout_text();
    let real = format!("const SQZ = {:?};", bin().to_str().unwrap());
    assert!(plugin.contains(&real), "{plugin}");
    std::fs::write(scratch.dir.join("sqz.mjs"), &plugin).unwrap();
    // A sqz that is not there: the output stays as it was.
    let missing = plugin.replace(&real, "const SQZ = \"/nonexistent/sqz\";");
    std::fs::write(scratch.dir.join("missing.mjs"), missing).unwrap();
    std::fs::write(scratch.dir.join("cargo.txt"), cargo_test_output()).unwrap();
    let driver = r#"
import fs from "node:fs";
const dir = process.argv[2];
const big = fs.readFileSync(dir + "/cargo.txt", "utf8");
const run = async (file, tool, command, text, truncated) => {
  const { SqzPlugin } = await import(dir + "/" + file);
  const hooks = await SqzPlugin({});
  if (hooks["tool.execute.before"]) throw new Error("the plugin must not rewrite commands");
  const output = { title: command, output: text, metadata: { output: text, exit: 101, truncated } };
  await hooks["tool.execute.after"]({ tool, sessionID: "s", callID: "c", args: { command } }, output);
  return output;
};
const shown = await run("sqz.mjs", "bash", "cargo test", big, false);
const report = {
  shorter: shown.output.length < big.length,
  facts: shown.output.includes("test result: FAILED"),
  exit: shown.metadata.exit,
  small: (await run("sqz.mjs", "bash", "echo hi", "hi\n", false)).output,
  read: (await run("sqz.mjs", "read", "cargo test", big, false)).output === big,
  truncated: (await run("sqz.mjs", "bash", "cargo test", big, true)).output === big,
  missing: (await run("missing.mjs", "bash", "cargo test", big, false)).output === big,
};
console.log(JSON.stringify(report));
"#;
    std::fs::write(scratch.dir.join("driver.mjs"), driver).unwrap();
    let out = Command::new(node)
        .arg(scratch.dir.join("driver.mjs"))
        .arg(&scratch.dir)
        .env("SQZ_DB_PATH", scratch.db())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"shorter\":true,\"facts\":true,\"exit\":101,\"small\":\"hi\\n\",\"read\":true,\"truncated\":true,\"missing\":true}\n"
    );
}
