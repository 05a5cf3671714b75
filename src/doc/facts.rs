//! Recognises lines that carry a fact an agent acts on: errors, failures, warnings, panics,
//! assertions, `file:line` locations and summary counts. Such lines are never folded by any
//! stage; when in doubt a line counts as a fact.

/// Whether `line` reports something no stage may fold.
pub fn is_fact(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    has_keyword(t) || has_location(t) || is_summary_count(t) || http_error_status(t)
}

/// An access-log line (common or combined format) whose response status is 4xx or 5xx:
/// `"GET /reports HTTP/1.1" 502 559`.
fn http_error_status(t: &str) -> bool {
    let b = t.as_bytes();
    memchr::memmem::find_iter(b, b" HTTP/").any(|at| {
        let mut i = at + 6;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let status = match b.get(i..i + 5) {
            Some([b'"', b' ', s @ ..]) => s,
            _ => return false,
        };
        matches!(status[0], b'4' | b'5')
            && status[1..].iter().all(u8::is_ascii_digit)
            && b.get(i + 5).is_none_or(|c| *c == b' ')
    })
}

/// The narrower floor for listings (search results, file and process lists): a line that
/// reports an error, failure, warning or the like. Locations and counts in a listing are data,
/// which a listing formatter may fold under a marker.
pub fn reports_failure(line: &str) -> bool {
    let t = line.trim();
    // A bare path (`./node_modules/verror/lib/verror.js`), alone or after a size as `du`
    // prints it, names a file; it reports nothing.
    let path = match t.split_once(char::is_whitespace) {
        Some((size, rest)) if size.bytes().next().is_some_and(|b| b.is_ascii_digit()) => {
            rest.trim_start()
        }
        _ => t,
    };
    let bare_path = !path.contains(char::is_whitespace) && path.contains('/');
    !t.is_empty() && !bare_path && has_keyword(t)
}

fn has_keyword(t: &str) -> bool {
    // (keyword, whether it must end a word too). Prefix keywords match their inflections:
    // `errors`, `failed`, `warning`, `panicked`, `assertion`.
    const WORDS: [(&str, bool); 30] = [
        ("error", false),
        ("fail", false),
        ("warn", false),
        ("panic", false),
        ("assert", false),
        ("left:", false),
        ("right:", false),
        ("expected", false),
        ("actual", true),
        ("exception", false),
        ("fatal", false),
        ("denied", false),
        ("refused", false),
        ("not found", false),
        ("cannot", false),
        ("could not", false),
        ("couldn't", false),
        ("unable to", false),
        ("undefined", false),
        ("unresolved", false),
        ("conflict", false),
        ("abort", false),
        ("timed out", false),
        ("timeout", false),
        ("segmentation", false),
        ("traceback", false),
        ("critical", false),
        ("mismatch", false),
        ("invalid", false),
        ("deprecated", false),
    ];
    let b = t.as_bytes();
    // One pass over the word starts; at each, only the keywords with that first letter.
    (0..b.len()).any(|at| {
        let first = b[at].to_ascii_lowercase();
        if !first.is_ascii_lowercase() || !word_start(b, at) {
            return false;
        }
        WORDS.iter().any(|&(word, whole)| {
            let w = word.as_bytes();
            w[0] == first
                && b.len() >= at + w.len()
                && b[at..at + w.len()].eq_ignore_ascii_case(w)
                && keyword_counts(t, at, w.len(), whole)
        })
    }) || error_code(t)
}

/// A word starts at `at` after a non-alphanumeric byte or at a camel hump (`TypeError`), but
/// not after `-` or `_`, where it is part of a name (`no-panic`, `test_fails_on_empty`).
fn word_start(b: &[u8], at: usize) -> bool {
    if at == 0 {
        return true;
    }
    let before = b[at - 1];
    (!before.is_ascii_alphanumeric() && !matches!(before, b'-' | b'_'))
        || (before.is_ascii_lowercase() && b[at].is_ascii_uppercase())
}

