//! ANSI escape stripping and carriage-return collapsing for what the agent sees. The stored
//! original keeps every byte; neither removes a line break, so line numbers of the cleaned text
//! match the original's.

use std::borrow::Cow;

/// Removes CSI (`ESC [ … final`), OSC (`ESC ] … BEL/ST`) and two-byte escapes from `text`.
/// Whether colour alone tells deleted from added text somewhere in `text`: a red stretch and
/// a green one touching with no space between (`git diff --color-words` prints `the
/// \x1b[31mquick\x1b[m\x1b[32mslow\x1b[m brown`). Stripping the codes there would merge
/// them into `quickslow`, so such output keeps its bytes.
pub fn colour_carries_meaning(text: &str) -> bool {
    if memchr::memchr(0x1b, text.as_bytes()).is_none() {
        return false;
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Fg {
        Red,
        Green,
        Other,
    }
    text.lines().any(|line| {
        let bytes = line.as_bytes();
        let mut fg = Fg::Other;
        // The colour and last character of the text before the current escape run.
        let mut before: Option<(Fg, u8)> = None;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
                let end = (i + 2..bytes.len()).find(|&k| (0x40..=0x7e).contains(&bytes[k]));
                let Some(end) = end else { break };
                if bytes[end] == b'm' {
                    for p in line[i + 2..end].split(';') {
                        fg = match p {
                            "31" | "91" => Fg::Red,
                            "32" | "92" => Fg::Green,
                            "" | "0" | "39" => Fg::Other,
                            _ => fg,
                        };
                    }
                }
                i = end + 1;
                continue;
            }
            let c = bytes[i];
            if let Some((prev, last)) = before {
                let touching = !last.is_ascii_whitespace() && !c.is_ascii_whitespace();
                let swapped = matches!((prev, fg), (Fg::Red, Fg::Green) | (Fg::Green, Fg::Red));
                if touching && swapped {
                    return true;
                }
            }
            before = Some((fg, c));
            i += 1;
        }
        false
    })
}

pub fn strip(text: &str) -> Cow<'_, str> {
    if memchr::memchr(0x1b, text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied_from = 0;
    while let Some(offset) = memchr::memchr(0x1b, &bytes[i..]) {
        let esc = i + offset;
        out.push_str(&text[copied_from..esc]);
        let end = escape_end(bytes, esc);
        i = end;
        copied_from = end;
    }
    out.push_str(&text[copied_from..]);
    Cow::Owned(out)
}

/// What a terminal ends up showing of each line that redraws itself with carriage returns
/// (a progress bar, a test name printed before its result and again after it): the last
/// non-empty segment. A `\r` just before the line break (CRLF) stays as it is, and so does a
/// line whose segments do not read as one thing redrawn.
pub fn collapse_returns<'a>(text: Cow<'a, str>) -> Cow<'a, str> {
    let bytes = text.as_bytes();
    let redraws =
        memchr::memchr_iter(b'\r', bytes).any(|at| bytes.get(at + 1).is_some_and(|&b| b != b'\n'));
    if !redraws {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix("\r\n") {
            Some(body) => (body, "\r\n"),
            None => match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            },
        };
        let segments: Vec<&str> = body.split('\r').filter(|s| !s.is_empty()).collect();
        // A redraw writes the same thing again, further along: each segment begins like the
        // one before or is as long. Text that only uses `\r` as its line break (an old Mac
        // file) is left as it is.
        let redraw = segments.windows(2).all(|w| {
            let shared = w[0]
                .bytes()
                .zip(w[1].bytes())
                .take_while(|(a, b)| a == b)
                .count();
            shared >= 4 || w[0].len() == w[1].len()
        });
        match segments.last() {
            Some(last) if redraw => out.push_str(last),
            Some(_) => out.push_str(body),
            None => {}
        }
        out.push_str(end);
    }
    Cow::Owned(out)
}

/// Index just past the escape sequence that starts at `esc`. Never steps over a newline, and
/// always lands on a char boundary because every byte it skips is ASCII.
fn escape_end(bytes: &[u8], esc: usize) -> usize {
    let Some(&kind) = bytes.get(esc + 1) else {
        return esc + 1;
    };
    match kind {
        b'[' => {
            let mut j = esc + 2;
            while let Some(&b) = bytes.get(j) {
                if (0x40..=0x7e).contains(&b) {
                    return j + 1;
                }
                if !(0x20..0x40).contains(&b) {
                    return j;
                }
                j += 1;
            }
            j
        }
        b']' => {
            let mut j = esc + 2;
            while let Some(&b) = bytes.get(j) {
                match b {
                    0x07 => return j + 1,
                    0x1b if bytes.get(j + 1) == Some(&b'\\') => return j + 2,
                    b'\n' => return j,
                    _ if b >= 0x80 => return j,
                    _ => j += 1,
                }
            }
            j
        }
        0x20..=0x7e => esc + 2,
        _ => esc + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::{collapse_returns, strip};
    use std::borrow::Cow;

    #[test]
    fn keeps_what_a_redrawn_line_ends_with() {
        let shown = |s: &str| collapse_returns(Cow::Borrowed(s)).into_owned();
        assert_eq!(
            shown("  * test a [L#9]\r  * test a (1.9ms) [L#9]\nnext\n"),
            "  * test a (1.9ms) [L#9]\nnext\n"
        );
        assert_eq!(shown(" 10%\r 55%\r100%\r\n"), "100%\r\n");
        assert_eq!(shown("crlf\r\nlines\r\n"), "crlf\r\nlines\r\n");
        assert_eq!(shown("done\r\r"), "done");
        assert_eq!(shown("plain\n"), "plain\n");
        // An old Mac file breaks its lines with `\r`: nothing is redrawn, nothing goes.
        let mac = "[package]\rname = \"demo\"\rversion = \"0.1.0\"\r";
        assert_eq!(shown(mac), mac);
    }

    #[test]
    fn removes_colour_and_keeps_text() {
        assert_eq!(strip("\x1b[1m\x1b[31merror\x1b[0m: x\n"), "error: x\n");
        assert_eq!(strip("plain"), "plain");
        assert_eq!(strip("\x1b]8;;http://x\x07link\x1b]8;;\x07"), "link");
        assert_eq!(strip("a\x1b"), "a");
        assert_eq!(strip("a\x1b[12\nb"), "a\nb");
        assert_eq!(strip("é\x1b[0mü"), "éü");
    }
}
