//! cargo build, check, test, clippy, run: folds build progress (`Compiling …`, `Downloaded …`)
//! and passing test lines into counted markers. Diagnostics, failures, panics and every
//! `test result:` line stay verbatim; output without a cargo shape is refused.

use super::{fold_consecutive, Label};
use crate::engine::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "cargo"
        && matches!(
            label.subcommand(),
            Some("build" | "b" | "check" | "c" | "test" | "t" | "clippy" | "run" | "r" | "bench")
        )
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let recognised = doc.lines.iter().any(|l| {
        let t = l.trim_start();
        t.starts_with("test result:")
            || t.starts_with("Finished ")
            || t.starts_with("Compiling ")
            || t.starts_with("error[")
            || t.starts_with("error: could not compile")
            || t.starts_with("running ")
    });
    if !recognised {
        return None;
    }
    Some(fold_consecutive(doc, line_kind))
}

fn line_kind(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    const PROGRESS: [&str; 12] = [
        "Compiling ",
        "Checking ",
        "Downloaded ",
        "Downloading ",
        "Fresh ",
        "Updating ",
        "Locking ",
        "Adding ",
        "Blocking ",
        "Documenting ",
        "Packaging ",
        "Unpacking ",
    ];
    if t.len() != line.len() && PROGRESS.iter().any(|p| t.starts_with(p)) {
        return Some("build progress");
    }
    if t.starts_with("test ") && (t.ends_with(" ... ok") || t.contains(" ... ok ")) {
        return Some("passing test");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::doc::render;

    #[test]
    fn folds_progress_and_passing_tests() {
        let text = "   Compiling a v0.1.0\n   Compiling b v0.1.0\n    Finished `test` profile\n     Running unittests src/lib.rs\n\nrunning 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored\n";
        let doc = Doc::new("cargo test", text);
        let out = render(&doc, &format(&doc).unwrap(), "h");
        assert!(out.contains("[… 2 build progress lines · sqz expand h:L1-2]"));
        assert!(out.contains("[… 2 passing test lines · sqz expand h:L7-8]"));
        assert!(out.contains("test c ... FAILED"));
        assert!(out.contains("test result: FAILED. 2 passed; 1 failed; 0 ignored"));
    }

    #[test]
    fn refuses_unknown_output() {
        assert!(format(&Doc::new("cargo test", "something else\n")).is_none());
    }
}
