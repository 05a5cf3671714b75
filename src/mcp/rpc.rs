//! JSON-RPC 2.0 messages as MCP's stdio transport frames them: one compact JSON object per line.
//! Parsing never panics on any bytes; a line that is not a message becomes an error answer with
//! the right code, never silence and never the end of the session.

use crate::json::{self, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// The request names a protocol version this side does not speak (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// One message read from the other side.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// An answer to a request this side sent.
    Response {
        id: Value,
        result: Option<Value>,
        error: Option<Value>,
    },
}

/// Why a line is not a message, with the id to answer to when one could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub id: Option<Value>,
    pub code: i64,
    pub message: String,
}

/// Parses one line (without its line break).
pub fn parse(line: &[u8]) -> Result<Message, Rejected> {
    let reject = |id: Option<Value>, code, message: String| Rejected { id, code, message };
    let text = std::str::from_utf8(line)
        .map_err(|e| reject(None, PARSE_ERROR, format!("parse error: not UTF-8 ({e})")))?;
    let value =
        json::parse(text).map_err(|e| reject(None, PARSE_ERROR, format!("parse error: {e}")))?;
    let Some(members) = value.as_object() else {
        let what = if value.as_array().is_some() {
            "batches are not supported"
        } else {
            "a message must be a JSON object"
        };
        return Err(reject(
            None,
            INVALID_REQUEST,
            format!("invalid request: {what}"),
        ));
    };
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let id = get("id").cloned();
    let valid_id = |id: &Value| matches!(id, Value::String(_) | Value::Number(_));
    if get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(reject(
            id.filter(valid_id),
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"".into(),
        ));
    }
    if let Some(id) = &id {
        if !valid_id(id) {
            return Err(reject(
                None,
                INVALID_REQUEST,
                "invalid request: \"id\" must be a string or a number".into(),
            ));
        }
    }
    let params = get("params").cloned();
    if let Some(p) = &params {
        if p.as_object().is_none() && p.as_array().is_none() {
            return Err(reject(
                id,
                INVALID_REQUEST,
                "invalid request: \"params\" must be an object".into(),
            ));
        }
    }
    match (get("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Message::Request {
            id,
            method: method.clone(),
            params,
        }),
        (Some(Value::String(method)), None) => Ok(Message::Notification {
            method: method.clone(),
            params,
        }),
        (Some(_), id) => Err(reject(
            id,
            INVALID_REQUEST,
            "invalid request: \"method\" must be a string".into(),
        )),
        (None, Some(id)) if get("result").is_some() || get("error").is_some() => {
            Ok(Message::Response {
                id,
                result: get("result").cloned(),
                error: get("error").cloned(),
            })
        }
        (None, id) => Err(reject(
            id,
            INVALID_REQUEST,
            "invalid request: no \"method\"".into(),
        )),
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` as one line, without the line break.
pub fn result_line(id: &Value, result: Value) -> String {
    Value::Object(vec![
        ("jsonrpc".into(), Value::str("2.0")),
        ("id".into(), id.clone()),
        ("result".into(), result),
    ])
    .to_compact()
}

/// An error answer; `id` is null when the request's id could not be read.
pub fn error_line(id: Option<&Value>, code: i64, message: &str) -> String {
    error_line_with_data(id, code, message, None)
}

/// An error answer with a `data` member for the client to act on.
pub fn error_line_with_data(
    id: Option<&Value>,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> String {
    let mut error = vec![
        ("code".into(), Value::int(code)),
        ("message".into(), Value::str(message)),
    ];
    if let Some(data) = data {
        error.push(("data".into(), data));
    }
    Value::Object(vec![
        ("jsonrpc".into(), Value::str("2.0")),
        ("id".into(), id.cloned().unwrap_or(Value::Null)),
        ("error".into(), Value::Object(error)),
    ])
    .to_compact()
}

/// A request from this side to the other (`roots/list`).
pub fn request_line(id: &str, method: &str) -> String {
    Value::Object(vec![
        ("jsonrpc".into(), Value::str("2.0")),
        ("id".into(), Value::str(id)),
        ("method".into(), Value::str(method)),
    ])
    .to_compact()
}

impl Rejected {
    pub fn answer(&self) -> String {
        error_line(self.id.as_ref(), self.code, &self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        let m = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(m, Message::Request { method, .. } if method == "ping"));
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Message::Notification { .. }));
        let m = parse(br#"{"jsonrpc":"2.0","id":"r1","result":{"roots":[]}}"#).unwrap();
        assert!(matches!(m, Message::Response { .. }));
    }

    #[test]
    fn rejects_with_the_right_code() {
        assert_eq!(parse(b"not json").unwrap_err().code, PARSE_ERROR);
        assert_eq!(parse(b"{\"a\":\xff}").unwrap_err().code, PARSE_ERROR);
        assert_eq!(parse(b"[1,2]").unwrap_err().code, INVALID_REQUEST);
        let e = parse(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#).unwrap_err();
        assert_eq!((e.code, e.id), (INVALID_REQUEST, Some(Value::int(7))));
        let e = parse(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap_err();
        assert_eq!((e.code, e.id.clone()), (INVALID_REQUEST, None));
        assert!(e.answer().contains("\"id\":null"));
    }
}
