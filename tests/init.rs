//! `sqz init`, `sqz uninstall` and `sqz doctor` through the real binary, with HOME and the
//! project directory in temporary trees holding realistic existing configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

/// A temporary HOME and project directory, removed on drop.
struct Tree {
    root: PathBuf,
}

impl Tree {
    fn new(tag: &str) -> Tree {
        let root = std::env::temp_dir().join(format!(
            "sqz-init-{tag}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("project")).unwrap();
        Tree { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// Every file under the tree, relative path → bytes.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    let rel = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.insert(format!("{rel}/"), Vec::new());
                    walk(&path, root, out);
                } else {
                    let rel = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.insert(rel, std::fs::read(&path).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.root, &self.root, &mut out);
        out
    }

    fn sqz(&self, args: &[&str]) -> (String, String, i32) {
        let out = Command::new(bin())
            .args(args)
            .env("HOME", self.home())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("SQZ_DB_PATH", self.root.join("store").join("sessions.db"))
            .current_dir(self.project())
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code().unwrap_or(-1),
        )
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

const CLAUDE_SETTINGS: &str = r#"{
  "env": {
    "BASH_MAX_OUTPUT_LENGTH": "60000"
  },
  "permissions": {
    "allow": [
      "Bash(npm test:*)",
      "Read(~/notes/**)"
    ],
    "deny": [
      "Bash(rm -rf:*)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/audit-bash.sh",
            "timeout": 5
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
"#;

const CLAUDE_JSON: &str = r#"{
  "numStartups": 12,
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "env": {"MEMORY_FILE": "/tmp/m.json"}
    }
  }
}
"#;

const CODEX_TOML: &str = "model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\nargs = [\"serve\"]\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";

const AGENTS_MD: &str = "# House rules\n\nRun `make check` before you say you are done.\n";

const GEMINI_SETTINGS: &str = r#"{
  "theme": "GitHub",
  "hooks": {
    "AfterTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "fmt-hook"}]}
    ]
  }
}
"#;

/// A HOME where Claude Code, Codex, Gemini and Kiro are installed and already configured.
fn realistic(tag: &str) -> Tree {
    let t = Tree::new(tag);
    t.write("home/.claude/settings.json", CLAUDE_SETTINGS);
    t.write("home/.claude.json", CLAUDE_JSON);
    t.write("home/.codex/config.toml", CODEX_TOML);
    t.write("home/.codex/AGENTS.md", AGENTS_MD);
    t.write("home/.gemini/settings.json", GEMINI_SETTINGS);
    std::fs::create_dir_all(t.home().join(".kiro")).unwrap();
    t.write("project/AGENTS.md", AGENTS_MD);
    t.write("project/.claude/settings.json", CLAUDE_SETTINGS);
    t
}

fn json(text: &str) -> sqz::json::Value {
    sqz::json::parse(text).unwrap()
}

/// Same files; JSON files equal as values, the rest byte for byte.
fn assert_semantically_equal(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (path, bytes) in a {
        let other = &b[path];
        if path.ends_with(".json") {
            assert_eq!(
                json(std::str::from_utf8(bytes).unwrap()),
                json(std::str::from_utf8(other).unwrap()),
                "{path}"
            );
        } else {
            assert_eq!(
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(other),
                "{path}"
            );
        }
    }
}

#[test]
fn global_init_twice_is_once_and_uninstall_restores() {
    let t = realistic("global");
    let before = t.snapshot();
    let (out, err, code) = t.sqz(&["init", "--global"]);
    assert_eq!(code, 0, "{out}{err}");
    let once = t.snapshot();
    let (_, _, code) = t.sqz(&["init", "--global"]);
    assert_eq!(code, 0);
    assert_eq!(t.snapshot(), once, "second init changed bytes");

    let settings = json(&t.read("home/.claude/settings.json"));
    let pre = settings.get("hooks").unwrap().get("PreToolUse").unwrap();
    let commands: Vec<&str> = pre
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e.get("hooks").unwrap().as_array().unwrap())
        .filter_map(|h| h.get("command")?.as_str())
        .collect();
    assert_eq!(commands, ["~/bin/audit-bash.sh", "sqz hook claude"]);
    for event in ["PostToolUse", "PreCompact", "SessionStart", "Stop"] {
        assert!(
            settings.get("hooks").unwrap().get(event).is_some(),
            "{event}"
        );
    }
    let allow = settings.get("permissions").unwrap().get("allow").unwrap();
    for rule in sqz::hook::rewrite::ALLOW_RULES {
        assert!(allow
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str() == Some(rule)));
    }
    assert_eq!(settings.get("model").unwrap().as_str(), Some("opus"));
    let keys: Vec<&str> = settings
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(
        keys,
        ["env", "permissions", "hooks", "model"],
        "key order kept"
    );

    let claude_json = json(&t.read("home/.claude.json"));
    let servers = claude_json.get("mcpServers").unwrap();
    assert!(servers.get("memory").is_some());
    assert_eq!(
        servers.get("sqz").unwrap().to_compact(),
        r#"{"command":"sqz","args":["mcp"]}"#
    );

    let toml = t.read("home/.codex/config.toml");
    assert!(
        toml.starts_with(CODEX_TOML),
        "other tables untouched:\n{toml}"
    );
    assert!(toml.contains(
        "# sqz:begin\n[mcp_servers.sqz]\ncommand = \"sqz\"\nargs = [\"mcp\"]\n# sqz:end\n"
    ));
    let agents = t.read("home/.codex/AGENTS.md");
    assert!(agents.starts_with(AGENTS_MD));
    assert!(agents.contains("<!-- sqz:begin -->") && agents.contains("§delta:HASH§"));
    assert!(t
        .read("home/.gemini/settings.json")
        .contains("sqz hook gemini"));
    assert!(t
        .read("home/.kiro/steering/sqz.md")
        .contains("inclusion: always"));
    // Not installed: not touched.
    assert!(!t.home().join(".copilot").exists());
    assert!(!t.home().join(".config").exists());
    // Project files are not global scope.
    assert_eq!(t.read("project/AGENTS.md"), AGENTS_MD);

    let (out, err, code) = t.sqz(&["uninstall", "--global"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_semantically_equal(&t.snapshot(), &before);
    assert!(!t.home().join(".kiro/steering/sqz.md").exists());
}

#[test]
fn project_init_writes_project_files() {
    let t = realistic("project");
    let before = t.snapshot();
    let (out, err, code) = t.sqz(&[
        "init",
        "--only",
        "claude,codex,cursor,windsurf,cline,zed,kiro,opencode,gemini,copilot",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let once = t.snapshot();
    t.sqz(&[
        "init",
        "--only",
        "claude,codex,cursor,windsurf,cline,zed,kiro,opencode,gemini,copilot",
    ]);
    assert_eq!(t.snapshot(), once);
    assert!(t
        .read("project/.claude/settings.json")
        .contains("sqz hook claude-post"));
    assert!(t.read("project/.mcp.json").contains("\"sqz\""));
    assert!(t.read("project/AGENTS.md").starts_with(AGENTS_MD));
    let mdc = t.read("project/.cursor/rules/sqz.mdc");
    assert!(mdc.starts_with("---\ndescription: ") && mdc.contains("alwaysApply: true\n"));
    assert!(t
        .read("project/.windsurf/rules/sqz.md")
        .contains("trigger: always_on"));
    assert!(t
        .read("project/.clinerules/sqz.md")
        .contains("sqz_read_file"));
    let (out, _, _) = t.sqz(&["doctor"]);
    for client in ["claude", "cursor", "zed", "kiro"] {
        let row = out.lines().find(|l| l.starts_with(client)).unwrap();
        assert!(row.contains(" project "), "{out}");
    }
    // Codex ignores a project's .codex/hooks.json until the user trusts the project.
    let row = out.lines().find(|l| l.starts_with("codex")).unwrap();
    assert!(
        row.contains(" partly (project) ") && row.contains("only in a trusted project"),
        "{out}"
    );
    // The user-level files are left to --global.
    assert_eq!(t.read("home/.claude/settings.json"), CLAUDE_SETTINGS);
    t.sqz(&["uninstall"]);
    assert_semantically_equal(&t.snapshot(), &before);
}

#[test]
fn dry_run_writes_nothing() {
    let t = realistic("dry");
    let before = t.snapshot();
    let (out, _, code) = t.sqz(&["init", "--global", "--dry-run"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("would write") && out.contains("sqz hook claude"),
        "{out}"
    );
    assert_eq!(t.snapshot(), before);
}

#[test]
fn only_and_skip_select_clients() {
    let t = realistic("select");
    t.sqz(&["init", "--global", "--skip", "codex,gemini,kiro"]);
    assert_eq!(t.read("home/.codex/config.toml"), CODEX_TOML);
    assert_eq!(t.read("home/.gemini/settings.json"), GEMINI_SETTINGS);
    assert!(t
        .read("home/.claude/settings.json")
        .contains("sqz hook claude"));
    let (_, _, code) = t.sqz(&["init", "--global", "--only", "copilot,opencode"]);
    assert_eq!(code, 0);
    let copilot = json(&t.read("home/.copilot/hooks/sqz.json"));
    assert_eq!(
        copilot.to_compact(),
        r#"{"version":1,"hooks":{"postToolUse":[{"type":"command","bash":"sqz hook copilot","timeoutSec":30}]}}"#
    );
    let plugin = t.read("home/.config/opencode/plugins/sqz.ts");
    assert!(plugin.contains("tool.execute.after"), "{plugin}");
    assert!(!plugin.contains("tool.execute.before"), "{plugin}");
    let opencode = json(&t.read("home/.config/opencode/opencode.json"));
    assert_eq!(
        opencode
            .get("mcp")
            .unwrap()
            .get("sqz")
            .unwrap()
            .to_compact(),
        r#"{"type":"local","command":["sqz","mcp"],"enabled":true}"#
    );
    let (_, err, code) = t.sqz(&["init", "--only", "vscode"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown client 'vscode'"), "{err}");
}

/// What `sqz init --global` wrote for Gemini, Copilot and OpenCode before the after-tool hooks:
/// command rewrites that made the clients ask.
const OLD_GEMINI: &str = r#"{
  "theme": "GitHub",
  "hooks": {
    "AfterTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "fmt-hook"}]}
    ],
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "sqz hook gemini"}]}
    ]
  }
}
"#;
const OLD_COPILOT: &str = r#"{
  "version": 1,
  "hooks": {
    "preToolUse": [
      {
        "type": "command",
        "bash": "sqz hook copilot",
        "timeoutSec": 30
      }
    ]
  }
}
"#;
const OLD_OPENCODE: &str =
    "// sqz:begin \u{2014} written by `sqz init`; `sqz uninstall` removes this file.\n\
import { spawnSync } from \"node:child_process\";\n\
export const SqzPlugin = async () => ({ \"tool.execute.before\": async () => {} });\n";

