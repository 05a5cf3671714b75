//! The Gemini CLI, Copilot CLI and OpenCode hooks and `sqz resume`, through the binary as the
//! clients run them: every answer lets the command run as written unless it rewrote it, exit 0.

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

const GEMINI: &str = r#"{"session_id":"s1","transcript_path":"/tmp/t.json","cwd":"/repo","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"git status","description":"Show status","dir_path":"sub","is_background":false},"mcp_context":null,"original_request_name":"run_shell_command"}"#;
const COPILOT: &str = r#"{"sessionId":"s1","timestamp":1704614600000,"cwd":"/repo","toolName":"bash","toolArgs":"{\"command\":\"git status\",\"timeoutSec\":30}"}"#;

#[test]
fn hooks_never_block_whatever_arrives() {
    let scratch = Scratch::new("hooks-other");
    // Commands any analysis leaves as written: shell state, an editor, nothing at all.
    let left = ["cd sub", "vim notes.txt", ""];
    let mut cases = Vec::new();
    for command in left {
        cases.push(("gemini", GEMINI.replace("git status", command)));
        cases.push(("copilot", COPILOT.replace("git status", command)));
        cases.push((
            "opencode",
            format!(r#"{{"tool":"bash","command":"{command}"}}"#),
        ));
    }
    cases.push((
        "gemini",
        GEMINI.replace(
            "run_shell_command\",\"tool_input",
            "read_file\",\"tool_input",
        ),
    ));
    cases.push((
        "gemini",
        GEMINI.replace("\"is_background\":false", "\"is_background\":true"),
    ));
    cases.push(("copilot", COPILOT.replace("\"bash\"", "\"view\"")));
    cases.push(("copilot", COPILOT.replace("\"bash\"", "\"powershell\"")));
    cases.push((
        "opencode",
        r#"{"tool":"read","command":"git status"}"#.to_owned(),
    ));
    for client in ["gemini", "copilot", "opencode"] {
        for bad in ["{not json", "", "[]", "\u{0}\u{1}"] {
            cases.push((client, bad.to_owned()));
        }
    }
    for (client, input) in &cases {
        let run = hook(&scratch, client, input);
        assert_eq!(run.code, 0, "{client} {input}");
        assert_eq!(run.stdout_text(), "{}\n", "{client} {input}");
        assert!(run.stderr.lines().count() <= 1, "{client}: {}", run.stderr);
    }
    // Whatever the analysis decides for `git status`, the answer never carries a permission
    // decision and the hook exits 0.
    for (client, input) in [("gemini", GEMINI), ("copilot", COPILOT)] {
        let run = hook(&scratch, client, input);
        assert_eq!(run.code, 0);
        let text = run.stdout_text();
        assert!(text.starts_with('{') && text.ends_with("}\n"), "{text}");
        for word in ["\"allow\"", "\"deny\"", "\"ask\"", "\"block\"", "ecision\""] {
            assert!(!text.contains(word), "{client} answered {text}");
        }
    }
    // Nothing on the hook path writes the store.
    assert!(!scratch.db().exists());
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

#[test]
fn opencode_plugin_swaps_the_command_the_hook_answers() {
    let Ok(node) = Command::new("node").arg("--version").output() else {
        eprintln!("node not found; skipping the plugin run");
        return;
    };
    if !node.status.success() {
        return;
    }
    let scratch = Scratch::new("opencode-plugin");
    std::fs::create_dir_all(&scratch.dir).unwrap();
    let printed = sqz(bin(), &scratch.db(), &["print-opencode-plugin"], b"", &[]);
    assert_eq!(printed.code, 0);
    let plugin = printed.stdout_text();
    let real = format!("const SQZ = {:?};", bin().to_str().unwrap());
    assert!(plugin.contains(&real), "{plugin}");

    // The real binary leaves `cd` alone (its state would be lost in a pipeline); a fake sqz
    // that rewrites everything shows the plugin applying an answer., to see the plugin apply an answer.
    let fake = scratch.dir.join("fake-sqz");
    std::fs::write(
        &fake,
        "#!/bin/sh\ncat >/dev/null\necho '{\"command\":\"REWRITTEN\"}'\n",
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    let faked = plugin.replace(&real, &format!("const SQZ = {:?};", fake.to_str().unwrap()));
    std::fs::write(scratch.dir.join("real.mjs"), &plugin).unwrap();
    std::fs::write(scratch.dir.join("fake.mjs"), &faked).unwrap();
    let driver = r#"
const run = async (file, tool, command) => {
  const { SqzPlugin } = await import(file);
  const hooks = await SqzPlugin({});
  const output = { args: { command, description: "d" } };
  await hooks["tool.execute.before"]({ tool, sessionID: "s", callID: "c" }, output);
  return JSON.stringify(output.args);
};
const dir = process.argv[2];
console.log(await run(dir + "/fake.mjs", "bash", "git status"));
console.log(await run(dir + "/fake.mjs", "read", "git status"));
console.log(await run(dir + "/real.mjs", "bash", "cd sub"));
"#;
    std::fs::write(scratch.dir.join("driver.mjs"), driver).unwrap();
    let out = Command::new("node")
        .arg(scratch.dir.join("driver.mjs"))
        .arg(&scratch.dir)
        .env("SQZ_DB_PATH", scratch.db())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text,
        "{\"command\":\"REWRITTEN\",\"description\":\"d\"}\n\
         {\"command\":\"git status\",\"description\":\"d\"}\n\
         {\"command\":\"cd sub\",\"description\":\"d\"}\n"
    );
}
