//! `sqz hook codex`: Codex CLI `PreToolUse` on its shell tool (hook name `Bash`). Codex takes a
//! hook's `updatedInput` only together with `permissionDecision: "allow"`, and that answer
//! grants nothing else: Codex still checks the new command against its own rules and runs it in
//! its sandbox. Its rules see the separate commands of a script only when the script is plain
//! words joined by `&&`, `||`, `;` or newlines; anything else is one opaque command to them. So
//! the rewrite keeps that form, and a command not in it runs as written:
//!
//! `set -o pipefail; C1 | SQZ compress --cmd 'C1' && C2 | SQZ compress --cmd 'C2'`
//!
//! Every part Codex's rules saw is still there, word for word; the two parts added are the ones
//! `sqz init` allows in `$CODEX_HOME/rules/sqz.rules`, whose `sqz` path is the one used here.
//! Only stdout is compressed (`2>&1` is a redirection, which Codex's rules cannot see through).

use crate::hook::answer::{self, Answer};
use crate::hook::rewrite::{check_simple, is_stateful, Decision};
use crate::json::Value;
use std::path::{Path, PathBuf};

/// The rules file `sqz init` writes under `$CODEX_HOME/rules`.
pub const RULES_FILE: &str = "sqz.rules";

/// What marks `RULES_FILE` as sqz's own.
pub const RULES_MARKER: &str = "# sqz:begin";

/// The rules file: Codex lets the parts the rewrite adds run under the command's own verdict.
/// `sqz` is the program the rewrite runs, an absolute path.
pub fn rules(sqz: &str) -> String {
    let mut program = String::new();
    crate::json::write_string(&mut program, sqz);
    format!(
        "{RULES_MARKER} — written by `sqz init`; `sqz uninstall` removes this file.\n\
         # `sqz hook codex` adds these two parts to a command; with them allowed, Codex judges\n\
         # the rewritten command by the rules for the command itself.\n\
         prefix_rule(pattern = [\"set\", \"-o\", \"pipefail\"], decision = \"allow\")\n\
         prefix_rule(pattern = [{program}, \"compress\"], decision = \"allow\")\n"
    )
}

/// The `sqz` path named in a rules file `rules` wrote, if the file is one.
pub fn rules_program(text: &str) -> Option<String> {
    if !text.starts_with(RULES_MARKER) || !text.contains("[\"set\", \"-o\", \"pipefail\"]") {
        return None;
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("prefix_rule(pattern = [\"") && l.contains("\"compress\"]"))?;
    let start = line.find("[\"")? + 2;
    let end = start + line[start..].find('"')?;
    let program = &line[start..end];
    (program.starts_with('/') && !program.contains('\\')).then(|| program.to_string())
}

/// `$CODEX_HOME`, or `~/.codex` when it is not set.
pub fn codex_home(codex_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    codex_home
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join(".codex")))
}

/// The `sqz` the rewrite may run: the one the rules file under `codex_home` allows, when that
/// file is sqz's and the program is there.
pub fn allowed_program(codex_home: Option<&Path>) -> Option<String> {
    let text = std::fs::read_to_string(codex_home?.join("rules").join(RULES_FILE)).ok()?;
    rules_program(&text).filter(|p| Path::new(p).is_file())
}

/// Answers one `PreToolUse` payload; `sqz` is `allowed_program`'s answer.
pub fn respond(payload: &str, sqz: Option<&str>) -> Answer {
    let doc = match answer::parse(payload) {
        Ok(doc) => doc,
        Err(answer) => return answer,
    };
    if doc.as_object().is_none() {
        return Answer::bad("payload is not a JSON object");
    }
    match doc.get("tool_name").and_then(Value::as_str) {
        Some("Bash") => {}
        Some(_) => return Answer::leave("not the shell tool"),
        None => return Answer::bad("no tool_name in the payload"),
    }
    let Some(tool_input) = doc.get("tool_input").filter(|v| v.as_object().is_some()) else {
        return Answer::bad("tool_input is not an object");
    };
    let Some(command) = tool_input.get("command").and_then(Value::as_str) else {
        return Answer::bad("tool_input has no command string");
    };
    let Some(sqz) = sqz else {
        return Answer::leave("sqz's Codex rules are missing (run sqz init)");
    };
    match decide(command, sqz) {
        Decision::Leave(why) => Answer::leave(why),
        Decision::Rewrite(rewritten) => {
            let mut updated = tool_input.clone();
            updated.set("command", Value::str(&rewritten));
            let mut specific = Value::object();
            specific.set("hookEventName", Value::str("PreToolUse"));
            // Codex applies `updatedInput` only with this; its rules and sandbox still judge
            // the new command (see the module comment).
            specific.set("permissionDecision", Value::str("allow"));
            specific.set("updatedInput", updated);
            let mut out = Value::object();
            out.set("hookSpecificOutput", specific);
            Answer::changed(out.to_compact())
        }
    }
}

