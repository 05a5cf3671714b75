//! What `sqz doctor` checks, per client and scope: whether what init writes is there, intact
//! and not duplicated, and which scopes `--fix` should hand back to init. It reads only.

use super::clients::{changes, found, tier, Scope, CLIENTS};
use super::edit::{count_hooks, find_block, is_ours, Change, GEMINI_HOOK};
use super::plan::{plan, read, Outcome};
use crate::env::Env;
use crate::error::Result;
use crate::json::{self, Value};
use std::path::{Path, PathBuf};

/// Where `sqz` resolves on PATH to a file: the program the hooks and MCP entries run.
pub fn sqz_on_path(env: &Env) -> Option<PathBuf> {
    let path = env.path.as_ref()?;
    std::env::split_paths(path)
        .map(|d| d.join("sqz"))
        .find(|p| p.is_file())
}

/// The scopes doctor looks at, and one row per client.
pub struct Doctor {
    /// The project and the user-level scope, or only the latter with `--global` (or when the
    /// project is HOME).
    pub scopes: Vec<Scope>,
    pub rows: Vec<Row>,
}

/// One row of `sqz doctor`.
pub struct Row {
    pub client: &'static str,
    pub found: bool,
    pub tier: &'static str,
    /// `project`, `global`, `project+global`, `partly (…)`, `no` or `n/a`.
    pub state: String,
    pub notes: Vec<String>,
    /// Indexes into `Doctor::scopes` where `--fix` runs init for this client.
    pub fix: Vec<usize>,
}

/// Without `global` both scopes are checked, since either can hold a client's sqz setup;
/// a scope is to fix where it is broken, or the first one where a found client is set up
/// nowhere.
pub fn doctor(env: &Env, cwd: &Result<PathBuf>, global: bool) -> Result<Doctor> {
    let mut scopes = Vec::new();
    for g in if global {
        vec![true]
    } else {
        vec![false, true]
    } {
        scopes.push(Scope::new(env, cwd, g)?);
    }
    if scopes.len() == 2 && scopes[0].base == scopes[1].base {
        scopes.truncate(1);
    }
    let project = Scope::new(env, cwd, false).ok();
    let user = Scope::new(env, cwd, true)?;
    let mut rows = Vec::new();
    for client in CLIENTS {
        let is_found = found(client, &scopes[0].home);
        let shared = project
            .as_ref()
            .map(|p| shared_paths(client, p, &user))
            .unwrap_or_default();
        let checks: Vec<_> = scopes.iter().map(|s| check(client, s, &shared)).collect();
        let name = |i: usize| {
            if scopes[i].global {
                "global"
            } else {
                "project"
            }
        };
        let configured: Vec<&str> = (0..checks.len())
            .filter(|&i| checks[i].0 == "yes")
            .map(name)
            .collect();
        let broken: Vec<usize> = (0..checks.len())
            .filter(|&i| checks[i].0 == "partly")
            .collect();
        let mut notes: Vec<String> = broken
            .iter()
            .flat_map(|&i| checks[i].1.iter().cloned())
            .collect();
        let state = if checks.iter().all(|c| c.0 == "n/a") {
            "n/a".to_string()
        } else if !broken.is_empty() {
            format!(
                "partly ({})",
                broken
                    .iter()
                    .map(|&i| name(i))
                    .collect::<Vec<_>>()
                    .join("+")
            )
        } else if !configured.is_empty() {
            // A scope that is set up may still carry advice (an untrusted Claude Code folder).
            notes = (0..checks.len())
                .filter(|&i| checks[i].0 == "yes")
                .flat_map(|i| checks[i].1.iter().cloned())
                .collect();
            configured.join("+")
        } else {
            notes = checks[0].1.clone();
            "no".to_string()
        };
        let fix = if !broken.is_empty() {
            broken
        } else if is_found && configured.is_empty() && state != "n/a" {
            vec![0]
        } else {
            Vec::new()
        };
        rows.push(Row {
            client,
            found: is_found,
            tier: tier(client),
            state,
            notes,
            fix,
        });
    }
    Ok(Doctor { scopes, rows })
}

