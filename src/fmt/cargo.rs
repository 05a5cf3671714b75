//! cargo build, check, test, clippy, run, nextest: folds build progress (`Compiling …`,
//! `Fresh …`, `Dirty …`, the `Running \`rustc …\`` command lines of `-v`/`-vv`, build-script
//! output) and passing tests (`test x ... ok`, nextest `PASS`) into counted markers.
//! Diagnostics with their code frames, failures, panics, every `running N tests` /
//! `test result:` line and the `Finished` line stay verbatim; it never folds a fact line, and
//! output without a cargo shape is refused.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "cargo"
        && matches!(
            label.subcommand(),
            Some(
                "build"
                    | "b"
                    | "check"
                    | "c"
                    | "test"
                    | "t"
                    | "clippy"
                    | "run"
                    | "r"
                    | "bench"
                    | "nextest"
            )
        )
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let recognised = doc.lines.iter().any(|l| {
        let t = l.trim_start();
        t.starts_with("test result:")
            || t.starts_with("Finished `")
            || t.starts_with("Compiling ")
            || t.starts_with("error[")
            || t.starts_with("error: could not compile")
            || t.starts_with("running ")
            || (t.starts_with("Starting ") && t.contains(" tests across "))
    });
    if !recognised {
        return None;
    }
    let kinds = classify(doc);
    Some(pieces(doc, &kinds))
}

/// What a foldable line is; `None` keeps it.
type Kind = Option<&'static str>;

const PROGRESS: &str = "build progress";
const PASSING: &str = "passing test";

/// Each line's kind. Lines that are facts are always kept, whatever their shape.
fn classify(doc: &Doc) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = Vec::with_capacity(doc.lines.len());
    // Inside a `Running \`…\`` command whose quoted environment spans several lines.
    let mut open_command = false;
    for line in &doc.lines {
        let kind = if open_command && !looks_like_status(line) {
            open_command = !line.ends_with('`');
            Some(PROGRESS)
        } else {
            open_command = false;
            let t = line.trim_start();
            if t.len() != line.len() && t.starts_with("Running `") {
                open_command = !(t.len() > "Running `".len() && t.ends_with('`'));
                Some(PROGRESS)
            } else {
                line_kind(line)
            }
        };
        kinds.push(if is_fact(line) { None } else { kind });
    }
    kinds
}

fn line_kind(line: &str) -> Kind {
    let t = line.trim_start();
    const STATUS: [&str; 14] = [
        "Compiling ",
        "Checking ",
        "Downloaded ",
        "Downloading ",
        "Fresh ",
        "Dirty ",
        "Updating ",
        "Locking ",
        "Adding ",
        "Blocking ",
        "Documenting ",
        "Packaging ",
        "Unpacking ",
        "Scraping ",
    ];
    if t.len() != line.len() && STATUS.iter().any(|p| t.starts_with(p)) {
        // A crate built from a local path is the project itself (a workspace member): it stays.
        let local = t.ends_with(')') && t.contains(" (/");
        return (!local).then_some(PROGRESS);
    }
    if is_build_script_output(line) {
        return Some("build script output");
    }
    if t.starts_with("test ") && (t.ends_with(" ... ok") || t.contains(" ... ok ")) {
        return Some(PASSING);
    }
    // nextest: `        PASS [   0.009s] ( 1/45) crate module::test`
    if t.len() != line.len() && t.starts_with("PASS [") {
        return Some(PASSING);
    }
    None
}

/// `[proc-macro2 1.0.107] cargo:rustc-check-cfg=cfg(fuzzing)`: what a build script printed,
/// shown by `cargo build -vv`.
fn is_build_script_output(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else {
        return false;
    };
    let Some((tag, _)) = rest.split_once("] ") else {
        return false;
    };
    let mut words = tag.split(' ');
    let (Some(name), Some(version), None) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    !name.is_empty() && version.starts_with(|c: char| c.is_ascii_digit()) && version.contains('.')
}

/// A line that starts something new, so an unclosed `Running \`…\`` command (output cut
/// mid-line) never swallows it.
fn looks_like_status(line: &str) -> bool {
    let t = line.trim_start();
    let word = t.split(' ').next().unwrap_or("");
    (t.len() != line.len() && word.len() > 2 && word.starts_with(|c: char| c.is_ascii_uppercase()))
        || t.starts_with("warning")
        || t.starts_with("error")
        || is_build_script_output(line)
}

