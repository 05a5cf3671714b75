//! jest and vitest runs (directly, through npx, or as `npm test`): folds passing suites and
//! passing test lines into counted markers. Every failure block, its diff, code frame and
//! stack frames, and the `Tests:` / `Test Files` summaries stay verbatim.

use super::{fold_consecutive, Label};
use crate::engine::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    let sub = label.subcommand();
    match label.program {
        "jest" | "vitest" => true,
        "npx" | "bunx" | "pnpx" => matches!(sub, Some("jest" | "vitest")),
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
    });
    if !summary {
        return None;
    }
    Some(fold_consecutive(doc, line_kind))
}

fn line_kind(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
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
    use crate::engine::doc::render;

    #[test]
    fn folds_passing_suites_and_tests() {
        let text = "PASS src/a.test.ts\nPASS src/b.test.ts\nFAIL src/c.test.ts\n  ✓ works (2 ms)\n  ✓ also works\n  ✕ breaks (3 ms)\n\n  ● breaks\n\n    Expected: 3\n    Received: 4\n\nTests:       1 failed, 2 passed, 3 total\n";
        let doc = Doc::new("npx jest", text);
        let out = render(&doc, &format(&doc).unwrap(), "h");
        assert!(out.starts_with("[… 2 passing suite lines · sqz expand h:L1-2]\nFAIL src/c.test.ts\n[… 2 passing test lines"));
        assert!(out.contains("  ✕ breaks (3 ms)\n"));
        assert!(out.contains("    Received: 4\n"));
        assert!(out.contains("Tests:       1 failed, 2 passed, 3 total"));
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
