//! The exit-status trailer `\n__SQZ_EXIT_<code>__\n` that the hook's rewritten command appends.
//! It is stripped only when it is the very last line; anywhere else it is data and stays, except
//! under `--trap`, where an EXIT trap printed it and output after it came from background jobs.

use std::borrow::Cow;

/// The shell command that prints the trailer after a command's output: the hook's rewrite
/// appends it, and `strip` reads what it prints.
pub const PRINTF: &str = "printf '\\n__SQZ_EXIT_%d__\\n' \"$?\"";

/// The allow rule a client needs for `PRINTF` (Claude Code's permission syntax). Installs from
/// before the EXIT trap have it; the hook still uses `PRINTF` for them.
pub const ALLOW_RULE: &str = "Bash(printf '\\n__SQZ_EXIT_%d__\\n' \"$?\")";

/// The EXIT trap that prints the trailer however the command's side of the pipeline ends: at
/// its last command, at an error under `set -e` or `set -u`, or at an `exit`.
pub const TRAP: &str = "trap 'printf \"\\n__SQZ_EXIT_%d__\\n\" \"$?\"' EXIT";

/// The allow rule a client needs for `TRAP`.
pub const TRAP_RULE: &str = "Bash(trap 'printf \"\\n__SQZ_EXIT_%d__\\n\" \"$?\"' EXIT)";

