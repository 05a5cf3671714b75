//! Claude Code hooks. `sqz hook claude-post` (PostToolUse) is the main path: it replaces the
//! output of a successful Bash, Read, Grep or Glob call through `updatedToolOutput`, which the
//! client applies without asking anything. `sqz hook claude` (PreToolUse on Bash) is the
//! fallback for what PostToolUse never sees, a failing command: it rewrites one plain command
//! into `set -o pipefail; CMD 2>&1 | sqz compress --cmd 'CMD'`, the one shape Claude Code's
//! permission checker accepts on the rules `sqz init` writes, and only while those rules are in
//! effect. Both let the command run as written on any doubt and never decide permissions. The
//! hook reads files only through what `cmd/hook.rs` hands it.

use super::answer::{self, Answer};
use super::rewrite::{decide, is_plain, wrap, Decision, Shape, ALLOW_RULES};
use crate::json::{self, Value};
use crate::serve::{Backend, Served};
use crate::store::EventKind;
use std::path::{Path, PathBuf};

/// The permission mode in which Claude Code asks nothing and checks no rule.
const BYPASS: &str = "bypassPermissions";

/// Where Claude Code keeps the settings whose `permissions.allow` may hold the rules.
pub struct SettingsPlaces<'a> {
    pub home: Option<&'a Path>,
    pub config_dir: Option<&'a Path>,
    /// The project root: `CLAUDE_PROJECT_DIR`, else the payload's `cwd` (which follows a `cd`).
    pub project: Option<&'a Path>,
}

impl SettingsPlaces<'_> {
    /// The user-level settings file.
    fn user_file(&self) -> Option<PathBuf> {
        match (self.config_dir, self.home) {
            (Some(dir), _) => Some(dir.join("settings.json")),
            (None, Some(home)) => Some(home.join(".claude").join("settings.json")),
            (None, None) => None,
        }
    }

    /// Claude Code's own state file, which records the workspaces the user trusted.
    fn state_file(&self) -> Option<PathBuf> {
        match (self.config_dir, self.home) {
            (Some(dir), _) => Some(dir.join(".claude.json")),
            (None, Some(home)) => Some(home.join(".claude.json")),
            (None, None) => None,
        }
    }

    /// Whether the user trusted the project, or a folder above it: until then Claude Code
    /// drops the project's allow rules.
    pub fn project_trusted(&self, project: &Path) -> bool {
        let Some(state) = self
            .state_file()
            .and_then(|f| std::fs::read_to_string(f).ok())
        else {
            return false;
        };
        let Ok(state) = json::parse(&state) else {
            return false;
        };
        let Some(projects) = state.get("projects") else {
            return false;
        };
        project.ancestors().any(|dir| {
            dir.to_str()
                .and_then(|d| projects.get(d))
                .and_then(|p| p.get("hasTrustDialogAccepted"))
                .and_then(Value::as_bool)
                == Some(true)
        })
    }

    /// The permission rules in effect: the user's settings, and the project's settings of a
    /// trusted workspace.
    pub fn permissions(&self) -> Permissions {
        let mut files: Vec<PathBuf> = self.user_file().into_iter().collect();
        if let Some(project) = self.project.filter(|p| self.project_trusted(p)) {
            files.push(project.join(".claude").join("settings.json"));
            files.push(project.join(".claude").join("settings.local.json"));
        }
        let mut permissions = Permissions::default();
        for file in files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            let Ok(value) = json::parse(&text) else {
                continue;
            };
            let list = |key: &str| -> Vec<String> {
                value
                    .get("permissions")
                    .and_then(|p| p.get(key))
                    .and_then(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            };
            permissions.allow.extend(list("allow"));
            permissions.guarded.extend(list("ask"));
            permissions.guarded.extend(list("deny"));
        }
        permissions
    }
}

/// Claude Code permission rules, as the settings files hold them.
#[derive(Default, Debug)]
pub struct Permissions {
    pub allow: Vec<String>,
    /// `ask` and `deny` rules: a command one of them matches is never rewritten.
    pub guarded: Vec<String>,
}

impl Permissions {
    /// Whether the client would run the `Shape::Pipefail` rewrite of `command` without asking:
    /// every rule in `ALLOW_RULES` is there, and a rule of the user's own allows the command
    /// itself, which no `ask` or `deny` rule names. A command the client would ask about as
    /// written is left as written, so the user's "don't ask again" records a rule for the
    /// command, not for the rewrite.
    pub fn runs_rewrite_unasked(&self, command: &str) -> bool {
        ALLOW_RULES
            .iter()
            .all(|rule| self.allow.iter().any(|a| a == rule))
            && self
                .allow
                .iter()
                .any(|rule| bash_rule_matches(rule, command))
            && !self
                .guarded
                .iter()
                .any(|rule| bash_rule_names(rule, command))
    }
}

