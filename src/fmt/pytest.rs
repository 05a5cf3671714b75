//! pytest runs (`pytest`, `python -m pytest`, `uv run pytest`): folds the session header,
//! `PASSED` lines of `-v` and progress lines made only of dots. A progress line holding an `F`,
//! `E`, `s` or `x` stays verbatim, and so does every FAILURES / ERRORS section, the short test
//! summary (but for pytest 9's `+ where …` lines that repeat a failure's `E` lines shown above)
//! and the final count line. Output without a pytest session shape is refused.

use super::fold::{fold_kinds, folds_any, DEFAULT};
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    let runs_pytest = |args: &[&str]| args.first().is_some_and(|a| is_pytest(a));
    match label.program {
        p if is_pytest(p) => true,
        "python" | "python3" => label
            .args
            .windows(2)
            .any(|w| w[0] == "-m" && is_pytest(w[1])),
        "uv" | "poetry" | "pipenv" | "hatch" | "pdm" => {
            label.subcommand() == Some("run")
                && runs_pytest(
                    &label
                        .args
                        .iter()
                        .copied()
                        .skip_while(|a| *a != "run")
                        .skip(1)
                        .filter(|a| !a.starts_with('-'))
                        .collect::<Vec<_>>(),
                )
        }
        _ => false,
    }
}

fn is_pytest(word: &str) -> bool {
    matches!(word, "pytest" | "py.test")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let session = doc
        .lines
        .iter()
        .any(|l| l.starts_with("====") && l.contains(" test session starts "));
    let closing = doc.lines.iter().any(|l| is_closing_line(l));
    if !session && !closing {
        return None;
    }
    let mut kinds: Vec<Option<&'static str>> = vec![None; doc.lines.len()];
    // pytest 9 repeats each failure's `+ where …` explanation under its FAILED line in the
    // short summary; the same lines stand, prefixed with `E`, in the failure section above.
    let explained: std::collections::HashSet<&str> = doc
        .lines
        .iter()
        .filter_map(|l| l.strip_prefix('E'))
        .map(str::trim)
        .filter(|l| l.starts_with('+'))
        .collect();
    let mut in_summary = false;
    let mut in_header = false;
    // Once a `====` section other than the session header opens (FAILURES, ERRORS, warnings,
    // short summary), nothing more is folded: those sections are the facts.
    let mut in_report = false;
    for (n, line) in doc.lines.iter().enumerate() {
        if line.starts_with("====") {
            in_header = line.contains(" test session starts ");
            in_summary = line.contains(" short test summary info ");
            in_report = !in_header;
            continue;
        }
        if in_summary && line.starts_with(' ') && explained.contains(line.trim()) {
            kinds[n] = Some("repeated explanation");
            continue;
        }
        if in_report {
            continue;
        }
        if in_header && is_header_line(line) {
            kinds[n] = Some("session header");
        } else if is_passed_line(line) || announces_passed(line, doc.lines.get(n + 1)) {
            kinds[n] = Some("passing test");
        } else if is_dots_line(line) {
            kinds[n] = Some("all-passing progress");
        }
    }
    let pieces = fold_kinds(doc, &kinds, &DEFAULT);
    folds_any(&pieces).then_some(pieces)
}

/// `===== 3 failed, 37 passed, 1 error in 0.31s =====` or, with `-q`, `164 passed in 0.13s`.
fn is_closing_line(line: &str) -> bool {
    let t = line.trim_matches(|c| c == '=' || c == ' ');
    let Some((counts, time)) = t.rsplit_once(" in ") else {
        return false;
    };
    let timed = time.ends_with('s') && time.starts_with(|c: char| c.is_ascii_digit());
    let counted = counts.split(", ").all(|part| {
        let mut words = part.split(' ');
        let number = words.next().is_some_and(|w| w.parse::<u64>().is_ok());
        let noun = words.next().is_some_and(|w| {
            matches!(
                w,
                "passed"
                    | "failed"
                    | "error"
                    | "errors"
                    | "skipped"
                    | "xfailed"
                    | "xpassed"
                    | "warning"
                    | "warnings"
                    | "deselected"
                    | "rerun"
            )
        });
        number && noun && words.next().is_none()
    });
    timed && counted
}

fn is_header_line(line: &str) -> bool {
    const KEYS: [&str; 8] = [
        "platform ",
        "cachedir: ",
        "rootdir: ",
        "configfile: ",
        "inifile: ",
        "plugins: ",
        "testpaths: ",
        "hypothesis profile ",
    ];
    KEYS.iter().any(|k| line.starts_with(k))
}

