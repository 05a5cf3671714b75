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

/// Where bytes that are not UTF-8 go while the stages work on text: byte `b` (always 0x80 or
/// above) becomes the private-use character U+F700 + `b`, and back again on the way out.
const BYTE_CHARS: u32 = 0xF700;

/// The input as text, every stage's view of it. Valid UTF-8 is borrowed; each byte of an
/// invalid sequence becomes one stand-in character that [`encode_bytes`] turns back into that
/// byte, so one stray byte changes nothing about how the rest is treated. `None` when the input
/// already holds a stand-in character, which could not then be told from a stand-in.
///
/// ```
/// let text = sqz::text::decode_bytes(b"caf\xe9 ok\n").unwrap();
/// assert_eq!(sqz::text::encode_bytes(&text), b"caf\xe9 ok\n");
/// ```
pub fn decode_bytes(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let mut rest = match std::str::from_utf8(bytes) {
        Ok(text) => return Some(std::borrow::Cow::Borrowed(text)),
        Err(_) => bytes,
    };
    let mut out = String::with_capacity(bytes.len() + 16);
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                out.push_str(text);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                // Checked just above: `valid` is UTF-8.
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len());
                for &b in &after[..bad] {
                    out.push(char::from_u32(BYTE_CHARS + u32::from(b)).unwrap_or('\u{fffd}'));
                }
                rest = &after[bad..];
            }
        }
    }
    let clash = |c: char| (BYTE_CHARS + 0x80..BYTE_CHARS + 0x100).contains(&u32::from(c));
    // A stand-in already in the valid parts would come back as a byte it never was.
    let valid_parts_clash = std::str::from_utf8(bytes).is_err()
        && out.chars().filter(|&c| clash(c)).count() != invalid_byte_count(bytes);
    (!valid_parts_clash).then_some(std::borrow::Cow::Owned(out))
}

/// How many bytes of `bytes` belong to no valid UTF-8 sequence.
fn invalid_byte_count(mut bytes: &[u8]) -> usize {
    let mut count = 0;
    while let Err(e) = std::str::from_utf8(bytes) {
        let after = &bytes[e.valid_up_to()..];
        let bad = e.error_len().unwrap_or(after.len());
        count += bad;
        bytes = &after[bad..];
    }
    count
}

/// The bytes `text` stands for: [`decode_bytes`] undone.
pub fn encode_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for c in text.chars() {
        let code = u32::from(c);
        if (BYTE_CHARS + 0x80..BYTE_CHARS + 0x100).contains(&code) {
            out.push((code - BYTE_CHARS) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_round_trip_and_valid_text_is_borrowed() {
        for bytes in [
            &b"plain\n"[..],
            b"caf\xe9\n\xff\xfe tail",
            b"cut \xe2\x82",
            "ok \u{20ac}".as_bytes(),
        ] {
            let text = decode_bytes(bytes).expect("decodes");
            assert_eq!(encode_bytes(&text), bytes);
        }
        assert!(matches!(
            decode_bytes(b"valid"),
            Some(std::borrow::Cow::Borrowed("valid"))
        ));
        // A stand-in character already in the input: it could not be told apart.
        let mut clash = "\u{f7e9}".as_bytes().to_vec();
        clash.push(0xe9);
        assert!(decode_bytes(&clash).is_none());
    }

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