/// Whether a Claude Code allow rule surely allows `command`: `Bash` or `Bash(*)`, a prefix rule
/// `Bash(P:*)` (the command is P, or P and more words), or a pattern whose `*` stands for any
/// text. Read narrowly: a rule this does not follow allows nothing here.
pub fn bash_rule_matches(rule: &str, command: &str) -> bool {
    let Some(inner) = rule.strip_prefix("Bash") else {
        return false;
    };
    if inner.is_empty() {
        return true;
    }
    let Some(pattern) = inner.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    match pattern.strip_suffix(":*") {
        Some(prefix) => {
            command == prefix
                || command
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with(' '))
        }
        None => glob(pattern, command),
    }
}

/// Whether an `ask` or `deny` rule may name `command`: read broadly, so that any doubt leaves
/// the command as written.
fn bash_rule_names(rule: &str, command: &str) -> bool {
    let Some(inner) = rule.strip_prefix("Bash") else {
        return false;
    };
    let pattern = inner
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or("*");
    let prefix = pattern.split(['*', ':']).next().unwrap_or("");
    command.starts_with(prefix.trim_end())
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().expect("split gives one part at least");
    let Some(mut left) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for part in middle {
        match left.find(part) {
            Some(at) => left = &left[at + part.len()..],
            None => return false,
        }
    }
    left.ends_with(last)
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

/// The PreToolUse answer. Only one plain command is rewritten (`rewrite::is_plain`), in the
/// `Shape::Pipefail` form; anything else runs as written and its output, when the command
/// succeeds, reaches `post_answer`. `unasked` says, for the payload's `cwd` and the command,
/// whether the client would run the rewrite without asking (`Permissions::runs_rewrite_unasked`);
/// in `bypassPermissions` mode no rule is checked, so none is needed.
pub fn pre_answer(payload: &str, unasked: impl FnOnce(Option<&Path>, &str) -> bool) -> Answer {
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
    if !is_plain(&command) {
        // A rewrite of it would need braces or a subshell, which the client asks about.
        return Answer::unchanged();
    }
    if !builds_or_tests(&command) {
        // Its output, when it succeeds, reaches PostToolUse, which does more with it (a long
        // one is read whole from the client's file); a failure of it is usually short.
        return Answer::unchanged();
    }
    let Decision::Rewrite(_) = decide(&command) else {
        return Answer::unchanged();
    };
    let bypass = value.get("permission_mode").and_then(Value::as_str) == Some(BYPASS);
    let cwd = value.get("cwd").and_then(Value::as_str).map(Path::new);
    if !bypass && !unasked(cwd, &command) {
        // The client would ask: the command runs as written, so the question is about it
        // alone. `sqz doctor` says which rule is missing or that the folder is not trusted.
        return Answer::unchanged();
    }
    let mut updated = input.clone();
    updated.set("command", Value::str(&wrap(&command, Shape::Pipefail)));
    Answer::changed(answer::specific("PreToolUse", "updatedInput", updated))
}

/// Programs that build, test, lint or type-check whatever their arguments.
const CHECKERS: &[&str] = &[
    "pytest",
    "jest",
    "vitest",
    "mocha",
    "ava",
    "tsc",
    "eslint",
    "ruff",
    "mypy",
    "pyright",
    "flake8",
    "pylint",
    "make",
    "cmake",
    "ninja",
    "gradle",
    "gradlew",
    "mvn",
    "mvnw",
    "rspec",
    "phpunit",
    "tox",
    "nox",
    "ctest",
    "bazel",
    "meson",
    "nextest",
    "playwright",
    "cypress",
];

/// Tools whose subcommand says whether they build or test (`cargo test`, `npm run build`,
/// `python3 -m pytest`), and those subcommands.
const TOOLS: &[&str] = &[
    "cargo",
    "go",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "dotnet",
    "mix",
    "swift",
    "uv",
    "poetry",
    "pipenv",
    "npx",
    "bunx",
    "pnpx",
    "python",
    "python3",
    "bundle",
    "rake",
    "zig",
    "terraform",
    "docker",
    "helm",
    "gleam",
    "stack",
    "cabal",
    "dune",
    "sbt",
    "lein",
    "elixir",
];
const SUBCOMMANDS: &[&str] = &[
    "test",
    "tests",
    "build",
    "check",
    "clippy",
    "nextest",
    "vet",
    "lint",
    "compile",
    "run",
    "exec",
    "ci",
    "install",
    "typecheck",
    "-m",
    "plan",
    "apply",
    "validate",
    "x",
];

/// Whether a plain command builds, tests, lints or type-checks: the outputs that fail loudly and
/// matter most when they do. Only these are rewritten, since a failing command's output never
/// reaches PostToolUse; every other command's output is left to PostToolUse.
pub fn builds_or_tests(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    CHECKERS.contains(&program)
        || (TOOLS.contains(&program) && words.take(3).any(|w| SUBCOMMANDS.contains(&w)))
}

/// What Claude Code does with a Bash output too long to show inline.
pub struct Inline<'a> {
    /// Characters of Bash output shown inline (`BASH_MAX_OUTPUT_LENGTH`).
    pub limit: usize,
    /// Reads the file Claude Code saved a long output to (`persistedOutputPath`), within the
    /// input ceiling; `None` when it cannot.
    pub read_saved: &'a dyn Fn(&str) -> Option<Vec<u8>>,
}

