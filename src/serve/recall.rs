//! Recall: full-text search (BM25) over everything sqz served, each hit with the reference that
//! `sqz expand` (or the MCP `expand` tool) turns back into the original. Shared by `sqz recall`
//! and the MCP `sqz_recall` tool.

use crate::doc::reference;
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
            age(now - hit.last_served),
            reference::ref_token(&hit.hash),
        ));
    }
    if hits.is_empty() {
        out.push_str("nothing served so far matches\n");
    }
    Ok((out, hits.len()))
}

/// How long ago, in the largest whole unit: `42s`, `5m`, `3h`, `2d`.
pub fn age(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}
