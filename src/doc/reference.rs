//! Every reference sqz writes into an agent's context, written and parsed here and nowhere
//! else: `§ref:HASH§` (an exact repeat), `§ref:HASH:La-b§` (lines of an earlier output),
//! `§delta:HASH§` (the head of a delta against an earlier read) and `HASH:La-b` (the line range
//! a fold marker names). `sqz expand` and the MCP expand tools accept any of them, or a bare
//! hash prefix.

/// Content of this many tokens or fewer is always sent in full: a reference costs about this.
pub const REF_TOKEN_COST: usize = 13;

const REF_OPEN: &str = "§ref:";
const DELTA_OPEN: &str = "§delta:";
const CLOSE: char = '§';

pub fn ref_token(hash: &str) -> String {
    format!("{REF_OPEN}{hash}{CLOSE}")
}

pub fn slice_token(hash: &str, first: usize, last: usize) -> String {
    format!("{REF_OPEN}{}{CLOSE}", lines_target(hash, first, last))
}

pub fn delta_token(base_hash: &str) -> String {
    format!("{DELTA_OPEN}{base_hash}{CLOSE}")
}

/// `HASH:La-b`, what a fold marker tells the agent to expand (1-based, inclusive).
pub fn lines_target(hash: &str, first: usize, last: usize) -> String {
    format!("{hash}:L{first}-{last}")
}

/// Whether a line is the head of a delta.
pub fn is_delta_head(line: &str) -> bool {
    line.starts_with(DELTA_OPEN) && line.ends_with(CLOSE)
}

/// Whether a line starts like a delta head (it would be misread inside a delta's body).
pub fn opens_delta(line: &str) -> bool {
    line.starts_with(DELTA_OPEN)
}

/// Whether text holds a reference token anywhere.
pub fn holds_ref(text: &str) -> bool {
    text.contains(REF_OPEN)
}

/// Every `§ref:…§` token in `text`, in order.
pub fn refs_in(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(REF_OPEN) {
        let after = &rest[at + REF_OPEN.len()..];
        let Some(end) = after.find(CLOSE) else { break };
        tokens.push(format!("{REF_OPEN}{}{CLOSE}", &after[..end]));
        rest = &after[end + CLOSE.len_utf8()..];
    }
    tokens
}

/// A parsed reference: hash prefix and optional 1-based inclusive line range.
#[derive(Debug, PartialEq, Eq)]
pub struct Reference {
    pub prefix: String,
    pub lines: Option<(usize, usize)>,
}

/// Any form a user or agent may pass to expand: `§ref:H§`, `§ref:H:La-b§`, `§delta:H§` (its
/// base), `ref:H`, `H:La-b`, `H:a-b` or `H`, with surrounding space; hex is case-insensitive.
pub fn parse(input: &str) -> Option<Reference> {
    let t = input.trim();
    let t = t.strip_prefix(CLOSE).unwrap_or(t);
    let t = t.strip_suffix(CLOSE).unwrap_or(t);
    let t = ["ref:", "delta:"]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t);
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

/// A hash prefix as typed: `§ref:…§`, `ref:…` and surrounding space allowed; lower-cased.
pub fn normalize_hash(input: &str) -> Option<String> {
    let t = input
        .trim()
        .trim_start_matches(CLOSE)
        .trim_end_matches(CLOSE);
    let t = t.strip_prefix("ref:").unwrap_or(t);
    let t = t.to_ascii_lowercase();
    (!t.is_empty() && t.len() <= 64 && t.bytes().all(|b| b.is_ascii_hexdigit())).then_some(t)
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
        assert_eq!(parse("§delta:abc§"), r("abc", None));
        assert_eq!(parse("xyz"), None);
        assert_eq!(parse("abc:L5-2"), None);
        assert_eq!(parse("abc:L0-2"), None);
    }

    #[test]
    fn what_is_written_parses_back() {
        assert_eq!(parse(&ref_token("ab12")), r_of("ab12", None));
        assert_eq!(
            parse(&slice_token("ab12", 4, 9)),
            r_of("ab12", Some((4, 9)))
        );
        assert_eq!(parse(&delta_token("ab12")), r_of("ab12", None));
        assert_eq!(
            parse(&lines_target("ab12", 1, 2)),
            r_of("ab12", Some((1, 2)))
        );
        assert!(is_delta_head(&delta_token("ab12")));
        assert!(holds_ref(&format!("x {} y", ref_token("ab"))));
    }

    fn r_of(prefix: &str, lines: Option<(usize, usize)>) -> Option<Reference> {
        Some(Reference {
            prefix: prefix.into(),
            lines,
        })
    }
}
