//! The one table of clients `sqz discover` reads: how each one's session file is recognised by
//! its content and read, which of its tools go in which report row, and what that client's own
//! hooks can change (the hook column). Adding a client is one row here and its reader.

use super::transcript::Transcript;
use super::{claude, codex, copilot, gemini, opencode};
use crate::json::{self, Value};
use std::ops::Range;

/// The report's tool rows: every client's tools fall in one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    Shell,
    Read,
    Grep,
    Glob,
    Edit,
    Write,
    Task,
    Other,
}

impl Row {
    pub const ALL: [Row; 8] = [
        Row::Shell,
        Row::Read,
        Row::Grep,
        Row::Glob,
        Row::Edit,
        Row::Write,
        Row::Task,
        Row::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Row::Shell => "shell",
            Row::Read => "read",
            Row::Grep => "grep",
            Row::Glob => "glob",
            Row::Edit => "edit",
            Row::Write => "write",
            Row::Task => "task",
            Row::Other => "other",
        }
    }
}

/// What a client's installed hooks can change.
pub enum Hook {
    /// Claude Code's PreToolUse rewrite and PostToolUse replacement, as `sqz hook claude` and
    /// `sqz hook claude-post` answer them.
    Claude,
    /// A hook that rewrites the command of one of `tools` through `sqz compress` when sqz's
    /// rewrite rule takes it: that call's output is compressed with the command as label, the
    /// client's own wrapper around it (`frame` finds the output inside) unchanged. Every other
    /// result is unchanged.
    Shell {
        tools: &'static [&'static str],
        frame: fn(&str) -> Range<usize>,
    },
}

/// One client.
pub struct Client {
    pub name: &'static str,
    /// Whether one JSON value, a line of the file or the whole file, is this client's.
    claims: fn(&Value) -> bool,
    pub read: fn(&str) -> Result<Transcript, String>,
    /// The client's tool names and their rows; any other tool is `Row::Other`.
    rows: &'static [(&'static str, Row)],
    pub hook: Hook,
    /// What the hook column models, in a few words for the report.
    pub hook_says: &'static str,
}

impl Client {
    /// The report row of one of this client's tools.
    pub fn row(&self, tool: &str) -> Row {
        self.rows
            .iter()
            .find(|(name, _)| *name == tool)
            .map_or(Row::Other, |(_, row)| *row)
    }
}

