//! OpenCode: a tiny in-process plugin (`sqz print-opencode-plugin`) that hands each finished
//! bash call's output to `sqz hook opencode` in `tool.execute.after` and swaps in the answer's
//! `output` when there is one. OpenCode 1.18 shows the model exactly `output.output` and keeps
//! the exit status in `metadata`, so the command is never touched and nothing is asked. The
//! decision stays in the binary; on any failure the output stays as it was.

use crate::hook::after;
use crate::hook::answer::{self, Answer};
use crate::json::{self, Value};
use crate::serve::Backend;

/// Answers `{"tool":"bash","command":…,"output":…,"truncated":…}` with `{"output": …}` when the
/// output is replaced, `{}` otherwise. A payload without `output` comes from the plugin of an
/// install made before this (it asked before the command ran) and is answered `{}`.
pub fn respond(payload: &str, backend: &mut dyn Backend) -> Answer {
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
    let Some(output) = doc.get("output").and_then(Value::as_str) else {
        return Answer::leave("no output: the plugin is from an older sqz (run sqz init)");
    };
    if doc.get("truncated").and_then(Value::as_bool) == Some(true) {
        // OpenCode already cut it and saved the whole output; its note must stay as it is.
        return Answer::unchanged();
    }
    match after::shorter(command, output, backend) {
        Some(served) => {
            let mut out = Value::object();
            out.set("output", Value::str(&served));
            Answer::changed(out.to_compact())
        }
        None => Answer::unchanged(),
    }
}

/// The plugin file, calling the sqz at `sqz_path`. It is plain JavaScript that is also valid
/// TypeScript, so OpenCode (Bun) loads it as `sqz.ts` and node can run it as a module.
pub fn plugin(sqz_path: &str) -> String {
    let mut quoted = String::new();
    json::write_string(&mut quoted, sqz_path);
    PLUGIN.replace("\"__SQZ_PATH__\"", &quoted)
}

const PLUGIN: &str = r#"// sqz for OpenCode: after each bash call, asks `sqz hook opencode` for a shorter text of its
// output; the command itself runs as written, and the original stays one `sqz expand` away.
// Written by `sqz print-opencode-plugin`; save as ~/.config/opencode/plugins/sqz.ts (or
// .opencode/plugins/sqz.ts). No `plugin` entry in opencode.json is needed.
// On any failure the output stays as it was.
import { spawn } from "node:child_process";

const SQZ = "__SQZ_PATH__";

const ask = (question) =>
  new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(SQZ, ["hook", "opencode"], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return resolve(null);
    }
    const timer = setTimeout(() => child.kill(), 10000);
    child.on("error", () => resolve(null));
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        resolve(code === 0 ? JSON.parse(out) : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(question));
  });

export const SqzPlugin = async () => ({
  "tool.execute.after": async (input, output) => {
    if (!input || String(input.tool).toLowerCase() !== "bash") return;
    const command = input.args && input.args.command;
    if (typeof command !== "string" || !output || typeof output.output !== "string") return;
    const truncated = Boolean(output.metadata && output.metadata.truncated);
    const answer = await ask({ tool: "bash", command, output: output.output, truncated });
    if (answer && typeof answer.output === "string") output.output = answer.output;
  },
});
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::after::{fold_lines, Fake};
    use crate::store::EventKind;

    fn question(command: &str, output: &str, extra: &str) -> String {
        let (mut c, mut o) = (String::new(), String::new());
        json::write_string(&mut c, command);
        json::write_string(&mut o, output);
        format!(r#"{{"tool":"bash","command":{c},"output":{o},"truncated":false{extra}}}"#)
    }

    #[test]
    fn a_shorter_output_is_answered() {
        let long = "line\n".repeat(40) + "error: boom\n";
        let answer = respond(&question("make", &long, ""), &mut Fake(fold_lines));
        assert_eq!(answer.json, r#"{"output":"[line ×many]\nerror: boom\n"}"#);
        let untyped = question("make", &long, "").replace(r#""tool":"bash","#, "");
        assert!(respond(&untyped, &mut Fake(fold_lines)).rewrote());
    }

    #[test]
    fn everything_else_stays_as_the_client_made_it() {
        let long = "line\n".repeat(40);
        let never =
            &mut Fake(|_: &str, _: &[u8]| -> (EventKind, Vec<u8>) { panic!("must not compress") });
        for payload in [
            question("make", &long, "").replace(r#""truncated":false"#, r#""truncated":true"#),
            question("sqz expand 01", &long, ""),
            question("make", "", ""),
            question("make", &long, "").replace(r#""tool":"bash""#, r#""tool":"read""#),
            r#"{"tool":"bash","command":"git status"}"#.to_string(),
            r#"{"tool":"bash","output":"x"}"#.to_string(),
            "{not json".to_string(),
            String::new(),
        ] {
            let answer = respond(&payload, never);
            assert_eq!(answer.json, "{}", "{payload}");
        }
        let old = respond(r#"{"tool":"bash","command":"git status"}"#, never);
        assert!(old.left.unwrap().contains("sqz init"));
    }

    #[test]
    fn plugin_quotes_the_path() {
        let text = plugin("/opt/my \"sqz\"/sqz");
        assert!(text.contains(r#"const SQZ = "/opt/my \"sqz\"/sqz";"#));
        assert!(!text.contains("__SQZ_PATH__"));
        assert!(!text.contains("tool.execute.before"));
    }
}