/// One row of `sqz doctor`: (configured, notes).
/// `shared` are files the client gets in both scopes: they alone do not make a scope set up.
fn check(client: &str, scope: &Scope, shared: &[PathBuf]) -> (&'static str, Vec<String>) {
    let list = changes(client, scope);
    if list.is_empty() {
        return ("n/a", vec!["nothing to configure in this scope".into()]);
    }
    let mut notes = Vec::new();
    let mut all = true;
    let mut any = false;
    for change in &list {
        let shown = change.path().display().to_string();
        // Codex's config.toml is written in both scopes, and Zed's guidance block in AGENTS.md
        // is Codex's block: neither alone shows that this client is set up in this scope.
        let shared = shared.iter().any(|p| p == change.path())
            || (client != "codex" && change.path().ends_with("AGENTS.md"));
        let current = match read(change.path()) {
            Ok(c) => c,
            Err(e) => {
                notes.push(e);
                all = false;
                continue;
            }
        };
        let Some(text) = current else {
            all = false;
            if found(client, &scope.home) {
                notes.push(format!("{shown}: missing"));
            }
            continue;
        };
        if let Some(verdict) = super::codex::check(change, &text) {
            match verdict {
                Ok(()) => any |= !shared,
                Err(note) => {
                    all = false;
                    notes.push(format!("{shown}: {note}"));
                }
            }
            continue;
        }
        match change {
            Change::Json { add, .. } => {
                let doc = match json::parse(&text) {
                    Ok(d) => d,
                    Err(e) => {
                        all = false;
                        notes.push(format!("{shown}: not plain JSON ({e}); edit by hand"));
                        continue;
                    }
                };
                let mut want = doc.clone();
                if let Err(why) = add(&mut want) {
                    notes.push(format!("{shown}: {why}; edit by hand"));
                }
                if want == doc {
                    any |= !shared;
                } else {
                    all = false;
                }
                let mut hit = false;
                json_notes(client, &doc, &shown, &mut notes, &mut hit);
                any |= hit && !shared;
            }
            Change::Block { begin, end, .. } => match find_block(&text, begin, end) {
                Some(_) => {
                    any |= !shared;
                    if plan(change, true).is_ok_and(|o| !matches!(o, Outcome::Same)) {
                        all = false;
                        notes.push(format!("{shown}: sqz block is out of date"));
                    }
                }
                None => {
                    all = false;
                    notes.push(format!("{shown}: no sqz block"));
                }
            },
            Change::Owned { text: want, .. } => {
                if text == *want {
                    any |= !shared;
                } else {
                    all = false;
                    notes.push(format!("{shown}: differs from what sqz writes"));
                }
            }
        }
    }
    if client == "claude" && !scope.global && any {
        let places = crate::hook::claude::SettingsPlaces {
            home: Some(&scope.home),
            config_dir: scope.claude_config_dir(),
            project: Some(&scope.base),
        };
        if !places.project_trusted(&scope.base) {
            notes.push(
                "Claude Code has not trusted this folder yet: it ignores the project's allow rules (and sqz leaves failing commands uncompressed) until you accept its trust prompt here"
                    .into(),
            );
        }
    }
    if client == "codex" && !scope.global {
        if let Some(note) = super::codex::untrusted_project(&scope.codex_home, &scope.base) {
            all = false;
            notes.push(note);
        }
    }
    let state = if all {
        "yes"
    } else if any {
        "partly"
    } else {
        "no"
    };
    (state, notes)
}

