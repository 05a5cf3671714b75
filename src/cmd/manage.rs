//! Small store commands: tokens, pin/unpin, forget, reset.

use super::io::{open_store, write_stdout};
use crate::doc::reference::normalize_hash;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::store::{Resolved, Store};
use std::io::Read;
use std::path::Path;

pub fn tokens(file: Option<&Path>) -> Result<u8> {
    let bytes = match file {
        Some(path) => std::fs::read(path)
            .map_err(|e| Error::failed(format!("cannot read {}: {e}", path.display())))?,
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut buf)
                .map_err(|e| Error::failed(format!("cannot read stdin: {e}")))?;
            buf
        }
    };
    write_stdout(format!("{}\n", crate::tokens::count_bytes(&bytes)).as_bytes());
    Ok(0)
}

/// Resolves a user-typed prefix to one stored hash.
fn resolve_one(store: &crate::store::Store, input: &str) -> Result<String> {
    let prefix = normalize_hash(input)
        .ok_or_else(|| Error::usage(format!("malformed hash '{input}': expected hex digits")))?;
    match store.resolve(&prefix) {
        Ok(Resolved::One(hash)) => Ok(hash),
        Ok(Resolved::None) => Err(Error::failed(format!("no stored entry matches '{prefix}'"))),
        Ok(Resolved::Ambiguous(n)) => Err(Error::usage(format!(
            "'{prefix}' matches {n} entries; use a longer prefix"
        ))),
        Err(e) => Err(Error::store(e.to_string())),
    }
}

/// Opens the store, resolves `input` to one entry, and applies `act`, printing its message.
fn on_entry(
    input: &str,
    env: &Env,
    act: impl FnOnce(&mut Store, &str) -> crate::store::Result<String>,
) -> Result<u8> {
    let mut store = open_store(env)?;
    let hash = resolve_one(&store, input)?;
    let message = act(&mut store, &hash).map_err(|e| Error::store(e.to_string()))?;
    eprintln!("{message}");
    Ok(0)
}

pub fn pin(input: &str, pinned: bool, env: &Env) -> Result<u8> {
    on_entry(input, env, |store, hash| {
        store.set_pinned(hash, pinned)?;
        Ok(format!(
            "[sqz] {} {hash}",
            if pinned { "pinned" } else { "unpinned" }
        ))
    })
}

pub fn forget(input: &str, env: &Env) -> Result<u8> {
    on_entry(input, env, |store, hash| {
        store.forget(hash)?;
        Ok(format!("[sqz] forgot {hash}"))
    })
}

pub fn reset(all: bool, env: &Env) -> Result<u8> {
    let mut store = open_store(env)?;
    let n = store.reset(all).map_err(|e| Error::store(e.to_string()))?;
    let what = if all { " and all history" } else { "" };
    write_stdout(format!("[sqz] cleared {n} stored entries{what}\n").as_bytes());
    Ok(0)
}
