//! The hook targets: one per client payload `sqz hook CLIENT` reads, each driving the client's
//! handler as `cmd/hook.rs` does. Claude Code's PreToolUse gets commands from the hook shape
//! tests and the fixtures, mutated inside real payload shapes as well as with them; a rewrite
//! must run the original command verbatim and label it with the command, quoted. The after-tool
//! hooks (Claude Code's PostToolUse, Gemini, Copilot, OpenCode) get fixture outputs; a
//! replacement must be recoverable and keep what the client wrote after the output.

use super::engine::{case, Engine};
use super::targets::string;
use super::{Target, Wrap};
use crate::common::Fixture;
use sqz::hook::{claude, codex, copilot, gemini, opencode, rewrite};
use sqz::json::{self, Value};
use std::path::Path;

/// Tokens the payload parsers and the shell lexer give a meaning to.
pub const TOKENS: &[&[u8]] = &[
    b"\"tool_name\":\"Bash\"",
    b"\"tool_input\":",
    b"\"command\":",
    b"\"run_in_background\":true",
    b"\"is_background\":true",
    b"\"toolArgs\":",
    b"\"tool_response\":",
    b"\\\"",
    b"\\n",
    b"\\u0000",
    b"\\ud83d\\ude00",
    b"<<EOF",
    b"<<<",
    b"2>&1",
    b"&>",
    b">>",
    b"|&",
    b"$((",
    b"))",
    b"${X:-d}",
    b"${X:=d}",
    b"\\'",
    b"'\\''",
    b"; fi",
    b"then ",
    b"do ",
    b"; done",
    b"{ ",
    b"; }",
    b"\n}",
    b"sqz",
    b"cd ",
    b"exit ",
    b"case x in x) ;; esac",
    b"f() { :; }",
    b"!",
    b"*",
    b"~",
];

/// The command a hook may see: the hook shape tests' commands, the fixtures' and a few more.
pub fn commands(root: &Path, fixtures: &[Fixture]) -> Vec<Vec<u8>> {
    let shapes =
        std::fs::read_to_string(root.join("tests").join("hook_shapes.rs")).unwrap_or_default();
    let mut commands: Vec<Vec<u8>> = shapes
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let inner = l.strip_prefix("(\"")?;
            let literal = inner
                .strip_suffix("\", true),")
                .or_else(|| inner.strip_suffix("\", false),"))?;
            rust_literal(literal)
        })
        .map(String::into_bytes)
        .collect();
    commands.extend(fixtures.iter().map(|f| f.cmd.clone().into_bytes()));
    for extra in [
        "cargo test 2>&1 | tail -5",
        "if a; then if b; then c; fi\nfi",
        "while false; do (echo); done | sort",
        "echo $(date) `pwd` ${HOME} ${X:-d}",
        "ls # a comment",
        "git commit -m 'fix: it'",
        "tail -f log",
        "npm run dev",
        "python -c 'print(1)'",
    ] {
        commands.push(extra.as_bytes().to_vec());
    }
    commands
}

/// The text of a Rust string literal's body, for the simple escapes the shape table uses.
fn rust_literal(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '0' => '\0',
            '\\' => '\\',
            '"' => '"',
            '\'' => '\'',
            _ => return None,
        });
    }
    Some(out)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn claude_payload(rng: &mut fastrand::Rng, command: &[u8]) -> Vec<u8> {
    let background = [
        "",
        ",\"run_in_background\":false",
        ",\"run_in_background\":true",
    ][rng.usize(..3)];
    format!(
        r#"{{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":{},"description":"Run it","timeout":120000{background}}},"tool_use_id":"toolu_1"}}"#,
        string(&lossy(command))
    )
    .into_bytes()
}

/// An engine case (`LABEL\nOUTPUT`) as its command and output.
fn split_case(case: &[u8]) -> (String, String) {
    match memchr::memchr(b'\n', case) {
        Some(at) => (lossy(&case[..at]), lossy(&case[at + 1..])),
        None => (lossy(case), String::new()),
    }
}

