//! `sqz expand REF`: print the original bytes behind a reference, whole or a line range. Exit 0
//! found, 1 no match, 2 ambiguous or malformed, 3 store error.

use super::io::{open_store_to_read, write_stdout};
use crate::clock::now_ms;
use crate::env::Env;
use crate::error::Result;
use crate::serve::expand;
use crate::store::Store;

pub fn run(input: &str, env: &Env) -> Result<u8> {
    // A malformed reference is a usage error whether or not the store opens.
    if crate::doc::reference::parse(input).is_none() {
        return Err(expand::malformed(input));
    }
    let found =
        open_store_to_read(env).and_then(|mut store| expand::lookup(&mut store, input, now_ms()));
    let (_, bytes) = match found {
        Err(e) if e.code != 2 => fallback(env, input).ok_or(e)?,
        other => other?,
    };
    write_stdout(&bytes);
    Ok(0)
}

/// The same lookup in the store `sqz compress` wrote where a sandbox kept it from the usual one.
fn fallback(env: &Env, input: &str) -> Option<(String, Vec<u8>)> {
    let path = crate::serve::fallback_db_path(env);
    if !path.is_file() {
        return None;
    }
    let mut store = match Store::open(&path, now_ms()) {
        Ok((store, _)) => store,
        Err(_) => Store::open_read_only(&path).ok()?,
    };
    expand::lookup(&mut store, input, now_ms()).ok()
}
