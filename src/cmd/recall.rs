//! `sqz recall QUERY`: full-text search (BM25) over everything sqz served, each hit with the
//! reference that `sqz expand` (or the MCP `expand` tool) turns back into the original.

use super::{open_store, write_stdout};
use crate::engine::dedup;
use crate::env::Env;
use crate::store::Store;

/// Hits listed best first: label, age, ref and a snippet. `Err` when the query has no word or
/// the store fails; the count says how many entries matched.
pub fn listing(
    store: &Store,
    query: &str,
    limit: usize,
    now: i64,
) -> Result<(String, usize), String> {
    let fts = crate::store::recall_query(query).ok_or("the query has no words to search for")?;
    let hits = store.recall(&fts, limit).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (n, hit) in hits.iter().enumerate() {
        let snippet = hit.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!(
            "{}. {} ({} ago) {}\n   {snippet}\n",
            n + 1,
            hit.label,
            super::resume::age(now - hit.last_served),
            dedup::ref_token(&hit.hash),
        ));
    }
    if hits.is_empty() {
        out.push_str("nothing served so far matches\n");
    }
    Ok((out, hits.len()))
}

pub fn run(query: &str, env: &Env) -> crate::error::Result<u8> {
    let store = open_store(env)?;
    let (text, hits) = listing(&store, query, 10, crate::clock::now_ms())
        .map_err(|e| crate::error::Error::usage(format!("recall: {e}")))?;
    write_stdout(text.as_bytes());
    Ok(u8::from(hits == 0))
}
