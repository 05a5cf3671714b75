//! Deciding whether a shell command an agent is about to run can be routed through
//! `sqz compress`, and building the rewritten command. It must never change what the command
//! does: when unsure, the command is left as written.
//!
//! The analysis is a small lexer for the part of bash an agent usually writes. It only has to
//! decide safely: any construct it does not fully follow leaves the command alone.

/// The allow rules `sqz init` adds to Claude Code so that its permission checker accepts the
/// parts the `Shape::Pipefail` rewrite adds, and nothing more. The Claude Code hook rewrites in
/// its default permission modes only while these are in effect.
pub const ALLOW_RULES: [&str; 2] = ["Bash(sqz compress --cmd:*)", PIPEFAIL_RULE];

/// The allow rules for `sqz expand` and the MCP server's `expand` tool, which `sqz init` also
/// writes: every stand-in sqz sends names one of them, and an agent that has to ask before it
/// can resolve one is worse off. Both only read sqz's own store.
pub const EXPAND_RULES: [&str; 2] = ["Bash(sqz expand:*)", "mcp__sqz__expand"];

/// The allow rule for the `set -o pipefail` that `Shape::Pipefail` puts first.
pub const PIPEFAIL_RULE: &str = "Bash(set -o pipefail)";

/// Rules that earlier installs added for the trailer's `printf` and EXIT trap. Claude Code's
/// checker asks about any command with braces, a subshell or a trap whatever the rules say, so
/// they never helped; `sqz init` takes them out and `sqz doctor` reports them.
pub const OLD_RULES: [&str; 2] = [trailer::ALLOW_RULE, trailer::TRAP_RULE];

/// How the rewritten command carries the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `set -o pipefail; CMD 2>&1 | sqz compress --cmd 'CMD'`, for one plain command
    /// (`is_plain`): the pipeline's status is the command's when it fails, and Claude Code's
    /// checker accepts every part of it on `ALLOW_RULES`.
    Pipefail,
    /// An EXIT trap prints the trailer however the command's side ends (`set -e`, `set -u`,
    /// `exit`), and `sqz compress --trap` keeps output that background jobs write after it.
    Trap,
    /// A `printf` after the command, for clients whose allow rules predate the trap.
    Printf,
}

/// What to do with one command.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run this instead: same behaviour, output compressed.
    Rewrite(String),
    /// Run the command as written, for this reason.
    Leave(&'static str),
}

use super::lexer::{self, is_assignment};
use crate::engine::trailer;

/// Decides for `command`, rewriting in the `Shape::Trap` form.
pub fn decide(command: &str) -> Decision {
    decide_as(command, Shape::Trap)
}

/// Decides for `command`, rewriting in the given form.
pub fn decide_as(command: &str, shape: Shape) -> Decision {
    if command.trim().is_empty() {
        return Decision::Leave("empty command");
    }
    if command.contains("sqz") {
        return Decision::Leave("already routed through sqz");
    }
    if command.contains("<<") {
        return Decision::Leave("heredoc");
    }
    if command.contains('\0') || command.contains('\r') {
        return Decision::Leave("control characters");
    }
    match lexer::analyse(command, check_simple) {
        Ok(()) => Decision::Rewrite(wrap(command, shape)),
        Err(reason) => Decision::Leave(reason),
    }
}

/// The rewritten command. The command ends on its own line so a trailing comment cannot
/// swallow what follows, and its `2>&1` applies to the whole command while redirections
/// written inside still win. In the trap form the command runs in its own subshell: zsh ends a
/// shell at an unset variable under `set -u` without running its EXIT trap, so the trap must
/// sit one level out.
pub fn wrap(command: &str, shape: Shape) -> String {
    match shape {
        Shape::Pipefail => format!(
            "set -o pipefail; {command} 2>&1 | sqz compress --cmd {}",
            quote(command)
        ),
        Shape::Trap => format!(
            "{{ {}; ( {command}\n) 2>&1; }} | sqz compress --cmd {} --trap",
            trailer::TRAP,
            quote(command)
        ),
        Shape::Printf => format!(
            "{{ {{ {command}\n}} 2>&1; {}; }} | sqz compress --cmd {}",
            trailer::PRINTF,
            quote(command)
        ),
    }
}

