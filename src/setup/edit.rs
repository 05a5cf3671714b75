//! The edits themselves, pure functions of a file's text: sqz's members merged into and removed
//! from a JSON document, and a sentinel-bracketed block set in or taken out of a text file.

use crate::json::Value;
use std::path::{Path, PathBuf};

pub(super) fn pretty(v: &Value) -> String {
    let mut s = v.to_pretty();
    s.push('\n');
    s
}

fn handler(command: &str) -> Value {
    let mut h = Value::object();
    h.set("type", Value::str("command"));
    h.set("command", Value::str(command));
    h
}

pub(super) fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .and_then(|c| c.split_whitespace().next())
        .is_some_and(|program| program == "sqz" || program.ends_with("/sqz"))
}

/// The object at `key`, created (appended) when missing; `None` if it holds something else.
fn object_at<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    if v.get(key).is_none() {
        v.set(key, Value::object());
    }
    v.get_mut(key).filter(|o| o.as_object().is_some())
}

fn array_at<'a>(v: &'a mut Value, key: &str) -> Option<&'a mut Vec<Value>> {
    if v.get(key).is_none() {
        v.set(key, Value::Array(Vec::new()));
    }
    v.get_mut(key)?.as_array_mut()
}

/// Handlers of `event` whose command is `command`, across all entries.
pub(super) fn count_hooks(doc: &Value, event: &str, command: &str) -> usize {
    let Some(entries) = doc
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array)
    else {
        return 0;
    };
    entries
        .iter()
        .filter_map(|e| e.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter(|h| h.get("command").and_then(Value::as_str) == Some(command))
        .count()
}

/// The matcher of the entry that holds `command` under `event` (the first, if several).
fn matcher_of<'a>(doc: &'a Value, event: &str, command: &str) -> Option<&'a str> {
    doc.get("hooks")?
        .get(event)?
        .as_array()?
        .iter()
        .find(|e| {
            e.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                hs.iter()
                    .any(|h| h.get("command").and_then(Value::as_str) == Some(command))
            })
        })?
        .get("matcher")
        .and_then(Value::as_str)
}

/// `Err` names a member that holds something other than what sqz would merge into.
pub type Merged = Result<(), String>;

/// Ensures exactly one `{matcher, hooks:[command]}` handler for `command` under `event`:
/// one already there is left where it stands; none or duplicates become one appended entry.
/// Stale sqz handlers under `event` (another sqz command or path) are dropped first.
pub(super) fn ensure_hook(
    doc: &mut Value,
    event: &str,
    matcher: Option<&str>,
    command: &str,
) -> Merged {
    remove_hooks(doc, event, |h| {
        is_ours(h) && h.get("command").and_then(Value::as_str) != Some(command)
    });
    if count_hooks(doc, event, command) == 1 && matcher_of(doc, event, command) == matcher {
        return Ok(());
    }
    remove_hooks(doc, event, |h| {
        h.get("command").and_then(Value::as_str) == Some(command)
    });
    let hooks = object_at(doc, "hooks").ok_or("`hooks` is not an object")?;
    let entries = array_at(hooks, event).ok_or(format!("`hooks.{event}` is not an array"))?;
    let mut entry = Value::object();
    if let Some(m) = matcher {
        entry.set("matcher", Value::str(m));
    }
    entry.set("hooks", Value::Array(vec![handler(command)]));
    entries.push(entry);
    Ok(())
}

/// Removes matching handlers under `event`, then entries, arrays and objects left empty by it.
pub(super) fn remove_hooks(doc: &mut Value, event: &str, pred: impl Fn(&Value) -> bool) -> bool {
    let Some(entries) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut(event))
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let mut removed = false;
    entries.retain_mut(|entry| {
        let Some(handlers) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = handlers.len();
        handlers.retain(|h| !pred(h));
        if handlers.len() == before {
            return true;
        }
        removed = true;
        !handlers.is_empty()
    });
    if removed {
        prune(doc, &["hooks", event]);
    }
    removed
}

/// Drops `path`'s last member if it is an empty array/object, then its parents likewise.
fn prune(doc: &mut Value, path: &[&str]) {
    for depth in (1..=path.len()).rev() {
        let (parents, last) = path[..depth].split_at(depth - 1);
        let mut at = &mut *doc;
        for key in parents {
            match at.get_mut(key) {
                Some(v) => at = v,
                None => return,
            }
        }
        let empty = match at.get(last[0]) {
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            _ => false,
        };
        if !empty {
            return;
        }
        at.remove(last[0]);
    }
}

/// The tools `sqz hook claude-post` is registered for.
pub const POST_MATCHER: &str = "^(Bash|Read|Grep|Glob|Write|Edit)$";