#[test]
fn an_install_with_command_rewrites_moves_to_the_after_tool_hooks() {
    let t = Tree::new("migrate");
    t.write("home/.gemini/settings.json", OLD_GEMINI);
    t.write("home/.copilot/hooks/sqz.json", OLD_COPILOT);
    t.write("home/.config/opencode/plugins/sqz.ts", OLD_OPENCODE);
    let row = |out: &str, client: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(&format!("{client} ")))
            .unwrap_or_else(|| panic!("no {client} row in\n{out}"))
            .to_string()
    };
    let (out, _, _) = t.sqz(&["doctor", "--global"]);
    assert!(
        out.contains("stale BeforeTool hook `sqz hook gemini`"),
        "{out}"
    );
    assert!(
        out.contains("copilot/hooks/sqz.json: differs from what sqz writes"),
        "{out}"
    );

    let (out, err, code) = t.sqz(&["init", "--global", "--only", "gemini,copilot,opencode"]);
    assert_eq!(code, 0, "{out}{err}");
    let gemini = json(&t.read("home/.gemini/settings.json"));
    let hooks = gemini.get("hooks").unwrap();
    assert!(hooks.get("BeforeTool").is_none(), "{}", hooks.to_compact());
    assert_eq!(
        hooks.get("AfterTool").unwrap().to_compact(),
        r#"[{"matcher":"write_file","hooks":[{"type":"command","command":"fmt-hook"}]},{"matcher":"run_shell_command","hooks":[{"type":"command","command":"sqz hook gemini"}]}]"#
    );
    assert_eq!(gemini.get("theme").unwrap().as_str(), Some("GitHub"));
    let copilot = t.read("home/.copilot/hooks/sqz.json");
    assert!(
        copilot.contains("postToolUse") && !copilot.contains("preToolUse"),
        "{copilot}"
    );
    let plugin = t.read("home/.config/opencode/plugins/sqz.ts");
    assert!(plugin.contains("tool.execute.after") && !plugin.contains("tool.execute.before"));
    let (out, _, _) = t.sqz(&["doctor", "--global"]);
    for client in ["gemini", "copilot"] {
        assert!(
            row(&out, client).starts_with(&format!("{client:<9} yes ")),
            "{out}"
        );
    }
    assert!(!out.contains("stale"), "{out}");

    // Uninstall takes out exactly what init added: the user's own hook and theme stay.
    let (out, err, code) = t.sqz(&["uninstall", "--global", "--only", "gemini,copilot,opencode"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        json(&t.read("home/.gemini/settings.json")).to_compact(),
        json(GEMINI_SETTINGS).to_compact()
    );
    assert!(!t.home().join(".copilot/hooks/sqz.json").exists());
    assert!(!t.home().join(".config/opencode/plugins/sqz.ts").exists());
    assert!(t.home().join(".copilot").is_dir() && t.home().join(".config/opencode").is_dir());
}

