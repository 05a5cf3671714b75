//! jest, vitest and bun test runs (directly, through npx, or as `npm test`): folds passing
//! suites and passing test lines into counted markers. Every failure block, its diff, code
//! frame and stack frames, and the `Tests:` / `Test Files` / bun's `N pass` summaries stay
//! verbatim; a passing test whose name reads like a fact stays too.

use super::fold::{fold_kinds, folds_any, DEFAULT};
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    let sub = label.subcommand();
    match label.program {
        "jest" | "vitest" => true,
        "npx" | "bunx" | "pnpx" => matches!(sub, Some("jest" | "vitest")),
        "bun" if sub == Some("test") => true,
        "npm" | "pnpm" | "yarn" | "bun" => {
            matches!(sub, Some("test" | "t"))
                || (sub == Some("run") && label.args.iter().any(|a| a.contains("test")))
        }
        _ => false,
    }
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let summary = doc.lines.iter().any(|l| {
        let t = l.trim_start();
        t.starts_with("Tests:")
            || t.starts_with("Test Suites:")
            || t.starts_with("Test Files ")
            || t.starts_with("Tests ")
            || (t.starts_with("Ran ") && t.contains(" tests across "))
    });
    if !summary {
        return None;
    }
    let kinds: Vec<_> = doc.lines.iter().map(|l| line_kind(l)).collect();
    let pieces = fold_kinds(doc, &kinds, &DEFAULT);
    folds_any(&pieces).then_some(pieces)
}

fn line_kind(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    // bun: `(pass) Cart > starts empty [0.13ms]`.
    if t.starts_with("(pass) ") {
        return Some("passing test");
    }
    // jest: `PASS src/a.test.ts` (a suite), `✓ adds numbers (3 ms)` (a test, with --verbose).
    if let Some(rest) = t.strip_prefix("PASS ") {
        return (!rest.trim().is_empty() && !rest.contains(' ')).then_some("passing suite");
    }
    if let Some(rest) = t.strip_prefix("✓ ").or_else(|| t.strip_prefix("√ ")) {
        // vitest: ` ✓ src/a.test.ts (5 tests) 3ms` is a suite.
        let suite = rest.contains(" tests) ")
            || rest.contains(" test) ")
            || rest.ends_with(" tests)")
            || rest.ends_with(" test)");
        return Some(if suite {
            "passing suite"
        } else {
            "passing test"
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::label::Label;
    use crate::doc::render;

    const JEST: &str = "PASS src/a.test.ts\nPASS src/b.test.ts\nPASS src/d.test.ts\nFAIL src/c.test.ts\n  ✓ works (2 ms)\n  ✓ also works\n  ✓ still works\n  ✕ breaks (3 ms)\n\n  ● breaks\n\n    Expected: 3\n    Received: 4\n\nTests:       1 failed, 3 passed, 4 total\n";

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn folds_passing_suites_and_tests() {
        let out = run("npx jest", JEST).unwrap();
        assert!(out.starts_with("[… 3 passing suite lines · sqz expand h:L1-3]\nFAIL src/c.test.ts\n[… 3 passing test lines · sqz expand h:L5-7]\n"));
        assert!(out.contains("  ✕ breaks (3 ms)\n"));
        assert!(out.contains("    Received: 4\n"));
        assert!(out.contains("Tests:       1 failed, 3 passed, 4 total"));
    }

    #[test]
    fn a_passing_test_named_like_a_failure_stays() {
        let text = JEST.replace("  ✓ also works\n", "  ✓ reports an error for bad input\n");
        let out = run("npx jest", &text).unwrap();
        assert!(out.contains("  ✓ reports an error for bad input\n"));
        assert!(out.contains("[… 3 passing suite lines"));
    }

    #[test]
    fn bun_test_folds_pass_lines() {
        let text = "bun test v1.4.5 (a7733435c)\n\nsrc/__tests__/money.test.ts:\n(pass) toCents > converts whole amounts [0.03ms]\n(pass) toCents > rounds half cents [0.01ms]\n(pass) toCents > handles negatives\nerror: expect(received).toBe(expected)\n\nExpected: 1796\nReceived: 1795\n\n(fail) applyDiscount > rounds to the nearest cent [0.07ms]\n\n 3 pass\n 1 fail\nRan 4 tests across 1 file. [75.00ms]\n";
        let out = run("bun test", text).unwrap();
        assert!(out.contains("[… 3 passing test lines · sqz expand h:L4-6]\nerror: expect(received).toBe(expected)\n"));
        assert!(out.contains("(fail) applyDiscount > rounds to the nearest cent [0.07ms]\n"));
        assert!(out.ends_with(" 3 pass\n 1 fail\nRan 4 tests across 1 file. [75.00ms]\n"));
    }

    #[test]
    fn truncated_interleaved_and_unknown_lines_stay() {
        // Cut before the summary: no summary, no claim.
        let cut = &JEST[..JEST.find("Tests:").unwrap() - 3];
        assert!(run("npx jest", cut).is_none());
        // Two workers' lines interleaved and a line of a newer jest: both kept as they are.
        let text = JEST.replace(
            "PASS src/b.test.ts\n",
            "PASS src/b.test.ts\n  console.log src/c.test.ts:12\nRERUN src/e.test.ts (flaky)\n",
        );
        let out = run("npx jest", &text).unwrap();
        assert!(out.contains("  console.log src/c.test.ts:12\nRERUN src/e.test.ts (flaky)\n"));
        // A localized summary (no `Tests:`) is refused rather than guessed at.
        let german = JEST.replace(
            "Tests:       1 failed, 3 passed, 4 total",
            "Testfälle: 1 fehlgeschlagen, 3 bestanden",
        );
        assert!(run("npx jest", &german).is_none());
    }

    #[test]
    fn refuses_output_without_a_summary() {
        assert!(format(&Doc::new(
            "npm test",
            "> app@1.0.0 test\n> mocha\n\n  3 passing\n"
        ))
        .is_none());
    }
}
