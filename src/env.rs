//! Every environment variable sqz reads, in one table that both `Env` and `sqz help` use, read
//! once at start-up by `main` so the rest of the program stays a function of its inputs. Code
//! below takes an `Env` (or a value made from it) and never reads the process environment.

use std::ffi::OsString;
use std::path::PathBuf;

/// One variable: its name, its default as help shows it (and as `Env` parses it), and what it
/// does.
pub struct Variable {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

/// Every variable sqz reads, and nothing else.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "SQZ_DB_PATH",
        default: "~/.sqz/sessions.db",
        meaning: "store location",
    },
    Variable {
        name: "SQZ_REF_TTL_SECS",
        default: "1800",
        meaning: "seconds a served output counts as still in context (0 disables references)",
    },
    Variable {
        name: "SQZ_NO_DEDUP",
        default: "0",
        meaning: "1: no references and nothing stored, like --no-cache",
    },
    Variable {
        name: "SQZ_QUIET",
        default: "0",
        meaning: "1: no [sqz] lines on stderr (errors still print)",
    },
    Variable {
        name: "SQZ_CMD",
        default: "stdin",
        meaning: "command label when --cmd is not given",
    },
    Variable {
        name: "SQZ_MAX_DB_MB",
        default: "512",
        meaning: "store ceiling in MiB; least recently served entries are evicted past it",
    },
    Variable {
        name: "SQZ_RETENTION_DAYS",
        default: "30",
        meaning: "days an unpinned entry is kept after it was last served",
    },
    Variable {
        name: "SQZ_MAX_INPUT_MB",
        default: "32",
        meaning: "inputs larger than this pass through unchanged, streamed",
    },
    Variable {
        name: "SQZ_REGRET_WINDOW_SECS",
        default: "120",
        meaning: "stats: the same output again within this many seconds of being served counts as a quick re-run (0 disables)",
    },
    Variable {
        name: "NO_COLOR",
        default: "",
        meaning: "any value: no colour in sqz gain, even on a terminal",
    },
    Variable {
        name: "COLUMNS",
        default: "80",
        meaning: "terminal width for sqz gain's bars when stdout is a terminal",
    },
    Variable {
        name: "HOME",
        default: "",
        meaning: "where the store, the agents' user-level configs and `sqz init --global` live",
    },
    Variable {
        name: "CLAUDE_CONFIG_DIR",
        default: "~/.claude",
        meaning:
            "Claude Code's user-level config directory (init, doctor, the hook's allow-rule check)",
    },
    Variable {
        name: "CLAUDE_PROJECT_DIR",
        default: "",
        meaning: "set by Claude Code for its hooks: the project root whose .claude/settings.json the hook reads (else the payload's cwd)",
    },
    Variable {
        name: "CODEX_HOME",
        default: "~/.codex",
        meaning: "Codex CLI's config directory (init, doctor, sqz hook codex)",
    },
    Variable {
        name: "BASH_MAX_OUTPUT_LENGTH",
        default: "30000",
        meaning: "Claude Code's Bash output limit; sqz hook claude-post reads a longer output whole from the file Claude Code saved it to",
    },
    Variable {
        name: "TMPDIR",
        default: "/tmp",
        meaning: "where sqz compress keeps its store when a sandbox will not let it write SQZ_DB_PATH",
    },
    Variable {
        name: "PATH",
        default: "",
        meaning: "searched by sqz doctor for the sqz the hooks will run",
    },
];

/// The environment as sqz uses it.
#[derive(Clone, Debug)]
pub struct Env {
    pub db_path: PathBuf,
    pub ref_ttl_secs: u64,
    pub no_dedup: bool,
    pub quiet: bool,
    pub cmd_label: String,
    pub max_db_mb: u64,
    pub retention_days: u64,
    pub max_input_mb: u64,
    pub home: Option<PathBuf>,
    pub claude_config_dir: Option<PathBuf>,
    pub claude_project_dir: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub bash_max_output_length: usize,
    pub path: Option<OsString>,
    pub tmp_dir: PathBuf,
    pub regret_window_secs: u64,
    pub no_color: bool,
    pub columns: usize,
    /// The working directory, recorded on each event for `sqz stats --project`; not a
    /// variable, so `from_lookup` leaves it out and `from_process` fills it in.
    pub project: Option<String>,
}

