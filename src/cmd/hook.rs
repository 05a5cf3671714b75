//! `sqz hook CLIENT`: read the payload, let the client's handler answer it, print the answer and
//! at most one line of reason, and exit 0 whatever happens, so the agent always goes on.

use super::io::write_stdout;
use crate::clock::now_ms;
use crate::env::Env;
use crate::error::Result;
use crate::hook::answer::{Answer, NO_CHANGE};
use crate::hook::{claude, codex, copilot, gemini, opencode, Client};
use crate::serve::{Backend, Live};
use crate::store::Store;
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
        Client::Claude => claude::pre_answer(payload, |cwd, command| {
            claude::SettingsPlaces {
                home: env.home.as_deref(),
                config_dir: env.claude_config_dir.as_deref(),
                // The payload's cwd follows every `cd`; the project root does not.
                project: env.claude_project_dir.as_deref().or(cwd),
            }
            .permissions()
            .runs_rewrite_unasked(command)
        }),
        Client::ClaudePost => {
            let mut backend = Lazy::new(env);
            let ceiling = env.max_input_mb.saturating_mul(1 << 20);
            let read_saved = |path: &str| read_bounded(std::path::Path::new(path), ceiling);
            let inline = claude::Inline {
                limit: env.bash_max_output_length,
                read_saved: &read_saved,
            };
            claude::post_answer(payload, &inline, &mut backend)
        }
        Client::Gemini => {
            let mut backend = Lazy::new(env);
            match gemini::respond(payload, &mut backend) {
                gemini::Reply::Now(answer) => answer,
                gemini::Reply::Write { path, text } => match write_replacement(&path, &text) {
                    Ok(()) => gemini::tail_call(&path),
                    Err(e) => Answer::bad(&format!("cannot write {}: {e}", path.display())),
                },
            }
        }
        Client::Copilot => copilot::respond(payload, &mut Lazy::new(env)),
        Client::OpenCode => opencode::respond(payload, &mut Lazy::new(env)),
        Client::Codex => {
            let home = codex::codex_home(env.codex_home.as_deref(), env.home.as_deref());
            codex::respond(payload, codex::allowed_program(home.as_deref()).as_deref())
        }
        Client::PreCompact => Answer::unchanged(),
    }
}

/// A file's bytes when it is a regular file of at most `ceiling` bytes.
fn read_bounded(path: &std::path::Path, ceiling: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > ceiling {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(ceiling + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= ceiling).then_some(bytes)
}

/// The store as a `Backend`, opened on the first output to compress: a payload that is bad or
/// left alone writes nothing.
struct Lazy<'a> {
    env: &'a Env,
    now: i64,
    store: Option<Option<Store>>,
}

impl<'a> Lazy<'a> {
    fn new(env: &'a Env) -> Lazy<'a> {
        Lazy {
            env,
            now: now_ms(),
            store: None,
        }
    }

    fn live(&mut self) -> Live<'_> {
        let (env, now) = (self.env, self.now);
        let store = self
            .store
            .get_or_insert_with(|| crate::serve::open_store(env, now).ok().map(|(s, _)| s));
        Live {
            store: store.as_mut(),
            env,
            now,
        }
    }
}

impl Backend for Lazy<'_> {
    fn compress(&mut self, label: &str, body: &[u8]) -> crate::serve::Served {
        self.live().compress(label, body)
    }

    fn compress_whole(&mut self, label: &str, body: &[u8]) -> crate::serve::Served {
        self.live().compress_whole(label, body)
    }

    fn lossless(&mut self, item: &crate::serve::read::Lossless) -> crate::serve::read::Shown {
        self.live().lossless(item)
    }

    fn agent_wrote(&mut self, path: &str, text: &str) {
        self.live().agent_wrote(path, text)
    }
}

/// How long a Gemini replacement file is kept: the client reads it right after the hook answers.
const REPLACEMENT_KEPT_SECS: u64 = 24 * 60 * 60;

/// Writes a Gemini replacement (named by its hash, so a repeat is the same file) through a
/// temporary file and a rename, so the client never reads half of one while a parallel call
/// writes it, and removes the ones older than a day beside it.
fn write_replacement(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir)?;
    if let Ok(entries) = std::fs::read_dir(dir) {
        let old = std::time::Duration::from_secs(REPLACEMENT_KEPT_SECS);
        for entry in entries.flatten() {
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > old));
            if stale && entry.path().extension().is_some_and(|e| e == "txt") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
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
