//! `sqz init` and `sqz uninstall`: the agent configuration sqz adds and removes (SPEC §7;
//! `doctor.rs` checks it). Every change is one of three kinds, each reversible on its own:
//! members merged into a JSON file (hooks, allow rules, MCP servers), a sentinel-bracketed block
//! in a text file, or a whole file sqz owns. A JSON file that does not parse strictly (comments,
//! trailing commas) is never rewritten: a paste-ready snippet is printed instead.
//!
//! Scope: by default the project in the current directory (`./.claude/settings.json`,
//! `./.mcp.json`, `./AGENTS.md`, …), because project files are where Claude Code, Gemini and
//! the rules-file clients look first and they can be committed; `--global` writes the user-level
//! files under HOME instead. Codex keeps MCP servers only in `~/.codex/config.toml`, so that
//! one is written in both scopes.

use crate::cli::Setup;
use crate::json::{self, Value};
use std::path::{Path, PathBuf};

pub(super) const CLIENTS: [&str; 10] = [
    "claude", "gemini", "copilot", "opencode", "codex", "kiro", "cursor", "windsurf", "cline",
    "zed",
];

const BEGIN_MD: &str = "<!-- sqz:begin -->";
const END_MD: &str = "<!-- sqz:end -->";
const BEGIN_TOML: &str = "# sqz:begin";
const END_TOML: &str = "# sqz:end";

/// Where the configuration goes.
pub(super) struct Scope {
    pub(super) home: PathBuf,
    pub(super) base: PathBuf,
    pub(super) global: bool,
}

impl Scope {
    pub(super) fn from_process(global: bool) -> Result<Scope, String> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or("HOME is not set")?;
        let base = if global {
            home.clone()
        } else {
            std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?
        };
        Ok(Scope { home, base, global })
    }

    fn claude_dir(&self) -> PathBuf {
        if self.global {
            if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
                return PathBuf::from(dir);
            }
        }
        self.base.join(".claude")
    }
}

/// One change to one file.
pub(super) enum Change {
    /// Members merged into a JSON object file.
    Json {
        path: PathBuf,
        add: fn(&mut Value) -> Merged,
        remove: fn(&mut Value) -> bool,
    },
    /// A sentinel-bracketed block in a text file others also write.
    Block {
        path: PathBuf,
        begin: &'static str,
        end: &'static str,
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
    pub(super) fn path(&self) -> &Path {
        match self {
            Change::Json { path, .. } | Change::Block { path, .. } | Change::Owned { path, .. } => {
                path
            }
        }
    }
}

pub(super) fn tier(client: &str) -> &'static str {
    match client {
        "claude" | "gemini" | "copilot" | "opencode" => "transparent",
        _ => "advisory",
    }
}

/// The client's config directory under HOME: its presence means the client is installed.
pub(super) fn found(client: &str, home: &Path) -> bool {
    marker_dirs(client).iter().any(|d| home.join(d).is_dir())
}

fn marker_dirs(client: &str) -> &'static [&'static str] {
    match client {
        "claude" => &[".claude"],
        "gemini" => &[".gemini"],
        "copilot" => &[".copilot"],
        "opencode" => &[".config/opencode"],
        "codex" => &[".codex"],
        "kiro" => &[".kiro"],
        "cursor" => &[".cursor"],
        "windsurf" => &[".codeium/windsurf", ".windsurf"],
        "cline" => &[".cline", "Documents/Cline"],
        "zed" => &[".config/zed"],
        _ => &[],
    }
}

