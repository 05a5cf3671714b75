//! Every command shape the hook may see, run in real bash both as written and as the hook
//! would rewrite it, in identical fresh directories with the real `sqz` on PATH. A rewritten
//! command must behave exactly as written: exit status, files, working directory, variables,
//! and every line of output.

use sqz::hook::rewrite::{decide, Decision};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// (command, whether the hook should rewrite it)
const SHAPES: &[(&str, bool)] = &[
    ("echo hello", true),
    ("ls", true),
    ("false", true),
    ("true", true),
    ("nosuchcommand-xyz", true),
    ("sh -c 'exit 7'", true),
    ("exit 3", false),
    ("grep nomatch /dev/null", true),
    ("grep -c x /dev/null; echo after", true),
    ("echo a | tr a b", true),
    ("printf 'a\\nb\\nc\\n' | grep b", true),
    ("echo a && echo b", true),
    ("false && echo never", true),
    ("false || echo rescued", true),
    ("true || echo never", true),
    ("echo one; echo two; false", true),
    ("echo 'a && b' \"c || d\" 'e; f'", true),
    ("echo a\\;b", true),
    ("echo x > f", false),
    ("echo x >> f", false),
    ("echo x &> f", false),
    ("ls nosuchfile 2> err; echo st=$?", true),
    ("ls nosuchfile 2>&1", true),
    ("ls nosuchfile 2>/dev/null || echo missing", true),
    ("echo to-stderr >&2", true),
    ("cat <<EOF\nheredoc body\nEOF", false),
    ("cat <<< 'here string'", false),
    ("(echo in subshell; exit 4)", true),
    ("(cd /; pwd)", true),
    ("echo $(echo nested $(echo deeper))", true),
    ("echo `echo backticks`", true),
    ("while false; do echo x; done; echo after-loop", true),
    ("if [ -d . ]; then echo dir; else echo nodir; fi", true),
    ("if false; then echo y; elif true; then echo z; fi", true),
    ("for i in 1 2 3; do echo $i; done", false),
    ("f() { echo in-f; }; f", false),
    ("function g { echo in-g; }", false),
    ("echo ${X:?unset}; echo after", false),
    ("echo ${X:-default}", true),
    ("echo ${X:=assigned}", false),
    ("echo $((1/0)); echo after", false),
    ("echo nomatch-*.zzz", true),
    ("ls nomatch-*.zzz", true),
    ("echo héllo wörld ✓ 日本", true),
    ("echo a\necho b\nfalse", true),
    ("echo a\necho b # trailing comment", true),
    ("echo a # comment with ; and } and )", true),
    ("# only a comment", false),
    ("sleep 0 &", false),
    ("sleep 0 & wait", false),
    ("cd /tmp", false),
    ("cd / && ls", false),
    ("export X=exported", false),
    ("X=assigned", false),
    ("X=1 sh -c 'echo $X'", false),
    ("set -e; false; echo after", false),
    ("source /dev/null", false),
    (". /dev/null", false),
    ("alias ll='ls -l'", false),
    ("read X", false),
    ("seq 1 5000", true),
    ("seq 1 5000 | tail -3", true),
    ("cat", true),
    ("echo hi | cat", true),
    ("head -1", true),
    ("{ echo grouped; echo twice; }", true),
    ("{ echo grouped; } 2>&1 | wc -l", true),
    ("! false", true),
    ("echo $HOME | wc -c", true),
    ("sh -c 'echo out; echo err >&2; exit 2'", true),
    ("ls | sqz compress --cmd ls", false),
    ("vim file", false),
    ("tail -f /dev/null", false),
    ("npm run dev", false),
    ("python3", false),
    ("echo a &&", false),
    ("echo 'unterminated", false),
    ("echo a; fi", false),
    ("printf '%s\\n' \"$PWD\" | sed 's|.*/||'", true),
    ("test -e nothere; echo $?", true),
    ("echo trailing-semicolon;", true),
    ("echo line-continued \\\n  more", true),
    ("touch made-by-cmd && ls", true),
    ("mkdir d && echo x | tee d/t", true),
    ("echo first\nif true; then fi", false),
    ("echo first\n; echo second", false),
    ("echo first\necho ${}", false),
    ("echo $? $$ | wc -w", true),
    ("(X=sub; echo $X)", false),
    ("if true; then\n  echo multi\nfi\necho done", true),
];

