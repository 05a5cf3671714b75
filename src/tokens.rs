// Approximate cl100k_base token counts with no vocabulary: text is split the way cl100k's
// pre-tokenizer regex splits it, then each piece's tokens are estimated from its length and
// character classes. Single pass, no allocation, no start-up cost; it never panics on any bytes.

/// Approximate cl100k_base token count of `text`.
pub fn count(text: &str) -> usize {
    count_bytes(text.as_bytes())
}

/// Approximate cl100k_base token count of arbitrary bytes; an invalid UTF-8 byte costs a token.
pub fn count_bytes(bytes: &[u8]) -> usize {
    let mut total = 0.0;
    split(bytes, |kind, start, end| {
        total += estimate(kind, bytes, start, end)
    });
    total.round() as usize
}

// ---- Pre-tokenizer ---------------------------------------------------------------------------

/// The kind of a pre-tokenizer piece, one per alternative of the cl100k split regex.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Contraction,
    Word,
    Digits,
    Punct,
    Space,
}

// Character classes as cl100k's regex sees them.
const LETTER: u8 = 0;
const NUMBER: u8 = 1;
const SPACE: u8 = 2;
const NEWLINE: u8 = 3;
const OTHER: u8 = 4;

/// Stands for an invalid UTF-8 byte.
const INVALID: u32 = 0x11_0000;