/// Splits `input` into the command's output and the exit code carried by a final trailer line.
/// Without a valid trailer the input comes back whole and the code is `None`.
pub fn strip(input: &[u8]) -> (&[u8], Option<i32>) {
    let mut end = input.len();
    while end > 0 && matches!(input[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let line_start = memchr::memrchr(b'\n', &input[..end]).map_or(0, |i| i + 1);
    let Some(code) = parse_marker(&input[line_start..end]) else {
        return (input, None);
    };
    // Drop the marker line and exactly one line break before it: `\r\n` only when the marker
    // itself ends in `\r\n` (PowerShell), so a command's own trailing `\r` survives.
    let crlf = input.get(end) == Some(&b'\r');
    let mut body_end = line_start;
    if body_end > 0 && input[body_end - 1] == b'\n' {
        body_end -= 1;
        if crlf && body_end > 0 && input[body_end - 1] == b'\r' {
            body_end -= 1;
        }
    }
    (&input[..body_end], Some(code))
}

/// `strip` for input whose trailer an EXIT trap printed: the last marker line is the trailer
/// even when output follows it, since a background job the command started may write after
/// the command's side of the pipeline has ended. That late output stays, after what came
/// before the trailer; only the marker line and the line break the trap put before it go.
pub fn strip_trapped(input: &[u8]) -> (Cow<'_, [u8]>, Option<i32>) {
    let (body, code) = strip(input);
    if code.is_some() {
        return (Cow::Borrowed(body), code);
    }
    let Some(marker) = last_marker_line(input, 0) else {
        return (Cow::Borrowed(input), None);
    };
    let mut cut = marker.start;
    if cut > 0 && input[cut - 1] == b'\n' {
        cut -= 1;
        if marker.crlf && cut > 0 && input[cut - 1] == b'\r' {
            cut -= 1;
        }
    }
    let rest = &input[marker.end..];
    let mut out = Vec::with_capacity(cut + rest.len());
    out.extend_from_slice(&input[..cut]);
    out.extend_from_slice(rest);
    (Cow::Owned(out), Some(marker.code))
}

/// A whole marker line inside a text: where it starts, where the line after it starts, and
/// the code it carries.
pub struct MarkerLine {
    pub start: usize,
    pub end: usize,
    crlf: bool,
    code: i32,
}

/// The last line of `input` that is exactly a marker and ends in a line break, among those
/// that start at `from` or later.
pub fn last_marker_line(input: &[u8], from: usize) -> Option<MarkerLine> {
    let finder = memchr::memmem::FinderRev::new(b"__SQZ_EXIT_");
    let mut end = input.len();
    while let Some(start) = finder.rfind(&input[from.min(end)..end]).map(|i| from + i) {
        end = start;
        if start > 0 && input[start - 1] != b'\n' {
            continue;
        }
        let Some(nl) = memchr::memchr(b'\n', &input[start..]).map(|i| start + i) else {
            continue;
        };
        let crlf = nl > start && input[nl - 1] == b'\r';
        if let Some(code) = parse_marker(&input[start..nl - usize::from(crlf)]) {
            return Some(MarkerLine {
                start,
                end: nl + 1,
                crlf,
                code,
            });
        }
    }
    None
}

fn parse_marker(line: &[u8]) -> Option<i32> {
    let digits = line.strip_prefix(b"__SQZ_EXIT_")?.strip_suffix(b"__")?;
    if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse::<i32>().ok()
}

/// Length of the longest suffix of `tail` that could still become a trailer once more bytes
/// arrive; used by the streaming passthrough to hold back just enough bytes.
pub const MAX_TRAILER_LEN: usize = "\r\n__SQZ_EXIT_2147483647__\r\n\r\n".len() + 16;

#[cfg(test)]
mod tests {
    use super::{strip, strip_trapped, ALLOW_RULE, PRINTF, TRAP, TRAP_RULE};
    use std::borrow::Cow;

    #[test]
    fn what_the_shell_prints_is_stripped() {
        assert_eq!(ALLOW_RULE, format!("Bash({PRINTF})"));
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("echo out; false; {PRINTF}"))
            .output()
            .expect("sh runs");
        assert_eq!(strip(&out.stdout), (&b"out\n"[..], Some(1)));
    }

    #[test]
    fn what_the_trap_prints_is_stripped_however_the_command_ends() {
        assert_eq!(TRAP_RULE, format!("Bash({TRAP})"));
        for (shell_options, command, code) in [
            ("", "echo out", 0),
            ("set -e;", "echo out; ls /nonexistent-sqz-dir", 2),
            ("set -u;", "echo out; echo $SQZ_UNSET_VARIABLE", 1),
            ("", "echo out; exit 3", 3),
        ] {
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!(
                    "{shell_options} {{ {TRAP}; ( {command}\n) 2>/dev/null; }}"
                ))
                .output()
                .expect("bash runs");
            assert_eq!(strip(&out.stdout), (&b"out\n"[..], Some(code)), "{command}");
        }
    }

    #[test]
    fn late_output_after_a_trapped_trailer_stays_and_the_status_holds() {
        let input = b"built\n\n__SQZ_EXIT_3__\nlate\n";
        assert_eq!(strip(input), (&input[..], None));
        let (body, code) = strip_trapped(input);
        assert_eq!((&body[..], code), (&b"built\nlate\n"[..], Some(3)));
        // A marker the command printed as data, earlier, stays; the last one is the trailer.
        let data = b"__SQZ_EXIT_9__\nbuilt\n\n__SQZ_EXIT_0__\nlate";
        let (body, code) = strip_trapped(data);
        assert_eq!(
            (&body[..], code),
            (&b"__SQZ_EXIT_9__\nbuilt\nlate"[..], Some(0))
        );
        let crlf = b"x\r\n__SQZ_EXIT_1__\r\nlate\r\n";
        assert_eq!(&strip_trapped(crlf).0[..], b"xlate\r\n");
        // Not a whole line: data.
        let inside = b"say __SQZ_EXIT_4__\nmore\n";
        assert_eq!(strip_trapped(inside), (Cow::Borrowed(&inside[..]), None));
        let unended = b"out\n__SQZ_EXIT_4__";
        assert_eq!(&strip_trapped(unended).0[..], b"out");
    }

    #[test]
    fn strips_final_marker_and_one_newline() {
        assert_eq!(
            strip(b"hello\nworld\n\n__SQZ_EXIT_2__\n"),
            (&b"hello\nworld\n"[..], Some(2))
        );
        assert_eq!(
            strip(b"no newline\n__SQZ_EXIT_42__\n"),
            (&b"no newline"[..], Some(42))
        );
        assert_eq!(strip(b"\n__SQZ_EXIT_0__\n"), (&b""[..], Some(0)));
        assert_eq!(strip(b"__SQZ_EXIT_7__"), (&b""[..], Some(7)));
        assert_eq!(strip(b"x\r\n__SQZ_EXIT_1__\r\n"), (&b"x"[..], Some(1)));
    }

    #[test]
    fn marker_elsewhere_is_data() {
        let input = b"__SQZ_EXIT_3__\nmore output\n";
        assert_eq!(strip(input), (&input[..], None));
        let bad = b"out\n__SQZ_EXIT_x__\n";
        assert_eq!(strip(bad), (&bad[..], None));
        let huge = b"out\n__SQZ_EXIT_99999999999__\n";
        assert_eq!(strip(huge), (&huge[..], None));
    }
}
