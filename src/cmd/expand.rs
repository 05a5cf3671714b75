//! `sqz expand REF`: the original bytes behind a reference, whole or a line range. Exit 0
//! found, 1 no match, 2 ambiguous or malformed, 3 store error. Each expand records an event.

use super::{normalize_hash, open_store, write_stdout};
use crate::env::Env;
use crate::store::{Resolved, Store};

/// A parsed reference: hash prefix and optional 1-based inclusive line range.
#[derive(Debug, PartialEq, Eq)]
pub struct Reference {
    pub prefix: String,
    pub lines: Option<(usize, usize)>,
}

pub fn parse(input: &str) -> Option<Reference> {
    let t = input.trim().trim_start_matches('§').trim_end_matches('§');
    let t = t.strip_prefix("ref:").unwrap_or(t);
    let (hash, range) = match t.split_once(':') {
        Some((hash, range)) => (hash, Some(range)),
        None => (t, None),
    };
    let prefix = normalize_hash(hash)?;
    let lines = match range {
        None => None,
        Some(r) => {
            let r = r.strip_prefix('L').unwrap_or(r);
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
            if a == 0 || b < a {
                return None;
            }
            Some((a, b))
        }
    };
    Some(Reference { prefix, lines })
}

/// Why a reference could not be expanded, with `sqz expand`'s exit status for it.
pub struct Missed {
    pub code: i32,
    pub message: String,
}

/// The full hash and the bytes behind a reference (`§delta:HASH§` names its base), recording
/// one expand event. Shared by `sqz expand` and the MCP `expand` tools.
pub fn lookup(store: &mut Store, input: &str) -> Result<(String, Vec<u8>), Missed> {
    let missed = |code, message: String| Missed { code, message };
    let Some(reference) = parse(&input.trim().replacen("delta:", "ref:", 1)) else {
        return Err(missed(
            2,
            format!("malformed reference '{input}': expected HASH, HASH:La-b or §ref:HASH§"),
        ));
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
    let _ = store.record_event(crate::clock::now_ms(), input.trim(), "expand", Some(&hash));
    Ok((hash, bytes))
}

pub fn run(input: &str, env: &Env) -> crate::error::Result<u8> {
    use crate::error::Error;
    // A malformed reference is a usage error whether or not the store opens.
    if parse(&input.trim().replacen("delta:", "ref:", 1)).is_none() {
        return Err(Error::usage(format!(
            "malformed reference '{input}': expected HASH, HASH:La-b or §ref:HASH§"
        )));
    }
    let mut store = open_store(env)?;
    let (_, bytes) = lookup(&mut store, input)
        .map_err(|missed| Error::new(missed.code as u8, missed.message))?;
    write_stdout(&bytes);
    Ok(0)
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
    fn parses_every_reference_form() {
        let r = |prefix: &str, lines| {
            Some(Reference {
                prefix: prefix.into(),
                lines,
            })
        };
        assert_eq!(parse("§ref:0123abcd§"), r("0123abcd", None));
        assert_eq!(
            parse("§ref:0123abcd:L41-80§"),
            r("0123abcd", Some((41, 80)))
        );
        assert_eq!(parse("ABCD:L3-3"), r("abcd", Some((3, 3))));
        assert_eq!(parse("ref:abc"), r("abc", None));
        assert_eq!(parse("xyz"), None);
        assert_eq!(parse("abc:L5-2"), None);
        assert_eq!(parse("abc:L0-2"), None);
    }

    #[test]
    fn ranges_are_whole_lines() {
        assert_eq!(line_range(b"a\nb\nc\n", 2, 3), Some(&b"b\nc\n"[..]));
        assert_eq!(line_range(b"a\nb\nc", 3, 9), Some(&b"c"[..]));
        assert_eq!(line_range(b"a\n", 2, 2), None);
    }
}