/// Whether `command` is one plain simple command that `Shape::Pipefail` may wrap: no list,
/// pipe, redirection, subshell, group or substitution (the appended `2>&1 |` would bind to its
/// last part only, or change what a redirection does), no quote that the label's quoting would
/// have to escape, and nothing a permission checker reads as obfuscation. `decide` must also
/// say it can be rewritten.
pub fn is_plain(command: &str) -> bool {
    let command = command.trim();
    !command.is_empty()
        && !command.bytes().any(|b| {
            matches!(
                b,
                b';' | b'&'
                    | b'|'
                    | b'<'
                    | b'>'
                    | b'('
                    | b')'
                    | b'{'
                    | b'}'
                    | b'$'
                    | b'`'
                    | b'\\'
                    | b'\''
                    | b'#'
                    | b'!'
                    | b'\n'
                    | b'\r'
            )
        })
}

/// Single-quotes `s` for the shell.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Builtins and keywords whose effect would be lost in the pipeline's subshell, or that end or
/// replace the shell, or that read the shell's job table.
const STATEFUL: &[&str] = &[
    "cd",
    "pushd",
    "popd",
    "export",
    "source",
    ".",
    "alias",
    "unalias",
    "set",
    "shopt",
    "unset",
    "declare",
    "typeset",
    "local",
    "readonly",
    "let",
    "eval",
    "exec",
    "exit",
    "return",
    "logout",
    "trap",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "shift",
    "umask",
    "ulimit",
    "hash",
    "enable",
    "bind",
    "complete",
    "compopt",
    "history",
    "wait",
    "jobs",
    "fg",
    "bg",
    "disown",
    "suspend",
    "coproc",
    "function",
    "break",
    "continue",
    "builtin",
    "command",
    "caller",
    "dirs",
    "kill",
];

/// Programs that need a terminal, or never finish on their own.
const INTERACTIVE: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "nano",
    "emacs",
    "less",
    "more",
    "most",
    "man",
    "top",
    "htop",
    "btop",
    "ssh",
    "telnet",
    "ftp",
    "sftp",
    "tmux",
    "screen",
    "watch",
    "sudo",
    "su",
    "passwd",
    "fzf",
    "nohup",
    "setsid",
    "script",
    "expect",
    "mc",
    "ranger",
    "nodemon",
    "entr",
    "inotifywait",
    "vite",
    "webpack-dev-server",
    "http-server",
    "live-server",
    "serve",
];

/// Programs that start a REPL when given no arguments.
const REPL: &[&str] = &[
    "python",
    "python3",
    "python2",
    "node",
    "deno",
    "bun",
    "irb",
    "ipython",
    "psql",
    "mysql",
    "sqlite3",
    "redis-cli",
    "mongo",
    "mongosh",
    "ghci",
    "lua",
    "R",
    "julia",
    "php",
    "bash",
    "sh",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "csh",
    "tclsh",
    "erl",
    "iex",
    "scala",
    "clojure",
];

/// Whether `program` (a path or a name) is a builtin or keyword whose effect would be lost in a
/// pipeline's subshell.
pub(crate) fn is_stateful(program: &str) -> bool {
    STATEFUL.contains(&program.rsplit('/').next().unwrap_or(program))
}

