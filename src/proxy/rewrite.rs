//! Which parts of an LLM API request body are tool results, and the command each answers. Only
//! those strings are handed to the compressor; every other member (system prompts, user and
//! assistant text, tool definitions, images) is left as it is, keys in their order and numbers
//! in their text. A tool result is handed over whether or not it carries `cache_control`:
//! clients move that marker to the newest block every turn, so a block skipped while it had the
//! marker would change on the next request and break the provider's prompt cache from there.

use crate::json::Value;

/// The request formats the proxy knows, by path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI `/v1/chat/completions`: `role: "tool"` messages.
    OpenAiChat,
    /// OpenAI `/v1/responses`: `function_call_output` items.
    OpenAiResponses,
    /// Anthropic `/v1/messages`: `tool_result` blocks.
    Anthropic,
    /// Google `…/models/M:generateContent` and `:streamGenerateContent`: `functionResponse`
    /// parts.
    Google,
}

impl Provider {
    /// The format a request path names, query left out.
    pub fn for_path(path: &str) -> Option<Provider> {
        let path = path.split('?').next().unwrap_or("");
        if path.ends_with("/chat/completions") {
            Some(Provider::OpenAiChat)
        } else if path.ends_with("/responses") {
            Some(Provider::OpenAiResponses)
        } else if path.ends_with("/messages") {
            Some(Provider::Anthropic)
        } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
            Some(Provider::Google)
        } else {
            None
        }
    }
}

/// One tool result handed to the compressor: the command it answers (or the tool's name), its
/// text, and where it stands in the body (`messages.3.content.0`), which with its content
/// keys the decision made for it.
pub struct Block<'a> {
    pub label: &'a str,
    pub text: &'a str,
    pub position: &'a str,
}

/// What a rewrite found: tool results seen and replaced.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Counts {
    /// The body has the provider's list of turns (`messages`, `input` or `contents`).
    pub known: bool,
    pub tool_results: usize,
    pub compressed: usize,
}

/// Replaces each tool result in `body` with what `compress` returns for it (`None` leaves it).
pub fn rewrite(
    provider: Provider,
    body: &mut Value,
    compress: &mut dyn FnMut(&Block) -> Option<String>,
) -> Counts {
    let list = match provider {
        Provider::OpenAiChat | Provider::Anthropic => "messages",
        Provider::OpenAiResponses => "input",
        Provider::Google => "contents",
    };
    let mut counts = Counts {
        known: body.get(list).and_then(Value::as_array).is_some(),
        ..Counts::default()
    };
    let mut apply = |slot: &mut Value, label: &str, position: String| {
        let Some(text) = slot.as_str() else { return };
        counts.tool_results += 1;
        let block = Block {
            label,
            text,
            position: &position,
        };
        if let Some(new) = compress(&block) {
            *slot = Value::String(new);
            counts.compressed += 1;
        }
    };
    match provider {
        Provider::OpenAiChat => openai_chat(body, &mut apply),
        Provider::OpenAiResponses => openai_responses(body, &mut apply),
        Provider::Anthropic => anthropic(body, &mut apply),
        Provider::Google => google(body, &mut apply),
    }
    counts
}

type Apply<'a> = dyn FnMut(&mut Value, &str, String) + 'a;

/// The command a tool call ran, from its arguments: `command` or `cmd` as a string, or the
/// last word of an argv list (`["bash", "-lc", "cargo test"]`); else the tool's name.
fn label_from_args(name: &str, args: Option<&Value>) -> String {
    let command = args.and_then(|a| a.get("command").or_else(|| a.get("cmd")));
    match command {
        Some(Value::String(c)) => c.clone(),
        Some(Value::Array(words)) => words
            .last()
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_string(),
        _ => name.to_string(),
    }
}

/// Arguments that arrive as a JSON string (OpenAI), parsed.
fn parsed_args(args: Option<&Value>) -> Option<Value> {
    match args {
        Some(Value::String(text)) => crate::json::parse(text).ok(),
        Some(other) => Some(other.clone()),
        None => None,
    }
}