#[test]
fn a_file_with_comments_is_left_alone_with_a_snippet() {
    let t = Tree::new("comments");
    let commented = "{\n  // my theme\n  \"theme\": \"dark\",\n}\n";
    t.write("home/.gemini/settings.json", commented);
    t.write("home/.config/zed/settings.json", commented);
    let (out, _, code) = t.sqz(&["init", "--global"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(t.read("home/.gemini/settings.json"), commented);
    assert_eq!(t.read("home/.config/zed/settings.json"), commented);
    assert!(
        out.contains("not plain JSON") && out.contains("\"command\": \"sqz hook gemini\""),
        "{out}"
    );
    assert!(out.contains("\"context_servers\""), "{out}");
}

#[test]
fn an_existing_toml_table_outside_the_markers_is_not_duplicated() {
    let t = Tree::new("toml");
    let toml = "[mcp_servers.sqz]\ncommand = \"/opt/sqz\"\nargs = [\"mcp\"]\n";
    t.write("home/.codex/config.toml", toml);
    let (out, _, _) = t.sqz(&["init", "--global", "--only", "codex"]);
    let after = t.read("home/.codex/config.toml");
    assert!(after.starts_with(toml), "{after}");
    assert_eq!(after.matches("[mcp_servers.sqz]").count(), 1, "{after}");
    assert!(out.contains("outside sqz's markers"), "{out}");
}

#[test]
fn doctor_reports_configured_unconfigured_and_broken_homes() {
    let t = realistic("doctor");
    let (out, _, code) = t.sqz(&["doctor", "--global"]);
    assert_eq!(code, 1, "{out}");
    let row = |out: &str, client: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(&format!("{client} ")))
            .unwrap_or_else(|| panic!("no {client} row in\n{out}"))
            .to_string()
    };
    assert!(
        row(&out, "claude").contains("yes   transparent no"),
        "{out}"
    );
    assert!(
        out.contains("no PreToolUse hook `sqz hook claude`"),
        "{out}"
    );
    assert!(out.contains("allow rule missing"), "{out}");
    assert!(row(&out, "copilot").starts_with("copilot   no "), "{out}");
    assert!(out.contains("last compression: none recorded"), "{out}");

    t.sqz(&["init", "--global"]);
    let (out, _, code) = t.sqz(&["doctor", "--global"]);
    assert_eq!(code, 0, "{out}");
    for client in ["claude", "codex", "gemini", "kiro"] {
        assert!(row(&out, client).contains(" global "), "{out}");
    }
    // From the project, the global setup counts.
    let (out, _, code) = t.sqz(&["doctor"]);
    assert_eq!(code, 0, "{out}");
    assert!(row(&out, "claude").contains(" global "), "{out}");

    // Broken: a duplicated hook, a stale one, and a file that is not JSON.
    let mut settings = t.read("home/.claude/settings.json");
    let hook = "\"PreToolUse\": [";
    settings = settings.replacen(
        hook,
        &format!("{hook}{{\"matcher\":\"Bash\",\"hooks\":[{{\"type\":\"command\",\"command\":\"sqz hook claude\"}},{{\"type\":\"command\",\"command\":\"sqz hook claude-old\"}}]}},"),
        1,
    );
    t.write("home/.claude/settings.json", &settings);
    t.write("home/.gemini/settings.json", "{ not json");
    t.write(
        "home/.claude.json",
        &t.read("home/.claude.json")
            .replace("\"command\": \"sqz\"", "\"command\": \"/gone/sqz\""),
    );
    let (out, _, code) = t.sqz(&["doctor", "--global"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("2 duplicate PreToolUse hooks"), "{out}");
    assert!(
        out.contains("stale PreToolUse hook `sqz hook claude-old`"),
        "{out}"
    );
    assert!(row(&out, "claude").contains("partly (global)"), "{out}");
    assert!(row(&out, "gemini").contains("not plain JSON"), "{out}");
    assert!(
        out.contains("MCP server sqz runs missing /gone/sqz"),
        "{out}"
    );

    let (out, _, _) = t.sqz(&["doctor", "--global", "--fix"]);
    assert!(out.contains("wrote"), "{out}");
    let fixed = json(&t.read("home/.claude/settings.json"));
    let count = fixed
        .get("hooks")
        .unwrap()
        .get("PreToolUse")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e.get("hooks").unwrap().as_array().unwrap())
        .filter(|h| h.get("command").and_then(|c| c.as_str()) == Some("sqz hook claude"))
        .count();
    assert_eq!(count, 1);
    assert!(!t.read("home/.claude/settings.json").contains("claude-old"));
    assert!(!t.read("home/.claude.json").contains("/gone/sqz"));
    assert!(t.read("home/.claude.json").contains("server-memory"));
    assert_eq!(t.read("home/.gemini/settings.json"), "{ not json");
}