const CLAUDE_HOOKS: [(&str, Option<&str>, &str); 4] = [
    ("PreToolUse", Some("Bash"), "sqz hook claude"),
    // Bash output, and the file tools whose results can be references or deltas (Read, Grep,
    // Glob) or that tell sqz what the agent wrote (Write, Edit). Anchored: a Claude Code
    // matcher that is not a plain name is an unanchored regex, and `Edit` would match
    // `NotebookEdit`.
    ("PostToolUse", Some(POST_MATCHER), "sqz hook claude-post"),
    ("PreCompact", None, "sqz hook precompact"),
    ("SessionStart", Some("compact"), "sqz resume"),
];

pub(super) fn claude_add(doc: &mut Value) -> Merged {
    for (event, matcher, command) in CLAUDE_HOOKS {
        ensure_hook(doc, event, matcher, command)?;
    }
    let perms = object_at(doc, "permissions").ok_or("`permissions` is not an object")?;
    let allow = array_at(perms, "allow").ok_or("`permissions.allow` is not an array")?;
    // The trailer rules of earlier installs give way to the pipefail rule.
    allow.retain(|r| {
        !r.as_str()
            .is_some_and(|r| crate::hook::rewrite::OLD_RULES.contains(&r))
    });
    let rules = crate::hook::rewrite::ALLOW_RULES
        .into_iter()
        .chain(crate::hook::rewrite::EXPAND_RULES);
    for rule in rules {
        if !allow.iter().any(|r| r.as_str() == Some(rule)) {
            allow.push(Value::str(rule));
        }
    }
    Ok(())
}

pub(super) fn claude_remove(doc: &mut Value) -> bool {
    let mut removed = false;
    for (event, _, _) in CLAUDE_HOOKS {
        removed |= remove_hooks(doc, event, is_ours);
    }
    if let Some(allow) = doc
        .get_mut("permissions")
        .and_then(|p| p.get_mut("allow"))
        .and_then(Value::as_array_mut)
    {
        let before = allow.len();
        allow.retain(|r| {
            !r.as_str().is_some_and(|r| {
                crate::hook::rewrite::ALLOW_RULES.contains(&r)
                    || crate::hook::rewrite::EXPAND_RULES.contains(&r)
                    || crate::hook::rewrite::OLD_RULES.contains(&r)
            })
        });
        if allow.len() != before {
            removed = true;
            prune(doc, &["permissions", "allow"]);
        }
    }
    removed
}

fn sqz_server() -> Value {
    let mut s = Value::object();
    s.set("command", Value::str("sqz"));
    s.set("args", Value::Array(vec![Value::str("mcp")]));
    s
}

fn set_server(doc: &mut Value, key: &str, server: Value) -> Merged {
    let servers = object_at(doc, key).ok_or(format!("`{key}` is not an object"))?;
    if servers.get("sqz") != Some(&server) {
        servers.set("sqz", server);
    }
    Ok(())
}

fn remove_server(doc: &mut Value, key: &str) -> bool {
    let removed = doc.get_mut(key).and_then(|s| s.remove("sqz")).is_some();
    if removed {
        prune(doc, &[key]);
    }
    removed
}

pub(super) fn mcp_add(doc: &mut Value) -> Merged {
    set_server(doc, "mcpServers", sqz_server())
}

pub(super) fn mcp_remove(doc: &mut Value) -> bool {
    remove_server(doc, "mcpServers")
}

/// Claude Code's approval of the project's `.mcp.json` server `sqz`, in the project's local
/// settings, where the client records the same answer from its own dialog: without it the
/// client asks, and the preselected answer leaves the server off.
pub(super) fn claude_mcp_approve(doc: &mut Value) -> Merged {
    let approved =
        array_at(doc, "enabledMcpjsonServers").ok_or("`enabledMcpjsonServers` is not an array")?;
    if !approved.iter().any(|s| s.as_str() == Some("sqz")) {
        approved.push(Value::str("sqz"));
    }
    Ok(())
}

pub(super) fn claude_mcp_unapprove(doc: &mut Value) -> bool {
    let Some(approved) = doc
        .get_mut("enabledMcpjsonServers")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let before = approved.len();
    approved.retain(|s| s.as_str() != Some("sqz"));
    let removed = approved.len() != before;
    if removed {
        prune(doc, &["enabledMcpjsonServers"]);
    }
    removed
}

/// Gemini's hook: `AfterTool` on the shell tool. Installs made before it had a `BeforeTool`
/// rewrite, which made the client ask and append a notice; it is removed.
pub(super) const GEMINI_HOOK: (&str, &str, &str) =
    ("AfterTool", "run_shell_command", "sqz hook gemini");

pub(super) fn gemini_add(doc: &mut Value) -> Merged {
    remove_hooks(doc, "BeforeTool", is_ours);
    let (event, matcher, command) = GEMINI_HOOK;
    ensure_hook(doc, event, Some(matcher), command)
}

pub(super) fn gemini_remove(doc: &mut Value) -> bool {
    let before = remove_hooks(doc, "BeforeTool", is_ours);
    remove_hooks(doc, GEMINI_HOOK.0, is_ours) || before
}

