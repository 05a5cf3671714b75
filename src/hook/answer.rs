//! What a rewriting hook hands back: the JSON for stdout and the one line for stderr. The
//! handlers are pure; only `emit` writes, and it always exits 0 so the agent goes on.

/// A hook's answer to one payload.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    /// The JSON document for stdout, without the newline.
    pub json: String,
    /// Why the command runs as written, when it does.
    pub left: Option<String>,
    /// Whether the payload itself was bad (printed even with `SQZ_QUIET`).
    pub bad_input: bool,
}

/// The answer that changes nothing: the client runs the command as written.
pub const NO_CHANGE: &str = "{}";

/// The payload as JSON, or the answer that lets the command run as written.
pub fn parse(payload: &str) -> Result<crate::json::Value, Answer> {
    crate::json::parse(payload)
        .map_err(|e| Answer::bad(NO_CHANGE, &format!("payload is not JSON ({e})")))
}

impl Answer {
    /// The command was rewritten; `json` carries the new arguments.
    pub fn rewrite(json: String) -> Answer {
        Answer {
            json,
            left: None,
            bad_input: false,
        }
    }

    /// The command runs as written; `json` is the client's "no change" answer.
    pub fn leave(json: &str, why: &str) -> Answer {
        Answer {
            json: json.to_owned(),
            left: Some(why.to_owned()),
            bad_input: false,
        }
    }

    /// The payload could not be read; the client runs the original command.
    pub fn bad(json: &str, why: &str) -> Answer {
        Answer {
            json: json.to_owned(),
            left: Some(why.to_owned()),
            bad_input: true,
        }
    }

    /// Whether the command was rewritten.
    pub fn rewrote(&self) -> bool {
        self.left.is_none()
    }
}

/// Reads the payload from stdin (at most 1 MiB), answers it with `respond`, prints the answer
/// and the reason. Returns the exit status, always 0.
pub fn emit(client: &str, quiet: bool, respond: impl FnOnce(&str) -> Answer) -> i32 {
    use std::io::Read;
    let mut payload = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(1 << 20)
        .read_to_end(&mut payload);
    let answer = match (read, String::from_utf8(payload)) {
        (Ok(_), Ok(text)) => respond(&text),
        (Err(e), _) => Answer::bad("{}", &format!("cannot read the payload: {e}")),
        (_, Err(_)) => Answer::bad("{}", "the payload is not UTF-8"),
    };
    crate::cmd::write_stdout(format!("{}\n", answer.json).as_bytes());
    if let Some(why) = &answer.left {
        if answer.bad_input || !quiet {
            eprintln!("[sqz] hook {client}: command runs as written: {why}");
        }
    }
    0
}

/// The fake analysis the hook tests use: `git status` is rewritten to a known string,
/// everything else is left as written.
#[cfg(test)]
pub fn test_decide(command: &str) -> crate::hook::rewrite::Decision {
    use crate::hook::rewrite::Decision;
    if command == "git status" {
        Decision::Rewrite("REWRITTEN git status".into())
    } else if command.trim().is_empty() {
        Decision::Leave("empty command")
    } else {
        Decision::Leave("fake: left")
    }
}
