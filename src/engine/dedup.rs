//! Dedup probes (SPEC §5): an exact repeat of fresh content becomes `§ref:HASH§`; a line range
//! of a fresh earlier read becomes `§ref:HASH:La-b§`. A reference is only ever sent when the
//! entry is fresh (served within the TTL, after the compaction marker, or pinned). Every front
//! end (the shell hook, the MCP tools, the proxy) goes through `Freshness`, `probe` and
//! `stand_in_pays`; the tokens themselves are written in `doc::reference`.

use super::delta;
use crate::doc::reference::REF_TOKEN_COST;
use crate::store::{EntryState, SliceCandidate, Store};

/// Slices smaller than this are sent whole.
pub const SLICE_MIN_BYTES: usize = 160;
pub const SLICE_MIN_LINES: usize = 2;
/// Earlier outputs larger than this are not searched for a slice: the probe reads each
/// candidate whole, so this bounds a call's memory.
pub const SLICE_CANDIDATE_MAX_BYTES: usize = 4 << 20;

/// The one freshness rule: an entry may be referenced only while the agent plausibly still
/// holds it, that is when it is pinned, or was last served within the TTL and after the latest
/// compaction marker. The store's candidate queries use `oldest()`, the same rule as a bound.
#[derive(Clone, Copy, Debug)]
pub struct Freshness {
    marker: i64,
    now: i64,
    ttl_ms: i64,
}

impl Freshness {
    /// `None` when references are off (a TTL of 0) or the store cannot say: then everything is
    /// sent in full.
    pub fn read(store: &Store, now: i64, ttl_ms: i64) -> Option<Freshness> {
        if ttl_ms <= 0 {
            return None;
        }
        Some(Freshness {
            marker: store.compaction_marker().ok()?,
            now,
            ttl_ms,
        })
    }

    /// Whether the agent plausibly still holds this entry.
    pub fn admits(&self, state: EntryState) -> bool {
        state.pinned
            || (state.last_served > self.marker && self.now - state.last_served < self.ttl_ms)
    }

    /// The oldest `last_served` still fresh (pinned entries aside).
    pub fn oldest(&self) -> i64 {
        self.marker.max(self.now - self.ttl_ms)
    }
}

/// The one cost rule for anything sent instead of content (a reference, a slice reference, a
/// delta): content of `REF_TOKEN_COST` tokens or fewer always goes out whole, and a stand-in
/// goes out only when it and its note cost fewer tokens than the content.
pub fn stand_in_pays(content_tokens: usize, stand_in_tokens: usize) -> bool {
    content_tokens > REF_TOKEN_COST && stand_in_tokens < content_tokens
}

/// What the probe found the agent already holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Hit {
    /// The same bytes, fresh.
    Repeat,
    /// Whole lines of a fresh earlier output.
    Slice(SliceRef),
}

/// The one probe for repeats: an exact repeat of a fresh entry first; when `slices` allows it,
/// then whole lines of a fresh earlier output (those of `path_key` first). A stale exact entry
/// means no reference at all. Store errors only mean no reference.
pub fn probe(
    store: &Store,
    fresh: &Freshness,
    hash: &str,
    input: &[u8],
    agent_text: &str,
    path_key: Option<&str>,
    slices: bool,
) -> Option<Hit> {
    if let Ok(Some(state)) = store.lookup(hash) {
        return fresh.admits(state).then_some(Hit::Repeat);
    }
    if !slices {
        return None;
    }
    let candidates = store
        .slice_candidates(path_key, input.len(), SLICE_CANDIDATE_MAX_BYTES)
        .ok()?;
    find_slice(input, agent_text, &candidates, |s| fresh.admits(s)).map(Hit::Slice)
}

/// The one search for a near-repeat's base: among fresh entries of the same path or a close
/// SimHash, the smallest delta that turns what the agent was shown of one into `text`.
pub fn best_delta(
    store: &Store,
    fresh: &Freshness,
    path_key: Option<&str>,
    sim: u64,
    text: &str,
) -> Option<String> {
    let bases = store
        .delta_candidates(
            path_key,
            sim,
            delta::NEAR_DISTANCE,
            fresh.oldest(),
            delta::MAX_BASES,
        )
        .ok()?;
    bases
        .iter()
        .filter_map(|base| {
            let base_text = std::str::from_utf8(&base.served).ok()?;
            delta::worth_trying(base_text, text)
                .then(|| delta::encode(&base.hash, base_text, text))?
        })
        .min_by_key(|d| crate::tokens::count(d))
}

/// A found slice: the entry's hash and the 1-based inclusive line range.
#[derive(Debug, PartialEq, Eq)]
pub struct SliceRef {
    pub hash: String,
    pub first: usize,
    pub last: usize,
}

/// Finds `input` as whole lines of a candidate's original whose served bytes also hold those
/// lines (so a reference never points at lines a lossy stage hid).
pub fn find_slice(
    input: &[u8],
    agent_text: &str,
    candidates: &[SliceCandidate],
    fresh: impl Fn(EntryState) -> bool,
) -> Option<SliceRef> {
    if input.len() < SLICE_MIN_BYTES || crate::text::line_count(input) < SLICE_MIN_LINES {
        return None;
    }
    for c in candidates
        .iter()
        .filter(|c| fresh(c.state) && c.original.len() > input.len())
    {
        for pos in memchr::memmem::find_iter(&c.original, input) {
            let starts_line = pos == 0 || c.original[pos - 1] == b'\n';
            let end = pos + input.len();
            // A range that ends inside the candidate must end with its line break, or its
            // expansion (whole lines) would hold one byte the input does not.
            let ends_line = end == c.original.len() || input.ends_with(b"\n");
            if !(starts_line && ends_line) {
                continue;
            }
            if memchr::memmem::find(&c.served, agent_text.as_bytes()).is_none() {
                break;
            }
            let first = 1 + memchr::memchr_iter(b'\n', &c.original[..pos]).count();
            let last = first + crate::text::line_count(input) - 1;
            return Some(SliceRef {
                hash: c.hash.clone(),
                first,
                last,
            });
        }
    }
    None
}

/// The file a `cat FILE`-like label read, used to find slice candidates quickly.
pub fn path_key(label: &str) -> Option<String> {
    crate::doc::label::Label::parse(label)
        .file_read()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(original: &str) -> SliceCandidate {
        SliceCandidate {
            hash: "h".into(),
            original: original.as_bytes().to_vec(),
            served: original.as_bytes().to_vec(),
            state: EntryState {
                pinned: false,
                last_served: 1,
            },
        }
    }

    #[test]
    fn finds_line_ranges_only_on_boundaries() {
        let full: String = (1..=200)
            .map(|n| format!("line number {n} of a long source file\n"))
            .collect();
        let slice: String = (41..=80)
            .map(|n| format!("line number {n} of a long source file\n"))
            .collect();
        let c = [candidate(&full)];
        let found = find_slice(slice.as_bytes(), &slice, &c, |_| true).unwrap();
        assert_eq!((found.first, found.last), (41, 80));
        let partial = &slice[3..];
        assert!(find_slice(partial.as_bytes(), partial, &c, |_| true).is_none());
        assert!(find_slice(slice.as_bytes(), &slice, &c, |_| false).is_none());
    }

    #[test]
    fn path_keys() {
        assert_eq!(
            path_key("sed -n '41,80p' src/lib.rs").as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(
            path_key("head -50 src/lib.rs").as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(path_key("cargo test"), None);
    }
}