/// `text` or `[{type: "text", text}]` content, each text handed to `apply`.
fn content(slot: &mut Value, label: &str, at: &str, apply: &mut Apply) {
    match slot {
        Value::String(_) => apply(slot, label, at.to_string()),
        Value::Array(parts) => {
            for (k, part) in parts.iter_mut().enumerate() {
                if part.get("type").and_then(Value::as_str) != Some("text") {
                    continue;
                }
                if let Some(text) = part.get_mut("text") {
                    apply(text, label, format!("{at}.{k}"));
                }
            }
        }
        _ => {}
    }
}

fn openai_chat(body: &mut Value, apply: &mut Apply) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let mut labels: Vec<(String, String)> = Vec::new();
    for (i, message) in messages.iter_mut().enumerate() {
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                let function = call.get("function");
                let name = function
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("tool");
                let args = parsed_args(function.and_then(|f| f.get("arguments")));
                labels.push((id.to_string(), label_from_args(name, args.as_ref())));
            }
        }
        if message.get("role").and_then(Value::as_str) != Some("tool") {
            continue;
        }
        let id = message
            .get("tool_call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let label = labels
            .iter()
            .rfind(|(k, _)| *k == id)
            .map_or("tool", |(_, l)| l.as_str())
            .to_string();
        if let Some(slot) = message.get_mut("content") {
            content(slot, &label, &format!("messages.{i}.content"), apply);
        }
    }
}

fn openai_responses(body: &mut Value, apply: &mut Apply) {
    let Some(items) = body.get_mut("input").and_then(Value::as_array_mut) else {
        return;
    };
    let mut labels: Vec<(String, String)> = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        let id = item
            .get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") | Some("local_shell_call") => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("tool");
                let args = parsed_args(item.get("arguments").or_else(|| item.get("action")));
                labels.push((id, label_from_args(name, args.as_ref())));
            }
            Some("function_call_output") | Some("local_shell_call_output") => {
                let label = labels
                    .iter()
                    .rfind(|(k, _)| *k == id)
                    .map_or("tool", |(_, l)| l.as_str())
                    .to_string();
                if let Some(slot) = item.get_mut("output") {
                    apply(slot, &label, format!("input.{i}.output"));
                }
            }
            _ => {}
        }
    }
}

