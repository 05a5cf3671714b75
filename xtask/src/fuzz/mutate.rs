//! The mutations of `cargo xtask fuzz`: bit flips, byte inserts and deletes, splices of two
//! seeds, line ranges duplicated, moved or dropped, and the tokens sqz's parsers give a meaning
//! to. Only `fastrand` decides, so the same seed gives the same cases.

use fastrand::Rng;

/// Cases never grow past this: larger inputs only slow the run.
pub const MAX_LEN: usize = 256 * 1024;

/// Byte strings that every target may meet: colour codes, references, the exit trailer, huge
/// numbers, invalid UTF-8, NUL, line breaks, shell and JSON syntax, fact words.
const TOKENS: &[&[u8]] = &[
    b"\x1b[31m",
    b"\x1b[0m",
    b"\x1b[1;32m",
    b"\x1b[2K\r",
    b"\x1b]8;;http://x\x07",
    b"\x1b[",
    b"\x1b",
    b"\r",
    b"\r\n",
    b"\n",
    b"\n\n",
    b"\0",
    b"\t",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xef\xbb\xbf",
    "\u{f7e9}".as_bytes(),
    "é".as_bytes(),
    "⎯⎯⎯⎯⎯⎯⎯⎯".as_bytes(),
    "§".as_bytes(),
    "§ref:".as_bytes(),
    "§ref:0123456789abcdef§".as_bytes(),
    "§ref:0123456789ab:L41-80§".as_bytes(),
    "§delta:0123456789abcdef§".as_bytes(),
    b":L41-80",
    b"__SQZ_EXIT_",
    b"__SQZ_EXIT_0__",
    b"\n__SQZ_EXIT_1__\n",
    b"__SQZ_EXIT_2147483648__",
    "[… 3 similar lines · sqz expand 0123456789ab:L2-4]".as_bytes(),
    "[same 2 lines as lines 1–2 above]".as_bytes(),
    b" each row below fills its {}:]",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"99999999999999999999999999999999999999",
    b"1e999",
    b"-0",
    b"0",
    b"4294967295",
    b"error",
    b"error[E0308]: mismatched types",
    b"FAILED",
    b"warning: ",
    b"panicked at ",
    b"src/main.rs:12:5",
    b"test result: FAILED. 1 passed; 1 failed",
    b"Traceback (most recent call last):",
    b"    at Object.<anonymous> (app.js:3:5)",
    b"password=hunter2",
    b"AKIAIOSFODNN7EXAMPLE",
    b"-----BEGIN RSA PRIVATE KEY-----",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b",",
    b":",
    b"null",
    b"'",
    b"$(",
    b"`",
    b"${",
    b"&&",
    b"||",
    b";",
    b"|",
    b"&",
    b">",
    b"<",
    b"(",
    b")",
    b"#",
    b"\\\n",
    b" ",
];

/// Bytes a single changed byte most often breaks a parser with.
const BYTES: &[u8] = b"\0\n\r\t \"'\\{}[]:,$`;|&<>()#-0123456789\x1b\x7f\x80\xbf\xc0\xe2\xf0\xff";

/// One case made from `input`: one to four mutations, stacked.
pub fn mutate(rng: &mut Rng, input: &[u8], seeds: &[Vec<u8>], extra: &[&[u8]]) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = match rng.u8(..8) {
        0..=3 => 1,
        4..=5 => 2,
        6 => 3,
        _ => 4,
    };
    for _ in 0..rounds {
        mutate_once(rng, &mut out, seeds, extra);
    }
    out.truncate(MAX_LEN);
    out
}

/// A case from nothing: a run of tokens and random bytes.
pub fn generate(rng: &mut Rng, extra: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.usize(1..40) {
        if rng.bool() {
            out.extend_from_slice(token(rng, extra));
        } else {
            out.extend((0..rng.usize(1..8)).map(|_| rng.u8(..)));
        }
    }
    out
}

fn token<'a>(rng: &mut Rng, extra: &[&'a [u8]]) -> &'a [u8] {
    if !extra.is_empty() && rng.bool() {
        extra[rng.usize(..extra.len())]
    } else {
        TOKENS[rng.usize(..TOKENS.len())]
    }
}

/// A position in `out` (its end included), usually on a character boundary so that text
/// parsers get past their UTF-8 check.
fn position(rng: &mut Rng, out: &[u8]) -> usize {
    let mut at = rng.usize(..=out.len());
    if rng.u8(..4) != 0 {
        while at > 0 && at < out.len() && (out[at] & 0xc0) == 0x80 {
            at -= 1;
        }
    }
    at
}

/// Where each line starts, and the end.
fn line_bounds(out: &[u8]) -> Vec<usize> {
    let mut bounds = vec![0];
    bounds.extend(memchr::memchr_iter(b'\n', out).map(|i| i + 1));
    if *bounds.last().unwrap_or(&0) != out.len() {
        bounds.push(out.len());
    }
    bounds
}