pub const CLIENTS: [Client; 5] = [
    Client {
        name: "Claude Code",
        claims: claude::claims,
        read: claude::parse,
        rows: &[
            ("Bash", Row::Shell),
            ("Read", Row::Read),
            ("Grep", Row::Grep),
            ("Glob", Row::Glob),
            ("Edit", Row::Edit),
            ("MultiEdit", Row::Edit),
            ("NotebookEdit", Row::Edit),
            ("Write", Row::Write),
            ("Task", Row::Task),
            ("Agent", Row::Task),
        ],
        hook: Hook::Claude,
        hook_says: "PostToolUse replacement of Bash, Read, Grep, Glob, Write, Edit; PreToolUse rewrite of a plain build or test",
    },
    Client {
        name: "Codex CLI",
        claims: codex::claims,
        read: codex::parse,
        rows: &[
            ("exec_command", Row::Shell),
            ("write_stdin", Row::Shell),
            ("shell", Row::Shell),
            ("shell_command", Row::Shell),
            ("local_shell", Row::Shell),
            ("apply_patch", Row::Edit),
            ("view_image", Row::Read),
        ],
        hook: Hook::Shell {
            tools: &[
                "exec_command",
                "write_stdin",
                "shell",
                "shell_command",
                "local_shell",
            ],
            frame: codex::frame,
        },
        hook_says: "PreToolUse rewrite of shell commands through sqz compress",
    },
    Client {
        name: "Copilot CLI",
        claims: copilot::claims,
        read: copilot::parse,
        rows: &[
            ("bash", Row::Shell),
            ("powershell", Row::Shell),
            ("read_bash", Row::Shell),
            ("write_bash", Row::Shell),
            ("stop_bash", Row::Shell),
            ("view", Row::Read),
            ("grep", Row::Grep),
            ("glob", Row::Glob),
            ("edit", Row::Edit),
            ("str_replace", Row::Edit),
            ("create", Row::Write),
            ("task", Row::Task),
        ],
        hook: Hook::Shell {
            tools: &["bash"],
            frame: copilot::frame,
        },
        hook_says: "postToolUse replacement of bash output",
    },
    Client {
        name: "OpenCode",
        claims: opencode::claims,
        read: opencode::parse,
        rows: &[
            ("bash", Row::Shell),
            ("read", Row::Read),
            ("grep", Row::Grep),
            ("glob", Row::Glob),
            ("list", Row::Glob),
            ("edit", Row::Edit),
            ("multiedit", Row::Edit),
            ("patch", Row::Edit),
            ("apply_patch", Row::Edit),
            ("write", Row::Write),
            ("task", Row::Task),
        ],
        hook: Hook::Shell {
            tools: &["bash"],
            frame: opencode::frame,
        },
        hook_says: "plugin tool.execute.after: bash output replaced",
    },
    Client {
        name: "Gemini CLI",
        claims: gemini::claims,
        read: gemini::parse,
        rows: &[
            ("run_shell_command", Row::Shell),
            ("read_file", Row::Read),
            ("read_many_files", Row::Read),
            ("search_file_content", Row::Grep),
            ("grep_search", Row::Grep),
            ("glob", Row::Glob),
            ("list_directory", Row::Glob),
            ("replace", Row::Edit),
            ("edit", Row::Edit),
            ("write_file", Row::Write),
        ],
        hook: Hook::Shell {
            tools: &["run_shell_command"],
            frame: gemini::frame,
        },
        hook_says: "AfterTool: run_shell_command output replaced",
    },
];

/// The client whose session `text` is, from its content: the first JSON line some client
/// claims, or else the whole text as one JSON document.
pub fn detect(text: &str) -> Option<&'static Client> {
    let claimed = |v: &Value| CLIENTS.iter().find(|c| (c.claims)(v));
    let by_line = text
        .split('\n')
        .filter(|line| line.trim_start().starts_with('{'))
        .filter_map(|line| json::parse(line).ok())
        .find_map(|v| claimed(&v));
    by_line.or_else(|| json::parse(text).ok().and_then(|doc| claimed(&doc)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_content() {
        let name = |text: &str| detect(text).map(|c| c.name);
        let claude = "{\"type\":\"file-history-snapshot\"}\nnot json\n{\"type\":\"assistant\",\"message\":{\"content\":[]}}\n";
        assert_eq!(name(claude), Some("Claude Code"));
        let codex = "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"s\"}}\n";
        assert_eq!(name(codex), Some("Codex CLI"));
        let copilot = "{\"type\":\"session.start\",\"data\":{\"sessionId\":\"s\"},\"id\":\"e\"}\n";
        assert_eq!(name(copilot), Some("Copilot CLI"));
        let opencode = "{\n  \"info\": {\"id\": \"ses_1\"},\n  \"messages\": []\n}\n";
        assert_eq!(name(opencode), Some("OpenCode"));
        let gemini = "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}";
        assert_eq!(name(gemini), Some("Gemini CLI"));
        let gemini_lines =
            "{\"sessionId\":\"s\",\"projectHash\":\"h\"}\n{\"id\":\"m\",\"type\":\"user\"}\n";
        assert_eq!(name(gemini_lines), Some("Gemini CLI"));
        assert_eq!(name("{\"name\":\"a package.json\"}"), None);
        assert_eq!(name("plain text"), None);
    }

    #[test]
    fn unknown_tools_are_other() {
        assert_eq!(CLIENTS[0].row("Bash"), Row::Shell);
        assert_eq!(CLIENTS[1].row("write_stdin"), Row::Shell);
        assert_eq!(CLIENTS[2].row("web_fetch"), Row::Other);
    }
}
