//! jest, vitest and bun test runs (directly, through npx, or as `npm test`): folds passing
//! suites and passing test lines into counted markers, the context lines of a code frame
//! around its failing line (a frame shown once; a repeated one is left for a back-reference),
//! and vitest's per-file test list where each failure in it is shown again under `Failed Tests`.
//! Every failure block, its diff, the failing line with its caret, the stack frames, and the
//! `Tests:` / `Test Files` / bun's `N pass` summaries stay verbatim; a passing test whose name
//! reads like a fact stays too.

use super::fold::{fold_kinds, folds_any, Folding, DEFAULT};
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
    let mut kinds: Vec<_> = doc.lines.iter().map(|l| line_kind(l)).collect();
    // In a code frame, the failing line (`> 13 |` in jest, the line above the caret in
    // vitest) and its caret stay; the source lines around it are context the file holds.
    // A frame shown again for another failure is left whole: the engine points it back to
    // its first copy, which costs less than folding each copy.
    let failing = |n: usize| doc.lines.get(n + 1).is_some_and(|l| is_caret(l));
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for n in (0..doc.lines.len()).filter(|&n| failing(n)) {
        *seen.entry(doc.lines[n]).or_default() += 1;
    }
    let mut n = 0;
    while n < doc.lines.len() {
        let frame = (n..doc.lines.len())
            .take_while(|&m| is_frame_source(doc.lines[m]) || frame_mark(doc.lines[m]))
            .count();
        let once = (n..n + frame)
            .filter(|&m| failing(m))
            .all(|m| seen[doc.lines[m]] == 1);
        for (m, kind) in kinds.iter_mut().enumerate().skip(n).take(frame) {
            if once && is_frame_source(doc.lines[m]) && !failing(m) {
                *kind = Some("code frame context");
            }
        }
        n += frame.max(1);
    }
    // A frame's context is two or three lines on each side of the failing one: two pay too.
    let how = Folding {
        min_run: 2,
        ..DEFAULT
    };
    let pieces = listed_below(doc, fold_kinds(doc, &kinds, &how));
    folds_any(&pieces).then_some(pieces)
}

/// vitest lists every test of a failing file, each failure with its message (`× Cart > totals
/// 3ms`, `→ expected 3 to be 5`), and then shows each failure whole under `Failed Tests`, its
/// name and message again. The list's lines said again below fold; the file's own line
/// (`❯ src/cart.test.ts (7 tests | 3 failed)`) stays.
fn listed_below(doc: &Doc, pieces: Vec<Piece>) -> Vec<Piece> {
    let Some(section) = doc
        .lines
        .iter()
        .position(|l| l.starts_with('⎯') && l.contains(" Failed Tests "))
    else {
        return pieces;
    };
    let below = &doc.lines[section..];
    let said_below = |text: &str| text.len() >= 12 && below.iter().any(|l| l.contains(text));
    let restated: Vec<bool> = (0..doc.lines.len())
        .map(|n| {
            let t = doc.lines[n].trim_start();
            if n >= section {
                return false;
            }
            if let Some(test) = t.strip_prefix("× ") {
                // The name, without the duration vitest appends (`8ms`).
                let name = match test.rsplit_once(' ') {
                    Some((name, ms)) if ms.ends_with("ms") => name,
                    _ => test,
                };
                // Its failure block opens with ` FAIL  file > name`: the name ends that line.
                return name.len() >= 12 && below.iter().any(|l| l.trim_end().ends_with(name));
            }
            t.strip_prefix("→ ").is_some_and(said_below)
        })
        .collect();
    // A test of the list, before the failure blocks: a passing one, or a failure said below.
    let listed = |n: usize| {
        let t = doc.lines[n].trim_start();
        n < section && (restated[n] || (t.starts_with("✓ ") && !crate::doc::facts::is_fact(t)))
    };
    // Each stretch of the list with a failure said below folds whole: one marker per file.
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, out: &mut Vec<Piece>| {
        if run.len() >= 2 && run.iter().any(|&n| restated[n]) {
            out.push(Piece::Fold {
                lines: std::mem::take(run),
                what: "listed test".to_string(),
            });
        } else if run.len() >= 2 && run.iter().all(|&n| !restated[n]) {
            out.push(Piece::Fold {
                lines: std::mem::take(run),
                what: "passing test".to_string(),
            });
        } else {
            out.extend(run.drain(..).map(Piece::Keep));
        }
    };
    for piece in pieces {
        let lines: Vec<usize> = match &piece {
            Piece::Keep(n) if listed(*n) => vec![*n],
            Piece::Fold { lines, what }
                if what == "passing test" && lines.iter().all(|&n| listed(n)) =>
            {
                lines.clone()
            }
            _ => {
                flush(&mut run, &mut out);
                out.push(piece);
                continue;
            }
        };
        if run.last().is_some_and(|&m| m + 1 != lines[0]) {
            flush(&mut run, &mut out);
        }
        run.extend(lines);
    }
    flush(&mut run, &mut out);
    out
}

