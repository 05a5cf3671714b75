//! `sqz hook CLIENT`: read the payload, let the client's handler answer it, print the answer and
//! at most one line of reason, and exit 0 whatever happens, so the agent always goes on.

use super::io::write_stdout;
use crate::clock::now_ms;
use crate::env::Env;
use crate::error::Result;
use crate::hook::answer::{Answer, NO_CHANGE};
use crate::hook::{claude, codex, copilot, gemini, opencode, rewrite, Client};
use crate::serve::Live;
use std::io::Read;

/// The largest payload read; a larger one is answered as if it were unreadable.
const MAX_PAYLOAD: u64 = 64 << 20;

pub fn run(name: &str, env: &Env) -> Result<u8> {
    let Some(client) = Client::parse(name) else {
        eprintln!(
            "sqz: unknown hook client '{name}' (supported: {})",
            Client::names()
        );
        write_stdout(format!("{NO_CHANGE}\n").as_bytes());
        return Ok(0);
    };
    let payload = read_payload();
    if client == Client::PreCompact {
        return Ok(precompact(env));
    }
    // A handler that panics must not block the agent either: the command runs as written.
    let answer = match payload {
        Ok(payload) => crate::fault::catch(|| respond(client, &payload, env))
            .unwrap_or_else(|report| Answer::bad(&format!("internal error: {report}"))),
        Err(why) => Answer::bad(&why),
    };
    write_stdout(format!("{}\n", answer.json).as_bytes());
    if let Some(line) = answer.stderr_line(client.name(), env.quiet) {
        eprintln!("{line}");
    }
    Ok(0)
}

/// The payload on stdin, as UTF-8 text.
fn read_payload() -> std::result::Result<String, String> {
    let mut payload = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD)
        .read_to_end(&mut payload)
        .map_err(|e| format!("cannot read the payload: {e}"))?;
    String::from_utf8(payload).map_err(|_| "the payload is not UTF-8".to_string())
}

fn respond(client: Client, payload: &str, env: &Env) -> Answer {
    match client {
        Client::Claude => claude::pre_answer(payload, |cwd| {
            let files =
                claude::settings_files(env.home.as_deref(), env.claude_config_dir.as_deref(), cwd);
            claude::allowed_shape(&files)
        }),
        Client::ClaudePost => {
            let now = now_ms();
            let mut store = crate::serve::open_store(env, now).ok().map(|(s, _)| s);
            let mut backend = Live {
                store: store.as_mut(),
                env,
                now,
            };
            claude::post_answer(payload, env.bash_max_output_length, &mut backend)
        }
        Client::Gemini => gemini::respond(payload, rewrite::decide),
        Client::Copilot => copilot::respond(payload, rewrite::decide),
        Client::OpenCode => opencode::respond(payload, rewrite::decide),
        Client::Codex => {
            let home = codex::codex_home(env.codex_home.as_deref(), env.home.as_deref());
            codex::respond(payload, codex::allowed_program(home.as_deref()).as_deref())
        }
        Client::PreCompact => Answer::unchanged(),
    }
}

/// `sqz hook precompact`: the agent is about to compact its context, so nothing served before
/// now may be referenced again. The payload says which session compacts; the marker is global,
/// so it is only drained. Answers `{}` whatever happens.
fn precompact(env: &Env) -> u8 {
    let marked = crate::serve::open_store(env, now_ms())
        .map_err(|e| e.to_string())
        .and_then(|(mut store, _)| {
            store
                .set_compaction_marker(now_ms())
                .map_err(|e| e.to_string())
        });
    match marked {
        Ok(()) if !env.quiet => {
            eprintln!("[sqz] precompact: earlier output will be sent in full again")
        }
        Ok(()) => {}
        Err(e) => eprintln!("sqz: precompact: {e}"),
    }
    write_stdout(format!("{NO_CHANGE}\n").as_bytes());
    0
}