/// Gemini CLI's AfterTool on `run_shell_command`, the output laid out as 0.61 lays it.
fn gemini_payload(rng: &mut fastrand::Rng, case: &[u8]) -> Vec<u8> {
    let (command, output) = split_case(case);
    let exit = ["", "\nExit Code: 1", "\nExit Code: 1\nSignal: SIGTERM"][rng.usize(..3)];
    let content = format!(
        "<untrusted_context>\nOutput: {}{exit}\nProcess Group PGID: 77\n</untrusted_context>",
        output.replace("</untrusted_context>", "&lt;/untrusted_context&gt;")
    );
    format!(
        r#"{{"session_id":"s1","transcript_path":"/home/u/.gemini/tmp/proj/chats/session-1.jsonl","cwd":"/repo","hook_event_name":"AfterTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{{"command":{},"description":"Run it"}},"tool_response":{{"llmContent":{},"returnDisplay":"x"}}}}"#,
        string(&command),
        string(&content)
    )
    .into_bytes()
}

fn codex_payload(rng: &mut fastrand::Rng, command: &[u8]) -> Vec<u8> {
    let tool = ["Bash", "Bash", "apply_patch"][rng.usize(..3)];
    format!(
        r#"{{"session_id":"s","turn_id":"t","transcript_path":"/t.jsonl","cwd":"/proj","hook_event_name":"PreToolUse","model":"m","permission_mode":"bypassPermissions","tool_name":"{tool}","tool_input":{{"command":{}}},"tool_use_id":"call_1"}}"#,
        string(&lossy(command))
    )
    .into_bytes()
}