/// One simple command of the script: where it is, its words without quotes, and the operator
/// that follows it (empty at the end).
struct Part<'a> {
    text: &'a str,
    words: Vec<String>,
    then: &'static str,
}

/// Decides for `command`, with `sqz` the program to pipe through.
pub fn decide(command: &str, sqz: &str) -> Decision {
    if command.trim().is_empty() {
        return Decision::Leave("empty command");
    }
    if command.contains("sqz") {
        return Decision::Leave("already routed through sqz");
    }
    let parts = match split_plain(command) {
        Ok(parts) => parts,
        Err(why) => return Decision::Leave(why),
    };
    let mut out = String::from("set -o pipefail; ");
    let mut piped = 0;
    for part in &parts {
        if is_stateful(&part.words[0]) {
            // Its effect must outlive it, so it stays out of the pipeline's subshell.
            out.push_str(part.text);
        } else {
            if let Err(why) = check_simple(&part.words, false) {
                return Decision::Leave(why);
            }
            let Some(label) = plain_quote(part.text) else {
                return Decision::Leave("no plain quoting for the label");
            };
            out.push_str(&format!("{} | {sqz} compress --cmd {label}", part.text));
            piped += 1;
        }
        out.push_str(part.then);
    }
    if piped == 0 {
        return Decision::Leave("nothing to compress");
    }
    Decision::Rewrite(out)
}

/// `s` quoted so Codex's rules still read it as one plain word: in single quotes, or in double
/// quotes when it holds a single quote and nothing double quotes would expand or escape.
fn plain_quote(s: &str) -> Option<String> {
    if !s.contains('\'') {
        Some(format!("'{s}'"))
    } else if !s.contains(['"', '$', '`', '\\']) {
        Some(format!("\"{s}\""))
    } else {
        None
    }
}

/// Characters of an unquoted word that no shell expands.
fn plain_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_./:=,@+%^".contains(&c)
}

/// Splits a script that is only plain simple commands joined by `&&`, `||`, `;` or newlines,
/// the form Codex's rules read command by command. Anything else (pipes, redirections,
/// expansions, globs, escapes, compound commands) is refused.
fn split_plain(script: &str) -> Result<Vec<Part<'_>>, &'static str> {
    let s = script.as_bytes();
    let mut parts: Vec<Part> = Vec::new();
    let mut i = 0;
    let mut start = None;
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    loop {
        let c = s.get(i).copied();
        let separator = match (c, s.get(i + 1).copied()) {
            (None, _) => Some(("", 0)),
            (Some(b'&'), Some(b'&')) => Some((" && ", 2)),
            (Some(b'|'), Some(b'|')) => Some((" || ", 2)),
            (Some(b';'), Some(b';')) => return Err("not a plain command list"),
            (Some(b';'), _) => Some(("; ", 1)),
            (Some(b'\n'), _) => Some(("\n", 1)),
            _ => None,
        };
        if let Some((then, len)) = separator {
            words.extend(word.take());
            match start.take() {
                Some(from) => {
                    let first = words[0].as_str();
                    if first.contains('=') {
                        return Err("assignment");
                    }
                    if KEYWORDS.contains(&first) {
                        return Err("a compound command");
                    }
                    parts.push(Part {
                        text: script[from..i].trim_end(),
                        words: std::mem::take(&mut words),
                        then,
                    });
                }
                // A blank line, or a line break after `&&` or `||`.
                None if c == Some(b'\n') => {}
                None if c.is_none() && !parts.is_empty() => {}
                None => return Err("not a plain command list"),
            }
            if c.is_none() {
                break;
            }
            i += len;
            continue;
        }
        match c.unwrap_or(b' ') {
            b' ' | b'\t' => {
                words.extend(word.take());
                i += 1;
            }
            quote @ (b'\'' | b'"') => {
                let end = s[i + 1..]
                    .iter()
                    .position(|&b| b == quote)
                    .ok_or("unterminated quote")?;
                let inner = &script[i + 1..i + 1 + end];
                if quote == b'"' && inner.contains(['$', '`', '\\']) {
                    return Err("expansion or escape in double quotes");
                }
                word.get_or_insert_with(String::new).push_str(inner);
                start.get_or_insert(i);
                i += end + 2;
            }
            c if plain_char(c) => {
                word.get_or_insert_with(String::new).push(c as char);
                start.get_or_insert(i);
                i += 1;
            }
            b'|' => return Err("a pipeline"),
            b'&' => return Err("a background job"),
            b'<' | b'>' => return Err("a redirection"),
            b'$' | b'`' => return Err("an expansion"),
            _ => return Err("not a plain word"),
        }
    }
    match parts.last() {
        None => Err("empty command"),
        Some(last) if matches!(last.then, " && " | " || ") => Err("not a plain command list"),
        Some(_) => Ok(parts),
    }
}

