//! OpenCode: a tiny in-process plugin (`sqz print-opencode-plugin`) that asks
//! `sqz hook opencode` about each bash command and swaps in the answer's `command` when there
//! is one. The decision stays in the binary; on any failure the command runs as written.

use crate::hook::answer::{self, Answer};
use crate::hook::rewrite::Decision;
use crate::json::{self, Value};

/// Answers `{"tool": "bash", "command": …}` (`tool` optional) with `{"command": …}` when the
/// command is rewritten, `{}` otherwise.
pub fn respond(payload: &str, decide: impl Fn(&str) -> Decision) -> Answer {
    let doc = match answer::parse(payload) {
        Ok(doc) => doc,
        Err(answer) => return answer,
    };
    if let Some(tool) = doc.get("tool") {
        if !tool
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("bash"))
        {
            return Answer::leave("not the bash tool");
        }
    }
    let Some(command) = doc.get("command").and_then(Value::as_str) else {
        return Answer::bad("no command string");
    };
    match decide(command) {
        Decision::Leave(why) => Answer::leave(why),
        Decision::Rewrite(rewritten) => {
            let mut out = Value::object();
            out.set("command", Value::str(&rewritten));
            Answer::changed(out.to_compact())
        }
    }
}

/// The plugin file, calling the sqz at `sqz_path`. It is plain JavaScript that is also valid
/// TypeScript, so OpenCode (Bun) loads it as `sqz.ts` and node can run it as a module.
pub fn plugin(sqz_path: &str) -> String {
    let mut quoted = String::new();
    json::write_string(&mut quoted, sqz_path);
    PLUGIN.replace("\"__SQZ_PATH__\"", &quoted)
}

const PLUGIN: &str = r#"// sqz for OpenCode: routes bash commands through `sqz compress`, so their output reaches
// the model compressed and the original stays one `sqz expand` away.
// Written by `sqz print-opencode-plugin`; save as ~/.config/opencode/plugins/sqz.ts (or
// .opencode/plugins/sqz.ts). No `plugin` entry in opencode.json is needed.
// `sqz hook opencode` decides; on any failure the command runs as written.
import { spawnSync } from "node:child_process";

const SQZ = "__SQZ_PATH__";

export const SqzPlugin = async () => ({
  "tool.execute.before": async (input, output) => {
    if (!input || String(input.tool).toLowerCase() !== "bash") return;
    const command = output && output.args && output.args.command;
    if (typeof command !== "string" || command.trim() === "") return;
    try {
      const run = spawnSync(SQZ, ["hook", "opencode"], {
        input: JSON.stringify({ tool: "bash", command }),
        encoding: "utf8",
        timeout: 5000,
      });
      if (run.status !== 0 || !run.stdout) return;
      const answer = JSON.parse(run.stdout);
      if (typeof answer.command === "string" && answer.command !== "") {
        output.args.command = answer.command;
      }
    } catch {
      // The command runs as written.
    }
  },
});
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::test_decide as decide;

    #[test]
    fn rewrite_answers_the_command() {
        let answer = respond(r#"{"tool":"bash","command":"git status"}"#, decide);
        assert_eq!(answer.json, r#"{"command":"REWRITTEN git status"}"#);
        let answer = respond(r#"{"command":"git status"}"#, decide);
        assert!(answer.rewrote());
    }

    #[test]
    fn everything_else_runs_as_written() {
        for payload in [
            r#"{"tool":"bash","command":"ls"}"#,
            r#"{"tool":"read","command":"git status"}"#,
            r#"{"tool":"bash","command":""}"#,
            r#"{"tool":"bash"}"#,
            "{not json",
            "",
        ] {
            let answer = respond(payload, decide);
            assert_eq!(answer.json, "{}", "{payload}");
            assert!(answer.left.is_some(), "{payload}");
        }
    }

    #[test]
    fn plugin_quotes_the_path() {
        let text = plugin("/opt/my \"sqz\"/sqz");
        assert!(text.contains(r#"const SQZ = "/opt/my \"sqz\"/sqz";"#));
        assert!(!text.contains("__SQZ_PATH__"));
    }
}