/// A keyword found at byte `at`, at a word start, counts when it ends a word too if `whole`,
/// and does not sit inside a command-line flag or the key of an assignment
/// (`--error-format=json`, `-Werror`, `CARGO_CFG_PANIC=unwind`), which report nothing.
fn keyword_counts(t: &str, at: usize, len: usize, whole: bool) -> bool {
    let b = t.as_bytes();
    let ends_word = !whole || b.get(at + len).is_none_or(|c| !c.is_ascii_alphabetic());
    if !ends_word {
        return false;
    }
    let token_start = t[..at]
        .char_indices()
        .rfind(|&(_, c)| c.is_whitespace() || c == '`' || c == '\'' || c == '"')
        .map_or(0, |(i, c)| i + c.len_utf8());
    let token_end = t[at..]
        .find(|c: char| c.is_whitespace() || c == '`' || c == '\'' || c == '"')
        .map_or(t.len(), |i| at + i);
    let token = &t[token_start..token_end];
    let flag = token.starts_with('-') && token.len() > 1 && token.as_bytes()[1] != b'-'
        || token.starts_with("--");
    // In `KEY=value` only the value reports anything: `level=error` does, `CARGO_CFG_PANIC=x` not.
    let in_key =
        token[at - token_start..].contains('=') && !token[..at - token_start].contains('=');
    // The value of a long flag (`--cap-lints warn`) configures; it reports nothing.
    let previous = t[..token_start]
        .split_whitespace()
        .next_back()
        .unwrap_or("");
    // `--- FAIL:` (go test) is a rule, not a flag: a flag's name starts with a letter.
    let flag_value = previous.starts_with("--")
        && previous
            .as_bytes()
            .get(2)
            .is_some_and(u8::is_ascii_alphabetic)
        && !previous.contains('=');
    // Inside a URL a keyword is a name: `https://registry.npmjs.org/error-ex/-/…`.
    let in_url = token.contains("://");
    !(flag || in_key || flag_value || in_url)
}

/// Compiler error codes such as `E0308`, `TS2322`, `CS1002`.
fn error_code(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_uppercase() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let start = i;
            while i < b.len() && b[i].is_ascii_uppercase() && i - start < 3 {
                i += 1;
            }
            let digits = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i - digits >= 3 && (i == b.len() || !b[i].is_ascii_alphanumeric()) {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// `path.ext:12`, `--> src/x.rs:3:4`, `at file.js:10:2`, `File "x.py", line 3`.
fn has_location(t: &str) -> bool {
    if t.starts_with("--> ") || t.starts_with("File \"") {
        return true;
    }
    let b = t.as_bytes();
    let mut from = 0;
    while let Some(off) = memchr::memchr(b':', &b[from..]) {
        let colon = from + off;
        let digit_after = b.get(colon + 1).is_some_and(u8::is_ascii_digit);
        if digit_after && colon > 0 {
            // Walk back over the file name: it must contain a dot followed by letters.
            let mut j = colon;
            let mut saw_ext = false;
            while j > 0 {
                let c = b[j - 1];
                if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'/' | b'\\') {
                    j -= 1;
                } else if c == b'.' && j < colon && b[j].is_ascii_alphabetic() {
                    saw_ext = true;
                    j -= 1;
                } else {
                    break;
                }
            }
            // `http://shop.example.test:18430/` names a host and port, not a file and line.
            let url_host = b[j..colon].starts_with(b"//");
            if saw_ext && !url_host {
                return true;
            }
        }
        from = colon + 1;
    }
    false
}

/// A count of results: `3 passed`, `Tests: 2 failed`, `found 0 vulnerabilities`, `12 total`.
fn is_summary_count(t: &str) -> bool {
    const NOUNS: [&str; 16] = [
        "passed",
        "failed",
        "test",
        "error",
        "warning",
        "skipped",
        "ignored",
        "total",
        "pass",
        "vulnerabilit",
        "suites",
        "problems",
        "files changed",
        "insertion",
        "deletion",
        "succeeded",
    ];
    let lower = t.to_ascii_lowercase();
    let mut words = lower
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty());
    let mut previous_is_number = false;
    let counted = words.any(|word| {
        let hit = previous_is_number && NOUNS.iter().any(|n| word.starts_with(n));
        previous_is_number = word.bytes().all(|b| b.is_ascii_digit());
        hit
    });
    counted
        || lower.starts_with("test result:")
        || lower.starts_with("tests:")
        || lower.starts_with("summary")
}