/// The PostToolUse answer; `backend` compresses and records. Bash output is compressed; the
/// file tools are served in `claude_files`.
pub fn post_answer(payload: &str, inline: &Inline, backend: &mut dyn Backend) -> Answer {
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
            Ok((value, command)) => post_bash(&value, &command, inline, backend),
            Err(answer) => answer,
        },
    }
}

/// PostToolUse on Bash: the output of a command the PreToolUse rewrite left alone.
fn post_bash(value: &Value, command: &str, inline: &Inline, backend: &mut dyn Backend) -> Answer {
    let Some(response) = value
        .get("tool_response")
        .filter(|r| r.as_object().is_some())
    else {
        return Answer::bad("no tool_response object");
    };
    if command.contains("sqz") {
        return post_routed(response, command, inline);
    }
    let flag = |k: &str| response.get(k).and_then(Value::as_bool) == Some(true);
    if flag("interrupted") || flag("isImage") {
        return Answer::unchanged();
    }
    let Some(stdout) = response.get("stdout").and_then(Value::as_str) else {
        return Answer::bad("tool_response has no stdout");
    };
    let stderr = response.get("stderr").and_then(Value::as_str).unwrap_or("");
    if stdout.is_empty() {
        return Answer::unchanged();
    }
    let saved_path = response.get("persistedOutputPath").and_then(Value::as_str);
    let served = match saved_path {
        Some(path) => {
            // The client would show a preview of the file; sqz answers with what the whole
            // output says, within the preview's size.
            let Some(whole) = (inline.read_saved)(path) else {
                return Answer::leave("cannot read the client's saved output");
            };
            let Ok(whole) = String::from_utf8(whole) else {
                return Answer::unchanged();
            };
            let budget = crate::tokens::count(&saved::preview(&whole, path));
            let served = backend.compress(command, whole.as_bytes());
            match shown(&served) {
                Some(text) if crate::tokens::count(&text) <= budget => text,
                _ => {
                    let hash = served_hash(&served);
                    saved::digest(&whole, path, hash.as_deref(), budget)
                }
            }
        }
        None if stdout.chars().count() >= inline.limit => {
            // An older client cut it to a preview and saved nothing sqz can read.
            return Answer::unchanged();
        }
        None => {
            let served = backend.compress(command, stdout.as_bytes());
            match shown(&served) {
                Some(text) if crate::tokens::count(&text) < crate::tokens::count(stdout) => text,
                _ => return Answer::unchanged(),
            }
        }
    };
    bash_output(&served, stderr)
}

/// PostToolUse on a command that already ran through `sqz compress` (the PreToolUse rewrite):
/// its output is sqz's. Only when the client saved it to a file, because even compressed it
/// was too long to show, does sqz answer, with a digest of that file within the size of the
/// client's preview, every gap naming its lines in the file. Anything else is left as it is.
fn post_routed(response: &Value, command: &str, inline: &Inline) -> Answer {
    let ours =
        command.starts_with("set -o pipefail; ") && command.contains(" | sqz compress --cmd ");
    let saved_path = response.get("persistedOutputPath").and_then(Value::as_str);
    let (true, Some(path)) = (ours, saved_path) else {
        return Answer::unchanged();
    };
    let Some(whole) = (inline.read_saved)(path).and_then(|b| String::from_utf8(b).ok()) else {
        return Answer::unchanged();
    };
    let budget = crate::tokens::count(&saved::preview(&whole, path));
    let digest = saved::digest(&whole, path, None, budget);
    let stderr = response.get("stderr").and_then(Value::as_str).unwrap_or("");
    bash_output(&digest, stderr)
}

