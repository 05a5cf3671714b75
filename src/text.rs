//! Small text helpers shared by every stage: content hashes and cuts that never split a UTF-8
//! character.

use sha2::{Digest, Sha256};

/// Hex digits of a content hash, as used in `§ref:HASH§` (SPEC §5).
pub const HASH_LEN: usize = 16;

/// Hex digits of the hash shown in headers and omission markers: a prefix that `sqz expand`
/// resolves, three tokens cheaper than the whole hash on every marker the agent pays for.
pub const SHOWN_HASH_LEN: usize = 12;

/// The prefix of `hash` that headers and markers show.
pub fn shown_hash(hash: &str) -> &str {
    &hash[..hash.len().min(SHOWN_HASH_LEN)]
}

/// The first 16 lowercase hex digits of the SHA-256 of `bytes`.
///
/// ```
/// assert_eq!(sqz::text::hash16(b"abc"), "ba7816bf8f01cfea");
/// ```
pub fn hash16(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(HASH_LEN);
    for byte in &digest[..HASH_LEN / 2] {
        out.push(char::from(b"0123456789abcdef"[(byte >> 4) as usize]));
        out.push(char::from(b"0123456789abcdef"[(byte & 15) as usize]));
    }
    out
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
///
/// ```
/// assert_eq!(sqz::text::cut_at_char("héllo", 2), "h");
/// ```
pub fn cut_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Number of lines in `bytes` as `str::lines` would count them.
pub fn line_count(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_sha256_prefix() {
        assert_eq!(hash16(b""), "e3b0c44298fc1c14");
        assert_eq!(hash16(b"abc"), "ba7816bf8f01cfea");
    }

    #[test]
    fn cuts_respect_characters() {
        assert_eq!(cut_at_char("héllo", 2), "h");
        assert_eq!(cut_at_char("héllo", 3), "hé");
        assert_eq!(cut_at_char("ab", 10), "ab");
        assert_eq!(line_count(b"a\nb"), 2);
        assert_eq!(line_count(b"a\nb\n"), 2);
        assert_eq!(line_count(b""), 0);
    }
}