/// A range of whole lines: its byte range.
fn line_range(rng: &mut Rng, out: &[u8]) -> std::ops::Range<usize> {
    let bounds = line_bounds(out);
    if bounds.len() < 2 {
        return 0..out.len();
    }
    let lines = bounds.len() - 1;
    let first = rng.usize(..lines);
    let len = match rng.u8(..4) {
        0 => lines - first,
        1 => rng.usize(1..=(lines - first).min(64)),
        _ => rng.usize(1..=(lines - first).min(4)),
    };
    bounds[first]..bounds[first + len]
}

fn mutate_once(rng: &mut Rng, out: &mut Vec<u8>, seeds: &[Vec<u8>], extra: &[&[u8]]) {
    match rng.u8(..16) {
        // A bit flipped.
        0 if !out.is_empty() => {
            let at = rng.usize(..out.len());
            out[at] ^= 1 << rng.u8(..8);
        }
        // A byte replaced.
        1 if !out.is_empty() => {
            let at = rng.usize(..out.len());
            out[at] = BYTES[rng.usize(..BYTES.len())];
        }
        // Random bytes inserted.
        2 => {
            let at = position(rng, out);
            let bytes: Vec<u8> = (0..rng.usize(1..9)).map(|_| rng.u8(..)).collect();
            out.splice(at..at, bytes);
        }
        // Bytes deleted.
        3 if !out.is_empty() => {
            let at = position(rng, out);
            let len = rng.usize(1..=16).min(out.len() - at);
            out.drain(at..at + len);
        }
        // The start of this case joined to the end of another seed.
        4 if !seeds.is_empty() => {
            let other = &seeds[rng.usize(..seeds.len())];
            let cut = position(rng, out);
            let from = position(rng, other);
            out.truncate(cut);
            out.extend_from_slice(&other[from..]);
        }
        // A range of lines repeated, once or many times.
        5 | 6 => {
            let range = line_range(rng, out);
            let times = match rng.u8(..4) {
                0 => rng.usize(10..200),
                _ => rng.usize(1..4),
            };
            // Never past the size limit, which the copy would only be cut back to.
            let room = MAX_LEN.saturating_sub(out.len()) / range.len().max(1);
            let copy = out[range.clone()].repeat(times.min(room));
            let at = if rng.bool() {
                range.end
            } else {
                let bounds = line_bounds(out);
                bounds[rng.usize(..bounds.len())]
            };
            out.splice(at..at, copy);
        }
        // A range of lines deleted.
        7 => {
            let range = line_range(rng, out);
            out.drain(range);
        }
        // A range of lines moved elsewhere.
        8 => {
            let range = line_range(rng, out);
            let moved: Vec<u8> = out.drain(range).collect();
            let bounds = line_bounds(out);
            let at = bounds[rng.usize(..bounds.len())];
            out.splice(at..at, moved);
        }
        // A token inserted anywhere, or at the start of a line.
        9 | 10 => {
            let at = if rng.bool() {
                position(rng, out)
            } else {
                let bounds = line_bounds(out);
                bounds[rng.usize(..bounds.len())]
            };
            let token = token(rng, extra).to_vec();
            out.splice(at..at, token);
        }
        // A number replaced by a huge or odd one.
        11 => {
            let digits: Vec<usize> = (0..out.len())
                .filter(|&i| out[i].is_ascii_digit())
                .collect();
            if let Some(&at) = digits.get(rng.usize(..digits.len().max(1))) {
                let end = (at..out.len())
                    .find(|&i| !out[i].is_ascii_digit())
                    .unwrap_or(out.len());
                let numbers: [&[u8]; 6] = [
                    b"18446744073709551616",
                    b"9223372036854775808",
                    b"4294967296",
                    b"0",
                    b"00000000000000000001",
                    b"340282366920938463463374607431768211456",
                ];
                out.splice(at..end, numbers[rng.usize(..numbers.len())].to_vec());
            }
        }
        // One very long line.
        12 => {
            let at = position(rng, out);
            let unit: &[u8] = match rng.u8(..3) {
                0 => b"x",
                1 => b"ab ",
                _ => token(rng, extra),
            };
            let length = rng
                .usize(1000..20_000)
                .min(MAX_LEN.saturating_sub(out.len()));
            let long = unit.repeat(length / unit.len().max(1));
            out.splice(at..at, long);
        }
        // Line breaks made CRLF, or bare LF.
        13 => {
            *out = if out.contains(&b'\r') {
                out.iter().copied().filter(|&b| b != b'\r').collect()
            } else {
                let mut crlf = Vec::with_capacity(out.len() + out.len() / 16);
                for &b in out.iter() {
                    if b == b'\n' {
                        crlf.push(b'\r');
                    }
                    crlf.push(b);
                }
                crlf
            };
        }
        // Cut short.
        14 if !out.is_empty() => {
            let at = rng.usize(..out.len());
            out.truncate(at);
        }
        // A line coloured.
        15 => {
            let range = line_range(rng, out);
            let end = if range.end > range.start && out[range.end - 1] == b'\n' {
                range.end - 1
            } else {
                range.end
            };
            out.splice(end..end, b"\x1b[0m".iter().copied());
            out.splice(range.start..range.start, b"\x1b[31m".iter().copied());
        }
        _ => {
            let at = position(rng, out);
            out.insert(at, BYTES[rng.usize(..BYTES.len())]);
        }
    }
}
