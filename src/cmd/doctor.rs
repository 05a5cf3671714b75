//! `sqz doctor`: per client and scope, whether what `sqz init` writes is there, intact and
//! not duplicated, whether `sqz` resolves, and when the store last saw a compression. It reads
//! only; `--fix` hands the broken clients to init.

use super::init::{
    apply, changes, count_hooks, find_block, found, is_ours, plan, read, tier, Change, Outcome,
    Scope, CLIENTS,
};
use crate::json::{self, Value};
use std::path::{Path, PathBuf};

/// Whether `sqz` resolves on PATH to an executable file.
fn sqz_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("sqz"))
        .find(|p| p.is_file())
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
        "gemini" => &[("BeforeTool", "sqz hook gemini")],
        _ => &[],
    };
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
        for rule in crate::hook::rewrite::ALLOW_RULES {
            if !allow.contains(&rule) {
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

/// Without `--global` both scopes are checked, since either can hold a client's sqz setup;
/// `--fix` repairs a broken scope, or runs init in the asked scope where nothing is set up.
pub fn run(global: bool, fix: bool, env: &crate::env::Env) -> i32 {
    let mut scopes = Vec::new();
    for g in if global {
        vec![true]
    } else {
        vec![false, true]
    } {
        match Scope::from_process(g) {
            Ok(s) => scopes.push(s),
            Err(e) => {
                eprintln!("sqz: {e}");
                return 2;
            }
        }
    }
    if scopes.len() == 2 && scopes[0].base == scopes[1].base {
        scopes.truncate(1);
    }
    let home = scopes[0].home.clone();
    let mut out = format!(
        "{:<9} {:<5} {:<11} {:<16} notes\n",
        "client", "found", "tier", "configured"
    );
    let mut to_fix: Vec<(usize, &str)> = Vec::new();
    for client in CLIENTS {
        let is_found = found(client, &home);
        let shared = shared_paths(client, &scopes[0].home);
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
            configured.join("+")
        } else {
            notes = checks[0].1.clone();
            "no".to_string()
        };
        out.push_str(&format!(
            "{client:<9} {:<5} {:<11} {state:<16} {}\n",
            if is_found { "yes" } else { "no" },
            tier(client),
            notes.first().map(String::as_str).unwrap_or("")
        ));
        for note in notes.iter().skip(1) {
            out.push_str(&format!("{:<44} {note}\n", ""));
        }
        if !broken.is_empty() {
            to_fix.extend(broken.iter().map(|&i| (i, client)));
        } else if is_found && configured.is_empty() && state != "n/a" {
            to_fix.push((0, client));
        }
    }
    match sqz_on_path() {
        Some(p) => out.push_str(&format!("sqz on PATH: {}\n", p.display())),
        None => out.push_str("sqz on PATH: not found — the hooks call `sqz`; install it on PATH\n"),
    }
    out.push_str(&match last_compression(env) {
        Some(at) => format!("last compression: {}\n", ago(at)),
        None => "last compression: none recorded\n".into(),
    });
    super::write_stdout(out.as_bytes());
    if !fix || to_fix.is_empty() {
        return i32::from(!to_fix.is_empty());
    }
    let mut status = 0;
    for (i, scope) in scopes.iter().enumerate() {
        let clients: Vec<&str> = to_fix
            .iter()
            .filter(|(at, _)| *at == i)
            .map(|(_, c)| *c)
            .collect();
        if !clients.is_empty() {
            status = status.max(apply(&clients, scope, true, false));
        }
    }
    status
}

/// Paths the client gets in the project scope and the global scope alike.
fn shared_paths(client: &str, home: &Path) -> Vec<PathBuf> {
    let Ok(project) = Scope::from_process(false) else {
        return Vec::new();
    };
    let global = Scope {
        home: home.to_path_buf(),
        base: home.to_path_buf(),
        global: true,
    };
    let theirs: Vec<PathBuf> = changes(client, &global)
        .iter()
        .map(|c| c.path().to_path_buf())
        .collect();
    changes(client, &project)
        .iter()
        .map(|c| c.path().to_path_buf())
        .filter(|p| theirs.contains(p) && project.base != project.home)
        .collect()
}

fn last_compression(env: &crate::env::Env) -> Option<i64> {
    if !env.db_path.is_file() {
        return None;
    }
    let (store, _) = crate::store::Store::open(&env.db_path).ok()?;
    store.last_event_at().ok().flatten()
}

fn ago(at_ms: i64) -> String {
    let secs = (crate::clock::now_ms() - at_ms).max(0) / 1000;
    match secs {
        s if s < 120 => format!("{s} s ago"),
        s if s < 7200 => format!("{} min ago", s / 60),
        s if s < 172_800 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86_400),
    }
}