/// Judges one simple command (its words, and whether it runs in a subshell): `Err` says why it
/// must run as written.
pub(crate) fn check_simple(words: &[String], in_subshell: bool) -> Result<(), &'static str> {
    let first = &words[0];
    if is_assignment(first) {
        return Err("assignment");
    }
    if first.contains('$') || first.contains('`') {
        return Err("command name from an expansion");
    }
    let name = first.rsplit('/').next().unwrap_or(first);
    if !in_subshell && STATEFUL.contains(&name) {
        return Err("changes shell state");
    }
    if matches!(name, "exec" | "coproc" | "function") {
        return Err("changes shell state");
    }
    if INTERACTIVE.contains(&name) {
        return Err("interactive or long-running program");
    }
    let args = &words[1..];
    if REPL.contains(&name) && (args.is_empty() || args.iter().any(|a| a == "-i")) {
        return Err("interactive program");
    }
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if args
        .iter()
        .any(|a| a == "--watch" || a.starts_with("--watch="))
    {
        return Err("watcher");
    }
    if name == "tail"
        && (has("-f")
            || has("-F")
            || has("--follow")
            || args.iter().any(|a| {
                a.starts_with("--follow=")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
            }))
    {
        return Err("follows a file");
    }
    if matches!(name, "journalctl" | "kubectl" | "docker" | "podman")
        && (has("-f") || has("--follow") || has("-w"))
    {
        return Err("follows output");
    }
    if matches!(name, "docker" | "podman") && (has("-it") || has("-ti") || has("attach")) {
        return Err("interactive container");
    }
    if matches!(name, "npm" | "yarn" | "pnpm" | "bun")
        && args
            .iter()
            .any(|a| matches!(a.as_str(), "dev" | "start" | "serve" | "watch"))
    {
        return Err("dev server");
    }
    if matches!(name, "next" | "nuxt" | "astro" | "ng")
        && args.iter().any(|a| a == "dev" || a == "serve")
    {
        return Err("dev server");
    }
    if name == "printf" && args.iter().any(|a| a == "-v") {
        return Err("assignment");
    }
    if name == "git"
        && args.first().is_some_and(|a| a == "commit")
        && !args.iter().any(|a| {
            a.starts_with("-m")
                || a.starts_with("-F")
                || a == "--no-edit"
                || a.starts_with("--message")
                || a.starts_with("--file")
        })
    {
        return Err("opens an editor");
    }
    if name == "git" && (has("-i") || has("--interactive") || has("-p") || has("--patch")) {
        return Err("interactive program");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(cmd: &str) -> bool {
        matches!(decide(cmd), Decision::Rewrite(_))
    }

    #[test]
    fn rewrites_plain_commands() {
        for cmd in [
            "ls -la",
            "git status",
            "cargo test 2>&1 | tail -5",
            "echo 'a && b'",
            "make || echo failed",
            "grep -r foo . ; echo $?",
            "if true; then echo y; fi",
            "while false; do echo x; done",
            "(cd /tmp && ls)",
            "echo $(date) `pwd` ${HOME} ${X:-d}",
            "ls # a comment",
            "echo a\necho b",
            "ls 2>/dev/null",
            "ls >&2",
            "if a; then { b; }; fi",
            "if a; then if b; then c; fi\nfi",
            "while false; do (echo); done | sort",
        ] {
            assert!(rewritten(cmd), "{cmd}: {:?}", decide(cmd));
        }
    }

    #[test]
    fn leaves_what_it_must() {
        for cmd in [
            "",
            "cd src && make",
            "export A=1",
            "A=1",
            "A=1 make",
            "source env.sh",
            ". env.sh",
            "set -e; make",
            "f() { echo; }",
            "function f { echo; }",
            "cat <<EOF\nx\nEOF",
            "sleep 10 &",
            "vim file",
            "less log",
            "python",
            "npm run dev",
            "vite",
            "tail -f log",
            "docker logs -f c",
            "cargo watch --watch src",
            "make > log",
            "make &> log",
            "echo a >> f",
            "ls | sqz compress",
            "echo ${X:?}",
            "echo ${X:=1}",
            "echo $((1/0))",
            "for i in 1 2; do echo $i; done",
            "case x in x) echo;; esac",
            "exit 3",
            "echo 'unterminated",
            "echo a &&",
            "if true; then echo",
            "echo a; fi",
            "read X",
            "# only a comment",
            "echo a\n; echo b",
            "echo a\nif true; then fi",
            "echo a\nwhile do true; done",
            "echo a\n( )",
            "echo a\nif true; then echo; else fi",
        ] {
            assert!(!rewritten(cmd), "{cmd}: {:?}", decide(cmd));
        }
    }

    #[test]
    fn the_rewrite_shape() {
        assert_eq!(
            decide("echo 'it'"),
            Decision::Rewrite(
                "{ trap 'printf \"\\n__SQZ_EXIT_%d__\\n\" \"$?\"' EXIT; ( echo 'it'\n) 2>&1; } | sqz compress --cmd 'echo '\\''it'\\''' --trap"
                    .into()
            )
        );
        assert_eq!(
            decide_as("pytest -x tests", Shape::Pipefail),
            Decision::Rewrite(
                "set -o pipefail; pytest -x tests 2>&1 | sqz compress --cmd 'pytest -x tests'"
                    .into()
            )
        );
        assert_eq!(
            decide_as("echo 'it'", Shape::Printf),
            Decision::Rewrite(
                "{ { echo 'it'\n} 2>&1; printf '\\n__SQZ_EXIT_%d__\\n' \"$?\"; } | sqz compress --cmd 'echo '\\''it'\\'''"
                    .into()
            )
        );
    }

    #[test]
    fn only_one_plain_command_is_plain() {
        for plain in [
            "git status",
            "pytest -x tests/test_api.py",
            "cargo test --workspace",
            "grep -rn \"TODO\" src",
            "ls -la *.rs",
            "npm run test -- --reporter=dot",
        ] {
            assert!(is_plain(plain), "{plain}");
        }
        for not in [
            "cd src && make",
            "make; make test",
            "ls | head",
            "ls > out.txt",
            "cat < in",
            "make 2>/dev/null",
            "(cd x; ls)",
            "{ ls; }",
            "echo $HOME",
            "echo `date`",
            "echo 'it'",
            "echo a\\ b",
            "ls # comment",
            "echo a\necho b",
            "sleep 1 &",
            "",
            "   ",
        ] {
            assert!(!is_plain(not), "{not:?}");
        }
    }
}