/// Words that open or close a compound command in command position.
const KEYWORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "select", "function", "time", "coproc", "in",
];

#[cfg(test)]
mod tests {
    use super::*;

    const SQZ: &str = "/opt/sqz/bin/sqz";

    fn rewritten(command: &str) -> Option<String> {
        match decide(command, SQZ) {
            Decision::Rewrite(new) => Some(new),
            Decision::Leave(_) => None,
        }
    }

    #[test]
    fn a_plain_command_is_piped_with_its_status_kept() {
        assert_eq!(
            rewritten("git status").as_deref(),
            Some("set -o pipefail; git status | /opt/sqz/bin/sqz compress --cmd 'git status'")
        );
        assert_eq!(
            rewritten("sed -n '1,200p' src/main.rs").as_deref(),
            Some("set -o pipefail; sed -n '1,200p' src/main.rs | /opt/sqz/bin/sqz compress --cmd \"sed -n '1,200p' src/main.rs\"")
        );
    }

    #[test]
    fn each_command_of_a_list_is_piped_alone_and_cd_stays_out() {
        assert_eq!(
            rewritten("cd logs && cat app.log").as_deref(),
            Some("set -o pipefail; cd logs && cat app.log | /opt/sqz/bin/sqz compress --cmd 'cat app.log'")
        );
        assert_eq!(
            rewritten("make || cat build.log; git status\nls").as_deref(),
            Some("set -o pipefail; make | /opt/sqz/bin/sqz compress --cmd 'make' || cat build.log | /opt/sqz/bin/sqz compress --cmd 'cat build.log'; git status | /opt/sqz/bin/sqz compress --cmd 'git status'\nls | /opt/sqz/bin/sqz compress --cmd 'ls'")
        );
    }

    #[test]
    fn what_codex_reads_as_one_opaque_command_runs_as_written() {
        for command in [
            "",
            "cargo test 2>&1",
            "git log | head -5",
            "ls *.rs",
            "cat ~/x",
            "echo $HOME",
            "echo \"$HOME\"",
            "echo \"a\\b\"",
            "echo a\\ b",
            "echo {a,b}",
            "(cd x && ls)",
            "{ ls; }",
            "sleep 5 &",
            "A=1 make",
            "if true; then ls; fi",
            "ls # note",
            "cat <<EOF\nx\nEOF",
            "ls;; ls",
            "&& ls",
            "ls &&",
            "echo 'it'\"s \\\"\"",
            "vim notes.txt",
            "npm run dev",
            "cd src",
            "sqz expand abc",
            "rg 'a\"b$' src",
        ] {
            assert_eq!(rewritten(command), None, "{command:?}");
        }
    }

    #[test]
    fn the_answer_allows_only_with_a_new_command_and_keeps_other_fields() {
        let payload = r#"{"session_id":"s","turn_id":"t","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PreToolUse","model":"m","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"git diff","workdir":"sub"},"tool_use_id":"call_1"}"#;
        let answer = respond(payload, Some(SQZ));
        assert_eq!(
            answer.json,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"set -o pipefail; git diff | /opt/sqz/bin/sqz compress --cmd 'git diff'","workdir":"sub"}}}"#
        );
        for (payload, sqz) in [
            (payload.replace("git diff", "git diff > out"), Some(SQZ)),
            (payload.to_string(), None),
            (payload.replace("\"Bash\"", "\"apply_patch\""), Some(SQZ)),
            ("{not json".to_string(), Some(SQZ)),
            ("[]".to_string(), Some(SQZ)),
            (
                r#"{"tool_name":"Bash","tool_input":{"command":7}}"#.to_string(),
                Some(SQZ),
            ),
        ] {
            let answer = respond(&payload, sqz);
            assert_eq!(answer.json, "{}", "{payload}");
            assert!(answer.left.is_some(), "{payload}");
        }
    }

    #[test]
    fn the_rules_file_names_the_program_it_allows() {
        let text = rules("/home/u/.cargo/bin/sqz");
        assert_eq!(
            rules_program(&text).as_deref(),
            Some("/home/u/.cargo/bin/sqz")
        );
        assert_eq!(rules_program(&text.replace(RULES_MARKER, "# mine")), None);
        assert_eq!(rules_program(&rules("sqz")), None);
    }
}