/// What a stage must never fold: the one rule every formatter, the engine and the shared
/// folding helpers hold output to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Floor {
    /// Every line that reports a fact (`is_fact`): build logs, test runs, everything that is
    /// not a listing.
    Facts,
    /// Only lines that report a failure (`reports_failure`): listings (search results, file,
    /// process and package lists) are data, so their locations and counts may fold.
    Failures,
}

impl Floor {
    /// Whether `line` must stay visible.
    pub fn keeps(self, line: &str) -> bool {
        match self {
            Floor::Facts => is_fact(line),
            Floor::Failures => reports_failure(line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_fact, reports_failure};

    #[test]
    fn a_keyword_after_a_space_wider_than_a_byte_is_read() {
        assert!(is_fact("modifié\u{a0}error:         src/store.rs"));
        assert!(is_fact("x\u{3000}panicked at src/main.rs"));
    }

    #[test]
    fn listing_paths_are_not_failure_reports() {
        assert!(!reports_failure("./node_modules/verror/lib/verror.js"));
        assert!(!reports_failure("node_modules/assert-plus/"));
        assert!(!reports_failure(
            "484K\t./node_modules/assertion-error/LICENSE"
        ));
        assert!(reports_failure("grep: ./secret: Permission denied"));
        assert!(reports_failure("src/a.rs:12:    error!(\"boom\");"));
    }

    #[test]
    fn recognises_facts() {
        for line in [
            "error[E0308]: mismatched types",
            "  --> src/main.rs:4:5",
            "  left: 40",
            "test result: FAILED. 3 passed; 2 failed; 0 ignored",
            "src/app.ts(3,7): error TS2322: Type 'string' is not assignable",
            "main.c:12:5: warning: unused variable 'x'",
            "Tests:       2 failed, 48 passed, 50 total",
            "found 3 vulnerabilities",
            "TypeError: Cannot read properties of undefined",
            "java.lang.NullPointerException",
            "E   AssertionError: assert 3 == 4",
            "npm warn deprecated inflight@1.0.6: This module is not supported",
            "2026/12/02 14:23:11 level=error path=/orders/13",
            "    --- FAIL: TestFormat/GBP_500000 (0.00s)",
            "10.4.0.1 - - [03/Dec/2026:11:21:39 +0000] \"GET /reports HTTP/1.1\" 502 559 \"-\" \"curl/8.5.0\"",
        ] {
            assert!(is_fact(line), "{line}");
        }
        for line in [
            "   Compiling serde v1.0.200",
            "test tests::adds ... ok",
            "",
            "Downloading crates ...",
            "     Running `rustc --crate-name memchr --error-format=json --cap-lints warn -C panic=unwind`",
            "     Running `rustc --check-cfg 'cfg(feature, values(\"no-panic\"))' CARGO_CFG_PANIC=unwind`",
            "cc -Wall -Werror -Wno-deprecated -c -o main.o main.c",
            "test parser::tests::rejects_failing_input ... ok",
            "  (use \"git restore <archivo>...\" para actualizar lo que será confirmado)",
            "10.4.0.1 - - [03/Dec/2026:11:21:38 +0000] \"GET /healthz HTTP/1.1\" 200 3 \"http://shop.example.test:18430/\"",
            "2605:      \"resolved\": \"https://registry.npmjs.org/error-ex/-/error-ex-1.3.4.tgz\",",
        ] {
            assert!(!is_fact(line), "{line}");
        }
    }
}
