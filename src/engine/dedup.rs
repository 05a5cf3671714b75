//! Dedup probes (SPEC §5): an exact repeat of fresh content becomes `§ref:HASH§`; a line range
//! of a fresh earlier read becomes `§ref:HASH:La-b§`. A reference is only ever sent when the
//! entry is fresh (served within the TTL, after the compaction marker, or pinned).

use crate::store::{EntryState, SliceCandidate};

/// Slices smaller than this are sent whole.
pub const SLICE_MIN_BYTES: usize = 160;
pub const SLICE_MIN_LINES: usize = 2;

/// Whether the agent plausibly still has an entry in context.
pub fn is_fresh(state: EntryState, compaction_marker: i64, now: i64, ttl_ms: i64) -> bool {
    state.pinned
        || (ttl_ms > 0 && state.last_served > compaction_marker && now - state.last_served < ttl_ms)
}

pub fn ref_token(hash: &str) -> String {
    format!("§ref:{hash}§")
}

pub fn slice_token(hash: &str, first: usize, last: usize) -> String {
    format!("§ref:{hash}:L{first}-{last}§")
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
            let ends_line =
                end == c.original.len() || input.ends_with(b"\n") || c.original[end] == b'\n';
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
    if !super::route::label_reads_file(label) {
        return None;
    }
    label
        .split_ascii_whitespace()
        .skip(1)
        .filter(|w| !w.starts_with('-') && w.contains('.'))
        .last()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
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
