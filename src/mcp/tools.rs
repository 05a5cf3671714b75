//! The MCP server's tools: their schemas and descriptions, argument checks, and the text tools
//! (`compress`, `passthrough`, `expand`, `sqz_recall`). A tool that fails answers `isError`
//! with one line the model can act on; it never takes the server down.

use super::context::{count_arg, string_arg};
pub use super::context::{Context, ToolOutput};
use super::files;
use crate::clock;
use crate::json::Value;

/// (name, description, input schema as JSON).
const TOOLS: &[(&str, &str, &str)] = &[
    (
        "sqz_read_file",
        "Read a text file, losslessly. A re-read the conversation already holds comes back as §ref:HASH§ (unchanged), §ref:HASH:La-b§ (lines of an earlier full read) or §delta:HASH§ (changed lines of an earlier read, with one line of context; apply it to that read). Prefer it for source files and logs you may read more than once; use your built-in read tool for tiny config files and byte-exact lockfiles.",
        r#"{"type":"object","properties":{"path":{"type":"string","description":"file path, relative to the workspace or absolute"},"offset":{"type":"integer","minimum":1,"description":"first line to read (1-based)"},"limit":{"type":"integer","minimum":1,"description":"number of lines to read"},"max_bytes":{"type":"integer","minimum":1,"description":"cap on the bytes returned (default 262144); the header says what was cut"}},"required":["path"],"additionalProperties":false}"#,
    ),
    (
        "sqz_grep",
        "Search files under a path for a fixed string (or, with regex: true, a regex subset: literals, . [] [^] \\d \\w \\s \\b ^ $ () (?:) | * + ? {n,m}). Results are path:line:text, grouped by file; .git, node_modules, target and .venv are skipped and counted. Use your built-in search for one small file.",
        r#"{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"file or directory (default .)"},"regex":{"type":"boolean","description":"treat pattern as a regex (default false: fixed string)"},"ignore_case":{"type":"boolean"},"max_matches":{"type":"integer","minimum":1,"description":"default 200"}},"required":["pattern"],"additionalProperties":false}"#,
    ),
    (
        "sqz_list_dir",
        "List a directory tree to a depth, sorted, directories ending in /; .git, node_modules, target and .venv are skipped and counted.",
        r#"{"type":"object","properties":{"path":{"type":"string","description":"directory (default .)"},"depth":{"type":"integer","minimum":1,"maximum":16,"description":"levels to descend (default 1)"}},"additionalProperties":false}"#,
    ),
    (
        "sqz_recall",
        "Full-text search over everything sqz served earlier in this and past sessions; each hit has a ref to pass to expand.",
        r#"{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":50,"description":"default 5"}},"required":["query"],"additionalProperties":false}"#,
    ),
    (
        "expand",
        "Return the original bytes behind §ref:HASH§, §ref:HASH:La-b§, §delta:HASH§ (the base), a hash prefix, or HASH:La-b from any sqz output or omission marker.",
        r#"{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"],"additionalProperties":false}"#,
    ),
    (
        "compress",
        "Compress a command's output for the conversation the way the sqz shell hook does: repeats become refs, noise folds into counted markers, facts stay verbatim. Pass the command as label.",
        r#"{"type":"object","properties":{"text":{"type":"string"},"label":{"type":"string","description":"the command that printed the text, e.g. cargo test"}},"required":["text"],"additionalProperties":false}"#,
    ),
    (
        "passthrough",
        "Return the text unchanged.",
        r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#,
    ),
];

/// The `tools/list` result.
pub fn list() -> Value {
    let tools = TOOLS
        .iter()
        .map(|(name, description, schema)| {
            Value::Object(vec![
                ("name".into(), Value::str(name)),
                ("description".into(), Value::str(description)),
                (
                    "inputSchema".into(),
                    crate::json::parse(schema).unwrap_or_else(|_| Value::object()),
                ),
            ])
        })
        .collect();
    Value::Object(vec![("tools".into(), Value::Array(tools))])
}

pub fn exists(name: &str) -> bool {
    TOOLS.iter().any(|(n, _, _)| *n == name)
}

/// Runs one tool; `name` is known to exist.
pub fn call(ctx: &mut Context, name: &str, args: &Value) -> ToolOutput {
    let result = match name {
        "sqz_read_file" => files::read_file(ctx, args),
        "sqz_grep" => files::grep(ctx, args),
        "sqz_list_dir" => files::list_dir(ctx, args),
        "sqz_recall" => recall(ctx, args),
        "expand" => expand(ctx, args),
        "compress" => compress(ctx, args),
        "passthrough" => {
            string_arg(args, "text", true).map(|t| ToolOutput::text(t.unwrap_or_default()))
        }
        _ => Err(format!("unknown tool {name}")),
    };
    result.unwrap_or_else(ToolOutput::error)
}

fn compress(ctx: &mut Context, args: &Value) -> Result<ToolOutput, String> {
    let text = string_arg(args, "text", true)?.unwrap_or_default();
    let label = string_arg(args, "label", false)?.unwrap_or_else(|| "mcp compress".into());
    let no_cache = ctx.env.no_dedup;
    let served = crate::serve::compress(
        &label,
        text.as_bytes(),
        ctx.store.as_mut(),
        no_cache,
        &ctx.env,
        clock::now_ms(),
    );
    let body = String::from_utf8_lossy(&served.stdout).into_owned();
    Ok(ToolOutput::text(match served.header {
        Some(header) => format!("{header}\n{body}"),
        None => body,
    }))
}

fn expand(ctx: &mut Context, args: &Value) -> Result<ToolOutput, String> {
    let input = match string_arg(args, "ref", false)? {
        Some(r) => r,
        None => string_arg(args, "prefix", false)?.ok_or("missing argument \"ref\"")?,
    };
    let store = ctx
        .store
        .as_mut()
        .ok_or("the store is not available, so nothing can be expanded")?;
    let (hash, bytes) = crate::serve::expand::lookup(store, &input, clock::now_ms())
        .map_err(|missed| missed.message)?;
    Ok(match std::str::from_utf8(&bytes) {
        Ok(s) => ToolOutput::text(s),
        // Not text: an embedded resource keeps every byte.
        Err(_) => ToolOutput {
            content: vec![Value::Object(vec![
                ("type".into(), Value::str("resource")),
                (
                    "resource".into(),
                    Value::Object(vec![
                        ("uri".into(), Value::String(format!("sqz://entry/{hash}"))),
                        ("mimeType".into(), Value::str("application/octet-stream")),
                        ("blob".into(), Value::String(base64(&bytes))),
                    ]),
                ),
            ])],
            is_error: false,
        },
    })
}

fn recall(ctx: &mut Context, args: &Value) -> Result<ToolOutput, String> {
    let query = string_arg(args, "query", true)?.unwrap_or_default();
    let limit = count_arg(args, "limit", 50)?.unwrap_or(5) as usize;
    let store = ctx
        .store
        .as_ref()
        .ok_or("the store is not available, so there is nothing to search")?;
    let (hits, count) = crate::serve::recall::listing(store, &query, limit, clock::now_ms())?;
    Ok(ToolOutput::text(format!(
        "[sqz_recall query={query:?} hits={count}]\n{hits}"
    )))
}

/// Standard base64 with padding, for bytes that are not text.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, b| acc << 8 | *b as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, expected) in cases {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn every_schema_is_an_object() {
        let list = list();
        for tool in list.get("tools").unwrap().as_array().unwrap() {
            let schema = tool.get("inputSchema").unwrap();
            assert_eq!(schema.get("type").and_then(Value::as_str), Some("object"));
        }
    }
}