/// Appended to both runs: the status, directory, shell options, then every variable, exported
/// name, function and alias, one per line, minus the ones bash changes by itself.
const STATE: &str = r#"__st=$?; echo "__END $__st $PWD $-"
declare -p | grep -vE '^declare -[-a-zA-Z]+ (BASH[A-Z_]*|_|__st|PIPESTATUS|RANDOM|SRANDOM|LINENO|SECONDS|EPOCH[A-Z]*|FUNCNAME|HISTCMD|COLUMNS|LINES)(=|$)' | sed 's/^/__VAR /'
declare -F | sed 's/^/__FN /'; alias | sed 's/^/__AL /'; shopt -p | sed 's/^/__OPT /'; set -o | sed 's/^/__SET /'"#;

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "sqz-shapes-{}-{tag}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Outcome {
    status: Option<i32>,
    output: String,
    files: BTreeMap<String, Vec<u8>>,
}

fn files_in(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            out.insert(format!("{rel}/"), Vec::new());
            files_in(root, &path, out);
        } else {
            out.insert(rel, std::fs::read(&path).unwrap_or_default());
        }
    }
}

/// Runs `script` in bash in a fresh directory; the trailer reports status, directory and
/// variables the same way for both runs.
fn run(script: &str, tag: &str) -> Outcome {
    let bin = Path::new(env!("CARGO_BIN_EXE_sqz"));
    let scratch = Scratch::new(tag);
    let work = scratch.0.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let full = format!("{script}\n{STATE}");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&full)
        .current_dir(&work)
        .env_clear()
        .env("PATH", path)
        .env("SQZ_DB_PATH", scratch.0.join("store.db"))
        .env("SQZ_QUIET", "1")
        .env("HOME", &work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(b"line from the hook's stdin\nsecond stdin line\n");
    let out = child.wait_with_output().unwrap();
    let mut files = BTreeMap::new();
    files_in(&work, &work, &mut files);
    let dir = scratch.0.to_string_lossy().into_owned();
    let normalise = |b: &[u8]| String::from_utf8_lossy(b).replace(&dir, "<DIR>");
    let mut output = normalise(&out.stdout);
    output.push_str(&normalise(&out.stderr));
    Outcome {
        status: out.status.code(),
        output,
        files,
    }
}

/// Drops bash's own line numbers from error messages (`bash: line 3: …`).
fn without_line_numbers(line: &str) -> String {
    match line.strip_prefix("bash: line ") {
        Some(rest) => match rest.split_once(": ") {
            Some((_, msg)) => format!("bash: {msg}"),
            None => line.to_string(),
        },
        None => line.to_string(),
    }
}