fn json_notes(client: &str, doc: &Value, shown: &str, notes: &mut Vec<String>, any: &mut bool) {
    let hooks: &[(&str, &str)] = match client {
        "claude" if doc.get("hooks").is_some() || doc.get("permissions").is_some() => &[
            ("PreToolUse", "sqz hook claude"),
            ("PostToolUse", "sqz hook claude-post"),
            ("PreCompact", "sqz hook precompact"),
            ("SessionStart", "sqz resume"),
        ],
        "gemini" => &[(GEMINI_HOOK.0, GEMINI_HOOK.2)],
        "codex" => &[("PreToolUse", super::codex::HOOK_COMMAND)],
        _ => &[],
    };
    if client == "gemini" && count_hooks(doc, "BeforeTool", GEMINI_HOOK.2) > 0 {
        notes.push(format!(
            "{shown}: stale BeforeTool hook `{}` (a rewrite the client asks about; run sqz init)",
            GEMINI_HOOK.2
        ));
    }
    for (event, command) in hooks {
        match count_hooks(doc, event, command) {
            0 => notes.push(format!("{shown}: no {event} hook `{command}`")),
            1 => *any = true,
            n => notes.push(format!("{shown}: {n} duplicate {event} hooks `{command}`")),
        }
    }
    // Stale: a sqz hook under these events that is not one init writes.
    for (event, _) in hooks {
        if let Some(entries) = doc
            .get("hooks")
            .and_then(|h| h.get(event))
            .and_then(Value::as_array)
        {
            for h in entries
                .iter()
                .filter_map(|e| e.get("hooks").and_then(Value::as_array))
                .flatten()
                .filter(|h| is_ours(h))
            {
                let cmd = h.get("command").and_then(Value::as_str).unwrap_or("");
                if !hooks.iter().any(|(_, c)| *c == cmd) {
                    notes.push(format!("{shown}: stale {event} hook `{cmd}`"));
                }
                let program = cmd.split_whitespace().next().unwrap_or("");
                if program.contains('/') && !Path::new(program).is_file() {
                    notes.push(format!("{shown}: {event} hook runs missing {program}"));
                }
            }
        }
    }
    if client == "claude" && !hooks.is_empty() {
        let allow: Vec<&str> = doc
            .get("permissions")
            .and_then(|p| p.get("allow"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let old = crate::hook::rewrite::OLD_RULES
            .iter()
            .any(|rule| allow.contains(rule));
        if old {
            notes.push(format!(
                "{shown}: allow rules from an older sqz; failing commands go out uncompressed until `sqz init` runs again"
            ));
        }
        let rules = crate::hook::rewrite::ALLOW_RULES
            .into_iter()
            .chain(crate::hook::rewrite::EXPAND_RULES);
        for rule in rules {
            if !allow.contains(&rule) && !old {
                notes.push(format!("{shown}: allow rule missing: {rule}"));
            }
        }
    }
    const SERVER_KEYS: [&str; 3] = ["mcpServers", "context_servers", "mcp"];
    if SERVER_KEYS.iter().any(|k| doc.get(k).is_some()) {
        let registered = SERVER_KEYS
            .iter()
            .any(|k| doc.get(k).and_then(|s| s.get("sqz")).is_some());
        if !registered {
            notes.push(format!("{shown}: MCP server sqz not registered"));
        }
        let program = SERVER_KEYS.iter().find_map(|k| {
            let command = doc.get(k)?.get("sqz")?.get("command")?;
            command
                .as_str()
                .or_else(|| command.as_array()?.first()?.as_str())
        });
        if let Some(program) = program.filter(|p| *p != "sqz") {
            if program.contains('/') && !Path::new(program).is_file() {
                notes.push(format!("{shown}: MCP server sqz runs missing {program}"));
            } else {
                notes.push(format!("{shown}: MCP server sqz runs {program}, not sqz"));
            }
        }
    }
}

/// Paths the client gets in the project scope and the global scope alike.
fn shared_paths(client: &str, project: &Scope, global: &Scope) -> Vec<PathBuf> {
    let theirs: Vec<PathBuf> = changes(client, global)
        .iter()
        .map(|c| c.path().to_path_buf())
        .collect();
    changes(client, project)
        .iter()
        .map(|c| c.path().to_path_buf())
        .filter(|p| theirs.contains(p) && project.base != project.home)
        .collect()
}
