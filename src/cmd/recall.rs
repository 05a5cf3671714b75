//! `sqz recall QUERY`: the 10 best entries sqz served for QUERY. Exit 0 with hits, 1 without,
//! 2 for a query with no words.

use super::io::{open_store_to_read, write_stdout};
use crate::clock::now_ms;
use crate::env::Env;
use crate::error::{Error, Result};

pub fn run(query: &str, env: &Env) -> Result<u8> {
    let store = open_store_to_read(env)?;
    let (text, hits) = crate::serve::recall::listing(&store, query, 10, now_ms())
        .map_err(|e| Error::usage(format!("recall: {e}")))?;
    write_stdout(text.as_bytes());
    Ok(u8::from(hits == 0))
}
