//! What every front end shares: opening the store, compress-and-record for one output, lossless
//! reads with references, slice references and deltas (`read`), expand (`expand`) and recall
//! (`recall`). The shell hook's `sqz compress`, `sqz hook claude-post`, the MCP tools and the
//! MCP proxy all come here, so each rule about what is stored and referenced lives once. Nothing
//! here reads the clock or the streams: `now` and the bytes are arguments.

pub mod expand;
pub mod read;
pub mod recall;

use crate::engine::{self, Kind, Settings};
use crate::env::Env;
use crate::error::Error;
use crate::store::{EntryWrite, Record, Store};

/// Opens the store at `SQZ_DB_PATH`. `Ok` carries the notice to print when a corrupt store was
/// moved aside (named for `now`); `Err` the one-line reason the store is unavailable.
pub fn open_store(env: &Env, now: i64) -> Result<(Store, Option<String>), Error> {
    Store::open(&env.db_path, now)
        .map_err(|e| Error::store(format!("cannot open {e} (set SQZ_DB_PATH to use another)")))
}

/// The store `sqz compress` writes, and the one-line notice to print, if any. Where a sandbox
/// will not let it write the configured store (Codex mounts HOME read-only), a private store
/// under the temp directory takes its place, and without one the output is served with no store
/// (lossless only). Neither is said: the agent would pay for a line about a sandbox it cannot
/// change, on every call.
pub fn open_store_for_compress(env: &Env, now: i64) -> (Option<Store>, Option<String>) {
    match Store::open(&env.db_path, now) {
        Ok((store, notice)) if !store.is_read_only() => return (Some(store), notice),
        Ok(_) => {}
        Err(e) if e.denied() => {}
        Err(e) => {
            let e = format!("cannot open {e} (set SQZ_DB_PATH to use another)");
            return (None, Some(format!("sqz: {e}; nothing stored")));
        }
    }
    let fallback = fallback_db_path(env);
    if !private_dir_or_absent(fallback.parent().unwrap_or(&env.tmp_dir)) {
        return (None, None);
    }
    match Store::open(&fallback, now) {
        Ok((store, notice)) if !store.is_read_only() => (Some(store), notice),
        _ => (None, None),
    }
}

/// Where `open_store_for_compress` keeps the store a sandbox lets it write:
/// `$TMPDIR/sqz-UID/sessions.db`.
pub fn fallback_db_path(env: &Env) -> std::path::PathBuf {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    env.tmp_dir.join(format!("sqz-{uid}")).join("sessions.db")
}

/// Whether `dir` is missing (the store will create it, 0700) or a directory of this user's that
/// no one else may enter. A shared temp directory lets anyone create `sqz-UID` first.
fn private_dir_or_absent(dir: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(dir) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        // SAFETY: as above.
        Ok(meta) => {
            meta.is_dir() && meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o077 == 0
        }
    }
}

/// What a hook handler may ask of the store. The handler stays a function of its payload and
/// this; `Live` is the real one (the shell hook, `sqz discover`), tests pass their own.
pub trait Backend {
    /// Compresses one command's output and records it, as `compress` does.
    fn compress(&mut self, label: &str, body: &[u8]) -> Served;
    /// `compress` with no reference, slice or delta to an earlier output: for a client that
    /// shows the result with no note beside it, so a repeat must come out whole again.
    fn compress_whole(&mut self, label: &str, body: &[u8]) -> Served {
        self.compress(label, body)
    }
    /// Serves a text that must reach the agent whole or as a stand-in (a file read).
    fn lossless(&mut self, item: &read::Lossless) -> read::Shown;
    /// Records text the agent produced itself (a Write, or a file as its Edit left it): the
    /// agent holds it, so a later read of it may be a reference or a delta.
    fn agent_wrote(&mut self, path: &str, text: &str);
}

/// The store at one moment, as a `Backend`.
pub struct Live<'a> {
    pub store: Option<&'a mut Store>,
    pub env: &'a Env,
    pub now: i64,
}

impl Backend for Live<'_> {
    fn compress(&mut self, label: &str, body: &[u8]) -> Served {
        compress(
            label,
            body,
            self.store.as_deref_mut(),
            false,
            self.env,
            self.now,
        )
    }

    fn compress_whole(&mut self, label: &str, body: &[u8]) -> Served {
        compress_unreferenced(label, body, self.store.as_deref_mut(), self.env, self.now)
    }

    fn lossless(&mut self, item: &read::Lossless) -> read::Shown {
        read::serve(self.store.as_deref_mut(), self.env, self.now, item)
    }

    fn agent_wrote(&mut self, path: &str, text: &str) {
        read::record_written(self.store.as_deref_mut(), self.env, self.now, path, text);
    }
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
pub fn compress(
    label: &str,
    body: &[u8],
    store: Option<&mut Store>,
    no_cache: bool,
    env: &Env,
    now: i64,
) -> Served {
    compress_with(label, body, store, !no_cache, !no_cache, env, now)
}

/// `compress` with the original stored but no reference, slice or delta to anything served
/// before: the result depends on the output alone, as the HTTP proxy needs to send a block
/// byte for byte the same on every turn.
pub fn compress_unreferenced(
    label: &str,
    body: &[u8],
    store: Option<&mut Store>,
    env: &Env,
    now: i64,
) -> Served {
    compress_with(label, body, store, true, false, env, now)
}

fn compress_with(
    label: &str,
    body: &[u8],
    store: Option<&mut Store>,
    stored: bool,
    dedup: bool,
    env: &Env,
    now: i64,
) -> Served {
    let settings = Settings {
        now,
        ttl_ms: env.ttl_ms(),
        dedup,
    };
    let engine_store = if stored { store.as_deref() } else { None };
    // A panic must not reach the agent as a failed command: the original output goes out. The
    // process's panic hook (set once, in main) stays as it is.
    let outcome = crate::fault::catch(|| engine::compress(label, body, engine_store, settings));
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
            let family = crate::doc::label::Label::parse(label).family();
            // A credential in the command line never reaches the store.
            let label = engine::route::redact_label(label);
            let record = Record {
                now,
                label: &label,
                family: &family,
                project: env.project.as_deref(),
                kind: outcome.kind,
                tokens_in: outcome.tokens_in,
                tokens_out: outcome.tokens_out,
                hash: Some(&outcome.hash),
                entry: outcome.store_entry.then(|| EntryWrite {
                    original: body,
                    served: outcome
                        .held
                        .as_deref()
                        .map(str::as_bytes)
                        .or(outcome.stdout.as_deref())
                        .unwrap_or(body),
                    path_key: outcome.path_key.as_deref(),
                    simhash: outcome.simhash,
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
        // Copied only now that the store has let go of what it wrote.
        served.stdout = outcome.stdout.unwrap_or_else(|| body.to_vec());
    }
    served
}