/// Bash's `updatedToolOutput` with `stdout` replaced.
fn bash_output(stdout: &str, stderr: &str) -> Answer {
    let mut output = Value::object();
    output.set("stdout", Value::str(stdout));
    output.set("stderr", Value::str(stderr));
    output.set("interrupted", json::parse("false").expect("literal"));
    output.set("isImage", json::parse("false").expect("literal"));
    Answer::changed(answer::specific("PostToolUse", "updatedToolOutput", output))
}

/// What the model is shown for a compressed output: the header line, then the served text, or
/// `None` when sqz left the output as it was. The header comes first so that a reference or a
/// delta is read after the note that says what it stands for, and a delta runs to the end.
fn shown(served: &Served) -> Option<String> {
    let header = served.header.as_deref()?;
    let text = std::str::from_utf8(&served.stdout).ok()?;
    Some(format!("{header}\n{text}"))
}

/// The hash `sqz expand` takes for the whole output, when the output was stored.
fn served_hash(served: &Served) -> Option<String> {
    let stored = !matches!(served.kind, EventKind::Passthrough) && served.header.is_some();
    (stored && !served.hash.is_empty())
        .then(|| served.hash[..12.min(served.hash.len())].to_string())
}

/// Outputs the client saved to a file because they were too long to show: the preview it
/// would show, and the digest sqz shows instead.
pub mod saved {
    use crate::doc::facts::is_fact;
    use crate::doc::reference::lines_target;
    use crate::tokens::count;

    /// How many bytes of the output Claude Code's preview shows, cut back to a line end.
    pub const PREVIEW_BYTES: usize = 2000;

    /// The text Claude Code shows the model for an output it saved to `path`: a header, the
    /// first whole lines within `PREVIEW_BYTES`, and a closing tag. Its size is sqz's budget.
    pub fn preview(whole: &str, path: &str) -> String {
        let mut cut = whole.len().min(PREVIEW_BYTES);
        while !whole.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut < whole.len() {
            cut = whole[..cut].rfind('\n').unwrap_or(cut);
        }
        format!(
            "<persisted-output>\nOutput too large ({:.1}KB). Full output saved to: {path}\n\nPreview (first 2KB):\n{}\n...\n</persisted-output>",
            whole.len() as f64 / 1024.0,
            &whole[..cut]
        )
    }

    /// A digest of an output too long to show, within `budget` tokens: one line that says what
    /// it is and where all of it is, then its first lines, every line that reports an error, a
    /// failure, a warning or a count (as many as fit), and its last lines, each gap a marker
    /// with its exact line range in the saved file.
    pub fn digest(whole: &str, path: &str, hash: Option<&str>, budget: usize) -> String {
        let lines: Vec<&str> = whole.lines().collect();
        let n = lines.len();
        let expand = hash.map_or(String::new(), |h| format!(", or `sqz expand {h}`"));
        let head_line = format!(
            "[sqz] {n} lines ({:.1} KB), too long to show whole. Shown: the first and last lines and the lines that report errors, failures or counts; every gap names its lines. All of it: Read {path}{expand}",
            whole.len() as f64 / 1024.0
        );
        let room = budget.saturating_sub(count(&head_line) + 2);
        let line_cost = |i: usize| count(lines[i]) + 1;
        // Lines too long to be worth their place in a digest are left in a gap.
        let fits = |i: usize| line_cost(i) <= room / 6 + 1;
        let mut keep = vec![false; n];
        let mut spent = 0;
        let take = |i: usize, share: usize, keep: &mut Vec<bool>, spent: &mut usize| {
            if keep[i] || !fits(i) || *spent + line_cost(i) + 8 > share {
                return false;
            }
            keep[i] = true;
            *spent += line_cost(i) + 8;
            true
        };
        for i in 0..n {
            if !take(i, room / 4, &mut keep, &mut spent) {
                break;
            }
        }
        let head_spent = spent;
        for i in (0..n).rev() {
            if !take(i, head_spent + room / 4, &mut keep, &mut spent) {
                break;
            }
        }
        for (i, line) in lines.iter().enumerate() {
            if is_fact(line) {
                take(i, room, &mut keep, &mut spent);
            }
        }
        loop {
            let text = render(&head_line, &lines, &keep, hash);
            if count(&text) <= budget || !keep.iter().any(|k| *k) {
                return text;
            }
            // Over the budget by the markers' real price: drop the last kept line before the
            // tail, then from the tail.
            let last = (0..n).rev().find(|&i| keep[i]).expect("a kept line");
            let drop = (0..last).rev().find(|&i| keep[i]).unwrap_or(last);
            keep[drop] = false;
        }
    }

