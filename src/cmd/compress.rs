//! `sqz compress`: read stdin, strip the exit trailer, let the engine decide, write the store
//! in one transaction, then print. It never fails: on any problem the agent gets the original
//! output and the original exit status, with at most one line of reason on stderr.

use crate::cli::Compress;
use crate::clock::now_ms;
use crate::engine::{self, trailer, Kind, Settings};
use crate::env::Env;
use crate::store::{EntryWrite, Record, Store};
use std::io::{Read, Write};

pub fn run(args: &Compress, env: &Env) -> i32 {
    let label = args.label.clone().unwrap_or_else(|| env.cmd_label.clone());
    let ceiling = (env.max_input_mb as usize) << 20;
    let input = match &args.text {
        Some(text) => text.clone().into_bytes(),
        None => match read_bounded(ceiling) {
            Ok(Input::Whole(bytes)) => bytes,
            Ok(Input::Oversized(head)) => return stream_oversized(head, env),
            Err(e) => {
                eprintln!("sqz: cannot read stdin: {e}");
                return 1;
            }
        },
    };
    let (body, exit_code) = if args.text.is_some() {
        (&input[..], None)
    } else {
        trailer::strip(&input)
    };
    let code = exit_code.unwrap_or(0);
    let no_cache = args.no_cache || env.no_dedup;

    let (mut store, store_problem) = open_for_call(env);
    let served = serve(&label, body, store.as_mut(), no_cache, env, now_ms());
    emit(&served.stdout, served.header.as_deref(), env);
    // Errors always print; the informational passthrough reason is silenced by SQZ_QUIET.
    for problem in store_problem.into_iter().chain(served.notice) {
        eprintln!("{problem}");
    }
    let reason = served
        .reason
        .filter(|r| !(*r == engine::EMPTY_INPUT && exit_code.is_some()));
    if let (Some(reason), false) = (reason, env.quiet) {
        eprintln!("[sqz] passed through unchanged: {reason}");
    }
    code
}

/// What one call prints.
pub struct Served {
    pub stdout: Vec<u8>,
    pub header: Option<String>,
    pub kind: Kind,
    pub hash: String,
    /// A store problem that made the output pass through unchanged.
    pub notice: Option<String>,
    /// Why the input passed through untouched (binary, invalid UTF-8, empty).
    pub reason: Option<&'static str>,
}

/// Runs the engine on `body` and writes the store in one transaction. The store write decides
/// whether a lossy result may be shown: markers must point at bytes that really are stored.
pub fn serve(
    label: &str,
    body: &[u8],
    store: Option<&mut Store>,
    no_cache: bool,
    env: &Env,
    now: i64,
) -> Served {
    let settings = Settings {
        now,
        ttl_ms: (env.ref_ttl_secs as i64).saturating_mul(1000),
        dedup: !no_cache,
    };
    let engine_store = if no_cache { None } else { store.as_deref() };
    // A panic must not reach the agent as a failed command: silence the default report and
    // fall back to the original output.
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        engine::compress(label, body, engine_store, settings)
    }));
    let _ = std::panic::take_hook();
    let Ok(outcome) = outcome else {
        return Served {
            stdout: body.to_vec(),
            header: None,
            kind: Kind::Passthrough,
            hash: String::new(),
            notice: Some(
                "sqz: internal error while compressing; output passed through unchanged".into(),
            ),
            reason: None,
        };
    };
    let mut served = Served {
        header: outcome.header.clone(),
        kind: outcome.kind,
        hash: outcome.hash.clone(),
        notice: None,
        reason: outcome.reason,
        stdout: Vec::new(),
    };
    let needs_store = outcome.store_entry || outcome.touch.is_some();
    let written = match store {
        Some(store) => {
            let record = Record {
                now,
                label,
                kind: outcome.kind.as_str(),
                tokens_in: outcome.tokens_in,
                tokens_out: outcome.tokens_out,
                hash: Some(&outcome.hash),
                entry: outcome.store_entry.then(|| EntryWrite {
                    original: body,
                    served: &outcome.stdout,
                    path_key: outcome.path_key.as_deref(),
                    // A file read from the shell can be the base of an MCP read's delta.
                    simhash: outcome.path_key.as_ref().and_then(|_| {
                        std::str::from_utf8(&outcome.stdout)
                            .ok()
                            .map(crate::engine::delta::simhash)
                    }),
                }),
                touch: outcome.touch.as_deref(),
            };
            match store.record(&record, env.limits()) {
                Ok(()) => true,
                Err(e) => {
                    served.notice = Some(format!("sqz: {e}; output passed through unchanged"));
                    false
                }
            }
        }
        None => false,
    };
    if needs_store && !written {
        served.stdout = body.to_vec();
        served.header = None;
        served.kind = Kind::Passthrough;
    } else {
        served.stdout = outcome.stdout;
    }
    served
}

/// The store for this call, or the one-line reason it is unavailable (then nothing is stored
/// and only lossless stages run).
fn open_for_call(env: &Env) -> (Option<Store>, Option<String>) {
    match Store::open(&env.db_path) {
        Ok((store, notice)) => (Some(store), notice),
        Err(e) => (
            None,
            Some(format!(
                "sqz: cannot open {e} (set SQZ_DB_PATH to use another); nothing stored"
            )),
        ),
    }
}

fn emit(stdout: &[u8], header: Option<&str>, env: &Env) {
    super::write_stdout(stdout);
    if let (Some(header), false) = (header, env.quiet) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{header}");
    }
}

enum Input {
    Whole(Vec<u8>),
    /// More than the ceiling: the bytes read so far; the rest is still on stdin.
    Oversized(Vec<u8>),
}

fn read_bounded(ceiling: usize) -> std::io::Result<Input> {
    let mut buf = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(ceiling as u64 + 1)
        .read_to_end(&mut buf)?;
    Ok(if read > ceiling {
        Input::Oversized(buf)
    } else {
        Input::Whole(buf)
    })
}

/// Streams an input over the ceiling straight through, holding back only enough bytes to
/// strip a final exit trailer, so it is never held in memory twice.
fn stream_oversized(head: Vec<u8>, env: &Env) -> i32 {
    let mut out = std::io::stdout().lock();
    let mut pending = head;
    let mut chunk = vec![0u8; 1 << 16];
    let mut stdin = std::io::stdin().lock();
    let mut broken = false;
    loop {
        if pending.len() > trailer::MAX_TRAILER_LEN {
            let cut = pending.len() - trailer::MAX_TRAILER_LEN;
            if !broken && out.write_all(&pending[..cut]).is_err() {
                broken = true;
            }
            pending.drain(..cut);
        }
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let (body, code) = trailer::strip(&pending);
    if !broken {
        let _ = out.write_all(body).and_then(|()| out.flush());
    }
    if !env.quiet {
        eprintln!(
            "[sqz] passed through unchanged: larger than {} MiB (SQZ_MAX_INPUT_MB)",
            env.max_input_mb
        );
    }
    code.unwrap_or(0)
}
