//! The one answer every hook gives: the JSON for stdout, and why the command runs as written
//! when it does. Handlers are pure (payload in, answer out); `cmd/hook.rs` reads the payload,
//! prints the answer and always exits 0, so the agent goes on whatever happens.

use crate::json::Value;

/// A hook's answer to one payload.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    /// The JSON document for stdout, without the newline.
    pub json: String,
    /// Why the command runs as written, when there is something to say.
    pub left: Option<String>,
    /// Whether the payload itself was bad (said even with `SQZ_QUIET`).
    pub bad_input: bool,
}

/// The answer that changes nothing: the client runs the command as written.
pub const NO_CHANGE: &str = "{}";

/// The payload as JSON, or the answer that lets the command run as written.
pub fn parse(payload: &str) -> Result<Value, Answer> {
    crate::json::parse(payload).map_err(|e| Answer::bad(&format!("malformed JSON payload ({e})")))
}

/// `{"hookSpecificOutput":{"hookEventName":EVENT,KEY:VALUE}}`, the shape Claude Code and
/// Gemini CLI read a hook's changes from.
pub fn specific(event: &str, key: &str, value: Value) -> String {
    let mut specific = Value::object();
    specific.set("hookEventName", Value::str(event));
    specific.set(key, value);
    let mut out = Value::object();
    out.set("hookSpecificOutput", specific);
    out.to_compact()
}

impl Answer {
    /// The call was changed; `json` carries the change.
    pub fn changed(json: String) -> Answer {
        Answer {
            json,
            left: None,
            bad_input: false,
        }
    }

    /// Nothing to change and nothing to say (a background command, output already small).
    pub fn unchanged() -> Answer {
        Answer {
            json: NO_CHANGE.to_owned(),
            left: None,
            bad_input: false,
        }
    }

    /// The command runs as written, for this reason.
    pub fn leave(why: &str) -> Answer {
        Answer {
            json: NO_CHANGE.to_owned(),
            left: Some(why.to_owned()),
            bad_input: false,
        }
    }

    /// The payload could not be read; the client runs the original command.
    pub fn bad(why: &str) -> Answer {
        Answer {
            json: NO_CHANGE.to_owned(),
            left: Some(why.to_owned()),
            bad_input: true,
        }
    }

    /// Whether the call was changed.
    pub fn rewrote(&self) -> bool {
        self.json != NO_CHANGE
    }

    /// The one stderr line for this answer, if any: a bad payload is always said, a reason to
    /// leave the command alone only without `SQZ_QUIET`.
    pub fn stderr_line(&self, client: &str, quiet: bool) -> Option<String> {
        let why = self.left.as_ref()?;
        (self.bad_input || !quiet)
            .then(|| format!("[sqz] hook {client}: command runs as written: {why}"))
    }
}
