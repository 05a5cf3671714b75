//! The setup layer: which agent clients sqz knows, where each keeps its configuration, and the
//! reversible changes `sqz init` makes, `sqz uninstall` undoes and `sqz doctor` checks (SPEC
//! §7). Every change is one of three kinds, each reversible on its own: members merged into a
//! JSON file (hooks, allow rules, MCP servers), a sentinel-bracketed block in a text file, or a
//! whole file sqz owns. A JSON file that does not parse strictly (comments, trailing commas) is
//! never rewritten: a paste-ready snippet is reported instead.
//!
//! Scope: by default the project in the current directory (`./.claude/settings.json`,
//! `./.mcp.json`, `./AGENTS.md`, …), because project files are where Claude Code, Gemini and
//! the rules-file clients look first and they can be committed; `--global` writes the user-level
//! files under HOME instead. Codex keeps MCP servers only in `~/.codex/config.toml`, so that
//! one is written in both scopes.
//!
//! Nothing here reads the process environment or prints: HOME, CLAUDE_CONFIG_DIR and PATH come
//! from `Env`, the working directory from the caller, and results come back as values.

mod check;
mod clients;
pub mod codex;
mod edit;
mod plan;

pub use check::{doctor, sqz_on_path, Doctor, Row};
pub use clients::{changes, found, guidance, selected, tier, Scope, CLIENTS};
pub use edit::{Change, Merged};
pub use plan::{apply, plan, read, Outcome, Report};
