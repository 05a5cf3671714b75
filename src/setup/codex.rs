//! Codex CLI's setup: the `PreToolUse` hook in a `hooks.json`, the trust entry without which
//! Codex skips that hook without a word, and the rules file the rewrite needs (see
//! `hook::codex`). Codex keeps trust and rules for the user only, so those two live under
//! `$CODEX_HOME` in both scopes.
//!
//! Codex trusts one handler by a `trusted_hash` under `[hooks.state."PATH:pre_tool_use:G:H"]`
//! in `$CODEX_HOME/config.toml`: PATH the `hooks.json`, G the matcher group's index and H the
//! handler's. The hash is `sha256:` and the hex SHA-256 of the compact JSON, keys sorted, of
//! `{"event_name":"pre_tool_use","hooks":[HANDLER],"matcher":M}`, where HANDLER carries `type`,
//! `command`, `timeout` (600 when unset), `async` (false when unset) and `statusMessage` when
//! set. Checked against Codex 0.169's own `hooks/list`, and by its running the hook.

use super::edit::{ensure_hook, remove_hooks, Change, Merged};
use crate::hook::codex::RULES_MARKER;
use crate::json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The hook command `sqz init` registers.
pub const HOOK_COMMAND: &str = "sqz hook codex";

/// The name Codex gives its shell tool in hook payloads and matchers.
const MATCHER: &str = "Bash";

/// Seconds Codex waits for the hook.
const TIMEOUT: i64 = 30;

/// The markers of one trust entry's block in `config.toml`: one block per `hooks.json`, so the
/// global scope and each project keep their own.
pub fn trust_begin(hooks_json: &Path) -> String {
    format!("# sqz:trust {}", hooks_json.display())
}

pub fn is_trust_marker(begin: &str) -> bool {
    begin.starts_with("# sqz:trust ")
}

pub(super) fn hooks_add(doc: &mut Value) -> Merged {
    ensure_hook(doc, "PreToolUse", Some(MATCHER), HOOK_COMMAND)?;
    if let Some((group, handler)) = position(doc) {
        let ours = &mut doc
            .get_mut("hooks")
            .and_then(|h| h.get_mut("PreToolUse"))
            .and_then(Value::as_array_mut)
            .expect("found above")[group];
        let handler = &mut ours
            .get_mut("hooks")
            .and_then(Value::as_array_mut)
            .expect("found above")[handler];
        if handler.get("timeout").is_none() {
            handler.set("timeout", Value::int(TIMEOUT));
        }
    }
    Ok(())
}

pub(super) fn hooks_remove(doc: &mut Value) -> bool {
    remove_hooks(doc, "PreToolUse", super::edit::is_ours)
}

/// Where sqz's handler sits under `PreToolUse`: (group, handler).
fn position(doc: &Value) -> Option<(usize, usize)> {
    let groups = doc.get("hooks")?.get("PreToolUse")?.as_array()?;
    groups.iter().enumerate().find_map(|(g, group)| {
        let handlers = group.get("hooks")?.as_array()?;
        let h = handlers
            .iter()
            .position(|h| h.get("command").and_then(Value::as_str) == Some(HOOK_COMMAND))?;
        Some((g, h))
    })
}

/// The trust entry for sqz's handler in the `hooks.json` document `doc` at `hooks_json`:
/// Codex's state key and the hash it expects.
pub fn trust(hooks_json: &Path, doc: &Value) -> Option<(String, String)> {
    let (g, h) = position(doc)?;
    let group = &doc.get("hooks")?.get("PreToolUse")?.as_array()?[g];
    let handler = &group.get("hooks")?.as_array()?[h];
    let matcher = group.get("matcher").and_then(Value::as_str);
    let key = format!("{}:pre_tool_use:{g}:{h}", hooks_json.display());
    Some((key, handler_hash(matcher, handler)))
}

