//! What the MCP tools share: the server's context, a tool's output, argument checks, and how a
//! lossless listing goes out (a fresh repeat becomes `§ref:HASH§`).

use super::workspace::Workspace;
use crate::clock;
use crate::env::Env;
use crate::json::Value;
use crate::serve::read::{self, Lossless, Notes, Shown};
use crate::store::Store;

/// What the tools share for the life of the server.
pub struct Context {
    pub store: Option<Store>,
    pub env: Env,
    pub workspace: Workspace,
}

/// The content of one `tools/call` result.
pub struct ToolOutput {
    pub content: Vec<Value>,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![text_item(text.into())],
            is_error: false,
        }
    }

    pub fn error(message: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![text_item(message.into())],
            is_error: true,
        }
    }

    pub fn to_value(&self) -> Value {
        Value::Object(vec![
            ("content".into(), Value::Array(self.content.clone())),
            ("isError".into(), Value::Bool(self.is_error)),
        ])
    }
}

pub fn text_item(text: String) -> Value {
    Value::Object(vec![
        ("type".into(), Value::str("text")),
        ("text".into(), Value::String(text)),
    ])
}

/// A string argument; `Err` when it is required and missing or not a string.
pub fn string_arg(args: &Value, key: &str, required: bool) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) if !required => Ok(None),
        None | Some(Value::Null) => Err(format!("missing argument \"{key}\"")),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("argument \"{key}\" must be a string")),
    }
}

/// A positive integer argument within `1..=max`.
pub fn count_arg(args: &Value, key: &str, max: u64) -> Result<Option<u64>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
            _ => Err(format!(
                "argument \"{key}\" must be an integer from 1 to {max}"
            )),
        },
    }
}

pub fn bool_arg(args: &Value, key: &str) -> Result<bool, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("argument \"{key}\" must be true or false")),
    }
}

/// How a lossless tool's text goes out: a fresh repeat of the same bytes becomes `§ref:HASH§`;
/// anything else is sent whole and stored (unless it must not be), so a later repeat can be.
pub fn serve_whole(ctx: &mut Context, label: &str, body: &str) -> String {
    const SAME: &str = " (same as before)";
    let notes = Notes {
        repeat: SAME.into(),
        slice: String::new(),
        delta: String::new(),
    };
    let item = Lossless {
        label,
        original: body,
        body,
        path_key: None,
        partial: false,
        deltas: false,
        notes: &notes,
    };
    match read::serve(ctx.store.as_mut(), &ctx.env, clock::now_ms(), &item) {
        Shown::Repeat(token) => format!("{token}{SAME}\n"),
        _ => body.to_string(),
    }
}