#[test]
fn help_lists_the_setup_commands() {
    let t = Tree::new("help");
    let (out, _, _) = t.sqz(&["help"]);
    for usage in ["sqz init", "sqz uninstall", "sqz doctor"] {
        assert!(out.contains(usage), "{out}");
    }
    let (out, _, code) = t.sqz(&["init", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--dry-run"));
}

#[test]
fn doctor_shows_the_last_compression() {
    use std::io::Write;
    let t = Tree::new("last");
    let mut child = Command::new(bin())
        .args(["compress", "--cmd", "seq 1 400"])
        .env("HOME", t.home())
        .env("SQZ_DB_PATH", t.root.join("store").join("sessions.db"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let input: String = (1..=400).map(|n| format!("line {n}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait().unwrap();
    let (out, _, _) = t.sqz(&["doctor"]);
    assert!(
        out.contains("last compression: ") && out.contains(" s ago"),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_keeps_its_link_and_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new("link");
    t.write("dotfiles/claude.json", CLAUDE_JSON);
    let real = t.root.join("dotfiles/claude.json");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::create_dir_all(t.home().join(".claude")).unwrap();
    std::os::unix::fs::symlink(&real, t.home().join(".claude.json")).unwrap();
    let (out, err, code) = t.sqz(&["init", "--global", "--only", "claude"]);
    assert_eq!(code, 0, "{out}{err}");
    let link = std::fs::symlink_metadata(t.home().join(".claude.json")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(t.read("dotfiles/claude.json").contains("\"sqz\""));
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn a_member_of_the_wrong_type_is_left_alone() {
    let t = Tree::new("types");
    let settings = "{\n  \"hooks\": []\n}\n";
    t.write("home/.claude/settings.json", settings);
    let (out, _, code) = t.sqz(&["init", "--global", "--only", "claude"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(t.read("home/.claude/settings.json"), settings);
    assert!(
        out.contains("`hooks` is not an object; left alone. Merge this into it:"),
        "{out}"
    );
}

/// A configuration from before claude-post served the file tools: its PostToolUse entry matched
/// only Bash. Init moves it to the file tools too, once, keeping it the only claude-post hook.
#[test]
fn init_widens_an_older_bash_only_post_hook() {
    let t = Tree::new("post-matcher");
    let old = r#"{
  "hooks": {
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "sqz hook claude-post"}]}
    ]
  }
}
"#;
    t.write("home/.claude/settings.json", old);
    let (out, _, code) = t.sqz(&["init", "--global", "--only", "claude"]);
    assert_eq!(code, 0, "{out}");
    let written = t.read("home/.claude/settings.json");
    let v = json(&written);
    let post = v
        .get("hooks")
        .and_then(|h| h.get("PostToolUse"))
        .and_then(|p| p.as_array())
        .unwrap();
    assert_eq!(post.len(), 1, "{written}");
    assert_eq!(
        post[0].get("matcher").and_then(|m| m.as_str()),
        Some("^(Bash|Read|Grep|Glob|Write|Edit)$")
    );
    let (again, _, _) = t.sqz(&["init", "--global", "--only", "claude"]);
    assert_eq!(t.read("home/.claude/settings.json"), written, "{again}");
}

#[test]
fn uninstall_in_the_wrong_scope_says_where_sqz_is_still_set_up() {
    let t = realistic("uninstall-scope");
    let (out, err, code) = t.sqz(&["init", "--global"]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, _, code) = t.sqz(&["uninstall"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "sqz is still set up in the user-level files under HOME: run `sqz uninstall --global`"
        ),
        "{out}"
    );
    // The global hooks are left as they are, and the message says so.
    assert!(t
        .read("home/.claude/settings.json")
        .contains("sqz hook claude"));
    let (_, _, code) = t.sqz(&["uninstall", "--global"]);
    assert_eq!(code, 0);
    let (out, _, _) = t.sqz(&["uninstall", "--global"]);
    assert!(
        out.contains("nothing of sqz to remove in the user-level files"),
        "{out}"
    );
    assert!(!out.contains("still set up"), "{out}");
}

/// Installs from before the pipefail rewrite allow the trailer's `printf` or its EXIT trap,
/// which Claude Code's checker never accepted. Doctor says the rules are old; init replaces
/// them with the pipefail rule, once; uninstall takes every one away.
#[test]
fn init_replaces_the_trailer_rules_of_an_older_install() {
    let t = Tree::new("legacy-rule");
    t.write(
        "home/.claude/settings.json",
        r#"{"permissions":{"allow":["Bash(ls:*)"]}}"#,
    );
    let (out, _, code) = t.sqz(&["init", "--global", "--only", "claude"]);
    assert_eq!(code, 0, "{out}");
    let current = t.read("home/.claude/settings.json");
    let escaped = |rule: &str| {
        let mut s = String::new();
        sqz::json::write_string(&mut s, rule);
        s
    };
    let pipefail = escaped(sqz::hook::rewrite::PIPEFAIL_RULE);
    assert!(current.contains(&pipefail), "{current}");
    for old_rule in sqz::hook::rewrite::OLD_RULES {
        // An install of the EXIT-trap or printf era: its rule where the pipefail rule is now.
        let older = current.replace(&pipefail, &escaped(old_rule));
        t.write("home/.claude/settings.json", &older);
        let (doctor, _, _) = t.sqz(&["doctor"]);
        assert!(doctor.contains("allow rules from an older sqz"), "{doctor}");
        let (out, _, code) = t.sqz(&["init", "--global", "--only", "claude"]);
        assert_eq!(code, 0, "{out}");
        let written = t.read("home/.claude/settings.json");
        let rules: Vec<String> = json(&written)
            .get("permissions")
            .and_then(|p| p.get("allow"))
            .and_then(|a| a.as_array())
            .unwrap()
            .iter()
            .filter_map(|r| r.as_str().map(str::to_string))
            .collect();
        let mut want = vec!["Bash(ls:*)".to_string()];
        want.extend(
            sqz::hook::rewrite::ALLOW_RULES
                .iter()
                .chain(&sqz::hook::rewrite::EXPAND_RULES)
                .map(|r| r.to_string()),
        );
        let mut rules = rules;
        rules.sort();
        want.sort();
        assert_eq!(rules, want, "{written}");
        let (doctor, _, _) = t.sqz(&["doctor"]);
        assert!(!doctor.contains("older sqz"), "{doctor}");
        t.write("home/.claude/settings.json", &older);
        t.sqz(&["uninstall", "--global"]);
        let left = t.read("home/.claude/settings.json");
        assert!(
            !left.contains("SQZ_EXIT") && !left.contains("sqz") && !left.contains("pipefail"),
            "{left}"
        );
        t.sqz(&["init", "--global", "--only", "claude"]);
    }
}

/// Claude Code asks before it starts a project's `.mcp.json` server, preselecting "continue
/// without it", and ignores the project's allow rules until the folder is trusted. Project init
/// approves the server where the client records that answer, keeps what the local settings
/// held, says what the user must accept while the folder is untrusted, and doctor says so too.
#[test]
fn project_init_approves_its_mcp_server_and_says_what_the_user_must_accept() {
    let t = Tree::new("claude-trust");
    std::fs::create_dir_all(t.home().join(".claude")).unwrap();
    t.write(
        "project/.claude/settings.local.json",
        "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(make:*)\"\n    ]\n  },\n  \"enabledMcpjsonServers\": [\n    \"db\"\n  ]\n}\n",
    );
    let before = t.snapshot();
    let (out, _, code) = t.sqz(&["init", "--only", "claude"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("trust this folder"), "{out}");
    let local = json(&t.read("project/.claude/settings.local.json"));
    let approved: Vec<&str> = local
        .get("enabledMcpjsonServers")
        .and_then(|a| a.as_array())
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str())
        .collect();
    assert_eq!(approved, ["db", "sqz"]);
    assert!(local.get("permissions").is_some());
    assert!(t.read("project/.mcp.json").contains("\"sqz\""));
    let (doctor, _, _) = t.sqz(&["doctor"]);
    assert!(doctor.contains("has not trusted this folder"), "{doctor}");
    // Trusted, as Claude Code records it once the user accepts.
    let mut trust = String::from(r#"{"projects":{"#);
    sqz::json::write_string(&mut trust, t.project().to_str().unwrap());
    trust.push_str(r#":{"hasTrustDialogAccepted":true}}}"#);
    t.write("home/.claude.json", &trust);
    let (out, _, _) = t.sqz(&["init", "--only", "claude"]);
    assert!(!out.contains("trust this folder"), "{out}");
    let (doctor, _, _) = t.sqz(&["doctor"]);
    assert!(!doctor.contains("has not trusted"), "{doctor}");
    std::fs::remove_file(t.home().join(".claude.json")).unwrap();
    let (out, _, code) = t.sqz(&["uninstall", "--only", "claude"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(t.snapshot(), before);
}

const CODEX_HOOKS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "*", "hooks": [{"type": "command", "command": "~/bin/audit.sh", "timeout": 5}]}
    ]
  }
}
"#;

/// Codex 0.169's hash for `{"matcher":"Bash","hooks":[{"type":"command","command":"sqz hook
/// codex","timeout":30}]}` (tests/clients_codex.rs sees the real client run the hook with it).
const SQZ_HOOK_HASH: &str =
    "sha256:2f60b5bb2c0a6e6c736012ad678d852af379e63304a157712c0be55ee1e84861";

fn codex_row(out: &str) -> String {
    out.lines()
        .skip_while(|l| !l.starts_with("codex "))
        .take_while(|l| l.starts_with("codex ") || l.starts_with("    "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn codex_init_writes_the_hook_its_trust_and_rules_once_and_uninstall_removes_them() {
    let t = realistic("codex");
    t.write("home/.codex/hooks.json", CODEX_HOOKS);
    let before = t.snapshot();
    let (out, err, code) = t.sqz(&["init", "--global", "--only", "codex"]);
    assert_eq!(code, 0, "{out}{err}");
    let once = t.snapshot();
    t.sqz(&["init", "--global", "--only", "codex"]);
    assert_eq!(t.snapshot(), once, "second init changed bytes");

    let hooks = json(&t.read("home/.codex/hooks.json"));
    let groups = hooks.get("hooks").unwrap().get("PreToolUse").unwrap();
    assert_eq!(
        groups.to_compact(),
        r#"[{"matcher":"*","hooks":[{"type":"command","command":"~/bin/audit.sh","timeout":5}]},{"matcher":"Bash","hooks":[{"type":"command","command":"sqz hook codex","timeout":30}]}]"#
    );
    // Trusted by the position Codex gives it: the second group, after the user's own.
    let home = std::fs::canonicalize(t.home()).unwrap();
    let hooks_json = home.join(".codex/hooks.json");
    let toml = t.read("home/.codex/config.toml");
    assert!(toml.starts_with(CODEX_TOML), "{toml}");
    let trust = format!(
        "# sqz:trust {path}\n[hooks.state.\"{path}:pre_tool_use:1:0\"]\ntrusted_hash = \"{SQZ_HOOK_HASH}\"\n# sqz:end\n",
        path = hooks_json.display()
    );
    assert!(toml.contains(&trust), "{toml}");
    assert!(toml.contains("[mcp_servers.sqz]"), "{toml}");
    // The rules name the sqz that ran init, by its real path.
    let rules = t.read("home/.codex/rules/sqz.rules");
    let program = std::fs::canonicalize(bin()).unwrap();
    assert_eq!(
        sqz::hook::codex::rules_program(&rules).as_deref(),
        program.to_str()
    );
    assert!(rules.contains("[\"set\", \"-o\", \"pipefail\"]"), "{rules}");
    assert!(t.read("home/.codex/AGENTS.md").starts_with(AGENTS_MD));
    let (doctor, _, _) = t.sqz(&["doctor", "--global"]);
    assert!(
        codex_row(&doctor).contains("transparent global"),
        "{doctor}"
    );

    let (out, err, code) = t.sqz(&["uninstall", "--global", "--only", "codex"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_semantically_equal(&t.snapshot(), &before);
}

#[test]
fn doctor_reports_a_codex_hook_codex_would_skip() {
    let t = realistic("codex-trust");
    t.sqz(&["init", "--global", "--only", "codex"]);
    let trusted = t.read("home/.codex/config.toml");
    let hooks = t.read("home/.codex/hooks.json");
    let doctor = |t: &Tree| codex_row(&t.sqz(&["doctor", "--global"]).0);
    assert!(doctor(&t).contains("global"), "{}", doctor(&t));

    // The user puts a group of their own before sqz's: the trust entry now names another.
    let mut doc = json(&hooks);
    let groups = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("PreToolUse"))
        .and_then(|p| p.as_array_mut())
        .unwrap();
    groups.insert(
        0,
        json(r#"{"hooks":[{"type":"command","command":"lint"}]}"#),
    );
    t.write("home/.codex/hooks.json", &doc.to_pretty());
    let row = doctor(&t);
    assert!(
        row.contains("partly (global)")
            && row.contains("no trusted_hash under")
            && row.contains("skips it silently"),
        "{row}"
    );
    let (_, _, code) = t.sqz(&["doctor", "--global", "--fix"]);
    assert_eq!(code, 0);
    assert!(doctor(&t).contains("transparent global"), "{}", doctor(&t));

    // A hash for another entry, and a hook the user turned off.
    t.write("home/.codex/hooks.json", &hooks);
    t.write(
        "home/.codex/config.toml",
        &trusted.replace(SQZ_HOOK_HASH, "sha256:00"),
    );
    assert!(
        doctor(&t).contains("is for another entry"),
        "{}",
        doctor(&t)
    );
    t.write(
        "home/.codex/config.toml",
        &trusted.replace("trusted_hash =", "enabled = false\ntrusted_hash ="),
    );
    assert!(doctor(&t).contains("turned off"), "{}", doctor(&t));
    // Rules that name a sqz that is gone: the hook would leave every command alone.
    t.write("home/.codex/config.toml", &trusted);
    t.write(
        "home/.codex/rules/sqz.rules",
        &sqz::hook::codex::rules("/nonexistent/bin/sqz"),
    );
    assert!(doctor(&t).contains("which is gone"), "{}", doctor(&t));
}

#[test]
fn codex_home_is_where_codex_keeps_its_files() {
    let t = Tree::new("codex-home");
    let codex_home = t.root.join("elsewhere");
    std::fs::create_dir_all(&codex_home).unwrap();
    let out = Command::new(bin())
        .args(["init", "--global", "--only", "codex"])
        .env("HOME", t.home())
        .env("CODEX_HOME", &codex_home)
        .env("SQZ_DB_PATH", t.root.join("store.db"))
        .current_dir(t.project())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let codex_home = std::fs::canonicalize(&codex_home).unwrap();
    for file in ["hooks.json", "config.toml", "rules/sqz.rules", "AGENTS.md"] {
        assert!(codex_home.join(file).is_file(), "{file}");
    }
    let toml = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        toml.contains(&format!(
            "{}:pre_tool_use:0:0",
            codex_home.join("hooks.json").display()
        )),
        "{toml}"
    );
    assert!(!t.home().join(".codex").exists());
}

#[test]
fn codex_project_init_says_the_project_must_be_trusted() {
    let t = realistic("codex-project");
    let before = t.snapshot();
    let (out, _, code) = t.sqz(&["init", "--only", "codex"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("only in a trusted project"), "{out}");
    let project = std::fs::canonicalize(t.project()).unwrap();
    assert!(t
        .read("project/.codex/hooks.json")
        .contains("sqz hook codex"));
    // Trust lives in the user's config.toml, keyed by the project's hooks.json.
    let toml = t.read("home/.codex/config.toml");
    assert!(
        toml.contains(&format!(
            "{}:pre_tool_use:0:0",
            project.join(".codex/hooks.json").display()
        )),
        "{toml}"
    );
    // Once the user trusts the project, init has nothing more to say and doctor is content.
    let trusted = format!(
        "{toml}\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        project.display()
    );
    t.write("home/.codex/config.toml", &trusted);
    let (out, _, _) = t.sqz(&["init", "--only", "codex"]);
    assert!(!out.contains("trusted project"), "{out}");
    let (doctor, _, _) = t.sqz(&["doctor"]);
    assert!(codex_row(&doctor).contains(" project "), "{doctor}");
    t.write("home/.codex/config.toml", &toml);
    t.sqz(&["uninstall", "--only", "codex"]);
    assert_semantically_equal(&t.snapshot(), &before);
}