/// Codex's trust hash of one `PreToolUse` handler under `matcher`.
pub fn handler_hash(matcher: Option<&str>, handler: &Value) -> String {
    // Keys in sorted order, as Codex hashes them.
    let mut normal = Value::object();
    normal.set(
        "async",
        Value::Bool(handler.get("async").and_then(Value::as_bool) == Some(true)),
    );
    normal.set(
        "command",
        handler.get("command").cloned().unwrap_or(Value::str("")),
    );
    if let Some(message) = handler.get("statusMessage").and_then(Value::as_str) {
        normal.set("statusMessage", Value::str(message));
    }
    let timeout = handler
        .get("timeout")
        .and_then(Value::as_i64)
        .unwrap_or(600)
        .max(1);
    normal.set("timeout", Value::int(timeout));
    normal.set("type", Value::str("command"));
    let mut identity = Value::object();
    identity.set("event_name", Value::str("pre_tool_use"));
    identity.set("hooks", Value::Array(vec![normal]));
    if let Some(matcher) = matcher {
        identity.set("matcher", Value::str(matcher));
    }
    let digest = Sha256::digest(identity.to_compact().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The `hooks.json` document as `sqz init` leaves it: `None` when the file cannot be merged.
pub fn planned(hooks_json: &Path) -> Option<Value> {
    let mut doc = match std::fs::read_to_string(hooks_json) {
        Ok(text) if !text.trim().is_empty() => crate::json::parse(&text).ok()?,
        Ok(_) => Value::object(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::object(),
        Err(_) => return None,
    };
    doc.as_object()?;
    hooks_add(&mut doc).ok()?;
    Some(doc)
}

/// The body of a trust block: the TOML table Codex reads.
pub fn trust_table(key: &str, hash: &str) -> String {
    let mut quoted = String::new();
    crate::json::write_string(&mut quoted, key);
    format!("[hooks.state.{quoted}]\ntrusted_hash = \"{hash}\"\n")
}

/// What `config.toml` says of the handler at `key`: its `trusted_hash`, and whether it was
/// turned off (`enabled = false`). A line reader for the tables Codex writes, not a TOML parser.
pub fn stored_state(config: &str, key: &str) -> (Option<String>, bool) {
    let header = trust_table(key, "")
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let (mut hash, mut off) = (None, false);
    let mut inside = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(v) = value_of(line, "trusted_hash") {
            hash = Some(v);
        }
        if line.replace(' ', "") == "enabled=false" {
            off = true;
        }
    }
    (hash, off)
}

/// Whether `config.toml` marks `project` (or a directory above it) trusted: Codex reads a
/// project's `.codex/` only then.
pub fn project_trusted(config: &str, project: &Path) -> bool {
    let mut current: Option<PathBuf> = None;
    for line in config.lines().map(str::trim) {
        if let Some(path) = line
            .strip_prefix("[projects.\"")
            .and_then(|r| r.strip_suffix("\"]"))
        {
            current = Some(PathBuf::from(path));
            continue;
        }
        if line.starts_with('[') {
            current = None;
            continue;
        }
        if let Some(dir) = &current {
            if value_of(line, "trust_level").as_deref() == Some("trusted")
                && project.starts_with(dir)
            {
                return true;
            }
        }
    }
    false
}

/// The string value of `key = "…"` on `line`.
fn value_of(line: &str, key: &str) -> Option<String> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    Some(rest.strip_prefix('"')?.strip_suffix('"')?.to_string())
}

/// Doctor's verdict on a change whose presence alone says nothing: a trust block (the entry may
/// as well be Codex's own, written when the user trusted the hook) and the rules file (any sqz
/// may have written it). `None` for every other change.
pub(super) fn check(change: &Change, text: &str) -> Option<Result<(), String>> {
    match change {
        Change::Block { begin, body, .. } if is_trust_marker(begin) => {
            let (key, want) = parse_trust_table(body)?;
            Some(match stored_state(text, &key) {
                (_, true) => Err(format!("the sqz hook is turned off (enabled = false under {key})")),
                (Some(hash), false) if hash == want => Ok(()),
                (Some(_), false) => Err(format!(
                    "the sqz hook is not trusted: trusted_hash under {key} is for another entry, so Codex skips it silently (run sqz init)"
                )),
                (None, false) => Err(format!(
                    "the sqz hook is not trusted: no trusted_hash under {key}, so Codex skips it silently (run sqz init)"
                )),
            })
        }
        Change::Owned { marker, .. } if *marker == RULES_MARKER => {
            Some(match crate::hook::codex::rules_program(text) {
                Some(p) if Path::new(&p).is_file() => Ok(()),
                Some(p) => Err(format!(
                    "names {p}, which is gone; sqz hook codex leaves commands alone (run sqz init)"
                )),
                None => Err(
                    "not sqz's rules; sqz hook codex leaves commands alone (run sqz init)".into(),
                ),
            })
        }
        _ => None,
    }
}

/// The key and hash a trust block's body sets.
fn parse_trust_table(body: &str) -> Option<(String, String)> {
    let mut lines = body.lines();
    let header = lines
        .next()?
        .strip_prefix("[hooks.state.")?
        .strip_suffix(']')?;
    let key = crate::json::parse(header).ok()?.as_str()?.to_string();
    let hash = value_of(lines.next()?, "trusted_hash")?;
    Some((key, hash))
}

/// Doctor's note when the project is not trusted in Codex, which then ignores its
/// `.codex/hooks.json`; init says the same.
pub(super) fn untrusted_project(codex_home: &Path, project: &Path) -> Option<String> {
    let config = codex_home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    (!project_trusted(&text, project)).then(|| {
        format!(
            "Codex runs {} only in a trusted project: trust {} when Codex asks (or set trust_level = \"trusted\" under [projects.\"{}\"] in {})",
            project.join(".codex").join("hooks.json").display(),
            project.display(),
            project.display(),
            config.display()
        )
    })
}

/// The `sqz` the rewrite runs: this program, by its real path, so a login shell whose PATH
/// lacks it still finds it.
pub fn program() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let exe = exe.to_str()?.to_string();
    (!exe.contains(['"', '\\', '\n'])).then_some(exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash Codex 0.169's `hooks/list` reported as `currentHash` for
    /// `{"matcher":"Bash","hooks":[{"type":"command","command":"/tmp/cx/probe.sh","timeout":30}]}`.
    #[test]
    fn the_hash_is_the_one_codex_computes() {
        let doc = crate::json::parse(
            r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/tmp/cx/probe.sh","timeout":30}]}]}}"#,
        )
        .unwrap();
        let groups = doc.get("hooks").unwrap().get("PreToolUse").unwrap();
        let group = &groups.as_array().unwrap()[0];
        let handler = &group.get("hooks").unwrap().as_array().unwrap()[0];
        assert_eq!(
            handler_hash(Some("Bash"), handler),
            "sha256:ca0e31f1fb469e7cad6f01ab58a26aec96d1b8d23af022e7472689c056fad6e0"
        );
    }

    #[test]
    fn the_key_follows_the_entry_after_the_users_own() {
        let mut doc = crate::json::parse(
            r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"audit"}]}]}}"#,
        )
        .unwrap();
        hooks_add(&mut doc).unwrap();
        let once = doc.clone();
        hooks_add(&mut doc).unwrap();
        assert_eq!(doc, once);
        let (key, _) = trust(Path::new("/h/.codex/hooks.json"), &doc).unwrap();
        assert_eq!(key, "/h/.codex/hooks.json:pre_tool_use:1:0");
        assert!(hooks_remove(&mut doc));
        assert_eq!(position(&doc), None);
    }

    #[test]
    fn config_lines_are_read_back() {
        let config = "model = \"o3\"\n\n[projects.\"/work/app\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"/h/hooks.json:pre_tool_use:0:0\"]\nenabled = false\ntrusted_hash = \"sha256:ab\"\n[other]\ntrusted_hash = \"x\"\n";
        assert_eq!(
            stored_state(config, "/h/hooks.json:pre_tool_use:0:0"),
            (Some("sha256:ab".into()), true)
        );
        assert_eq!(
            stored_state(config, "/h/hooks.json:pre_tool_use:1:0"),
            (None, false)
        );
        assert!(project_trusted(config, Path::new("/work/app/sub")));
        assert!(!project_trusted(config, Path::new("/work/other")));
    }
}
