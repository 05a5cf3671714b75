//! go test: folds `=== RUN`/`PAUSE`/`CONT`, `--- PASS` and `go: downloading` lines into one
//! counted marker per package. Every `--- FAIL`/`--- SKIP` block with its messages, the
//! `=== RUN` line naming the test that logged a message, panics and goroutine dumps, and every
//! per-package `ok`/`FAIL`/`?` result line stay verbatim; a fact line is never folded.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "go" && label.subcommand() == Some("test")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let recognised = doc.lines.iter().any(|l| {
        l.starts_with("ok  \t")
            || l.starts_with("FAIL\t")
            || l.starts_with("--- ")
            || l.starts_with("=== RUN")
            || *l == "PASS"
            || *l == "FAIL"
    });
    if !recognised {
        return None;
    }
    let mut kinds: Vec<Option<&'static str>> = doc.lines.iter().map(|l| line_kind(l)).collect();
    // A test's log line (`    x_test.go:9: got 1`) follows the `=== RUN`/`=== CONT` of the
    // test that wrote it: that line names the test, so it stays.
    for n in 1..kinds.len() {
        let owner = doc.lines[n - 1].trim_start();
        if kinds[n].is_none()
            && kinds[n - 1].is_some()
            && (owner.starts_with("=== RUN ") || owner.starts_with("=== CONT "))
            && !is_package_result(doc.lines[n])
        {
            kinds[n - 1] = None;
        }
    }
    for (n, line) in doc.lines.iter().enumerate() {
        if is_fact(line) {
            kinds[n] = None;
        }
    }
    Some(per_package(doc, &kinds))
}

fn line_kind(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    let progress = t.starts_with("=== RUN ")
        || t.starts_with("=== PAUSE ")
        || t.starts_with("=== CONT ")
        || t.starts_with("--- PASS: ");
    if progress {
        return Some("test progress");
    }
    if line.starts_with("go: downloading ") || line.starts_with("go: finding ") {
        return Some("module download");
    }
    None
}

/// `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.02s`, `?   \tpkg\t[no test files]`: one package's result.
fn is_package_result(line: &str) -> bool {
    line.starts_with("ok  \t") || line.starts_with("FAIL\t") || line.starts_with("?   \t")
}

/// One marker per kind per package (up to its result line), where its first line was; every
/// other line stays in input order.
fn per_package(doc: &Doc, kinds: &[Option<&'static str>]) -> Vec<Piece> {
    let mut groups: Vec<(&'static str, usize, Vec<usize>)> = Vec::new();
    let mut opens_group = vec![None; kinds.len()];
    let mut package = 0;
    for (n, kind) in kinds.iter().enumerate() {
        if let Some(what) = *kind {
            match groups
                .iter_mut()
                .find(|(w, p, _)| *w == what && *p == package)
            {
                Some((_, _, lines)) => lines.push(n),
                None => {
                    opens_group[n] = Some(groups.len());
                    groups.push((what, package, vec![n]));
                }
            }
        }
        if is_package_result(doc.lines[n]) {
            package += 1;
        }
    }
    let mut out = Vec::new();
    for (n, kind) in kinds.iter().enumerate() {
        match (kind, opens_group[n]) {
            (None, _) => out.push(Piece::Keep(n)),
            (Some(_), Some(g)) if groups[g].2.len() == 1 => out.push(Piece::Keep(n)),
            (Some(_), Some(g)) => out.push(Piece::Fold {
                lines: groups[g].2.clone(),
                what: groups[g].0.to_string(),
            }),
            (Some(_), None) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERBOSE: &str = include_str!("../../fixtures/go-test-fail-verbose/input.txt");

    fn run(text: &str) -> String {
        let doc = Doc::new("go test -v ./...", text);
        let pieces = format(&doc).expect("recognised");
        crate::fmt::render_checked(&doc, &pieces, "h")
    }

    #[test]
    fn keeps_failures_and_package_results() {
        let text = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    b_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/m\t0.01s\nok  \texample.com/n\t0.02s\n";
        let out = run(text);
        assert!(out.starts_with("[… 2 test progress lines · sqz expand h:L1-2]\n=== RUN   TestB\n    b_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\n"));
        assert!(out.contains("ok  \texample.com/n\t0.02s"));
    }

    #[test]
    fn one_marker_per_package_and_every_result_line() {
        let out = run(VERBOSE);
        assert_eq!(out.matches("test progress lines").count(), 2);
        for line in VERBOSE
            .lines()
            .filter(|l| is_package_result(l) || l.contains("--- FAIL"))
        {
            assert!(out.contains(line), "{line}");
        }
        // The subtest that logged the message is named right above it.
        assert!(out.contains("=== RUN   TestBucketAllowMany/negative\n    bucket_test.go:74:"));
    }

    #[test]
    fn skips_stay_with_their_reason() {
        let text = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    b_test.go:9: needs network\n--- SKIP: TestB (0.00s)\n=== RUN   TestC\n--- PASS: TestC (0.00s)\nPASS\nok  \texample.com/m\t0.01s\n";
        let out = run(text);
        assert!(out.contains("--- SKIP: TestB (0.00s)\n"));
        assert!(out.contains("=== RUN   TestB\n    b_test.go:9: needs network\n"));
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = VERBOSE.find("--- FAIL: TestWindowLimit").unwrap() + 13;
        let out = run(&VERBOSE[..cut]);
        assert!(out.ends_with("\n--- FAIL: Tes"));
    }

    #[test]
    fn interleaved_parallel_tests_keep_their_messages() {
        // t.Parallel(): PAUSE/CONT interleave, and a message follows the CONT of its test.
        let text = "=== RUN   TestA\n=== PAUSE TestA\n=== RUN   TestB\n=== PAUSE TestB\n=== CONT  TestA\n=== CONT  TestB\n    b_test.go:4: boom\n--- FAIL: TestB (0.00s)\n--- PASS: TestA (0.00s)\nFAIL\nFAIL\texample.com/m\t0.01s\n";
        let out = run(text);
        assert!(out.contains("=== CONT  TestB\n    b_test.go:4: boom\n--- FAIL: TestB (0.00s)\n"));
        assert!(out.contains("[… 6 test progress lines · sqz expand h]"));
    }

    #[test]
    fn unknown_lines_stay_and_foreign_output_is_refused() {
        let text = VERBOSE.replacen("=== RUN", "=== NAME  TestFuture\n=== RUN", 1);
        assert!(run(&text).contains("=== NAME  TestFuture\n"));
        assert!(format(&Doc::new("go test", "Prüfung bestanden\n")).is_none());
    }
}