/// Build progress folds into one marker for the whole output, and passing tests into one
/// marker per test suite (up to each `test result:` line, or a whole nextest run), each placed
/// where its first line was. Every other line stays in input order.
fn pieces(doc: &Doc, kinds: &[Kind]) -> Vec<Piece> {
    // (what, suite, lines); progress has no suite.
    let mut groups: Vec<(&'static str, Option<usize>, Vec<usize>)> = Vec::new();
    let mut first_of_group = vec![None; kinds.len()];
    let mut suite = 0;
    for (n, kind) in kinds.iter().enumerate() {
        if let Some(what) = *kind {
            let scope = (what == PASSING).then_some(suite);
            match groups
                .iter_mut()
                .find(|(w, s, _)| *w == what && *s == scope)
            {
                Some((_, _, lines)) => lines.push(n),
                None => {
                    first_of_group[n] = Some(groups.len());
                    groups.push((what, scope, vec![n]));
                }
            }
        }
        if doc.lines[n].starts_with("test result:") {
            suite += 1;
        }
    }
    let mut out = Vec::new();
    for (n, kind) in kinds.iter().enumerate() {
        if kind.is_none() {
            out.push(Piece::Keep(n));
        } else if let Some(g) = first_of_group[n] {
            let (what, _, lines) = &groups[g];
            if lines.len() == 1 {
                out.push(Piece::Keep(n));
            } else {
                out.push(Piece::Fold {
                    lines: lines.clone(),
                    what: what.to_string(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERBOSE: &str = include_str!("../../fixtures/cargo-build-verbose/input.txt");
    const SUITES: &str = include_str!("../../fixtures/cargo-test-passing/input.txt");
    const FAILING: &str = include_str!("../../fixtures/cargo-test-failing/input.txt");
    const NEXTEST: &str = include_str!("../../fixtures/cargo-nextest-failing/input.txt");

    /// Formats `text` and checks that every fact line is still shown.
    fn run(label: &str, text: &str) -> String {
        let doc = Doc::new(label, text);
        let pieces = format(&doc).expect("recognised");
        crate::fmt::render_checked(&doc, &pieces, "h")
    }

    #[test]
    fn folds_progress_and_passing_tests() {
        let text = "   Compiling a v0.1.0\n   Compiling b v0.1.0\n    Finished `test` profile\n     Running unittests src/lib.rs\n\nrunning 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored\n";
        let out = run("cargo test", text);
        assert!(out.contains("[… 2 build progress lines · sqz expand h:L1-2]"));
        assert!(out.contains("[… 2 passing test lines · sqz expand h:L7-8]"));
        assert!(out.contains("test c ... FAILED"));
        assert!(out.contains("test result: FAILED. 2 passed; 1 failed; 0 ignored"));
    }

    #[test]
    fn verbose_build_folds_commands_and_build_script_output() {
        let out = run("cargo build -vv", VERBOSE);
        assert!(!out.contains("cargo:rerun-if-changed=build.rs"));
        // The second line of a multi-line `Running` command (a crate description) is folded.
        assert!(!out.contains("1, 2 or 3 byte search and single substring search."));
        assert!(out.contains("\n   Compiling linkcheck v0.3.1 (/home/dev/linkcheck)\n"));
        assert!(!out.contains("Compiling memchr"));
        assert!(out.contains("warning: `aho-corasick` (lib) generated 4 warnings"));
        assert!(out.ends_with(
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 40.67s\n"
        ));
    }

    #[test]
    fn every_suite_keeps_its_result_line() {
        let out = run("cargo test", SUITES);
        let results = |s: &str| s.lines().filter(|l| l.starts_with("test result:")).count();
        assert_eq!(results(&out), results(SUITES));
        assert_eq!(results(&out), 5);
        assert_eq!(out.matches("passing test lines").count(), 4);
        assert!(!out.contains("... ok"));
    }

    #[test]
    fn nextest_folds_passes_into_one_marker_and_keeps_failures() {
        let out = run("cargo nextest run --no-fail-fast", NEXTEST);
        assert!(out.contains("[… 39 passing test lines · sqz expand h]"));
        assert_eq!(out.matches("        FAIL [").count(), 12);
        assert!(
            out.contains("     Summary [   0.301s] 45 tests run: 39 passed, 6 failed, 0 skipped")
        );
        assert!(out.contains("     right: Money { cents: 0 }"));
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = FAILING
            .find("test invoice::tests::net_is_positive ... FAI")
            .unwrap()
            + 44;
        let out = run("cargo test", &FAILING[..cut]);
        assert!(out.ends_with("test invoice::tests::net_is_positive ... FAI"));
        assert!(out.contains("test discount::tests::percent_discount_caps_at_100 ... FAILED"));
        // A `Running` command cut mid-line does not swallow what follows.
        let cut = VERBOSE.find("CARGO_CRATE_NAME=unicode_ident").unwrap();
        let text = format!("{}\nwarning: something new\n", &VERBOSE[..cut]);
        assert!(run("cargo build -vv", &text).ends_with("warning: something new\n"));
    }

    #[test]
    fn interleaved_test_output_keeps_what_is_not_a_passing_line() {
        // Parallel threads with --nocapture: a test's output splits its `... ok` line.
        let text = "running 3 tests\ntest a ... ok\ntest b ... debug: connecting\ntest c ... ok\nok\n\ntest result: ok. 3 passed; 0 failed; 0 ignored\n";
        let out = run("cargo test -- --nocapture", text);
        assert!(out.contains("test b ... debug: connecting\n"));
        assert!(out.contains("\nok\n"));
        assert!(out.contains("[… 2 passing test lines · sqz expand h]"));
    }

    #[test]
    fn unknown_or_foreign_lines_stay_or_output_is_refused() {
        // A status word a newer cargo might print stays verbatim.
        let text = SUITES.replacen(
            "    Finished",
            "   Verifying slugwrap v0.4.2 (registry)\n    Finished",
            1,
        );
        assert!(run("cargo test", &text).contains("   Verifying slugwrap v0.4.2 (registry)\n"));
        // Output with no cargo shape at all (e.g. a translated wrapper) is refused.
        let foreign = "   Kompiliere slugwrap v0.4.2\n    Fertig in 1.76s\n";
        assert!(format(&Doc::new("cargo build", foreign)).is_none());
    }

    #[test]
    fn refuses_unknown_output() {
        assert!(format(&Doc::new("cargo test", "something else\n")).is_none());
    }
}