/// After a removal: drops the directories left empty, up to the scope's root and never a
/// client's own config directory (its presence is how clients are found).
fn remove_empty_parents(path: &Path, scope: &Scope) {
    let markers: Vec<PathBuf> = CLIENTS
        .iter()
        .flat_map(|c| marker_dirs(c).iter().map(|d| scope.home.join(d)))
        .collect();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == scope.base || d == scope.home || markers.iter().any(|m| m == d) {
            break;
        }
        if !(d.starts_with(&scope.base) || d.starts_with(&scope.home)) {
            break;
        }
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Everything init writes for one client in this scope.
pub(super) fn changes(client: &str, scope: &Scope) -> Vec<Change> {
    let b = &scope.base;
    let h = &scope.home;
    match client {
        "claude" => vec![
            Change::Json {
                path: scope.claude_dir().join("settings.json"),
                add: claude_add,
                remove: claude_remove,
            },
            Change::Json {
                path: if scope.global {
                    h.join(".claude.json")
                } else {
                    b.join(".mcp.json")
                },
                add: mcp_add,
                remove: mcp_remove,
            },
        ],
        "gemini" => vec![Change::Json {
            path: b.join(".gemini").join("settings.json"),
            add: gemini_add,
            remove: gemini_remove,
        }],
        "copilot" => vec![Change::Owned {
            path: if scope.global {
                h.join(".copilot").join("hooks").join("sqz.json")
            } else {
                b.join(".github").join("hooks").join("sqz.json")
            },
            text: copilot_hooks(),
            marker: "sqz hook copilot",
        }],
        "opencode" => {
            let dir = if scope.global {
                h.join(".config").join("opencode")
            } else {
                b.to_path_buf()
            };
            let plugins = if scope.global {
                dir.join("plugins")
            } else {
                b.join(".opencode").join("plugins")
            };
            // opencode.jsonc wins when present; with comments it gets a snippet, not an edit.
            let jsonc = dir.join("opencode.jsonc");
            vec![
                Change::Owned {
                    path: plugins.join("sqz.ts"),
                    text: opencode_plugin(),
                    marker: "sqz:begin",
                },
                Change::Json {
                    path: if jsonc.is_file() {
                        jsonc
                    } else {
                        dir.join("opencode.json")
                    },
                    add: opencode_add,
                    remove: opencode_remove,
                },
            ]
        }
        "codex" => vec![
            Change::Block {
                path: if scope.global {
                    h.join(".codex").join("AGENTS.md")
                } else {
                    b.join("AGENTS.md")
                },
                begin: BEGIN_MD,
                end: END_MD,
                body: guidance(),
            },
            Change::Block {
                path: h.join(".codex").join("config.toml"),
                begin: BEGIN_TOML,
                end: END_TOML,
                body: "[mcp_servers.sqz]\ncommand = \"sqz\"\nargs = [\"mcp\"]\n".into(),
            },
        ],
        "kiro" => vec![
            Change::Owned {
                path: b.join(".kiro").join("steering").join("sqz.md"),
                text: format!("---\ninclusion: always\n---\n{BEGIN_MD}\n{}{END_MD}\n", guidance()),
                marker: BEGIN_MD,
            },
            Change::Json {
                path: b.join(".kiro").join("settings").join("mcp.json"),
                add: mcp_add,
                remove: mcp_remove,
            },
        ],
        "cursor" if !scope.global => vec![Change::Owned {
            path: b.join(".cursor").join("rules").join("sqz.mdc"),
            text: format!(
                "---\ndescription: How to read and expand sqz-compressed command output\nglobs:\nalwaysApply: true\n---\n{BEGIN_MD}\n{}{END_MD}\n",
                guidance()
            ),
            marker: BEGIN_MD,
        }],
        "windsurf" => vec![if scope.global {
            Change::Block {
                path: h.join(".codeium/windsurf/memories/global_rules.md"),
                begin: BEGIN_MD,
                end: END_MD,
                body: guidance(),
            }
        } else {
            Change::Owned {
                path: b.join(".windsurf").join("rules").join("sqz.md"),
                text: format!("---\ntrigger: always_on\n---\n{BEGIN_MD}\n{}{END_MD}\n", guidance()),
                marker: BEGIN_MD,
            }
        }],
        "cline" => {
            let dir = if scope.global {
                h.join("Documents").join("Cline").join("Rules")
            } else {
                b.join(".clinerules")
            };
            if dir.is_file() {
                // A single `.clinerules` file: a block inside it.
                vec![Change::Block {
                    path: dir,
                    begin: BEGIN_MD,
                    end: END_MD,
                    body: guidance(),
                }]
            } else {
                vec![Change::Owned {
                    path: dir.join("sqz.md"),
                    text: format!("{BEGIN_MD}\n{}{END_MD}\n", guidance()),
                    marker: BEGIN_MD,
                }]
            }
        }
        "zed" => vec![
            Change::Json {
                path: if scope.global {
                    h.join(".config").join("zed").join("settings.json")
                } else {
                    b.join(".zed").join("settings.json")
                },
                add: zed_add,
                remove: zed_remove,
            },
            // Zed reads the first rules file it finds; `.rules` when the project has one, else
            // AGENTS.md, where the block is the same one Codex gets.
            Change::Block {
                path: if scope.global {
                    h.join(".config").join("zed").join("AGENTS.md")
                } else if b.join(".rules").is_file() {
                    b.join(".rules")
                } else {
                    b.join("AGENTS.md")
                },
                begin: BEGIN_MD,
                end: END_MD,
                body: guidance(),
            },
        ],
        _ => Vec::new(),
    }
}

/// The guidance every advisory client gets, and the one text that explains sqz's markers.
const GUIDANCE: &[&str] = &[
    "## sqz: compressed command output",
    "",
    "sqz shortens command output before you read it. Nothing is lost: every shortening can be expanded.",
    "",
    "- Pipe commands with long or repetitive output (builds, tests, logs, `git log`, `find`, JSON)",
    "  through sqz, keeping the exit status:",
    "  `{ CMD 2>&1; printf '\\n__SQZ_EXIT_%d__\\n' \"$?\"; } | sqz compress --cmd 'CMD'`.",
    "  Short, interactive or state-changing commands (`cd`, `export`) need no sqz.",
    "- For long files, large searches and directory listings, and for anything you read more than",
    "  once, prefer the sqz MCP tools `sqz_read_file`, `sqz_grep` and `sqz_list_dir`.",
    "- `§ref:HASH§` stands for output you were already shown in this session, unchanged.",
    "  `§ref:HASH:La-b§` stands for lines a to b of such an output.",
    "  `§delta:HASH§` is followed by only what changed since that output: `-` removed lines,",
    "  `+` added lines, ` @@ skip N unchanged lines @@`.",
    "  `[… N … lines · sqz expand HASH:La-b]` marks N lines left out at that place.",
    "- To see the original bytes, run `sqz expand HASH` (or `sqz expand HASH:La-b` for some lines).",
    "- To get a command's output without references, run it with `SQZ_NO_DEDUP=1` or pipe it",
    "  through `sqz compress --no-cache`; leave out the sqz pipe to get the raw output.",
];

pub fn guidance() -> String {
    GUIDANCE.iter().map(|l| format!("{l}\n")).collect()
}

fn copilot_hooks() -> String {
    let mut hook = Value::object();
    hook.set("type", Value::str("command"));
    hook.set("bash", Value::str("sqz hook copilot"));
    hook.set("timeoutSec", Value::int(30));
    let mut hooks = Value::object();
    hooks.set("preToolUse", Value::Array(vec![hook]));
    let mut doc = Value::object();
    doc.set("version", Value::int(1));
    doc.set("hooks", hooks);
    pretty(&doc)
}

/// The OpenCode plugin, the same file `sqz print-opencode-plugin` prints, calling `sqz` on PATH
/// like every other config init writes.
fn opencode_plugin() -> String {
    // The marker line tells uninstall this file is sqz's own.
    let mut text =
        String::from("// sqz:begin — written by `sqz init`; `sqz uninstall` removes this file.\n");
    text.push_str(&crate::hook::opencode::plugin("sqz"));
    text
}

fn pretty(v: &Value) -> String {
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

/// `Err` names a member that holds something other than what sqz would merge into.
type Merged = Result<(), String>;

/// Ensures exactly one `{matcher, hooks:[command]}` handler for `command` under `event`:
/// one already there is left where it stands; none or duplicates become one appended entry.
/// Stale sqz handlers under `event` (another sqz command or path) are dropped first.
fn ensure_hook(doc: &mut Value, event: &str, matcher: Option<&str>, command: &str) -> Merged {
    remove_hooks(doc, event, |h| {
        is_ours(h) && h.get("command").and_then(Value::as_str) != Some(command)
    });
    if count_hooks(doc, event, command) == 1 {
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
fn remove_hooks(doc: &mut Value, event: &str, pred: impl Fn(&Value) -> bool) -> bool {
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

const CLAUDE_HOOKS: [(&str, Option<&str>, &str); 4] = [
    ("PreToolUse", Some("Bash"), "sqz hook claude"),
    ("PostToolUse", Some("Bash"), "sqz hook claude-post"),
    ("PreCompact", None, "sqz hook precompact"),
    ("SessionStart", Some("compact"), "sqz resume"),
];

fn claude_add(doc: &mut Value) -> Merged {
    for (event, matcher, command) in CLAUDE_HOOKS {
        ensure_hook(doc, event, matcher, command)?;
    }
    let perms = object_at(doc, "permissions").ok_or("`permissions` is not an object")?;
    let allow = array_at(perms, "allow").ok_or("`permissions.allow` is not an array")?;
    for rule in crate::hook::rewrite::ALLOW_RULES {
        if !allow.iter().any(|r| r.as_str() == Some(rule)) {
            allow.push(Value::str(rule));
        }
    }
    Ok(())
}

fn claude_remove(doc: &mut Value) -> bool {
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
            !r.as_str()
                .is_some_and(|r| crate::hook::rewrite::ALLOW_RULES.contains(&r))
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

fn mcp_add(doc: &mut Value) -> Merged {
    set_server(doc, "mcpServers", sqz_server())
}

fn mcp_remove(doc: &mut Value) -> bool {
    remove_server(doc, "mcpServers")
}

fn gemini_add(doc: &mut Value) -> Merged {
    ensure_hook(
        doc,
        "BeforeTool",
        Some("run_shell_command"),
        "sqz hook gemini",
    )
}

fn gemini_remove(doc: &mut Value) -> bool {
    remove_hooks(doc, "BeforeTool", is_ours)
}

fn opencode_add(doc: &mut Value) -> Merged {
    let mut s = Value::object();
    s.set("type", Value::str("local"));
    s.set(
        "command",
        Value::Array(vec![Value::str("sqz"), Value::str("mcp")]),
    );
    s.set("enabled", Value::Bool(true));
    set_server(doc, "mcp", s)
}

fn opencode_remove(doc: &mut Value) -> bool {
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

fn zed_add(doc: &mut Value) -> Merged {
    set_server(doc, "context_servers", zed_server())
}

fn zed_remove(doc: &mut Value) -> bool {
    remove_server(doc, "context_servers")
}

/// `text` with the block set to `body` (replacing an existing one in place, else appended).
fn with_block(text: &str, begin: &str, end: &str, body: &str) -> String {
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

/// `text` without the block and the blank line init put before it.
fn without_block(text: &str, begin: &str, end: &str) -> Option<String> {
    let (mut start, stop) = find_block(text, begin, end)?;
    if stop == text.len() && text[..start].ends_with("\n\n") {
        start -= 1;
    }
    Some(format!("{}{}", &text[..start], &text[stop..]))
}

/// What applying one change would make of its file.
pub(super) enum Outcome {
    Same,
    Write(String),
    Delete,
    /// Left alone; the reason and a snippet to paste.
    Manual(String),
}

pub(super) fn read(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

pub(super) fn plan(change: &Change, install: bool) -> Result<Outcome, String> {
    let current = read(change.path())?;
    match change {
        Change::Json { add, remove, .. } => {
            let text = current.unwrap_or_default();
            let mut doc = if text.trim().is_empty() {
                Value::object()
            } else {
                match json::parse(&text) {
                    Ok(doc) if doc.as_object().is_some() => doc,
                    Ok(_) => {
                        return Ok(manual(
                            change,
                            install,
                            "the top level is not a JSON object",
                        ))
                    }
                    Err(e) => return Ok(manual(change, install, &format!("not plain JSON ({e})"))),
                }
            };
            if install {
                if let Err(why) = add(&mut doc) {
                    return Ok(manual(change, install, &why));
                }
                let out = pretty(&doc);
                if text.trim().is_empty() || json::parse(&text).ok().as_ref() != Some(&doc) {
                    return Ok(Outcome::Write(out));
                }
                Ok(Outcome::Same)
            } else if remove(&mut doc) {
                if doc.as_object().is_some_and(|o| o.is_empty()) {
                    Ok(Outcome::Delete)
                } else {
                    Ok(Outcome::Write(pretty(&doc)))
                }
            } else {
                Ok(Outcome::Same)
            }
        }
        Change::Block {
            begin, end, body, ..
        } => {
            let text = current.unwrap_or_default();
            if install {
                let first = body.lines().next().unwrap_or("");
                if *begin == BEGIN_TOML
                    && find_block(&text, begin, end).is_none()
                    && text.lines().any(|l| l.trim() == first)
                {
                    return Ok(Outcome::Manual(format!(
                        "{} already has {first} outside sqz's markers; left alone",
                        change.path().display()
                    )));
                }
                let out = with_block(&text, begin, end, body);
                Ok(if out == text {
                    Outcome::Same
                } else {
                    Outcome::Write(out)
                })
            } else {
                match without_block(&text, begin, end) {
                    Some(out) if out.trim().is_empty() => Ok(Outcome::Delete),
                    Some(out) => Ok(Outcome::Write(out)),
                    None => Ok(Outcome::Same),
                }
            }
        }
        Change::Owned { text, marker, .. } => match (install, current) {
            (true, Some(cur)) if cur == *text => Ok(Outcome::Same),
            (true, Some(cur)) if !cur.contains(marker) => Ok(Outcome::Manual(format!(
                "{} exists and was not written by sqz; left alone",
                change.path().display()
            ))),
            (true, _) => Ok(Outcome::Write(text.clone())),
            (false, Some(cur)) if cur.contains(marker) => Ok(Outcome::Delete),
            (false, _) => Ok(Outcome::Same),
        },
    }
}

fn manual(change: &Change, install: bool, why: &str) -> Outcome {
    let Change::Json { add, .. } = change else {
        return Outcome::Manual(why.to_string());
    };
    let path = change.path().display();
    if !install {
        return Outcome::Manual(format!(
            "{path}: {why}; left alone: remove the sqz entries by hand"
        ));
    }
    let mut snippet = Value::object();
    let _ = add(&mut snippet);
    Outcome::Manual(format!(
        "{path}: {why}; left alone. Merge this into it:\n{}",
        pretty(&snippet)
    ))
}

/// Writes through a temporary file in the same directory, then renames over the target.
/// A symlinked config (dotfile managers) is written through to its target, and an existing
/// file keeps its permissions: `~/.claude.json` holds credentials.
fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let tmp = target.with_file_name(format!(".{name}.sqz-{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| match std::fs::metadata(&target) {
        Ok(meta) => std::fs::set_permissions(&tmp, meta.permissions()),
        Err(_) => Ok(()),
    });
    written
        .and_then(|()| std::fs::rename(&tmp, &target))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail(e)
        })
}

/// Clients to act on: `--only` as given, else found ones (or, for uninstall, all) minus `--skip`.
fn selected(setup: &Setup, home: &Path, all: bool) -> Result<Vec<&'static str>, String> {
    for name in setup.only.iter().chain(&setup.skip) {
        if !CLIENTS.contains(&name.as_str()) {
            return Err(format!(
                "unknown client '{name}' (clients: {})",
                CLIENTS.join(", ")
            ));
        }
    }
    Ok(CLIENTS
        .into_iter()
        .filter(|c| {
            if setup.only.is_empty() {
                all || found(c, home)
            } else {
                setup.only.iter().any(|o| o == c)
            }
        })
        .filter(|c| !setup.skip.iter().any(|s| s == c))
        .collect())
}

/// Applies (or with `dry_run` prints) every change for `clients`; returns the exit status.
pub(super) fn apply(clients: &[&str], scope: &Scope, install: bool, dry_run: bool) -> i32 {
    let mut status = 0;
    let mut out = String::new();
    for client in clients {
        let list = changes(client, scope);
        if list.is_empty() {
            out.push_str(&format!("{client:<9} nothing to write in this scope\n"));
        }
        for change in &list {
            let path = change.path();
            let shown = path.display();
            match plan(change, install) {
                Err(e) => {
                    eprintln!("sqz: {client}: {e}");
                    status = 1;
                }
                Ok(Outcome::Same) if install || path.exists() => {
                    out.push_str(&format!("{client:<9} unchanged {shown}\n"))
                }
                Ok(Outcome::Same) => {}
                Ok(Outcome::Manual(msg)) => {
                    out.push_str(&format!("{client:<9} {msg}\n"));
                    status = status.max(1);
                }
                Ok(Outcome::Write(text)) if dry_run => {
                    out.push_str(&format!("{client:<9} would write {shown}:\n{text}"));
                    if !text.ends_with('\n') {
                        out.push('\n');
                    }
                }
                Ok(Outcome::Delete) if dry_run => {
                    out.push_str(&format!("{client:<9} would remove {shown}\n"))
                }
                Ok(Outcome::Write(text)) => match write_atomic(path, &text) {
                    Ok(()) => out.push_str(&format!("{client:<9} wrote {shown}\n")),
                    Err(e) => {
                        eprintln!("sqz: {client}: {e}");
                        status = 1;
                    }
                },
                Ok(Outcome::Delete) => match std::fs::remove_file(path) {
                    Ok(()) => {
                        remove_empty_parents(path, scope);
                        out.push_str(&format!("{client:<9} removed {shown}\n"))
                    }
                    Err(e) => {
                        eprintln!("sqz: {client}: cannot remove {shown}: {e}");
                        status = 1;
                    }
                },
            }
        }
    }
    if clients.is_empty() {
        out.push_str("no agent found under HOME (name one with --only CLIENT)\n");
    }
    super::write_stdout(out.as_bytes());
    status
}

pub fn init(setup: &Setup) -> i32 {
    run(setup, true)
}

pub fn uninstall(setup: &Setup) -> i32 {
    run(setup, false)
}

fn run(setup: &Setup, install: bool) -> i32 {
    let scope = match Scope::from_process(setup.global) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sqz: {e}");
            return 2;
        }
    };
    match selected(setup, &scope.home, !install) {
        Ok(clients) => apply(&clients, &scope, install, setup.dry_run),
        Err(e) => {
            eprintln!("sqz: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_round_trips() {
        let text = "# Mine\n\nmy notes\n";
        let with = with_block(text, BEGIN_MD, END_MD, "body\n");
        assert_eq!(with_block(&with, BEGIN_MD, END_MD, "body\n"), with);
        assert_eq!(without_block(&with, BEGIN_MD, END_MD).unwrap(), text);
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