/// Decodes the char at `i` (which must be in bounds): its code point and byte length.
#[inline]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let b0 = b[i] as u32;
    if b0 < 0x80 {
        return (b0, 1);
    }
    let cont = |k: usize| -> Option<u32> {
        match b.get(i + k) {
            Some(&x) if x & 0xC0 == 0x80 => Some((x & 0x3F) as u32),
            _ => None,
        }
    };
    match b0 {
        0xC2..=0xDF => match cont(1) {
            Some(c1) => (((b0 & 0x1F) << 6) | c1, 2),
            None => (INVALID, 1),
        },
        0xE0..=0xEF => match (cont(1), cont(2)) {
            (Some(c1), Some(c2)) => {
                let cp = ((b0 & 0x0F) << 12) | (c1 << 6) | c2;
                if cp < 0x800 || (0xD800..0xE000).contains(&cp) {
                    (INVALID, 1)
                } else {
                    (cp, 3)
                }
            }
            _ => (INVALID, 1),
        },
        0xF0..=0xF4 => match (cont(1), cont(2), cont(3)) {
            (Some(c1), Some(c2), Some(c3)) => {
                let cp = ((b0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3;
                if !(0x1_0000..=0x10_FFFF).contains(&cp) {
                    (INVALID, 1)
                } else {
                    (cp, 4)
                }
            }
            _ => (INVALID, 1),
        },
        _ => (INVALID, 1),
    }
}

/// The regex class of a code point: \p{L}, \p{N}, \s (newlines apart) or anything else.
#[inline]
fn class(cp: u32) -> u8 {
    if cp < 0x80 {
        return ASCII_CLASS[cp as usize];
    }
    non_ascii_class(cp)
}

const ASCII_CLASS: [u8; 128] = {
    let mut t = [OTHER; 128];
    let mut c = 0;
    while c < 128 {
        let ch = c as u8;
        t[c] = if ch.is_ascii_alphabetic() {
            LETTER
        } else if ch.is_ascii_digit() {
            NUMBER
        } else if ch == b'\n' || ch == b'\r' {
            NEWLINE
        } else if ch == b' ' || ch == b'\t' || ch == 0x0B || ch == 0x0C {
            SPACE
        } else {
            OTHER
        };
        c += 1;
    }
    t
};

/// Approximate Unicode classes: whole script blocks count as letters, with the combining marks,
/// digits and punctuation of the common scripts carved out.
// Arms are ordered: the carve-outs of a block come first, then the block's default.
#[allow(clippy::match_overlapping_arm)]
fn non_ascii_class(cp: u32) -> u8 {
    match cp {
        0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 => {
            SPACE
        }
        0xAA | 0xB5 | 0xBA | 0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0x2C1 => LETTER,
        0xB2 | 0xB3 | 0xB9 | 0xBC..=0xBE => NUMBER,
        0x80..=0xBF | 0xD7 | 0xF7 => OTHER,
        0x2C6..=0x2D1 | 0x2E0..=0x2E4 | 0x2EC | 0x2EE => LETTER,
        0x2C2..=0x36F => OTHER,
        // Greek and Coptic.
        0x370..=0x373 | 0x376 | 0x377 | 0x37A..=0x37D | 0x37F | 0x386 | 0x388..=0x3F5 => LETTER,
        0x3F7..=0x481 | 0x48A..=0x52F => LETTER, // Cyrillic
        0x531..=0x556 | 0x560..=0x588 => LETTER, // Armenian
        0x5D0..=0x5EA | 0x5EF..=0x5F2 => LETTER, // Hebrew
        // Arabic.
        0x620..=0x64A | 0x66E | 0x66F | 0x671..=0x6D3 | 0x6D5 | 0x6E5 | 0x6E6 | 0x6EE | 0x6EF => {
            LETTER
        }
        0x6FA..=0x6FC | 0x6FF | 0x710 | 0x712..=0x72F | 0x74D..=0x7A5 | 0x7B1 => LETTER,
        0x660..=0x669 | 0x6F0..=0x6F9 | 0x7C0..=0x7C9 => NUMBER,
        0x370..=0x8FF => OTHER,
        // Brahmic scripts share one layout per 128-char block.
        0x900..=0xDFF => indic_class(cp),
        0xE00..=0xEFF => thai_lao_class(cp),
        0xF00 | 0xF40..=0xF6C | 0xF88..=0xF8C => LETTER, // Tibetan
        0xF20..=0xF33 => NUMBER,
        0xF00..=0xFFF => OTHER,
        0x1000..=0x102A | 0x103F | 0x1050..=0x1055 => LETTER, // Myanmar
        0x1040..=0x1049 | 0x1090..=0x1099 => NUMBER,
        0x1000..=0x109F => OTHER,
        0x10A0..=0x10FF => {
            if cp == 0x10FB {
                OTHER
            } else {
                LETTER // Georgian
            }
        }
        0x1100..=0x135A | 0x1380..=0x138F | 0x13A0..=0x13FD => LETTER, // Hangul jamo, Ethiopic
        0x1369..=0x137C => NUMBER,
        0x1360..=0x1368 => OTHER,
        0x1401..=0x166C | 0x166F..=0x167F | 0x1681..=0x169A | 0x16A0..=0x16EA => LETTER,
        0x1780..=0x17B3 | 0x17D7 | 0x17DC => LETTER, // Khmer
        0x17E0..=0x17E9 | 0x1810..=0x1819 => NUMBER,
        0x1780..=0x181F => OTHER,
        0x1820..=0x1878 | 0x1880..=0x1884 | 0x1887..=0x18A8 => LETTER, // Mongolian
        0x1D00..=0x1DBF | 0x1E00..=0x1FBC => LETTER, // phonetic, Latin extended, Greek extended
        0x1FBE | 0x1FC2..=0x1FCC | 0x1FD0..=0x1FDB | 0x1FE0..=0x1FEC | 0x1FF2..=0x1FFC => LETTER,
        0x1DC0..=0x1FFF => OTHER,
        0x2070 | 0x2074..=0x2079 | 0x2080..=0x2089 => NUMBER,
        0x2071 | 0x207F | 0x2090..=0x209C => LETTER,
        0x2102 | 0x2107 | 0x210A..=0x2113 | 0x2115 | 0x2119..=0x211D | 0x2124 | 0x2126 => LETTER,
        0x2128 | 0x212A..=0x212D | 0x212F..=0x2139 | 0x213C..=0x213F | 0x2145..=0x2149 => LETTER,
        0x214E | 0x2183 | 0x2184 => LETTER,
        0x2150..=0x2182 | 0x2185..=0x2189 => NUMBER,
        0x2460..=0x249B | 0x24EA..=0x24FF | 0x2776..=0x2793 => NUMBER,
        0x2C00..=0x2CE4 | 0x2CEB..=0x2CEE | 0x2D00..=0x2D6F | 0x2D80..=0x2DDE => LETTER,
        0x2000..=0x2E7F => OTHER,
        0x3005 | 0x3006 | 0x3031..=0x3035 | 0x303B | 0x303C => LETTER,
        0x3007 | 0x3021..=0x3029 | 0x3038..=0x303A => NUMBER,
        0x2E80..=0x3040 => OTHER,
        0x3041..=0x3096 | 0x309D..=0x309F | 0x30A1..=0x30FA | 0x30FC..=0x30FF => LETTER, // kana
        0x3097..=0x30FB => OTHER,
        0x3105..=0x312F | 0x3131..=0x318E | 0x31A0..=0x31BF | 0x31F0..=0x31FF => LETTER,
        0x3192..=0x3195 | 0x3220..=0x3229 | 0x3248..=0x324F | 0x3251..=0x325F => NUMBER,
        0x3280..=0x3289 | 0x32B1..=0x32BF => NUMBER,
        0x3100..=0x33FF => OTHER,
        0x3400..=0x4DBF | 0x4E00..=0xA48C | 0xA4D0..=0xA4FD | 0xA500..=0xA60C => LETTER, // CJK, Yi
        0xA610..=0xA61F | 0xA62A | 0xA62B | 0xA640..=0xA66E | 0xA67F..=0xA69D => LETTER,
        0xA620..=0xA629 => NUMBER,
        0xA6A0..=0xA6E5 | 0xA717..=0xA71F | 0xA722..=0xA788 | 0xA78B..=0xA7FF => LETTER,
        0xA4C0..=0xA7FF => OTHER,
        0xA800..=0xABFF => OTHER,
        0xAC00..=0xD7A3 | 0xD7B0..=0xD7FB => LETTER, // Hangul syllables
        0xF900..=0xFAFF => LETTER,                   // CJK compatibility ideographs
        0xFB00..=0xFB06 | 0xFB13..=0xFB17 | 0xFB1D | 0xFB1F..=0xFB28 | 0xFB2A..=0xFB4F => LETTER,
        0xFB50..=0xFBB1 | 0xFBD3..=0xFD3D | 0xFD50..=0xFDC7 | 0xFDF0..=0xFDFB => LETTER,
        0xFE70..=0xFEFC => LETTER,
        0xFF10..=0xFF19 => NUMBER, // fullwidth digits
        0xFF21..=0xFF3A | 0xFF41..=0xFF5A | 0xFF66..=0xFFDC => LETTER,
        0xD800..=0xFFFF => OTHER,
        0x1_0000..=0x1_0FFF => LETTER,
        0x1_D400..=0x1_D7CB => LETTER, // mathematical alphanumerics
        0x1_D7CE..=0x1_D7FF => NUMBER,
        0x1_0000..=0x1_FFFF => OTHER, // emoji and symbols
        0x2_0000..=0x3_FFFF => LETTER,
        _ => OTHER,
    }
}

/// Devanagari to Malayalam: vowel signs, viramas and other marks are not letters.
fn indic_class(cp: u32) -> u8 {
    if cp == 0xB83 {
        return LETTER; // Tamil aytham
    }
    let off = cp & 0x7F;
    match off {
        0x00..=0x03 | 0x3A..=0x3C | 0x3E..=0x4D | 0x4E | 0x4F | 0x51..=0x57 | 0x62 | 0x63 => OTHER,
        0x64 | 0x65 | 0x70 => OTHER,
        0x66..=0x6F => NUMBER,
        _ => LETTER,
    }
}

/// Thai and Lao: the vowels and tone marks written above or below are combining marks.
fn thai_lao_class(cp: u32) -> u8 {
    let off = cp & 0x7F;
    match off {
        0x31 | 0x34..=0x3A | 0x47..=0x4E | 0x3F | 0x4F | 0x5A | 0x5B => OTHER,
        0x50..=0x59 => NUMBER,
        0x00 => OTHER,
        0x5C..=0x7F => {
            if cp >= 0xE80 && (0x5C..=0x5F).contains(&off) {
                LETTER
            } else {
                OTHER
            }
        }
        _ => {
            if cp >= 0xE80 && (0x3B..=0x3C).contains(&off) {
                OTHER
            } else {
                LETTER
            }
        }
    }
}

/// Byte length of a contraction suffix (`s`, `t`, `re`, `ve`, `m`, `ll`, `d`, any case) at `i`.
#[inline]
fn contraction_len(b: &[u8], i: usize) -> usize {
    let lower = |k: usize| b.get(i + k).map(|x| x.to_ascii_lowercase());
    match lower(0) {
        Some(b's' | b't' | b'm' | b'd') => 1,
        Some(0xC5) if lower(1) == Some(0xBF) => 2, // ſ, which case-folds to s
        Some(b'r') if lower(1) == Some(b'e') => 2,
        Some(b'v') if lower(1) == Some(b'e') => 2,
        Some(b'l') if lower(1) == Some(b'l') => 2,
        _ => 0,
    }
}

/// Splits `b` the way cl100k's pre-tokenizer regex does, calling `emit` with each piece:
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
///  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
fn split(b: &[u8], mut emit: impl FnMut(Kind, usize, usize)) {
    let n = b.len();
    let mut i = 0;
    while i < n {
        let (c, len) = decode(b, i);
        let cls = class(c);
        if c == u32::from(b'\'') {
            let m = contraction_len(b, i + 1);
            if m > 0 {
                emit(Kind::Contraction, i, i + 1 + m);
                i += 1 + m;
                continue;
            }
        }
        if cls == LETTER {
            let end = letters_end(b, i + len);
            emit(Kind::Word, i, end);
            i = end;
            continue;
        }
        let next = if i + len < n {
            Some(decode(b, i + len))
        } else {
            None
        };
        let next_cls = next.map(|(c2, _)| class(c2));
        if cls != NEWLINE && cls != NUMBER && next_cls == Some(LETTER) {
            let end = letters_end(b, i + len);
            emit(Kind::Word, i, end);
            i = end;
            continue;
        }
        if cls == NUMBER {
            let mut end = i + len;
            let mut digits = 1;
            while digits < 3 && end < n {
                let (c2, l2) = decode(b, end);
                if class(c2) != NUMBER {
                    break;
                }
                end += l2;
                digits += 1;
            }
            emit(Kind::Digits, i, end);
            i = end;
            continue;
        }
        let punct_start = if cls == OTHER {
            Some(i)
        } else if c == u32::from(b' ') && next_cls == Some(OTHER) {
            Some(i + 1)
        } else {
            None
        };
        if let Some(start) = punct_start {
            let mut end = start;
            while end < n {
                let (c2, l2) = decode(b, end);
                if class(c2) != OTHER {
                    break;
                }
                end += l2;
            }
            while end < n && (b[end] == b'\n' || b[end] == b'\r') {
                end += 1;
            }
            emit(Kind::Punct, i, end);
            i = end;
            continue;
        }
        // Whitespace: up to the last newline of the run, else all of it but its last char
        // when a non-space follows, else the whole run.
        let mut end = i;
        let mut last_start = i;
        let mut newline_end = 0;
        while end < n {
            let (c2, l2) = decode(b, end);
            let cls2 = class(c2);
            if cls2 == NEWLINE {
                newline_end = end + l2;
            } else if cls2 != SPACE {
                break;
            }
            last_start = end;
            end += l2;
        }
        let stop = if newline_end > 0 {
            newline_end
        } else if end == n || last_start == i {
            end
        } else {
            last_start
        };
        emit(Kind::Space, i, stop);
        i = stop;
    }
}

#[inline]
fn letters_end(b: &[u8], mut i: usize) -> usize {
    let n = b.len();
    while i < n {
        let x = b[i];
        if x < 0x80 {
            if !x.is_ascii_alphabetic() {
                break;
            }
            i += 1;
            continue;
        }
        let (c, l) = decode(b, i);
        if class(c) != LETTER {
            break;
        }
        i += l;
    }
    i
}

// ---- Estimation -----------------------------------------------------------------------------
//
// The costs below were fitted against exact cl100k counts of real tool output (build and test
// logs, git, ls/ps/find, source code, JSON, man pages, translations); see `cargo xtask tokcheck`.

/// Estimated tokens of the piece `text[start..end]`; the bytes around it are context.
fn estimate(kind: Kind, text: &[u8], start: usize, end: usize) -> f64 {
    let piece = &text[start..end];
    match kind {
        Kind::Contraction => 1.0,
        // cl100k holds every group of up to three ASCII digits.
        Kind::Digits if piece[0] < 0x80 => 1.0,
        Kind::Digits => char_count(piece) as f64 * 2.0,
        Kind::Space => space_cost(piece),
        Kind::Punct => punct_cost(piece),
        Kind::Word => {
            // Letters cut short by digits on either side are most often hashes or base64.
            let digit_next = (start > 0 && text[start - 1].is_ascii_digit())
                || text.get(end).is_some_and(|b| b.is_ascii_digit());
            word_cost(piece, digit_next)
        }
    }
}

fn char_count(s: &[u8]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < s.len() {
        i += decode(s, i).1;
        n += 1;
    }
    n
}

/// A whitespace run is one token up to a length that depends on the character.
fn space_cost(s: &[u8]) -> f64 {
    let first = s[0];
    let chunk = if s.iter().all(|&b| b == first) {
        match first {
            b' ' => 79,
            b'\n' => 32,
            b'\t' => 16,
            _ => 8,
        }
    } else {
        6
    };
    s.len().div_ceil(chunk) as f64
}

// Punctuation: the first two distinct characters share a token, each further one costs this.
const PUNCT_UNIT_COST: f64 = 0.43;
/// A double quote weighs this much as a unit: JSON's `","` and `":["` are single tokens.
const PUNCT_QUOTE_UNIT: f64 = 0.52;
/// Trailing newlines after two or more units.
const PUNCT_NEWLINE_UNIT: f64 = 0.01;
/// A `─` after `─` or `├`: runs of it merge, and `├──` is one token.
const BOX_RUN_COST: f64 = 0.25;
/// Any other box-drawing or block character repeated.
const BLOCK_REPEAT_COST: f64 = 0.5;

/// How many of one ASCII punctuation character a single token holds when repeated.
fn chunk_of(b: u8) -> usize {
    match b {
        b'#' | b'*' | b'-' | b'.' | b'=' => 64,
        b'/' | b'_' => 24,
        b'%' | b'+' | b';' | b'~' => 16,
        b'!' | b',' | b'<' | b'>' | b':' => 8,
        b'$' | b'(' | b')' | b'|' | b'@' | b'^' | b'?' => 4,
        _ => 2,
    }
}

/// Symbols common enough in text and tool output to be a single token each, by code point.
const COMMON_SYMBOLS: [char; 49] = [
    '«', '·', '»', '×', '‐', '‑', '–', '—', '‘', '’', '“', '”', '„', '†', '•', '…', '›', '※', '™',
    '←', '↑', '→', '↓', '↔', '⇒', '∈', '∧', '≠', '≤', '≥', '─', '━', '│', '├', '═', '║', '╗', '╝',
    '█', '░', '■', '►', '●', '★', '☆', '✓', '✔', '😀', '🙂',
];

fn common_symbol(c: u32) -> bool {
    char::from_u32(c).is_some_and(|c| COMMON_SYMBOLS.binary_search(&c).is_ok())
}

/// Tokens of a non-ASCII symbol outside the common table: cl100k falls back to its bytes,
/// merged in pairs in the blocks that text and tool output use most.
fn symbol_tokens(c: u32) -> f64 {
    match c {
        INVALID | 0x80..=0x2FF => 1.0,
        0x900..=0xEFF => 1.1, // vowel signs and viramas of Indic and Thai scripts
        0x300..=0x8FF | 0xF00..=0x1FFF => 2.0,
        0x2000..=0x227F | 0x2500..=0x267F | 0x2700..=0x27FF => 2.0,
        0x3000..=0x303F | 0xFE00..=0xFE0F | 0xFF00..=0xFFEF => 1.2,
        0x1_F400..=0x1_F57F | 0x1_F600..=0x1_F64F => 2.5,
        _ => 3.0,
    }
}

/// A punctuation piece: optional leading space, symbols, optional trailing newlines.
fn punct_cost(s: &[u8]) -> f64 {
    let mut end = s.len();
    while end > 0 && (s[end - 1] == b'\n' || s[end - 1] == b'\r') {
        end -= 1;
    }
    let has_newline = end < s.len();
    let mut i = usize::from(end > 1 && s[0] == b' ');
    let mut units = 0.0;
    let mut extra = 0.0;
    let mut last_symbol = u32::MAX;
    while i < end {
        let b = s[i];
        if b < 0x80 {
            let mut j = i + 1;
            while j < end && s[j] == b {
                j += 1;
            }
            units += if b == b'"' { PUNCT_QUOTE_UNIT } else { 1.0 };
            extra += ((j - i).div_ceil(chunk_of(b)) - 1) as f64;
            last_symbol = u32::MAX;
            i = j;
        } else {
            let (c, len) = decode(s, i);
            extra += if c == 0x2500 && (last_symbol == 0x2500 || last_symbol == 0x251C) {
                BOX_RUN_COST
            } else if c == last_symbol && (0x2500..=0x259F).contains(&c) {
                BLOCK_REPEAT_COST
            } else if common_symbol(c) {
                1.0
            } else {
                symbol_tokens(c)
            };
            last_symbol = c;
            i += len;
        }
    }
    if units == 0.0 {
        return extra;
    }
    if has_newline && units > 1.0 {
        units += PUNCT_NEWLINE_UNIT;
    }
    1.0 + (units - 2.0).max(0.0) * PUNCT_UNIT_COST + extra
}

// What precedes the first hump of a word piece; later humps are `INNER`.
const BARE: usize = 0;
const SPACE_BEFORE: usize = 1;
/// Punctuation that cl100k usually merges with the word after it (`.rs`, `_name`, `/usr`).
const MERGING: usize = 2;
/// Punctuation that usually stays a token of its own.
const SEPARATE: usize = 3;
const INNER: usize = 4;

fn prefix_class(c: u32) -> usize {
    match c {
        0x20 => SPACE_BEFORE,
        0x2E | 0x5F | 0x2F | 0x28 | 0x5C | 0x3C | 0x5B | 0x26 | 0x24 | 0x2019 => MERGING,
        _ => SEPARATE,
    }
}

/// Extra cost of a separate-punctuation prefix.
const SEPARATE_PREFIX_COST: f64 = 0.35;

/// A hump with lowercase letters costs one token plus `slope` per letter beyond `threshold`,
/// by prefix class: [all lowercase, capitalised].
const LOWER_LENGTH: [[(f64, f64); 2]; 4] = [
    [(2.73, 0.10), (1.62, 0.15)], // bare
    [(9.90, 0.0), (3.48, 0.18)],  // after a space
    [(3.90, 0.15), (0.0, 0.056)], // after merging punctuation
    [(1.84, 0.15), (2.50, 0.60)], // after separate punctuation
];
/// The same for a later hump of a camel-case word.
const INNER_LENGTH: (f64, f64) = (11.88, 2.29);
/// The same for an all-uppercase hump, by prefix class and `INNER`.
const UPPER_LENGTH: [(f64, f64); 5] = [
    (1.45, 0.10),
    (4.03, 0.014),
    (2.28, 0.25),
    (0.0, 0.405),
    (2.20, 0.18),
];
/// Per letter pair outside `COMMON_NEXT`: in a hump with lowercase, in an uppercase hump.
const RARE_PAIR_COST: f64 = 0.20;
const RARE_PAIR_COST_UPPER: f64 = 0.004;
/// A hump with no vowel: two letters, three letters, per letter beyond one when longer.
const NO_VOWEL_2: f64 = 0.21;
const NO_VOWEL_3: f64 = 0.19;
const NO_VOWEL_PER_LETTER: f64 = 0.28;
const NO_VOWEL_PER_LETTER_UPPER: f64 = 0.39;
/// Per consonant beyond three in a row.
const CONSONANT_RUN_COST: f64 = 0.35;
/// Letters next to digits: per letter beyond the first, and per letter beyond nine if all hex.
const NEAR_DIGIT: (f64, f64) = (1.15, 0.20);
const HEX_RUN: (f64, f64) = (9.03, 1.51);
/// Per accented Latin letter inside a word.
const ACCENTED_LETTER_COST: f64 = 0.97;

/// Tokens of a run of letters of one non-Latin script: (per run, per letter).
const SCRIPT_COST: [(f64, f64); 15] = [
    (0.0, 0.97),  // accented Latin (counted in the hump instead)
    (2.77, 0.52), // Greek
    (0.34, 0.52), // Cyrillic
    (0.01, 2.05), // Armenian
    (0.02, 1.05), // Hebrew
    (0.01, 0.71), // Arabic
    (0.06, 1.32), // Devanagari
    (0.45, 1.42), // Bengali, Gurmukhi, Gujarati, Oriya
    (0.42, 1.86), // Tamil, Telugu, Kannada, Malayalam, Sinhala
    (0.03, 0.95), // Thai, Lao
    (0.0, 2.05),  // Georgian
    (0.01, 0.96), // Hangul
    (0.0, 0.81),  // kana
    (0.04, 1.26), // CJK ideographs
    (0.26, 2.62), // anything else
];

fn script_of(c: u32) -> usize {
    match c {
        0x80..=0x36F | 0x1D00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF => 0,
        0x370..=0x3FF | 0x1F00..=0x1FFF => 1,
        0x400..=0x52F => 2,
        0x530..=0x58F => 3,
        0x590..=0x5FF => 4,
        0x600..=0x8FF | 0xFB50..=0xFEFC => 5,
        0x900..=0x97F => 6,
        0x980..=0xB7F => 7,
        0xB80..=0xDFF => 8,
        0xE00..=0xEFF => 9,
        0x10A0..=0x10FF | 0x2D00..=0x2D2F => 10,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7FF => 11,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => 12,
        0x3400..=0x9FFF | 0xF900..=0xFAFF | 0x2_0000..=0x3_FFFF => 13,
        _ => 14,
    }
}

/// For each ASCII letter, the letters that commonly follow it in English (counted in man pages
/// and READMEs). A pair outside it marks a word cl100k is unlikely to hold whole.
const COMMON_NEXT: [&[u8; 26]; 26] = [
    b".bcd.fg.i.klmn.p.rstuvwxyz", // a
    b"ab..e...ij.lm.o..rstu...y.", // b
    b"a.cde..hi.kl..o..rstu...y.", // c
    b"a..de.g.i..l..o..rstu...y.", // d
    b"abcdefghi..lmnopqrstuvwxy.", // e
    b"a...ef..i..l.no..rstu...y.", // f
    b"a...e.ghi..lmno..rstu.....", // g
    b"ab..e...i...mno..rstu...y.", // h
    b"abcdefg...klmnop.rst.v.x.z", // i
    b"....e.........o...s.u.....", // j
    b"a...e.g.i.........s.u.w...", // k
    b"a.cdefg.i.klm.op.rstuvw.y.", // l
    b"ab..e...i..lmnop..stuv..y.", // m
    b"a.cdefghi.klmnopq.stuv..y.", // n
    b"abcdefg.ijklmnop.rstuvw...", // o
    b"a..de..hi..lm.op.rstu...y.", // p
    b"...........l........u.....", // q
    b"abcdefg.i.klmnop.rstuvw.y.", // r
    b"a.c.ef.hi.klmnopq.stuv..y.", // s
    b"a.cdefghi..lmnop.rstu.w.y.", // t
    b"abcdefg.i..lmnop.rst......", // u
    b"a...e...i.....o...........", // v
    b"a...e..hi..l.no..rs.......", // w
    b"a.c.e...i......p...t......", // x
    b"ab..e...i..lmnop..st..w...", // y
    b"a...e.........o...........", // z
];

const fn common_next_masks() -> [u32; 26] {
    let mut masks = [0u32; 26];
    let mut a = 0;
    while a < 26 {
        let mut b = 0;
        while b < 26 {
            if COMMON_NEXT[a][b] != b'.' {
                masks[a] |= 1 << b;
            }
            b += 1;
        }
        a += 1;
    }
    masks
}

const COMMON_NEXT_MASKS: [u32; 26] = common_next_masks();

fn rare_pair(a: u8, b: u8) -> bool {
    if !a.is_ascii_alphabetic() || !b.is_ascii_alphabetic() {
        return false;
    }
    let a = usize::from(a.to_ascii_lowercase() - b'a');
    let b = b.to_ascii_lowercase() - b'a';
    COMMON_NEXT_MASKS[a] & (1 << b) == 0
}

/// One camel-case hump of a word, with the shape features its cost depends on.
#[derive(Default)]
struct Hump {
    len: usize,
    uppers: usize,
    lowers: usize,
    accented: usize,
    vowel_groups: usize,
    in_vowel: bool,
    consonant_run: usize,
    longest_consonant_run: usize,
    rare_pairs: usize,
    last: u8,
    last_pair_rare: bool,
}

impl Hump {
    fn push(&mut self, ch: u8) {
        self.last_pair_rare = self.len > 0 && rare_pair(self.last, ch);
        self.rare_pairs += usize::from(self.last_pair_rare);
        self.len += 1;
        self.last = ch;
        if ch.is_ascii_uppercase() {
            self.uppers += 1;
        } else {
            self.lowers += 1;
        }
        if matches!(
            ch.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        ) {
            self.vowel_groups += usize::from(!self.in_vowel);
            self.in_vowel = true;
            self.consonant_run = 0;
        } else {
            self.in_vowel = false;
            self.consonant_run += 1;
            self.longest_consonant_run = self.longest_consonant_run.max(self.consonant_run);
        }
    }

    /// A non-ASCII Latin letter: counted as a vowel-like lowercase letter.
    fn push_accented(&mut self) {
        self.len += 1;
        self.lowers += 1;
        self.accented += 1;
        self.last = 0;
        self.in_vowel = true;
        self.consonant_run = 0;
    }

    /// Moves the last letter of an uppercase hump into a new one (`HTTPServer` → `HTTP`, `S`).
    fn split_last(&mut self) -> Hump {
        self.len -= 1;
        self.uppers -= 1;
        self.rare_pairs -= usize::from(self.last_pair_rare);
        let mut next = Hump::default();
        next.push(self.last);
        next
    }

    fn cost(&self, class: usize) -> f64 {
        let len = self.len as f64;
        if self.lowers == 0 {
            if self.len == 1 {
                return 1.0;
            }
            let (threshold, slope) = UPPER_LENGTH[class];
            let mut cost = 1.0 + (len - threshold).max(0.0) * slope;
            cost += RARE_PAIR_COST_UPPER * self.rare_pairs as f64;
            if self.vowel_groups == 0 {
                cost += NO_VOWEL_PER_LETTER_UPPER * (len - 1.0);
            }
            return cost;
        }
        let (threshold, slope) = if class == INNER {
            INNER_LENGTH
        } else {
            LOWER_LENGTH[class][usize::from(self.uppers > 0)]
        };
        let mut cost = 1.0 + (len - threshold).max(0.0) * slope;
        cost += RARE_PAIR_COST * self.rare_pairs as f64;
        if self.vowel_groups == 0 && self.accented == 0 {
            cost += match self.len {
                2 => NO_VOWEL_2,
                3 => NO_VOWEL_3,
                n if n > 3 => NO_VOWEL_PER_LETTER * (len - 1.0),
                _ => 0.0,
            };
        }
        if self.longest_consonant_run > 3 {
            cost += CONSONANT_RUN_COST * (self.longest_consonant_run - 3) as f64;
        }
        cost
    }
}

/// Cost of a finished run of letters of one script; empties the run.
fn close_run(script: usize, run_len: &mut usize) -> f64 {
    let (per_run, per_letter) = SCRIPT_COST[script];
    match std::mem::take(run_len) {
        0 => 0.0,
        n => per_run + per_letter * n as f64,
    }
}

/// A word piece: an optional prefix character, then letters of one or more scripts.
fn word_cost(w: &[u8], digit_next: bool) -> f64 {
    let (first, first_len) = decode(w, 0);
    let mut class = BARE;
    let mut cost = 0.0;
    let mut i = 0;
    if self::class(first) != LETTER {
        class = prefix_class(first);
        if class == SEPARATE {
            cost += SEPARATE_PREFIX_COST;
        }
        i = first_len;
    }
    let bare = i == 0;
    let mut hump = Hump::default();
    let mut run_script = 0;
    let mut run_len = 0usize;
    while i < w.len() {
        let b = w[i];
        if b < 0x80 {
            if run_len > 0 {
                cost += close_run(run_script, &mut run_len);
                class = INNER;
            }
            if b.is_ascii_uppercase() && hump.lowers > 0 {
                cost += hump.cost(class);
                class = INNER;
                hump = Hump::default();
            } else if b.is_ascii_lowercase() && hump.lowers == 0 && hump.uppers >= 2 {
                let next = hump.split_last();
                cost += hump.cost(class);
                class = INNER;
                hump = next;
            }
            hump.push(b);
            i += 1;
            continue;
        }
        let (c, len) = decode(w, i);
        let script = script_of(c);
        if script == 0 {
            cost += ACCENTED_LETTER_COST;
            hump.push_accented();
        } else {
            if hump.len > 0 {
                cost += hump.cost(class);
                class = INNER;
                hump = Hump::default();
            }
            if run_len > 0 && script != run_script {
                cost += close_run(run_script, &mut run_len);
                class = INNER;
            }
            run_script = script;
            run_len += 1;
        }
        i += len;
    }
    cost += close_run(run_script, &mut run_len);
    if hump.len > 0 {
        cost += hump.cost(class);
    }
    if digit_next && bare {
        let len = w.len() as f64;
        cost += (len - NEAR_DIGIT.0).max(0.0) * NEAR_DIGIT.1;
        if w.iter().all(|b| b.is_ascii_hexdigit()) {
            cost += (len - HEX_RUN.0).max(0.0) * HEX_RUN.1;
        }
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        split(text.as_bytes(), |_, start, end| out.push(&text[start..end]));
        out
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(count(""), 0);
        assert_eq!(count_bytes(b""), 0);
    }

    #[test]
    fn exact_on_common_cases() {
        // Each count here equals cl100k_base's.
        assert_eq!(count("hello world"), 2);
        assert_eq!(count("   "), 1);
        assert_eq!(count("\n\n"), 1);
        assert_eq!(count("1234567"), 3);
        assert_eq!(count("fn main() {}"), 4);
        assert_eq!(count("warning: unused variable: `x`"), 8);
        assert_eq!(count("test result: ok. 3 passed; 0 failed"), 12);
        assert_eq!(count("Traceback (most recent call last):"), 8);
        assert_eq!(count(r#"{"name": "sqz", "version": "0.1.0"}"#), 17);
        assert_eq!(count("Привет, мир"), 6);
    }

    #[test]
    fn splits_like_the_cl100k_regex() {
        assert_eq!(
            pieces("Hello, world!\n\n  foo's 12345 ├── x"),
            [
                "Hello",
                ",",
                " world",
                "!\n\n",
                " ",
                " foo",
                "'s",
                " ",
                "123",
                "45",
                " ├──",
                " x"
            ]
        );
        assert_eq!(
            pieces("a\n   b\t\tc  "),
            ["a", "\n", "  ", " b", "\t", "\tc", "  "]
        );
        assert_eq!(pieces("getX::new()?;\n"), ["getX", "::", "new", "()?;\n"]);
        assert_eq!(pieces("Straße über"), ["Straße", " über"]);
    }

    #[test]
    fn common_symbols_are_sorted() {
        assert!(COMMON_SYMBOLS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn invalid_utf8_costs_about_a_token_a_byte() {
        assert_eq!(count_bytes(&[0xFF, 0xFE, 0xFD]), 3);
        let n = count_bytes(b"ok \xE2\x94");
        assert!((2..=4).contains(&n), "{n}");
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let alphabet = "aZ9 _\n\t\r'\"(é├─語한्ाๆ🚀\u{a0}\u{2028}".as_bytes();
        for len in 0..400 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    if (state >> 8) & 3 == 0 {
                        (state >> 32) as u8
                    } else {
                        alphabet[(state >> 40) as usize % alphabet.len()]
                    }
                })
                .collect();
            let n = count_bytes(&bytes);
            assert!(n <= 4 * bytes.len() + 1);
            if let Ok(text) = std::str::from_utf8(&bytes) {
                assert_eq!(count(text), n);
            }
        }
    }
}
