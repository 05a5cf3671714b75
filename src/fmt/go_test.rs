//! go test: folds `=== RUN`/`PAUSE`/`CONT` and `--- PASS` lines into counted markers. Every
//! `--- FAIL` block with its messages, panics and goroutine dumps, and every per-package
//! `ok`/`FAIL` result line stay verbatim.

use super::{fold_consecutive, Label};
use crate::engine::doc::{Doc, Piece};

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
    Some(fold_consecutive(doc, |line| {
        let t = line.trim_start();
        let progress = t.starts_with("=== RUN ")
            || t.starts_with("=== PAUSE ")
            || t.starts_with("=== CONT ")
            || t.starts_with("--- PASS: ");
        progress.then_some("test progress")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::doc::render;

    #[test]
    fn keeps_failures_and_package_results() {
        let text = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    b_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/m\t0.01s\nok  \texample.com/n\t0.02s\n";
        let doc = Doc::new("go test -v ./...", text);
        let out = render(&doc, &format(&doc).unwrap(), "h");
        assert!(out.starts_with("[… 3 test progress lines · sqz expand h:L1-3]\n    b_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\n"));
        assert!(out.contains("ok  \texample.com/n\t0.02s"));
    }
}