/// The default of a variable in the table.
fn default_of(name: &str) -> &'static str {
    VARIABLES
        .iter()
        .find(|v| v.name == name)
        .map_or("", |v| v.default)
}

impl Env {
    pub fn from_process() -> Env {
        let mut env = Env::from_lookup(|name| std::env::var_os(name));
        env.project = std::env::current_dir()
            .ok()
            .and_then(|d| d.into_os_string().into_string().ok());
        env
    }

    /// The environment `get` describes; each variable is looked up only if the table has it.
    pub fn from_lookup(get: impl Fn(&str) -> Option<OsString>) -> Env {
        let get = |name: &str| {
            debug_assert!(
                VARIABLES.iter().any(|v| v.name == name),
                "{name} is not in env::VARIABLES"
            );
            get(name).filter(|v| !v.is_empty())
        };
        let text = |name: &str| {
            get(name)
                .and_then(|v| v.into_string().ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let flag = |name: &str| text(name).is_some_and(|v| v != "0");
        let number = |name: &str| -> u64 {
            text(name)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| default_of(name).parse().unwrap_or(0))
        };
        let home = get("HOME").map(PathBuf::from);
        let db_path = get("SQZ_DB_PATH")
            .map(PathBuf::from)
            .unwrap_or_else(|| default_db_path(home.as_deref()));
        Env {
            db_path,
            ref_ttl_secs: number("SQZ_REF_TTL_SECS"),
            no_dedup: flag("SQZ_NO_DEDUP"),
            quiet: flag("SQZ_QUIET"),
            cmd_label: text("SQZ_CMD").unwrap_or_else(|| default_of("SQZ_CMD").to_string()),
            max_db_mb: number("SQZ_MAX_DB_MB").max(1),
            retention_days: number("SQZ_RETENTION_DAYS"),
            max_input_mb: number("SQZ_MAX_INPUT_MB").max(1),
            claude_config_dir: get("CLAUDE_CONFIG_DIR").map(PathBuf::from),
            claude_project_dir: get("CLAUDE_PROJECT_DIR").map(PathBuf::from),
            codex_home: get("CODEX_HOME").map(PathBuf::from),
            home,
            bash_max_output_length: number("BASH_MAX_OUTPUT_LENGTH") as usize,
            path: get("PATH"),
            tmp_dir: get("TMPDIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(default_of("TMPDIR"))),
            regret_window_secs: number("SQZ_REGRET_WINDOW_SECS"),
            no_color: get("NO_COLOR").is_some(),
            columns: (number("COLUMNS") as usize).clamp(40, 400),
            project: None,
        }
    }

    pub fn limits(&self) -> crate::store::Limits {
        crate::store::Limits {
            max_bytes: self.max_db_mb * 1024 * 1024,
            retention_ms: (self.retention_days as i64).saturating_mul(24 * 3600 * 1000),
        }
    }

    /// How long a served output counts as still in the agent's context.
    pub fn ttl_ms(&self) -> i64 {
        (self.ref_ttl_secs as i64).saturating_mul(1000)
    }
}

fn default_db_path(home: Option<&std::path::Path>) -> PathBuf {
    match home {
        Some(home) => home.join(".sqz").join("sessions.db"),
        None => std::env::temp_dir().join("sqz").join("sessions.db"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_table() {
        let env = Env::from_lookup(|_| None);
        assert_eq!(env.ref_ttl_secs, 1800);
        assert_eq!(env.max_input_mb, 32);
        assert_eq!(env.max_db_mb, 512);
        assert_eq!(env.bash_max_output_length, 30_000);
        assert_eq!(env.cmd_label, "stdin");
        let env = Env::from_lookup(|n| (n == "SQZ_MAX_INPUT_MB").then(|| "4".into()));
        assert_eq!(env.max_input_mb, 4);
    }

    #[test]
    fn from_lookup_asks_for_exactly_the_table() {
        let asked = std::cell::RefCell::new(std::collections::BTreeSet::new());
        Env::from_lookup(|name| {
            asked.borrow_mut().insert(name.to_string());
            None
        });
        let table: std::collections::BTreeSet<String> =
            VARIABLES.iter().map(|v| v.name.to_string()).collect();
        assert_eq!(asked.into_inner(), table);
    }
}
