//! The client table: which agent clients sqz knows, how each is found, and which changes each
//! one gets in a scope.

use super::codex;
use super::edit::{
    claude_add, claude_mcp_approve, claude_mcp_unapprove, claude_remove, gemini_add, gemini_remove,
    mcp_add, mcp_remove, opencode_add, opencode_remove, pretty, zed_add, zed_remove, Change,
};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::json::Value;
use std::path::{Path, PathBuf};

/// Every client sqz can configure, in the order init, uninstall and doctor go through them.
pub const CLIENTS: [&str; 10] = [
    "claude", "gemini", "copilot", "opencode", "codex", "kiro", "cursor", "windsurf", "cline",
    "zed",
];

pub(super) const BEGIN_MD: &str = "<!-- sqz:begin -->";
pub(super) const END_MD: &str = "<!-- sqz:end -->";
pub(super) const BEGIN_TOML: &str = "# sqz:begin";
pub(super) const END_TOML: &str = "# sqz:end";

/// Where the configuration goes.
#[derive(Clone)]
pub struct Scope {
    pub home: PathBuf,
    /// The project directory, or HOME for the global scope.
    pub base: PathBuf,
    pub global: bool,
    /// Claude Code's settings directory in this scope.
    claude_dir: PathBuf,
    /// `CLAUDE_CONFIG_DIR`, in either scope.
    claude_config: Option<PathBuf>,
    /// Codex's user directory (`$CODEX_HOME`, else `~/.codex`), in both scopes.
    pub codex_home: PathBuf,
}

impl Scope {
    /// The project in the working directory `cwd` (as the command read it), or with `global`
    /// the user-level files under HOME, Claude Code's under CLAUDE_CONFIG_DIR when that is set.
    pub fn new(env: &Env, cwd: &Result<PathBuf>, global: bool) -> Result<Scope> {
        let home = env
            .home
            .clone()
            .ok_or_else(|| Error::usage("HOME is not set"))?;
        let (base, claude_dir) = if global {
            let claude_dir = env
                .claude_config_dir
                .clone()
                .unwrap_or_else(|| home.join(".claude"));
            (home.clone(), claude_dir)
        } else {
            let cwd = cwd.clone()?;
            let claude_dir = cwd.join(".claude");
            (cwd, claude_dir)
        };
        let codex_home = env
            .codex_home
            .clone()
            .unwrap_or_else(|| home.join(".codex"));
        // Codex names its files by its home's real path; so do the trust entries.
        let codex_home = std::fs::canonicalize(&codex_home).unwrap_or(codex_home);
        Ok(Scope {
            home,
            base,
            global,
            claude_dir,
            claude_config: env.claude_config_dir.clone(),
            codex_home,
        })
    }
}

impl Scope {
    /// `CLAUDE_CONFIG_DIR`, where Claude Code keeps its user-level files when it is set.
    pub fn claude_config_dir(&self) -> Option<&Path> {
        self.claude_config.as_deref()
    }
}

/// `transparent` clients get hooks that compress on their own; `advisory` ones get guidance.
pub fn tier(client: &str) -> &'static str {
    match client {
        "claude" | "gemini" | "copilot" | "opencode" | "codex" => "transparent",
        _ => "advisory",
    }
}

/// The client's config directory under HOME: its presence means the client is installed.
pub fn found(client: &str, home: &Path) -> bool {
    marker_dirs(client).iter().any(|d| home.join(d).is_dir())
}

pub(super) fn marker_dirs(client: &str) -> &'static [&'static str] {
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

/// Clients to act on: `only` as given, else found ones (or with `all`, every one) minus `skip`.
/// A name that is no client is a usage error.
pub fn selected(
    only: &[String],
    skip: &[String],
    home: &Path,
    all: bool,
) -> Result<Vec<&'static str>> {
    for name in only.iter().chain(skip) {
        if !CLIENTS.contains(&name.as_str()) {
            return Err(Error::usage(format!(
                "unknown client '{name}' (clients: {})",
                CLIENTS.join(", ")
            )));
        }
    }
    Ok(CLIENTS
        .into_iter()
        .filter(|c| {
            if only.is_empty() {
                all || found(c, home)
            } else {
                only.iter().any(|o| o == c)
            }
        })
        .filter(|c| !skip.iter().any(|s| s == c))
        .collect())
}

/// Everything init writes for one client in this scope.
pub fn changes(client: &str, scope: &Scope) -> Vec<Change> {
    let b = &scope.base;
    let h = &scope.home;
    match client {
        "claude" if scope.global => vec![
            Change::Json {
                path: scope.claude_dir.join("settings.json"),
                add: claude_add,
                remove: claude_remove,
            },
            Change::Json {
                path: h.join(".claude.json"),
                add: mcp_add,
                remove: mcp_remove,
            },
        ],
        "claude" => vec![
            Change::Json {
                path: scope.claude_dir.join("settings.json"),
                add: claude_add,
                remove: claude_remove,
            },
            Change::Json {
                path: b.join(".mcp.json"),
                add: mcp_add,
                remove: mcp_remove,
            },
            Change::Json {
                path: scope.claude_dir.join("settings.local.json"),
                add: claude_mcp_approve,
                remove: claude_mcp_unapprove,
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
        "codex" => codex_changes(scope),
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
                begin: BEGIN_MD.into(),
                end: END_MD.into(),
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
                    begin: BEGIN_MD.into(),
                    end: END_MD.into(),
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
                begin: BEGIN_MD.into(),
                end: END_MD.into(),
                body: guidance(),
            },
        ],
        _ => Vec::new(),
    }
}

/// Codex: guidance in AGENTS.md, the hook in `hooks.json`, the rules file the rewrite needs,
/// and in `config.toml` the MCP server and the hook's trust entry (user files in both scopes).
fn codex_changes(scope: &Scope) -> Vec<Change> {
    let codex = &scope.codex_home;
    let hooks_json = if scope.global {
        codex.join("hooks.json")
    } else {
        scope.base.join(".codex").join("hooks.json")
    };
    let mut list = vec![
        Change::Block {
            path: if scope.global {
                codex.join("AGENTS.md")
            } else {
                scope.base.join("AGENTS.md")
            },
            begin: BEGIN_MD.into(),
            end: END_MD.into(),
            body: guidance(),
        },
        Change::Json {
            path: hooks_json.clone(),
            add: codex::hooks_add,
            remove: codex::hooks_remove,
        },
    ];
    if let Some(program) = codex::program() {
        list.push(Change::Owned {
            path: codex.join("rules").join(crate::hook::codex::RULES_FILE),
            text: crate::hook::codex::rules(&program),
            marker: crate::hook::codex::RULES_MARKER,
        });
    }
    list.push(Change::Block {
        path: codex.join("config.toml"),
        begin: BEGIN_TOML.into(),
        end: END_TOML.into(),
        body: "[mcp_servers.sqz]\ncommand = \"sqz\"\nargs = [\"mcp\"]\n".into(),
    });
    // A hooks.json init cannot merge gets no trust entry: it is left for the user to edit.
    if let Some((key, hash)) =
        codex::planned(&hooks_json).and_then(|doc| codex::trust(&hooks_json, &doc))
    {
        list.push(Change::Block {
            path: codex.join("config.toml"),
            begin: codex::trust_begin(&hooks_json),
            end: END_TOML.into(),
            body: codex::trust_table(&key, &hash),
        });
    }
    list
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
    // After the tool ran: Copilot shows the model the hook's `modifiedResult`, and the command
    // runs as written (a `preToolUse` rewrite was judged by the client's allow rules).
    hooks.set("postToolUse", Value::Array(vec![hook]));
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
