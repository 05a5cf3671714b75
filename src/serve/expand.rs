//! Expand: the original bytes behind a reference, whole or a line range, for `sqz expand` and
//! the MCP expand tools alike. Each expand records an event.

use crate::doc::reference;
use crate::error::Error;
use crate::store::{EventKind, Record, Resolved, Store};

/// The message for a reference that does not parse.
pub fn malformed(input: &str) -> Error {
    Error::usage(format!(
        "malformed reference '{input}': expected HASH, HASH:La-b or §ref:HASH§"
    ))
}

/// The full hash and the bytes behind a reference (`§delta:HASH§` names its base), recording
/// one expand event at `now`. The error's code is `sqz expand`'s exit status: 1 no match, 2
/// ambiguous or malformed, 3 store error.
pub fn lookup(store: &mut Store, input: &str, now: i64) -> Result<(String, Vec<u8>), Error> {
    let missed = |code, message: String| Error::new(code, message);
    let Some(reference) = reference::parse(input) else {
        return Err(malformed(input));
    };
    let prefix = &reference.prefix;
    let hash = match store.resolve(prefix) {
        Ok(Resolved::One(hash)) => hash,
        Ok(Resolved::None) => return Err(missed(1, format!("no stored entry matches '{prefix}' (it may have been evicted, or stored on another machine)"))),
        Ok(Resolved::Ambiguous(n)) => {
            return Err(missed(2, format!("'{prefix}' matches {n} entries; use a longer prefix")))
        }
        Err(e) => return Err(missed(3, e.to_string())),
    };
    let original = match store.original(&hash) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(missed(1, format!("no stored entry matches '{prefix}'"))),
        Err(e) => return Err(missed(3, e.to_string())),
    };
    let bytes = match reference.lines {
        None => original,
        Some((first, last)) => match line_range(&original, first, last) {
            Some(slice) => slice.to_vec(),
            None => {
                return Err(missed(
                    1,
                    format!(
                        "entry {hash} has {} lines; L{first}-{last} is out of range",
                        crate::text::line_count(&original)
                    ),
                ))
            }
        },
    };
    // The expand is laid to the family of the call that served the entry.
    let family = match store.entry_label(&hash) {
        Ok(Some(label)) => crate::doc::label::Label::parse(&label).family(),
        _ => "unknown".to_string(),
    };
    let _ = store.record_event(&Record {
        now,
        label: input.trim(),
        family: &family,
        project: None,
        kind: EventKind::Expand,
        tokens_in: 0,
        tokens_out: 0,
        hash: Some(&hash),
        entry: None,
        touch: None,
    });
    Ok((hash, bytes))
}

/// Lines `first..=last` (1-based) of `bytes`, each with its line break; `last` is clamped.
pub fn line_range(bytes: &[u8], first: usize, last: usize) -> Option<&[u8]> {
    let mut starts = vec![0usize];
    starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
    if starts.last() == Some(&bytes.len()) {
        starts.pop();
    }
    let start = *starts.get(first - 1)?;
    let end = starts.get(last).copied().unwrap_or(bytes.len());
    Some(&bytes[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_whole_lines() {
        assert_eq!(line_range(b"a\nb\nc\n", 2, 3), Some(&b"b\nc\n"[..]));
        assert_eq!(line_range(b"a\nb\nc", 3, 9), Some(&b"c"[..]));
        assert_eq!(line_range(b"a\n", 2, 2), None);
    }
}
