//! Small store commands: tokens, pin/unpin, forget, reset.

use super::{normalize_hash, open_store, write_stdout};
use crate::env::Env;
use crate::store::{Resolved, Store};
use std::io::Read;
use std::path::Path;

pub fn tokens(file: Option<&Path>) -> i32 {
    let bytes = match file {
        Some(path) => match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("sqz: cannot read {}: {e}", path.display());
                return 1;
            }
        },
        None => {
            let mut buf = Vec::new();
            if let Err(e) = std::io::stdin().lock().read_to_end(&mut buf) {
                eprintln!("sqz: cannot read stdin: {e}");
                return 1;
            }
            buf
        }
    };
    write_stdout(format!("{}\n", crate::tokens::count_bytes(&bytes)).as_bytes());
    0
}

/// Resolves a user-typed prefix to one stored hash, or the exit code to return.
fn resolve_one(store: &crate::store::Store, input: &str) -> Result<String, i32> {
    let Some(prefix) = normalize_hash(input) else {
        eprintln!("sqz: malformed hash '{input}': expected hex digits");
        return Err(2);
    };
    match store.resolve(&prefix) {
        Ok(Resolved::One(hash)) => Ok(hash),
        Ok(Resolved::None) => {
            eprintln!("sqz: no stored entry matches '{prefix}'");
            Err(1)
        }
        Ok(Resolved::Ambiguous(n)) => {
            eprintln!("sqz: '{prefix}' matches {n} entries; use a longer prefix");
            Err(2)
        }
        Err(e) => {
            eprintln!("sqz: {e}");
            Err(3)
        }
    }
}

/// Opens the store, resolves `input` to one entry, and applies `act`, printing its message.
fn on_entry(
    input: &str,
    env: &Env,
    act: impl FnOnce(&mut Store, &str) -> crate::store::Result<String>,
) -> i32 {
    let mut store = match open_store(env) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let hash = match resolve_one(&store, input) {
        Ok(h) => h,
        Err(code) => return code,
    };
    match act(&mut store, &hash) {
        Ok(message) => {
            eprintln!("{message}");
            0
        }
        Err(e) => {
            eprintln!("sqz: {e}");
            3
        }
    }
}

pub fn pin(input: &str, pinned: bool, env: &Env) -> i32 {
    on_entry(input, env, |store, hash| {
        store.set_pinned(hash, pinned)?;
        Ok(format!(
            "[sqz] {} {hash}",
            if pinned { "pinned" } else { "unpinned" }
        ))
    })
}

pub fn forget(input: &str, env: &Env) -> i32 {
    on_entry(input, env, |store, hash| {
        store.forget(hash)?;
        Ok(format!("[sqz] forgot {hash}"))
    })
}

pub fn reset(all: bool, env: &Env) -> i32 {
    let mut store = match open_store(env) {
        Ok(s) => s,
        Err(code) => return code,
    };
    match store.reset(all) {
        Ok(n) => {
            let what = if all { " and all history" } else { "" };
            write_stdout(format!("[sqz] cleared {n} stored entries{what}\n").as_bytes());
            0
        }
        Err(e) => {
            eprintln!("sqz: {e}");
            3
        }
    }
}
