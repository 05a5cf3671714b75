//! Every environment variable sqz reads, read once at start-up by the command layer so the
//! rest of the program stays a function of its inputs.

use std::ffi::OsString;
use std::path::PathBuf;

/// (name, meaning) for `sqz help`; the single list of variables sqz honours.
pub const VARIABLES: &[(&str, &str)] = &[
    ("SQZ_DB_PATH", "store location (default ~/.sqz/sessions.db)"),
    (
        "SQZ_REF_TTL_SECS",
        "seconds a served output counts as still in context (default 1800; 0 disables references)",
    ),
    (
        "SQZ_NO_DEDUP",
        "set to 1: no references and nothing stored, like --no-cache",
    ),
    (
        "SQZ_NO_ABBREV",
        "set to 1: no phrase abbreviation, like --no-abbrev",
    ),
    (
        "SQZ_QUIET",
        "set to 1: no [sqz] lines on stderr (errors still print)",
    ),
    ("SQZ_CMD", "command label when --cmd is not given"),
    (
        "SQZ_MAX_DB_MB",
        "store ceiling in MiB; least recently served entries are evicted past it (default 512)",
    ),
    (
        "SQZ_RETENTION_DAYS",
        "days an unpinned entry is kept after it was last served (default 30)",
    ),
    (
        "SQZ_MAX_INPUT_MB",
        "inputs larger than this pass through unchanged, streamed (default 16)",
    ),
    ("NO_COLOR", "set: no colour in any output"),
    (
        "SQZ_MCP_TEST_PANIC",
        "tests only: 1 makes sqz mcp panic on the method sqz/test-panic, to show it keeps serving",
    ),
];

/// The environment as sqz uses it.
#[derive(Clone, Debug)]
pub struct Env {
    pub db_path: PathBuf,
    pub ref_ttl_secs: u64,
    pub no_dedup: bool,
    pub no_abbrev: bool,
    pub quiet: bool,
    pub cmd_label: Option<String>,
    pub max_db_mb: u64,
    pub retention_days: u64,
    pub max_input_mb: u64,
}

impl Env {
    pub fn from_process() -> Env {
        Env::from_lookup(|name| std::env::var_os(name))
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<OsString>) -> Env {
        let text = |name: &str| {
            get(name)
                .and_then(|v| v.into_string().ok())
                .map(|v| v.trim().to_string())
        };
        let flag = |name: &str| text(name).is_some_and(|v| !v.is_empty() && v != "0");
        let number =
            |name: &str, default: u64| text(name).and_then(|v| v.parse().ok()).unwrap_or(default);
        let db_path = get("SQZ_DB_PATH")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| default_db_path(get("HOME")));
        Env {
            db_path,
            ref_ttl_secs: number("SQZ_REF_TTL_SECS", 1800),
            no_dedup: flag("SQZ_NO_DEDUP"),
            no_abbrev: flag("SQZ_NO_ABBREV"),
            quiet: flag("SQZ_QUIET"),
            cmd_label: text("SQZ_CMD").filter(|v| !v.is_empty()),
            max_db_mb: number("SQZ_MAX_DB_MB", 512).max(1),
            retention_days: number("SQZ_RETENTION_DAYS", 30),
            max_input_mb: number("SQZ_MAX_INPUT_MB", 32).max(1),
        }
    }

    pub fn limits(&self) -> crate::store::Limits {
        crate::store::Limits {
            max_bytes: self.max_db_mb * 1024 * 1024,
            retention_ms: (self.retention_days as i64).saturating_mul(24 * 3600 * 1000),
        }
    }
}

fn default_db_path(home: Option<OsString>) -> PathBuf {
    match home.filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join(".sqz").join("sessions.db"),
        None => std::env::temp_dir().join("sqz").join("sessions.db"),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