/// `tests/test_a.py::test_x[1] PASSED  [ 40%]`, and pytest-xdist's `[gw0] [ 40%] PASSED tests/…`.
fn is_passed_line(line: &str) -> bool {
    if line.starts_with("[gw") {
        return line.contains("] PASSED ");
    }
    let Some((test, rest)) = line.split_once(" PASSED") else {
        return false;
    };
    let rest = rest.trim();
    test.contains("::")
        && !test.starts_with(' ')
        && (rest.is_empty() || (rest.starts_with('[') && rest.ends_with("%]")))
}

/// With subtests, `-v` prints the test id alone before its result line:
/// `tests/test_more.py::LastTests::test_basic ` then `tests/test_more.py::LastTests::test_basic PASSED`.
fn announces_passed(line: &str, next: Option<&&str>) -> bool {
    let id = line.trim_end();
    id.len() < line.len()
        && id.contains("::")
        && !id.contains(' ')
        && next.is_some_and(|next| {
            is_passed_line(next)
                && next
                    .strip_prefix(id)
                    .is_some_and(|r| r.starts_with(" PASSED"))
        })
}

/// `tests/test_a.py ..........    [ 40%]` or, with `-q`, `.......... [ 40%]`: only dots.
fn is_dots_line(line: &str) -> bool {
    let body = match line.rsplit_once(" [") {
        Some((body, pct)) if pct.ends_with("%]") => body.trim_end(),
        _ => return false,
    };
    let marks = match body.rsplit_once(' ') {
        Some((file, marks)) if file.ends_with(".py") => marks,
        Some(_) => return false,
        None => body,
    };
    !marks.is_empty() && marks.bytes().all(|b| b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::label::Label;
    use crate::doc::render;

    const VERBOSE: &str = "============================= test session starts ==============================
platform linux -- Python 3.11.2, pytest-9.2.0, pluggy-1.7.0 -- /home/dev/inventory-py/.venv/bin/python
cachedir: .pytest_cache
rootdir: /home/dev/inventory-py
configfile: pyproject.toml
testpaths: tests
collecting ... collected 6 items

tests/test_models.py::test_item_value PASSED                             [ 16%]
tests/test_models.py::test_item_default_quantity PASSED                  [ 33%]
tests/test_models.py::test_add_merges_quantities PASSED                  [ 50%]
tests/test_parsing.py::test_normalize_sku[lmn-0007-LMN-007] FAILED       [ 66%]
tests/test_pricing.py::test_with_vat[net0-DE-gross0] PASSED              [ 83%]
tests/test_pricing.py::test_with_vat[net1-FR-gross1] PASSED              [100%]

=================================== FAILURES ===================================
_____________________ test_normalize_sku[lmn-0007-LMN-007] _____________________

    def test_normalize_sku(raw, expected):
>       assert normalize_sku(raw) == expected
E       AssertionError: assert 'LMN-0007' == 'LMN-007'

tests/test_parsing.py:33: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parsing.py::test_normalize_sku[lmn-0007-LMN-007] - AssertionError: assert 'LMN-0007' == 'LMN-007'
========================= 1 failed, 5 passed in 0.05s ==========================
";

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn folds_passing_lines_and_keeps_the_failure() {
        let out = run("pytest -v", VERBOSE).unwrap();
        assert!(out.contains("[… 5 session header lines · sqz expand h:L2-6]"));
        assert!(out.contains("[… 3 passing test lines · sqz expand h:L9-11]"));
        assert!(out.contains("test_normalize_sku[lmn-0007-LMN-007] FAILED       [ 66%]"));
        // Two passing lines do not pay for a marker.
        assert!(out.contains("test_with_vat[net1-FR-gross1] PASSED"));
        assert!(out.contains("E       AssertionError: assert 'LMN-0007' == 'LMN-007'"));
        assert!(out.contains("tests/test_parsing.py:33: AssertionError"));
        assert!(out.ends_with("1 failed, 5 passed in 0.05s ==========================\n"));
    }

    #[test]
    fn progress_lines_with_failures_stay() {
        let text =
            "============================= test session starts ==============================
collected 61 items

tests/test_init.py ..........                                            [ 10%]
tests/test_models.py ..........                                          [ 16%]
tests/test_parsing.py ..........                                         [ 32%]
tests/test_pricing.py ..............F                                    [ 57%]
tests/test_report.py ...E                                                [ 63%]
tests/test_slug.py .........................                             [100%]
....................                                                     [100%]
=========================== short test summary info ============================
FAILED tests/test_pricing.py::test_price_breaks - AssertionError: assert 1 == 2
ERROR tests/test_report.py::test_catalog - FileNotFoundError
=================== 1 failed, 59 passed, 1 error in 0.31s ===================
";
        let out = run("python -m pytest", text).unwrap();
        assert!(out.contains("[… 3 all-passing progress lines · sqz expand h:L4-6]"));
        assert!(out.contains("tests/test_pricing.py ..............F "));
        assert!(out.contains("tests/test_report.py ...E "));
        // Two dot lines after the failures: not worth a marker.
        assert!(out.contains("tests/test_slug.py ......"));
    }

    #[test]
    fn the_summary_folds_explanations_repeated_from_the_failure_above() {
        let text = "..F\n=================================== FAILURES ===================================\n_____ test_round[0.125-0.13] _____\n\n>       assert round_money(Decimal(amount)) == Decimal(expected)\nE       AssertionError: assert Decimal('0.12') == Decimal('0.13')\nE        +  where Decimal('0.12') = round_money(Decimal('0.125'))\nE        +    where Decimal('0.125') = Decimal('0.125')\nE        +  and   Decimal('0.13') = Decimal('0.13')\n\ntests/test_money.py:50: AssertionError\n=========================== short test summary info ============================\nFAILED tests/test_money.py::test_round[0.125-0.13] - AssertionError: assert Decimal('0.12') == Decimal('0.13')\n +  where Decimal('0.12') = round_money(Decimal('0.125'))\n +    where Decimal('0.125') = Decimal('0.125')\n +  and   Decimal('0.13') = Decimal('0.13')\n +  and   Decimal('9.99') = Decimal('9.99')\n1 failed, 2 passed in 0.10s\n";
        let out = run("pytest -q", text).unwrap();
        assert!(out.contains("- AssertionError: assert Decimal('0.12') == Decimal('0.13')\n[… 3 repeated explanation lines · sqz expand h:L14-16]\n +  and   Decimal('9.99') = Decimal('9.99')\n"), "{out}");
        assert!(out.contains("E        +  where Decimal('0.12') = round_money(Decimal('0.125'))\n"));
    }

    #[test]
    fn refuses_output_without_a_session() {
        assert!(run(
            "pytest",
            "usage: pytest [options]\npytest: error: unrecognized\n"
        )
        .is_none());
        assert!(!matches(&Label::parse("uv run ruff check")));
        assert!(matches(&Label::parse("uv run pytest -q")));
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        // The verbose run cut in the middle of a line: the partial line is not a PASSED line.
        let cut = &VERBOSE[..VERBOSE.find("[ 83%]").unwrap() - 30];
        let out = run("pytest -v", cut).unwrap();
        assert!(out.contains("[… 3 passing test lines"));
        assert!(out.ends_with(cut.rsplit('\n').next().unwrap()));
    }

    #[test]
    fn interleaved_xdist_lines_fold_and_failures_stay() {
        let text =
            "============================= test session starts ==============================
created: 2/2 workers
2 workers [6 items]

[gw0] [ 16%] PASSED tests/test_models.py::test_item_value
[gw1] [ 33%] PASSED tests/test_models.py::test_add_new_item
[gw0] [ 50%] PASSED tests/test_models.py::test_item_default_quantity
[gw1] [ 66%] FAILED tests/test_parsing.py::test_normalize_sku
[gw0] [ 83%] PASSED tests/test_pricing.py::test_with_vat
[gw1] [100%] PASSED tests/test_report.py::test_to_csv
========================= 1 failed, 5 passed in 0.41s ==========================
";
        let out = run("pytest -n 2 -v", text).unwrap();
        assert!(out.contains("[… 3 passing test lines · sqz expand h:L5-7]"));
        assert!(out.contains("[gw1] [ 66%] FAILED tests/test_parsing.py::test_normalize_sku"));
    }

    #[test]
    fn unknown_lines_of_a_newer_version_stay() {
        let text = VERBOSE.replace(
            "tests/test_models.py::test_add_merges_quantities PASSED",
            "tests/test_models.py::test_add_merges_quantities RETRIED",
        );
        let out = run("pytest -v", &text).unwrap();
        assert!(out.contains("test_add_merges_quantities RETRIED"));
        assert!(out.contains("test_item_default_quantity PASSED"));
    }

    #[test]
    fn recognises_closing_lines() {
        assert!(is_closing_line("164 passed in 0.13s"));
        assert!(is_closing_line(
            "=================== 3 failed, 37 passed, 1 error in 0.31s ==================="
        ));
        assert!(!is_closing_line("3 passed in total"));
    }
}
