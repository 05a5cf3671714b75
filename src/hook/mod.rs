//! Client hooks (`sqz hook CLIENT`): pure functions from a payload to an `Answer`. A hook never
//! blocks the agent: on bad input it answers so the client goes on unchanged, and says why.
//! Reading the payload and printing the answer is `cmd/hook.rs`'s job.

pub mod after;
pub mod answer;
pub mod claude;
pub mod claude_files;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod lexer;
pub mod opencode;
pub mod rewrite;

/// The clients `sqz hook` answers, by the name the hook command gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// Claude Code PreToolUse on Bash.
    Claude,
    /// Claude Code PostToolUse on Bash.
    ClaudePost,
    /// Claude Code PreCompact.
    PreCompact,
    /// Gemini CLI AfterTool on run_shell_command.
    Gemini,
    /// Copilot CLI postToolUse on bash.
    Copilot,
    /// The OpenCode plugin's question after a bash call.
    OpenCode,
    /// Codex CLI PreToolUse on its shell tool.
    Codex,
}

impl Client {
    pub const ALL: [Client; 7] = [
        Client::Claude,
        Client::ClaudePost,
        Client::PreCompact,
        Client::Gemini,
        Client::Copilot,
        Client::OpenCode,
        Client::Codex,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::ClaudePost => "claude-post",
            Client::PreCompact => "precompact",
            Client::Gemini => "gemini",
            Client::Copilot => "copilot",
            Client::OpenCode => "opencode",
            Client::Codex => "codex",
        }
    }

    pub fn parse(name: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The names, for messages: `claude, claude-post, …`.
    pub fn names() -> String {
        Client::ALL.map(Client::name).join(", ")
    }
}