pub(super) fn opencode_add(doc: &mut Value) -> Merged {
    let mut s = Value::object();
    s.set("type", Value::str("local"));
    s.set(
        "command",
        Value::Array(vec![Value::str("sqz"), Value::str("mcp")]),
    );
    s.set("enabled", Value::Bool(true));
    set_server(doc, "mcp", s)
}

pub(super) fn opencode_remove(doc: &mut Value) -> bool {
    remove_server(doc, "mcp")
}

fn zed_server() -> Value {
    let mut s = Value::object();
    s.set("source", Value::str("custom"));
    s.set("command", Value::str("sqz"));
    s.set("args", Value::Array(vec![Value::str("mcp")]));
    s.set("env", Value::object());
    s
}

pub(super) fn zed_add(doc: &mut Value) -> Merged {
    set_server(doc, "context_servers", zed_server())
}

pub(super) fn zed_remove(doc: &mut Value) -> bool {
    remove_server(doc, "context_servers")
}

/// `text` with the block set to `body` (replacing an existing one in place, else appended).
pub(super) fn with_block(text: &str, begin: &str, end: &str, body: &str) -> String {
    let block = format!("{begin}\n{body}{end}\n");
    if let Some((start, stop)) = find_block(text, begin, end) {
        return format!("{}{block}{}", &text[..start], &text[stop..]);
    }
    let mut out = text.to_string();
    if !out.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(&block);
    out
}

/// Byte range of the block, from its begin line to after its end line's newline.
pub(super) fn find_block(text: &str, begin: &str, end: &str) -> Option<(usize, usize)> {
    let start = text.find(begin)?;
    let end_at = start + text[start..].find(end)?;
    let mut stop = end_at + end.len();
    if text[stop..].starts_with('\n') {
        stop += 1;
    }
    Some((start, stop))
}

/// `text` without the block and the blank line init put before it (wherever the block now
/// stands: Codex's config.toml gets several, and the user may add tables after them).
pub(super) fn without_block(text: &str, begin: &str, end: &str) -> Option<String> {
    let (mut start, stop) = find_block(text, begin, end)?;
    if text[..start].ends_with("\n\n") {
        start -= 1;
    }
    Some(format!("{}{}", &text[..start], &text[stop..]))
}

/// One change to one file.
pub enum Change {
    /// Members merged into a JSON object file.
    Json {
        path: PathBuf,
        add: fn(&mut Value) -> Merged,
        remove: fn(&mut Value) -> bool,
    },
    /// A sentinel-bracketed block in a text file others also write.
    Block {
        path: PathBuf,
        begin: String,
        end: String,
        body: String,
    },
    /// A file sqz creates and owns whole; `marker` in it proves it is ours.
    Owned {
        path: PathBuf,
        text: String,
        marker: &'static str,
    },
}

impl Change {
    pub fn path(&self) -> &Path {
        match self {
            Change::Json { path, .. } | Change::Block { path, .. } | Change::Owned { path, .. } => {
                path
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use crate::setup::clients::{BEGIN_MD, END_MD};

    #[test]
    fn block_round_trips() {
        let text = "# Mine\n\nmy notes\n";
        let with = with_block(text, BEGIN_MD, END_MD, "body\n");
        assert_eq!(with_block(&with, BEGIN_MD, END_MD, "body\n"), with);
        assert_eq!(without_block(&with, BEGIN_MD, END_MD).unwrap(), text);
    }

    #[test]
    fn gemini_moves_an_old_rewrite_to_after_tool_and_back_out() {
        let mine = r#"{"hooks":{"BeforeTool":[{"matcher":"write_file","hooks":[{"type":"command","command":"lint"}]}]},"ui":{"theme":"x"}}"#;
        let original = json::parse(mine).unwrap();
        let mut old = original.clone();
        ensure_hook(
            &mut old,
            "BeforeTool",
            Some("run_shell_command"),
            "sqz hook gemini",
        )
        .unwrap();
        let mut doc = old.clone();
        gemini_add(&mut doc).unwrap();
        assert_eq!(
            doc.to_compact(),
            r#"{"hooks":{"BeforeTool":[{"matcher":"write_file","hooks":[{"type":"command","command":"lint"}]}],"AfterTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"sqz hook gemini"}]}]},"ui":{"theme":"x"}}"#
        );
        let once = doc.clone();
        gemini_add(&mut doc).unwrap();
        assert_eq!(doc, once);
        assert!(gemini_remove(&mut doc));
        assert_eq!(doc, original);
        assert!(gemini_remove(&mut old));
        assert_eq!(old, original);
    }

    #[test]
    fn claude_merge_is_idempotent_and_reversible() {
        let original = json::parse(
            r#"{"env":{"A":"1"},"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"lint"}]}]},"permissions":{"allow":["Bash(ls:*)"]}}"#,
        )
        .unwrap();
        let mut doc = original.clone();
        claude_add(&mut doc).unwrap();
        let once = doc.clone();
        claude_add(&mut doc).unwrap();
        assert_eq!(doc, once);
        assert!(claude_remove(&mut doc));
        assert_eq!(doc, original);
    }
}