/// Copilot CLI's postToolUse on `bash`, with the closing exit-code line 1.0.102 writes.
fn copilot_payload(rng: &mut fastrand::Rng, case: &[u8]) -> Vec<u8> {
    let (command, output) = split_case(case);
    let args = format!(r#"{{"command":{},"description":"d"}}"#, string(&command));
    // `toolArgs` arrives as a JSON-encoded string or as the object itself.
    let args = if rng.bool() { string(&args) } else { args };
    let text = format!(
        "{output}\n<shellId: 0 completed with exit code {}>",
        rng.u8(..3)
    );
    format!(
        r#"{{"sessionId":"s1","timestamp":1704614600000,"cwd":"/repo","toolName":"bash","toolArgs":{args},"toolResult":{{"resultType":"success","textResultForLlm":{}}}}}"#,
        string(&text)
    )
    .into_bytes()
}

/// The OpenCode plugin's question after a bash call.
fn opencode_payload(rng: &mut fastrand::Rng, case: &[u8]) -> Vec<u8> {
    let (command, output) = split_case(case);
    let tool = ["", r#""tool":"bash","#, r#""tool":"BASH","#][rng.usize(..3)];
    format!(
        r#"{{{tool}"command":{},"output":{},"truncated":{}}}"#,
        string(&command),
        string(&output),
        rng.u8(..8) == 0
    )
    .into_bytes()
}

/// A PostToolUse on Bash, from an engine case (`LABEL\nOUTPUT`).
fn claude_post_payload(rng: &mut fastrand::Rng, case: &[u8]) -> Vec<u8> {
    let (command, stdout) = split_case(case);
    let stderr = ["", "warning: something"][rng.usize(..2)];
    format!(
        r#"{{"session_id":"abc","cwd":"/proj","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":{},"description":"d"}},"tool_response":{{"stdout":{},"stderr":{},"interrupted":false,"isImage":false}},"tool_use_id":"toolu_1"}}"#,
        string(&command),
        string(&stdout),
        string(stderr)
    )
    .into_bytes()
}

/// The file tools' PostToolUse payloads, with `text` as what they read or found.
fn file_tool_payloads(path: &str, text: &str) -> Vec<Vec<u8>> {
    let lines = text.lines().count();
    let (p, t) = (string(path), string(text));
    let names: Vec<String> = text.lines().take(50).map(string).collect();
    [
        format!(
            r#"{{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{{"file_path":{p}}},"tool_response":{{"type":"text","file":{{"filePath":{p},"content":{t},"numLines":{lines},"startLine":1,"totalLines":{lines}}}}}}}"#
        ),
        format!(
            r#"{{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{{"file_path":{p},"offset":3,"limit":5}},"tool_response":{{"type":"text","file":{{"filePath":{p},"content":{t},"numLines":5,"startLine":3,"totalLines":{}}}}}}}"#,
            lines + 10
        ),
        format!(
            r#"{{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"Grep","tool_input":{{"pattern":"error","path":"src","output_mode":"content"}},"tool_response":{{"mode":"content","content":{t},"numLines":{lines}}}}}"#
        ),
        format!(
            r#"{{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"Glob","tool_input":{{"pattern":"**/*.rs"}},"tool_response":{{"filenames":[{}],"numFiles":{}}}}}"#,
            names.join(","),
            names.len()
        ),
        format!(
            r#"{{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{{"file_path":{p},"content":{t}}},"tool_response":{{"type":"create"}}}}"#
        ),
        format!(
            r#"{{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{{"file_path":{p},"old_string":"a","new_string":"b","replace_all":true}},"tool_response":{{"originalFile":{t}}}}}"#
        ),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect()
}

pub fn targets(
    scratch: &Path,
    fixtures: &[Fixture],
    commands: &[Vec<u8>],
) -> Result<Vec<Target>, String> {
    let payloads = |wrap: Wrap| {
        let mut rng = fastrand::Rng::with_seed(7);
        commands.iter().map(|c| wrap(&mut rng, c)).collect()
    };
    let pre = |name: &str, wrap, check: fn(&str) -> Result<(), String>| Target {
        name: name.to_string(),
        seeds: payloads(wrap),
        inner: commands.to_vec(),
        wrap: Some(wrap),
        tokens: TOKENS,
        check: Box::new(move |case| match std::str::from_utf8(case) {
            Ok(payload) => check(payload),
            // `sqz hook` answers a payload that is not UTF-8 before any handler sees it.
            Err(_) => Ok(()),
        }),
    };
    let mut targets = vec![
        pre("hook-claude", claude_payload, check_claude),
        pre("hook-codex", codex_payload, check_codex),
    ];
    let cases: Vec<Vec<u8>> = fixtures.iter().map(|f| case(&f.cmd, &f.input)).collect();
    let afters: [(&str, Wrap, AfterCheck); 3] = [
        ("hook-gemini", gemini_payload, check_gemini),
        ("hook-copilot", copilot_payload, check_copilot),
        ("hook-opencode", opencode_payload, check_opencode),
    ];
    for (name, wrap, check) in afters {
        let mut rng = fastrand::Rng::with_seed(7);
        let seeds = cases.iter().map(|c| wrap(&mut rng, c)).collect();
        let mut engine = Engine::open(&scratch.join(name))?;
        targets.push(Target {
            name: name.into(),
            seeds,
            inner: cases.clone(),
            wrap: Some(wrap),
            tokens: TOKENS,
            check: Box::new(move |case| match std::str::from_utf8(case) {
                Ok(payload) => check(&mut engine, payload),
                Err(_) => Ok(()),
            }),
        });
    }
    let mut seeds: Vec<Vec<u8>> = {
        let mut rng = fastrand::Rng::with_seed(7);
        cases
            .iter()
            .map(|c| claude_post_payload(&mut rng, c))
            .collect()
    };
    for fixture in fixtures.iter().step_by(9) {
        let text = String::from_utf8_lossy(&fixture.input);
        seeds.extend(file_tool_payloads("/proj/src/lib.rs", &text));
    }
    let mut engine = Engine::open(&scratch.join("hook-claude-post"))?;
    targets.push(Target {
        name: "hook-claude-post".into(),
        seeds,
        inner: cases,
        wrap: Some(claude_post_payload),
        tokens: TOKENS,
        check: Box::new(move |case| match std::str::from_utf8(case) {
            Ok(payload) => check_claude_post(&mut engine, payload),
            Err(_) => Ok(()),
        }),
    });
    Ok(targets)
}

/// The answer as one JSON object.
fn answer_json(json: &str) -> Result<Value, String> {
    let value = json::parse(json).map_err(|e| format!("the answer is not JSON ({e})"))?;
    if value.as_object().is_none() {
        return Err("the answer is not a JSON object".into());
    }
    Ok(value)
}

fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// A rewrite runs the original command verbatim and labels it with that command, quoted.
pub fn rewrite_keeps(original: Option<&str>, rewritten: Option<&str>) -> Result<(), String> {
    let (Some(original), Some(rewritten)) = (original, rewritten) else {
        return Err("a rewrite without the original or the new command".into());
    };
    if !rewritten.contains(original) {
        return Err(format!(
            "the rewritten command does not hold the original verbatim: {:?}",
            super::engine::short(rewritten)
        ));
    }
    if !rewritten.contains(&format!("--cmd {}", rewrite::quote(original))) {
        return Err(format!(
            "the rewritten command is not labelled with the original: {:?}",
            super::engine::short(rewritten)
        ));
    }
    Ok(())
}

fn check_claude(payload: &str) -> Result<(), String> {
    // With the allow rules in effect, so every rewrite the hook would make is checked.
    let answer = claude::pre_answer(payload, |_, _| true);
    let out = answer_json(&answer.json)?;
    if !answer.rewrote() {
        return Ok(());
    }
    let doc =
        json::parse(payload).map_err(|e| format!("rewrote a payload that is not JSON: {e}"))?;
    rewrite_keeps(
        at(&doc, &["tool_input", "command"]).and_then(Value::as_str),
        at(&out, &["hookSpecificOutput", "updatedInput", "command"]).and_then(Value::as_str),
    )
}

/// The check of an after-tool target: the client's handler run on one payload.
type AfterCheck = fn(&mut Engine, &str) -> Result<(), String>;

/// The engine's store at its next moment, as a hook backend.
fn live(engine: &mut Engine) -> sqz::serve::Live<'_> {
    let now = engine.tick();
    sqz::serve::Live {
        store: Some(&mut engine.store),
        env: &engine.env,
        now,
    }
}

/// A replaced output is either recoverable from the store or reads back to the output.
fn kept(engine: &Engine, original: &str, served: &str) -> Result<(), String> {
    let stored = engine
        .store
        .original(&sqz::text::hash16(original.as_bytes()))
        .ok()
        .flatten();
    if stored.as_deref() == Some(original.as_bytes())
        || super::engine::reads_back(served.as_bytes(), original.as_bytes())
    {
        return Ok(());
    }
    Err("the replaced output is neither stored nor reads back to the output".into())
}

/// A replacement keeps what the client wrote after the output, verbatim.
fn same_ending(original: &str, replaced: &str, from: &str) -> Result<(), String> {
    let ending = |t: &str| t.rfind(from).map(|at| t[at..].to_string());
    if ending(original) != ending(replaced) {
        return Err(format!("the replacement changed the closing {from:?} part"));
    }
    Ok(())
}

fn check_gemini(engine: &mut Engine, payload: &str) -> Result<(), String> {
    let mut backend = live(engine);
    let (path, text) = match gemini::respond(payload, &mut backend) {
        gemini::Reply::Now(answer) => return answer_json(&answer.json).map(|_| ()),
        gemini::Reply::Write { path, text } => (path, text),
    };
    answer_json(&gemini::tail_call(&path).json)?;
    let doc =
        json::parse(payload).map_err(|e| format!("replaced a payload that is not JSON: {e}"))?;
    let content = at(&doc, &["tool_response", "llmContent"]).and_then(Value::as_str);
    let Some(content) = content else {
        return Err("replaced a result without llmContent".into());
    };
    // The closing lines Gemini writes after the output (exit code, signal, process group).
    let closing = |t: &str| -> Vec<String> {
        let starts = [
            "Exit Code: ",
            "Signal: ",
            "Background PIDs: ",
            "Process Group PGID: ",
        ];
        let mut lines: Vec<String> = t
            .lines()
            .rev()
            .skip(1)
            .take_while(|l| starts.iter().any(|s| l.starts_with(s)))
            .map(str::to_string)
            .collect();
        lines.reverse();
        lines
    };
    if closing(content) != closing(&text) || !text.ends_with("\n</untrusted_context>") {
        return Err("the replacement changed the lines after the output".into());
    }
    if text.len() >= content.len() {
        return Err("the replacement is not shorter".into());
    }
    Ok(())
}

fn check_copilot(engine: &mut Engine, payload: &str) -> Result<(), String> {
    let mut backend = live(engine);
    let answer = copilot::respond(payload, &mut backend);
    let out = answer_json(&answer.json)?;
    if !answer.rewrote() {
        return Ok(());
    }
    let doc =
        json::parse(payload).map_err(|e| format!("replaced a payload that is not JSON: {e}"))?;
    let original = at(&doc, &["toolResult", "textResultForLlm"]).and_then(Value::as_str);
    let replaced = at(&out, &["modifiedResult", "textResultForLlm"]).and_then(Value::as_str);
    let (Some(original), Some(replaced)) = (original, replaced) else {
        return Err("a replaced result without its text".into());
    };
    same_ending(original, replaced, "\n<shellId: ")
}

fn check_opencode(engine: &mut Engine, payload: &str) -> Result<(), String> {
    let mut backend = live(engine);
    let answer = opencode::respond(payload, &mut backend);
    let out = answer_json(&answer.json)?;
    if !answer.rewrote() {
        return Ok(());
    }
    let doc =
        json::parse(payload).map_err(|e| format!("replaced a payload that is not JSON: {e}"))?;
    let original = doc.get("output").and_then(Value::as_str);
    let served = out.get("output").and_then(Value::as_str);
    let (Some(original), Some(served)) = (original, served) else {
        return Err("a replaced output without its text".into());
    };
    kept(engine, original, served)
}

/// The sqz a Codex rewrite runs, as the rules file would name it.
const CODEX_SQZ: &str = "/opt/sqz/bin/sqz";

/// A Codex rewrite is the original's simple commands, each verbatim and in order, with some
/// piped through sqz under a label that is that command; between them only the separators.
fn check_codex(payload: &str) -> Result<(), String> {
    let answer = codex::respond(payload, Some(CODEX_SQZ));
    let out = answer_json(&answer.json)?;
    if !answer.rewrote() {
        return Ok(());
    }
    let doc =
        json::parse(payload).map_err(|e| format!("rewrote a payload that is not JSON: {e}"))?;
    let original = at(&doc, &["tool_input", "command"])
        .and_then(Value::as_str)
        .ok_or("a rewrite without the original")?;
    let specific = at(&out, &["hookSpecificOutput"]).ok_or("no hookSpecificOutput")?;
    if specific.get("permissionDecision").and_then(Value::as_str) != Some("allow") {
        return Err("a Codex rewrite without allow is ignored".into());
    }
    let rewritten = at(specific, &["updatedInput", "command"])
        .and_then(Value::as_str)
        .ok_or("no new command")?;
    let mut rest = rewritten
        .strip_prefix("set -o pipefail; ")
        .ok_or("the rewrite does not start with set -o pipefail")?
        .to_string();
    let pipe = format!(" | {CODEX_SQZ} compress --cmd ");
    while let Some(at) = rest.find(&pipe) {
        let label_at = at + pipe.len();
        let quote = rest[label_at..].chars().next().ok_or("no label")?;
        let end = rest[label_at + 1..]
            .find(quote)
            .ok_or("an unterminated label")?;
        let label = &rest[label_at + 1..label_at + 1 + end];
        if !rest[..at].ends_with(label) {
            return Err(format!("label {label:?} is not the command it follows"));
        }
        rest.replace_range(at..label_at + end + 2, "");
    }
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    if squeeze(&rest) != squeeze(original) {
        return Err(format!(
            "the rewrite does not hold the original's commands: {:?}",
            super::engine::short(rewritten)
        ));
    }
    Ok(())
}

/// A replaced Bash output is either recoverable from the store or reads back to the output as
/// the pipeline target reads it back.
fn check_claude_post(engine: &mut Engine, payload: &str) -> Result<(), String> {
    let inline = claude::Inline {
        limit: engine.env.bash_max_output_length,
        read_saved: &|_| None,
    };
    let mut backend = live(engine);
    let answer = claude::post_answer(payload, &inline, &mut backend);
    let out = answer_json(&answer.json)?;
    if !answer.rewrote() {
        return Ok(());
    }
    let doc =
        json::parse(payload).map_err(|e| format!("rewrote a payload that is not JSON: {e}"))?;
    if doc.get("tool_name").and_then(Value::as_str) != Some("Bash") {
        return Ok(());
    }
    let original = at(&doc, &["tool_response", "stdout"]).and_then(Value::as_str);
    let served =
        at(&out, &["hookSpecificOutput", "updatedToolOutput", "stdout"]).and_then(Value::as_str);
    let (Some(original), Some(served)) = (original, served) else {
        return Err("a replaced output without its stdout".into());
    };
    // The header line opens the replacement; what follows is the output as served.
    let served = match served.split_once('\n') {
        Some((header, rest)) if header.starts_with("[sqz] ") => rest,
        _ => served,
    };
    // Unstored output is lossless: value tables undone, or JSON's agent form decoded to the
    // same values (output that mentions a credential is compacted but never stored).
    kept(engine, original, served)
}