fn anthropic(body: &mut Value, apply: &mut Apply) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let mut labels: Vec<(String, String)> = Vec::new();
    for (i, message) in messages.iter_mut().enumerate() {
        let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
            continue;
        };
        for (j, block) in blocks.iter_mut().enumerate() {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                    labels.push((id.to_string(), label_from_args(name, block.get("input"))));
                }
                Some("tool_result") => {
                    let id = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let label = labels
                        .iter()
                        .rfind(|(k, _)| k == id)
                        .map_or("tool", |(_, l)| l.as_str())
                        .to_string();
                    if let Some(slot) = block.get_mut("content") {
                        content(slot, &label, &format!("messages.{i}.content.{j}"), apply);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The members of a `functionResponse.response` that hold a tool's text output.
const GOOGLE_TEXT_FIELDS: [&str; 5] = ["output", "content", "result", "stdout", "text"];

fn google(body: &mut Value, apply: &mut Apply) {
    let Some(contents) = body.get_mut("contents").and_then(Value::as_array_mut) else {
        return;
    };
    let mut labels: Vec<(String, String)> = Vec::new();
    for (i, entry) in contents.iter_mut().enumerate() {
        let Some(parts) = entry.get_mut("parts").and_then(Value::as_array_mut) else {
            continue;
        };
        for (j, part) in parts.iter_mut().enumerate() {
            if let Some(call) = part.get("functionCall") {
                let name = call.get("name").and_then(Value::as_str).unwrap_or("tool");
                labels.push((name.to_string(), label_from_args(name, call.get("args"))));
                continue;
            }
            let Some(answer) = part.get_mut("functionResponse") else {
                continue;
            };
            let name = answer
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("tool")
                .to_string();
            let label = labels
                .iter()
                .rfind(|(k, _)| *k == name)
                .map_or(name.as_str(), |(_, l)| l.as_str())
                .to_string();
            let Some(response) = answer.get_mut("response") else {
                continue;
            };
            for field in GOOGLE_TEXT_FIELDS {
                if let Some(slot) = response.get_mut(field) {
                    let at = format!("contents.{i}.parts.{j}.functionResponse.response.{field}");
                    apply(slot, &label, at);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(provider: Provider, body: &str) -> (String, Vec<(String, String, String)>) {
        let mut v = crate::json::parse(body).unwrap();
        let mut seen = Vec::new();
        rewrite(provider, &mut v, &mut |b: &Block| {
            seen.push((
                b.label.to_string(),
                b.text.to_string(),
                b.position.to_string(),
            ));
            Some(format!("<{}>", b.text.len()))
        });
        (v.to_compact(), seen)
    }

    #[test]
    fn paths_name_their_format() {
        assert_eq!(
            Provider::for_path("/v1/chat/completions"),
            Some(Provider::OpenAiChat)
        );
        assert_eq!(
            Provider::for_path("/v1/responses"),
            Some(Provider::OpenAiResponses)
        );
        assert_eq!(
            Provider::for_path("/v1/messages?beta=true"),
            Some(Provider::Anthropic)
        );
        assert_eq!(
            Provider::for_path("/v1beta/models/gemini-2.5-pro:generateContent"),
            Some(Provider::Google)
        );
        assert_eq!(
            Provider::for_path("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
            Some(Provider::Google)
        );
        assert_eq!(Provider::for_path("/v1/embeddings"), None);
    }

    #[test]
    fn only_tool_results_change_cache_control_or_not_and_each_knows_its_command() {
        let (out, seen) = run(
            Provider::Anthropic,
            r#"{"model":"m","max_tokens":1024,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"running"},{"type":"tool_use","id":"t1","name":"bash","input":{"command":"cargo test"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok 12"},{"type":"tool_result","tool_use_id":"t1","content":"kept","cache_control":{"type":"ephemeral"}}]}],"temperature":0.70}"#,
        );
        assert_eq!(
            out,
            r#"{"model":"m","max_tokens":1024,"system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"running"},{"type":"tool_use","id":"t1","name":"bash","input":{"command":"cargo test"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"<5>"},{"type":"tool_result","tool_use_id":"t1","content":"<4>","cache_control":{"type":"ephemeral"}}]}],"temperature":0.70}"#
        );
        // The block that carries `cache_control` is compressed like any other: the marker
        // moves to the newest block every turn, and the decision must not move with it.
        assert_eq!(
            seen,
            [
                (
                    "cargo test".into(),
                    "ok 12".into(),
                    "messages.2.content.0".into()
                ),
                (
                    "cargo test".into(),
                    "kept".into(),
                    "messages.2.content.1".into()
                )
            ]
        );
        let (_, seen) = run(
            Provider::OpenAiChat,
            r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"git status\"]}"}}]},{"role":"tool","tool_call_id":"c1","content":"clean"}]}"#,
        );
        assert_eq!(seen[0].0, "git status");
        let (_, seen) = run(
            Provider::Google,
            r#"{"contents":[{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls -la"}}}]},{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"a\nb"}}}]}]}"#,
        );
        assert_eq!(seen[0].0, "ls -la");
        assert_eq!(
            seen[0].2,
            "contents.1.parts.0.functionResponse.response.output"
        );
        let (_, seen) = run(
            Provider::OpenAiResponses,
            r#"{"input":[{"type":"function_call","call_id":"x","name":"exec","arguments":"{\"cmd\":\"make\"}"},{"type":"function_call_output","call_id":"x","output":"done"}]}"#,
        );
        assert_eq!(seen[0].0, "make");
    }
}