/// A source line of a code frame other than the failing one: `      11 |   test(…)` (jest),
/// `     25|     cart.add(…)` (vitest). The failing line jest marks with `>`.
fn is_frame_source(line: &str) -> bool {
    numbered_frame_line(line.trim_start())
}

/// `13 |  expect(…)`: a line number, then the bar of a code frame.
fn numbered_frame_line(t: &str) -> bool {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t[digits..].trim_start().starts_with('|')
}

/// A frame's failing line marked by jest (`    > 13 |     expect(…)`) or its caret line.
fn frame_mark(line: &str) -> bool {
    is_caret(line)
        || line
            .trim_start()
            .strip_prefix('>')
            .is_some_and(|rest| numbered_frame_line(rest.trim_start()))
}

/// The caret line under a code frame's failing line: `         |        ^`.
fn is_caret(line: &str) -> bool {
    line.trim_start()
        .strip_prefix('|')
        .is_some_and(|rest| rest.trim() == "^")
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
    fn a_code_frame_keeps_its_failing_line_and_caret() {
        let text = "FAIL test/week.test.js\n  ● isoWeek › mid-year\n\n      3 | describe(\"isoWeek\", () => {\n      4 |   const d = (s) => new Date(s);\n    > 5 |   test(\"mid-year\", () => check(d(\"2025-04-02\"), 14));\n        |                              ^\n      6 |   test(\"Dec 29\", () => check(d(\"2025-12-29\"), 1));\n      7 | });\n\n      at Object.check (test/week.test.js:5:30)\n\nTests:       1 failed, 1 total\n";
        let out = run("npx jest", text).unwrap();
        assert!(
            out.contains(
                "[… 2 code frame context lines · sqz expand h:L4-5]\n    > 5 |   test(\"mid-year\""
            ),
            "{out}"
        );
        assert!(out.contains("        |                              ^\n[… 2 code frame context lines · sqz expand h:L8-9]\n"), "{out}");
        assert!(out.contains("at Object.check (test/week.test.js:5:30)"));
        // The same frame shown for a second failure is left whole, for a back-reference.
        let twice = text.replacen("Tests:", "  ● isoWeek › again\n\n      3 | describe(\"isoWeek\", () => {\n      4 |   const d = (s) => new Date(s);\n    > 5 |   test(\"mid-year\", () => check(d(\"2025-04-02\"), 14));\n        |                              ^\n      6 |   test(\"Dec 29\", () => check(d(\"2025-12-29\"), 1));\n\nTests:", 1);
        assert_eq!(run("npx jest", &twice), None, "nothing else folds here");
    }

    #[test]
    fn vitest_folds_its_list_where_each_failure_is_shown_again_below() {
        let text = " ❯ src/cart.test.ts (4 tests | 2 failed) 16ms\n   ✓ Cart > starts empty 2ms\n   × Cart > merges quantities of the same sku 8ms\n     → expected 3 to be 5 // Object.is equality\n   ✓ Cart > removes an item 0ms\n   × Cart > computes totals 3ms\n     → expected 30.47 to be 30.48 // Object.is equality\n\n⎯⎯⎯ Failed Tests 2 ⎯⎯⎯\n\n FAIL  src/cart.test.ts > Cart > merges quantities of the same sku\nAssertionError: expected 3 to be 5 // Object.is equality\n FAIL  src/cart.test.ts > Cart > computes totals\nAssertionError: expected 30.47 to be 30.48 // Object.is equality\n\n Test Files  1 failed (1)\n      Tests  2 failed | 2 passed (4)\n";
        let doc = Doc::new("npx vitest run", text);
        let out = crate::fmt::render_checked(&doc, &format(&doc).unwrap(), "h");
        assert!(out.starts_with(" ❯ src/cart.test.ts (4 tests | 2 failed) 16ms\n[… 6 listed test lines · sqz expand h:L2-7]\n\n⎯⎯⎯ Failed Tests 2 ⎯⎯⎯\n"), "{out}");
        // A failure whose message is not said again stays in the list.
        let cut = text.replace(
            "AssertionError: expected 30.47 to be 30.48 // Object.is equality\n",
            "",
        );
        let doc = Doc::new("npx vitest run", &cut);
        let out = crate::fmt::render_checked(&doc, &format(&doc).unwrap(), "h");
        assert!(
            out.contains("     → expected 30.47 to be 30.48 // Object.is equality\n"),
            "{out}"
        );
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