#[test]
fn rewritten_commands_behave_as_written() {
    let mut rewritten = 0;
    let mut left = 0;
    let mut problems = Vec::new();
    let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (n, (cmd, expect_rewrite)) in SHAPES.iter().enumerate() {
        let decision = decide(cmd);
        let new = match &decision {
            Decision::Rewrite(new) => new.clone(),
            Decision::Leave(reason) => {
                left += 1;
                *reasons.entry(reason).or_default() += 1;
                if *expect_rewrite {
                    problems.push(format!(
                        "{cmd:?}: left alone ({decision:?}), expected a rewrite"
                    ));
                }
                continue;
            }
        };
        rewritten += 1;
        if !expect_rewrite {
            problems.push(format!("{cmd:?}: rewritten, expected to be left alone"));
            continue;
        }
        let a = run(cmd, &format!("{n}a"));
        let b = run(&new, &format!("{n}b"));
        if a.status != b.status {
            problems.push(format!("{cmd:?}: status {:?} vs {:?}", a.status, b.status));
        }
        if a.files != b.files {
            problems.push(format!(
                "{cmd:?}: files {:?} vs {:?}",
                a.files.keys().collect::<Vec<_>>(),
                b.files.keys().collect::<Vec<_>>()
            ));
        }
        let end = |o: &Outcome| {
            o.output
                .lines()
                .filter(|l| l.starts_with("__"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        if end(&a) != end(&b) {
            problems.push(format!("{cmd:?}: trailer {:?} vs {:?}", end(&a), end(&b)));
        }
        let b_lines: Vec<String> = b.output.lines().map(without_line_numbers).collect();
        let referenced = b.output.contains('§') || b.output.contains("sqz expand");
        if !referenced {
            for line in a.output.lines().map(without_line_numbers) {
                if !b_lines.contains(&line) {
                    problems.push(format!(
                        "{cmd:?}: output line {line:?} missing from the rewrite:\n{}",
                        b.output
                    ));
                    break;
                }
            }
        }
    }
    eprintln!(
        "hook shapes: {} total, {rewritten} rewritten, {left} left alone",
        SHAPES.len()
    );
    for (reason, count) in &reasons {
        eprintln!("  left alone, {reason}: {count}");
    }
    assert!(SHAPES.len() >= 60);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `sqz hook claude` end to end: the binary answers a real payload with a command that, run in
/// bash, prints the output and keeps the exit status; without the allow rules it answers `{}`.
#[test]
fn the_claude_hook_answers_a_command_bash_runs_the_same() {
    use sqz::json;
    let bin = Path::new(env!("CARGO_BIN_EXE_sqz"));
    let scratch = Scratch::new("claude");
    let home = scratch.0.join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let payload = r#"{"session_id":"s","cwd":"/nowhere","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"python3 -m no_such_module_xyz","description":"d","timeout":9000,"run_in_background":false},"tool_use_id":"t"}"#;
    let hook = |home: &Path| {
        let mut child = Command::new(bin)
            .args(["hook", "claude"])
            .env("HOME", home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(hook(&home).trim(), "{}");
    // sqz's rules and the user's own rule for python3.
    let mut allow = String::from(r#"["Bash(python3:*)","#);
    for (n, rule) in sqz::hook::rewrite::ALLOW_RULES.iter().enumerate() {
        if n > 0 {
            allow.push(',');
        }
        json::write_string(&mut allow, rule);
    }
    allow.push(']');
    std::fs::write(
        home.join(".claude/settings.json"),
        format!(r#"{{"permissions":{{"allow":{allow}}}}}"#),
    )
    .unwrap();
    let answer = json::parse(&hook(&home)).unwrap();
    let specific = answer.get("hookSpecificOutput").unwrap();
    assert!(specific.get("permissionDecision").is_none());
    let input = specific.get("updatedInput").unwrap();
    assert_eq!(input.get("timeout").unwrap().as_i64(), Some(9000));
    let command = input.get("command").unwrap().as_str().unwrap();
    assert_eq!(
        command,
        "set -o pipefail; python3 -m no_such_module_xyz 2>&1 | sqz compress --cmd 'python3 -m no_such_module_xyz'"
    );
    for shell in ["bash", "zsh"] {
        let (want, plain) = run_in(shell, "python3 -m no_such_module_xyz", "claude-plain");
        let (got, routed) = run_in(shell, command, "claude-run");
        assert_eq!(got, want, "{shell}: {routed}");
        assert_ne!(got, Some(0));
        let sorted = |text: &str| {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            lines.sort_unstable();
            lines
        };
        // One stream through the pipe, two without it: the same lines.
        assert_eq!(sorted(&routed), sorted(&plain), "{shell}");
    }
}

/// The Claude Code rewrite, `set -o pipefail; CMD 2>&1 | sqz compress --cmd 'CMD'`, is made
/// only for one plain command, and for each such command keeps what it prints and its exit
/// status in bash and zsh (the shells Claude Code runs), also under an inherited `set -e`.
#[test]
fn the_pipefail_rewrite_keeps_status_and_output_of_a_plain_command() {
    use sqz::hook::rewrite::{decide_as, is_plain, Shape};
    let commands = [
        "true",
        "false",
        "ls /nonexistent-dir",
        "nosuchcommand-xyz",
        "sh -c exit",
        "grep -r needle .",
        "echo plain words",
        "test -d /",
        "cat /etc/hostname /nonexistent-file",
    ];
    for shell in ["bash", "zsh"] {
        for options in ["", "set -e; "] {
            for command in commands {
                assert!(is_plain(command), "{command}");
                let Decision::Rewrite(new) = decide_as(command, Shape::Pipefail) else {
                    panic!("{command} is not rewritten")
                };
                let tag = format!("pipefail-{shell}-{}", command.len());
                let (want, plain) = run_in(shell, &format!("{options}{command}"), &tag);
                let (got, routed) = run_in(shell, &format!("{options}{new}"), &tag);
                assert_eq!(got, want, "{shell}: {options}{command}\n{routed}");
                let (mut a, mut b): (Vec<&str>, Vec<&str>) =
                    (plain.lines().collect(), routed.lines().collect());
                // stderr and stdout arrive merged through the pipe: compare lines, not order.
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "{shell}: {options}{command}");
            }
        }
    }
}

/// Runs `script` with `shell -c` in a fresh directory with the real `sqz` on PATH; returns the
/// status and what reached stdout and stderr.
fn run_in(shell: &str, script: &str, tag: &str) -> (Option<i32>, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_sqz"));
    let scratch = Scratch::new(tag);
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(shell)
        .arg("-c")
        .arg(script)
        .current_dir(&scratch.0)
        .env("PATH", path)
        .env("SQZ_DB_PATH", scratch.0.join("store.db"))
        .env("SQZ_QUIET", "1")
        .stdin(Stdio::null())
        .output()
        .expect("the shell runs");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

fn rewrite(command: &str) -> String {
    match decide(command) {
        Decision::Rewrite(new) => new,
        other => panic!("{command}: {other:?}"),
    }
}

/// With `set -e` or `set -u` inherited from the agent's shell, a failing command used to end
/// the left side of the pipeline before the trailer was printed, and sqz exited 0. The status
/// must be the one the command gives as written, in bash, dash and zsh.
#[test]
fn a_failing_command_under_set_e_or_set_u_keeps_its_status() {
    for shell in ["bash", "dash", "zsh"] {
        for (options, command) in [
            ("set -e", "ls /nonexistent-dir"),
            ("set -e", "echo before; false; echo after"),
            ("set -u", "echo start; echo $AN_UNSET_VARIABLE; echo after"),
            ("set -eu", "sh -c 'exit 7'"),
            ("set -e", "echo fine"),
        ] {
            let tag = format!("{shell}-{}", options.len() + command.len());
            let (want, plain) = run_in(shell, &format!("{options}; {command}"), &tag);
            let script = format!("{options}; {}", rewrite(command));
            let (got, routed) = run_in(shell, &script, &tag);
            // Bash ends its main shell with 127 at an unset variable, and a subshell with 1:
            // the rewrite, which runs the command in a subshell, can only tell that it failed.
            if options == "set -u" {
                assert_eq!(got == Some(0), want == Some(0), "{shell}: {routed}");
                assert_ne!(got, Some(0), "{shell}: {routed}");
            } else {
                assert_eq!(got, want, "{shell}: {options}; {command}\n{routed}");
            }
            assert!(!routed.contains("__SQZ_EXIT_"), "{shell}: {routed}");
            // The lines the command printed before it failed, and no line after it.
            for line in ["before", "start", "fine"] {
                assert_eq!(
                    plain.contains(line),
                    routed.contains(line),
                    "{shell}: {routed}"
                );
            }
            assert!(!routed.contains("after"), "{shell}: {routed}");
        }
    }
}

/// A background job the command started may write after the command's side of the pipeline
/// has ended, so after the trailer: the status used to be lost (sqz exited 0) and the agent
/// saw `__SQZ_EXIT_3__`. The late output is kept and the status holds.
#[test]
fn background_output_after_the_trailer_keeps_the_status() {
    let command = "echo first; sh -c '(sleep 1; echo late) & exit 3'";
    let (status, output) = run_in("bash", &rewrite(command), "late");
    assert_eq!(status, Some(3), "{output}");
    assert_eq!(output, "first\nlate\n");
    // The form of an install made before the trap, for comparison: the marker shows.
    let legacy = sqz::hook::rewrite::wrap(command, sqz::hook::rewrite::Shape::Printf);
    let (status, output) = run_in("bash", &legacy, "late-legacy");
    assert_eq!(status, Some(0));
    assert!(output.contains("__SQZ_EXIT_3__"), "{output}");
}
