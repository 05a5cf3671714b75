//! A log is a log whatever command printed it: read with `cat` or `tail`, it folds by template
//! around the lines that matter; source files read the same ways stay byte for byte.

mod common;

use common::{compress, expand, fixtures_dir, Scratch};
use std::path::Path;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn fixture(name: &str) -> (String, Vec<u8>) {
    let dir = fixtures_dir().join(name);
    let cmd = std::fs::read_to_string(dir.join("cmd")).unwrap();
    (
        cmd.trim().to_string(),
        std::fs::read(dir.join("input.txt")).unwrap(),
    )
}

/// What went out, header included, is at most 30% of the input's tokens, and the header's
/// hash expands to the input byte for byte.
fn saves_most_and_expands(name: &str, s: &Scratch, run: &common::Run, input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let (raw, sent) = (
        sqz::tokens::count(&text),
        sqz::tokens::count(&run.stdout_text()) + sqz::tokens::count(&run.stderr),
    );
    assert!(sent * 10 <= raw * 3, "{name}: {sent} of {raw} tokens");
    let hash = run.stderr.trim().rsplit(' ').next().unwrap();
    assert_eq!(expand(bin(), &s.db(), hash).stdout, input, "{name}");
}

#[test]
fn logs_read_with_cat_and_tail_keep_every_error_and_warning_and_save_most() {
    for name in ["cat-worker-log", "tail-app-log"] {
        let s = Scratch::new("logs");
        let (cmd, input) = fixture(name);
        let run = compress(bin(), &s.db(), &cmd, &input);
        let out = run.stdout_text();
        let text = String::from_utf8_lossy(&input);
        for line in text.lines().filter(|l| {
            l.contains("ERROR")
                || l.contains("WARNING")
                || l.contains(" 404")
                || l.contains("done:")
        }) {
            assert!(out.contains(line), "{name}: lost {line}\n{out}");
        }
        saves_most_and_expands(name, &s, &run, &input);
    }
}

#[test]
fn logs_whose_templates_take_turns_keep_every_error_and_save_most() {
    // An nginx access log (page loads between health checks, 4xx/5xx among them) and a
    // PostgreSQL log (SELECT, INSERT and UPDATE statements between ERROR/DETAIL/STATEMENT).
    for (name, kept) in [
        ("cat-nginx-access-log", &["\" 4", "\" 5"][..]),
        (
            "tail-postgres-log",
            &[" ERROR: ", " FATAL: ", " DETAIL: ", " STATEMENT: "][..],
        ),
    ] {
        let s = Scratch::new("logs");
        let (cmd, input) = fixture(name);
        let run = compress(bin(), &s.db(), &cmd, &input);
        let out = run.stdout_text();
        let text = String::from_utf8_lossy(&input);
        let must: Vec<&str> = text
            .lines()
            .filter(|l| kept.iter().any(|k| l.contains(k)))
            .collect();
        assert!(must.len() >= 10, "{name}: {} lines to keep", must.len());
        for line in must {
            assert!(out.contains(line), "{name}: lost {line}");
        }
        assert!(
            out.contains(" kinds: #1 \""),
            "{name}: no interleaved fold\n{out}"
        );
        saves_most_and_expands(name, &s, &run, &input);
    }
}

