//! The exit-status trailer `\n__SQZ_EXIT_<code>__\n` that the hook's rewritten command appends.
//! It is stripped only when it is the very last line; anywhere else it is data and stays.

/// The shell command that prints the trailer after a command's output: the hook's rewrite
/// appends it, and `strip` reads what it prints.
pub const PRINTF: &str = "printf '\\n__SQZ_EXIT_%d__\\n' \"$?\"";

/// The allow rule a client needs for `PRINTF` (Claude Code's permission syntax).
pub const ALLOW_RULE: &str = "Bash(printf '\\n__SQZ_EXIT_%d__\\n' \"$?\")";

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
    use super::{strip, ALLOW_RULE, PRINTF};

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