    fn render(head_line: &str, lines: &[&str], keep: &[bool], hash: Option<&str>) -> String {
        let mut out = String::from(head_line);
        out.push('\n');
        let mut i = 0;
        while i < lines.len() {
            if keep[i] {
                out.push_str(lines[i]);
                out.push('\n');
                i += 1;
                continue;
            }
            let start = i;
            while i < lines.len() && !keep[i] {
                i += 1;
            }
            let gap = i - start;
            let noun = if gap == 1 { "line" } else { "lines" };
            let marker = match hash {
                Some(h) => format!(
                    "[… {gap} {noun} · sqz expand {}]",
                    lines_target(h, start + 1, i)
                ),
                None => format!("[… {gap} {noun}: {}-{} of the saved file]", start + 1, i),
            };
            out.push_str(&marker);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pre_payload(command: &str, extra: &str) -> String {
        pre_payload_in("default", command, extra)
    }

    fn pre_payload_in(mode: &str, command: &str, extra: &str) -> String {
        let mut cmd = String::new();
        json::write_string(&mut cmd, command);
        format!(
            r#"{{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/proj","permission_mode":"{mode}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":{cmd},"description":"Run it","timeout":120000{extra}}},"tool_use_id":"toolu_1"}}"#
        )
    }

    #[test]
    fn pre_rewrites_one_plain_command_keeping_every_field() {
        let answer = pre_answer(&pre_payload("pytest -x tests", ""), |cwd, command| {
            assert_eq!(cwd, Some(Path::new("/proj")));
            assert_eq!(command, "pytest -x tests");
            true
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
        assert_eq!(
            input.get("command").unwrap().as_str(),
            Some("set -o pipefail; pytest -x tests 2>&1 | sqz compress --cmd 'pytest -x tests'")
        );
        assert_eq!(input.get("description").unwrap().as_str(), Some("Run it"));
        assert_eq!(input.get("timeout").unwrap().as_i64(), Some(120000));
        assert!(!answer.json.contains("allow\""));
    }

    #[test]
    fn builds_and_tests_are_told_from_other_commands() {
        for yes in [
            "cargo test",
            "cargo clippy --all-targets",
            "pytest -x tests",
            "python3 -m pytest",
            "python3 -m unittest",
            "npm test",
            "npm run build",
            "npx vitest run",
            "go test ./...",
            "make",
            "./gradlew build",
            "mix test",
            "tsc --noEmit",
            "dotnet build",
        ] {
            assert!(builds_or_tests(yes), "{yes}");
        }
        for no in [
            "git status",
            "git diff",
            "ls -la",
            "cat a.txt",
            "python3 tools/report.py",
            "node script.js",
            "cargo --version",
            "grep -rn needle src",
            "",
        ] {
            assert!(!builds_or_tests(no), "{no}");
        }
    }

    #[test]
    fn pre_leaves_without_the_allow_rules_except_in_bypass_mode() {
        let answer = pre_answer(&pre_payload("cargo test", ""), |_, _| false);
        assert_eq!(answer.json, "{}");
        assert_eq!(
            answer.left, None,
            "said on stderr, where the client shows hook errors"
        );
        let bypass = pre_answer(
            &pre_payload_in("bypassPermissions", "cargo test", ""),
            |_, _| panic!("no rule is checked in bypass mode"),
        );
        assert!(bypass.rewrote(), "{}", bypass.json);
        for mode in ["default", "acceptEdits", "plan", "dontAsk"] {
            let answer = pre_answer(&pre_payload_in(mode, "cargo test", ""), |_, _| false);
            assert_eq!(answer.json, "{}", "{mode}");
        }
    }

    #[test]
    fn pre_leaves_what_it_must() {
        let cases = [
            pre_payload("cargo test", r#","run_in_background":true"#),
            // Not a build or a test: PostToolUse has its output when it succeeds.
            pre_payload("git status", ""),
            pre_payload("python3 tools/report.py", ""),
            pre_payload("cat README.md", ""),
            pre_payload("cd src && make", ""),
            // Compound commands would need braces or a subshell, which the client asks about:
            // their output reaches PostToolUse instead.
            pre_payload("make && make test", ""),
            pre_payload("cargo test 2>&1 | tail -5", ""),
            pre_payload("echo $HOME", ""),
            pre_payload("vim a.txt", ""),
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
            let answer = pre_answer(&payload, |_, _| true);
            assert_eq!(answer.json, "{}", "{payload}");
            assert!(!answer.json.contains("permissionDecision"));
        }
        let bad = pre_answer("{not json", |_, _| true);
        assert!(bad.left.unwrap().contains("malformed"));
        let other = pre_answer(r#"{"tool_name":"Read","tool_input":{}}"#, |_, _| true);
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
                header: (stdout != body)
                    .then(|| "[sqz] 3/9 tokens · sqz expand 0123456789ab".into()),
                stdout,
                kind,
                hash: "0123456789abcdef".into(),
                notice: None,
                reason: None,
            }
        }

        fn lossless(&mut self, _: &crate::serve::read::Lossless) -> crate::serve::read::Shown {
            crate::serve::read::Shown::Unstored
        }

        fn agent_wrote(&mut self, _: &str, _: &str) {}
    }

    fn inline(limit: usize) -> Inline<'static> {
        Inline {
            limit,
            read_saved: &|_| None,
        }
    }

    fn stdout_of(answer: &Answer) -> String {
        let v = json::parse(&answer.json).unwrap();
        let specific = v.get("hookSpecificOutput").unwrap();
        assert_eq!(
            specific.get("hookEventName").unwrap().as_str(),
            Some("PostToolUse")
        );
        let out = specific.get("updatedToolOutput").unwrap();
        assert_eq!(out.get("stderr").unwrap().as_str(), Some("warn"));
        assert_eq!(out.get("interrupted").unwrap().as_bool(), Some(false));
        assert_eq!(out.get("isImage").unwrap().as_bool(), Some(false));
        out.get("stdout").unwrap().as_str().unwrap().to_string()
    }

    #[test]
    fn post_replaces_output_in_the_bash_shape_with_the_header_inside() {
        let long = "a long line of output that repeats\n".repeat(20);
        let answer = post_answer(
            &post_payload("cd x && make", &long, ""),
            &inline(30_000),
            &mut Fake(|label: &str, body: &[u8]| {
                assert_eq!(label, "cd x && make");
                assert!(body.starts_with(b"a long line"));
                (
                    EventKind::Generic,
                    b"a long line of output that repeats x20\n".to_vec(),
                )
            }),
        );
        assert_eq!(
            stdout_of(&answer),
            "[sqz] 3/9 tokens · sqz expand 0123456789ab\na long line of output that repeats x20\n"
        );
    }

    #[test]
    fn post_serves_a_reference_with_its_note_inside_stdout() {
        let long = "the same output as an earlier call, line by line\n".repeat(10);
        let answer = post_answer(
            &post_payload("git status", &long, ""),
            &inline(30_000),
            &mut Fake(|_: &str, _: &[u8]| {
                (
                    EventKind::Ref,
                    b"\xc2\xa7ref:0123456789abcdef\xc2\xa7\n".to_vec(),
                )
            }),
        );
        let shown = stdout_of(&answer);
        assert!(shown.starts_with("[sqz] 3/9 tokens"), "{shown}");
        assert!(shown.ends_with("\n§ref:0123456789abcdef§\n"), "{shown}");
    }

    #[test]
    fn post_leaves_what_it_must() {
        let never = |_: &str, _: &[u8]| -> (EventKind, Vec<u8>) { panic!("must not compress") };
        let never = &mut Fake(never);
        for payload in [
            post_payload("ls 2>&1 | sqz compress --cmd 'ls'", "a\n", ""),
            post_payload("ls", "a\n", "")
                .replace(r#""interrupted":false"#, r#""interrupted":true"#),
            post_payload("ls", "a\n", "").replace(r#""isImage":false"#, r#""isImage":true"#),
            post_payload("ls", "", ""),
            // Cut to a preview by an older client, with no saved file.
            post_payload("ls", &"x".repeat(40), ""),
            "{bad".to_string(),
            r#"{"tool_name":"Grep","tool_input":{"command":"x"}}"#.to_string(),
            r#"{"tool_name":"Bash","tool_input":{"command":""},"tool_response":{"stdout":"a"}}"#
                .to_string(),
        ] {
            assert_eq!(
                post_answer(&payload, &inline(30), never).json,
                "{}",
                "{payload}"
            );
        }
        // Nothing saved, or a result no smaller than the output: the output stays.
        let unchanged = post_answer(
            &post_payload("ls", "a\nb\n", ""),
            &inline(30_000),
            &mut Fake(|_: &str, b: &[u8]| (EventKind::Fresh, b.to_vec())),
        );
        assert_eq!(unchanged.json, "{}");
        let larger = post_answer(
            &post_payload("ls", "a\nb\n", ""),
            &inline(30_000),
            &mut Fake(|_: &str, _: &[u8]| (EventKind::Generic, b"a\nb\nc\n".to_vec())),
        );
        assert_eq!(larger.json, "{}");
    }

    /// The PostToolUse payload of a Bash output the client saved to `path`: its first 30,000
    /// characters, and the file named.
    fn saved_payload(command: &str, whole: &str, path: &str) -> String {
        let extra = format!(
            r#","persistedOutputPath":"{path}","persistedOutputSize":{}"#,
            whole.len()
        );
        let cut: String = whole.chars().take(30_000).collect();
        post_payload(command, &cut, &extra)
    }

    /// The numbered output of a long test run: every 97th line fails.
    fn long_run() -> String {
        (1..=4000)
            .map(|i| {
                if i % 997 == 0 {
                    format!("test case_{i} ... FAILED\n")
                } else {
                    format!("test case_{i} ... ok\n")
                }
            })
            .collect()
    }

    #[test]
    fn a_saved_output_is_read_whole_and_never_shown_larger_than_the_preview() {
        let whole = long_run();
        let path = "/home/u/.claude/projects/p/s/tool-results/b5aco7dne.txt";
        let saved = whole.clone();
        let read = move |p: &str| {
            assert_eq!(p, path);
            Some(saved.clone().into_bytes())
        };
        let inline = Inline {
            limit: 30_000,
            read_saved: &read,
        };
        let payload = saved_payload("cargo test", &whole, path);
        let budget = crate::tokens::count(&saved::preview(&whole, path));
        // The compressed form does not fit: a digest of the whole output does.
        let answer = post_answer(
            &payload,
            &inline,
            &mut Fake(|_: &str, body: &[u8]| {
                assert_eq!(body.len(), whole.len(), "compressed from the whole output");
                (EventKind::Generic, body[..body.len() / 2].to_vec())
            }),
        );
        let shown = stdout_of(&answer);
        assert!(crate::tokens::count(&shown) <= budget, "{shown}");
        for i in [997, 1994, 2991, 3988] {
            assert!(
                shown.contains(&format!("test case_{i} ... FAILED\n")),
                "{shown}"
            );
        }
        assert!(shown.contains("test case_1 ... ok\n"), "first line kept");
        assert!(shown.contains("test case_4000 ... ok\n"), "last line kept");
        assert!(shown.contains(path), "{shown}");
        assert!(shown.contains("sqz expand 0123456789ab:L"), "{shown}");
        // Every gap names its exact lines, and the kept lines and gaps add up to the whole.
        let mut covered = 0;
        for line in shown.lines().skip(1) {
            if let Some(rest) = line.strip_prefix("[… ") {
                let range = rest.split(":L").nth(1).unwrap().trim_end_matches(']');
                let (a, b) = range.split_once('-').unwrap();
                let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
                assert_eq!(a, covered + 1, "{line}");
                covered = b;
            } else {
                assert_eq!(line, whole.lines().nth(covered).unwrap());
                covered += 1;
            }
        }
        assert_eq!(covered, 4000);
        // A compressed form that fits is shown as it is.
        let small = post_answer(
            &payload,
            &inline,
            &mut Fake(|_: &str, _: &[u8]| {
                (EventKind::Formatter, b"4000 tests, 4 failed\n".to_vec())
            }),
        );
        assert_eq!(
            stdout_of(&small),
            "[sqz] 3/9 tokens · sqz expand 0123456789ab\n4000 tests, 4 failed\n"
        );
        // A saved file sqz cannot read leaves the client's preview.
        let unread = post_answer(
            &payload,
            &super::tests::inline(30_000),
            &mut Fake(|_: &str, _: &[u8]| panic!()),
        );
        assert_eq!(unread.json, "{}");
    }

    #[test]
    fn a_routed_output_the_client_saved_is_digested_from_its_file() {
        let whole = long_run();
        let path = "/home/u/.claude/projects/p/s/tool-results/x.txt";
        let saved = whole.clone();
        let read = move |_: &str| Some(saved.clone().into_bytes());
        let inline = Inline {
            limit: 30_000,
            read_saved: &read,
        };
        let command = "set -o pipefail; cargo test 2>&1 | sqz compress --cmd 'cargo test'";
        let never = |_: &str, _: &[u8]| -> (EventKind, Vec<u8>) { panic!("compressed twice") };
        let answer = post_answer(
            &saved_payload(command, &whole, path),
            &inline,
            &mut Fake(never),
        );
        let shown = stdout_of(&answer);
        let budget = crate::tokens::count(&saved::preview(&whole, path));
        assert!(crate::tokens::count(&shown) <= budget);
        assert!(shown.contains("test case_2991 ... FAILED\n"), "{shown}");
        assert!(shown.contains("of the saved file]"), "{shown}");
        assert!(
            !shown.contains("sqz expand"),
            "nothing of it is stored: {shown}"
        );
        // Not saved by the client: sqz's output stands as it is.
        let answer = post_answer(
            &post_payload(command, "ok\n", ""),
            &inline,
            &mut Fake(never),
        );
        assert_eq!(answer.json, "{}");
    }

    #[test]
    fn the_preview_is_the_clients() {
        let whole: String = (1..=40000).map(|i| format!("{i}\n")).collect();
        let preview = saved::preview(&whole, "/p/t.txt");
        assert!(preview.starts_with(
            "<persisted-output>\nOutput too large (223.5KB). Full output saved to: /p/t.txt\n\nPreview (first 2KB):\n1\n2\n"
        ));
        assert!(
            preview.ends_with("\n526\n527\n...\n</persisted-output>"),
            "{preview}"
        );
    }

    #[test]
    fn rules_count_from_user_settings_and_from_a_trusted_project_only() {
        let dir = std::env::temp_dir().join(format!("sqz-claude-settings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (home, proj) = (dir.join("home"), dir.join("proj"));
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(proj.join(".claude")).unwrap();
        let unasked = |command: &str| {
            SettingsPlaces {
                home: Some(&home),
                config_dir: None,
                project: Some(&proj),
            }
            .permissions()
            .runs_rewrite_unasked(command)
        };
        let rules = |rules: &[&str]| {
            let mut s = String::from(r#"{"permissions":{"allow":["Bash(pytest:*)""#);
            for r in rules {
                s.push(',');
                json::write_string(&mut s, r);
            }
            s.push_str("]}}");
            s
        };
        let trust = |dir: &Path| {
            let mut t = String::from(r#"{"projects":{"#);
            json::write_string(&mut t, dir.to_str().unwrap());
            t.push_str(r#":{"hasTrustDialogAccepted":true}}}"#);
            std::fs::write(home.join(".claude.json"), &t).unwrap();
        };
        assert!(!unasked("pytest -x"));
        std::fs::write(proj.join(".claude/settings.json"), rules(&ALLOW_RULES)).unwrap();
        assert!(
            !unasked("pytest -x"),
            "an untrusted project's rules are dropped"
        );
        trust(&proj);
        assert!(unasked("pytest -x"));
        assert!(!unasked("cargo test"), "no rule of the user's allows cargo");
        trust(&dir);
        assert!(
            unasked("pytest -x"),
            "a folder below a trusted one is trusted"
        );
        std::fs::remove_file(proj.join(".claude/settings.json")).unwrap();
        std::fs::write(
            proj.join(".claude/settings.local.json"),
            rules(&ALLOW_RULES[..1]),
        )
        .unwrap();
        assert!(!unasked("pytest -x"), "one rule of two");
        std::fs::write(home.join(".claude/settings.json"), rules(&ALLOW_RULES[1..])).unwrap();
        assert!(unasked("pytest -x"), "the two rules from two files");
        std::fs::remove_file(home.join(".claude.json")).unwrap();
        std::fs::write(home.join(".claude/settings.json"), rules(&ALLOW_RULES)).unwrap();
        assert!(unasked("pytest -x"), "user rules need no trust");
        // An `ask` or `deny` rule that names the command keeps it as written.
        let mut asked = rules(&ALLOW_RULES);
        asked.truncate(asked.len() - 2);
        asked.push_str(r#","ask":["Bash(pytest -x:*)"]}}"#);
        std::fs::write(home.join(".claude/settings.json"), asked).unwrap();
        assert!(!unasked("pytest -x"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn allow_rules_are_read_as_the_client_reads_them() {
        for (rule, command, allows) in [
            ("Bash", "cargo test", true),
            ("Bash(*)", "cargo test", true),
            ("Bash(cargo test:*)", "cargo test", true),
            ("Bash(cargo test:*)", "cargo test --release", true),
            ("Bash(cargo test:*)", "cargo tests", false),
            ("Bash(cargo:*)", "cargo test", true),
            (
                "Bash(python3 *)",
                "python3 -m unittest tests.test_calc",
                true,
            ),
            (
                "Bash(python3 -m unittest)",
                "python3 -m unittest tests.test_calc",
                false,
            ),
            ("Bash(python3 -m unittest)", "python3 -m unittest", true),
            ("Bash(npm run * --silent)", "npm run test --silent", true),
            ("Bash(npm run * --silent)", "npm run test", false),
            ("Read", "cargo test", false),
            ("Bash(cargo test", "cargo test", false),
        ] {
            assert_eq!(bash_rule_matches(rule, command), allows, "{rule} {command}");
        }
    }
}
