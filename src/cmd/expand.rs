//! `sqz expand REF`: print the original bytes behind a reference, whole or a line range. Exit 0
//! found, 1 no match, 2 ambiguous or malformed, 3 store error.

use super::io::{open_store_to_read, write_stdout};
use crate::clock::now_ms;
use crate::env::Env;
use crate::error::Result;
use crate::serve::expand;

pub fn run(input: &str, env: &Env) -> Result<u8> {
    // A malformed reference is a usage error whether or not the store opens.
    if crate::doc::reference::parse(input).is_none() {
        return Err(expand::malformed(input));
    }
    let mut store = open_store_to_read(env)?;
    let (_, bytes) = expand::lookup(&mut store, input, now_ms())?;
    write_stdout(&bytes);
    Ok(0)
}