#[test]
fn a_run_of_40_identical_failures_keeps_every_name_and_location() {
    let s = Scratch::new("logs");
    let (cmd, input) = fixture("mix-test-many-identical-failures");
    let run = compress(bin(), &s.db(), &cmd, &input);
    let out = run.stdout_text();
    let text = String::from_utf8_lossy(&input);
    let lines: Vec<&str> = text.lines().collect();
    // `  7) test parse/1 with the EU feed parses order 1247 (Shop.OrderTest)`, then its
    // `     test/shop/order_test.exs:149`.
    let mut failures = 0;
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let numbered = t
            .split_once(") test ")
            .is_some_and(|(k, _)| k.parse::<u32>().is_ok());
        if numbered {
            failures += 1;
            assert!(out.contains(line), "lost {line}");
            assert!(out.contains(lines[n + 1]), "lost the location of {line}");
        }
    }
    assert_eq!(failures, 40);
    assert!(
        out.contains("[same "),
        "the repeated blocks point back\n{out}"
    );
    let (raw, sent) = (sqz::tokens::count(&text), sqz::tokens::count(&out));
    assert!(sent * 10 <= raw * 7, "{sent} of {raw} tokens");
    let hash = run.stderr.trim().rsplit(' ').next().unwrap();
    assert_eq!(expand(bin(), &s.db(), hash).stdout, input);
}

#[test]
fn source_read_with_cat_head_and_sed_stays_byte_for_byte() {
    for (name, path) in [
        ("cat-python-source", "app.py"),
        ("cat-rust-source", "src/packed/rabinkarp.rs"),
    ] {
        let (_, input) = fixture(name);
        let text = String::from_utf8(input).unwrap();
        let head: String = text.lines().take(40).map(|l| format!("{l}\n")).collect();
        let middle: String = text
            .lines()
            .skip(10)
            .take(30)
            .map(|l| format!("{l}\n"))
            .collect();
        for (label, body) in [
            (format!("cat {path}"), text.as_str()),
            (format!("head -40 {path}"), head.as_str()),
            (format!("sed -n '11,40p' {path}"), middle.as_str()),
        ] {
            let s = Scratch::new("source");
            let run = compress(bin(), &s.db(), &label, body.as_bytes());
            assert_eq!(run.stdout, body.as_bytes(), "{label}");
            assert_eq!(run.stderr, "", "{label}");
        }
    }
}

/// One Latin-1 byte in a real log: the output is the valid twin's, byte for byte but for that
/// byte and the hash in the markers; the original comes back exactly and a repeat is a reference.
#[test]
fn an_invalid_byte_changes_nothing_but_itself() {
    let (cmd, valid) = fixture("cat-worker-log");
    let at = memchr::memmem::find(&valid, b" EUR in ").expect("an INFO line") + 1;
    let mut invalid = valid.clone();
    invalid[at] = 0xc9; // the `E` of `EUR` as a lone Latin-1 byte
    let twin = {
        let mut twin = valid.clone();
        twin[at] = b'#';
        twin
    };
    let s = Scratch::new("bytes");
    let bad = compress(bin(), &s.db(), &cmd, &invalid);
    let good = compress(bin(), &s.db(), &cmd, &twin);
    let strip_hash = |out: &[u8], input: &[u8]| {
        let text = String::from_utf8_lossy(out).replace('\u{fffd}', "#");
        text.replace(&common::hash16(input)[..12], "HASH")
    };
    assert_eq!(
        strip_hash(&bad.stdout, &invalid),
        strip_hash(&good.stdout, &twin)
    );
    assert!(bad.stdout.len() * 5 < invalid.len(), "it folds");
    let hash = common::hash16(&invalid);
    assert_eq!(expand(bin(), &s.db(), &hash).stdout, invalid);
    let again = compress(bin(), &s.db(), &cmd, &invalid);
    assert_eq!(again.stdout_text().trim_end(), format!("§ref:{hash}§"));
}

/// Source stays byte for byte with no store too: a back-reference is lossless, but source,
/// configs and diffs are never rewritten at all.
#[test]
fn source_with_repeated_blocks_stays_byte_for_byte_without_a_store() {
    let (_, input) = fixture("cat-rust-source");
    let twice = [input.clone(), input].concat();
    let s = Scratch::new("nocache-src");
    let run = common::sqz(
        bin(),
        &s.db(),
        &[
            "compress",
            "--no-cache",
            "--cmd",
            "cat src/packed/rabinkarp.rs",
        ],
        &twice,
        &[],
    );
    assert_eq!(run.stdout, twice);
}
