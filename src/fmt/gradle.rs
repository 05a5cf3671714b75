//! gradle and the gradle wrapper: folds the lines that only name a task as it runs
//! (`:money:compileJava`, `> Task :app:jar UP-TO-DATE`, `> Configure project :app`) into
//! counted markers. A task that FAILED, every compiler diagnostic (even when gradle prints it
//! on the task's own line), every failing test with its location, the `tests completed` counts,
//! `* What went wrong` blocks and the BUILD result stay verbatim.

use super::fold::{fold_kinds, folds_any, DEFAULT};
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// Fewer task lines than this and there is nothing worth folding.
const MIN_TASKS: usize = 3;

pub fn matches(label: &Label) -> bool {
    let program = label.program.rsplit('/').next().unwrap_or(label.program);
    matches!(program, "gradle" | "gradlew" | "gradlew.bat")
}

/// A line that names a task and how it ended, if it did not fail: `:tax:jar`,
/// `:cli:check UP-TO-DATE`, `> Task :app:compileKotlin FROM-CACHE`.
fn is_task_line(line: &str) -> bool {
    let t = line.trim_end();
    let rest = t.strip_prefix("> Task ").unwrap_or(t);
    let (path, outcome) = rest.split_once(' ').unwrap_or((rest, ""));
    let path_ok = path.starts_with(':')
        && path.len() > 1
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_' | b'.'));
    path_ok
        && matches!(
            outcome,
            "" | "UP-TO-DATE" | "NO-SOURCE" | "FROM-CACHE" | "SKIPPED"
        )
}

/// `> Configure project :app`: configuration progress of a multi-project build.
fn is_configure_line(line: &str) -> bool {
    line.strip_prefix("> Configure project ")
        .is_some_and(|p| p.starts_with(':') && !p.contains(' '))
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let tasks = doc.lines.iter().filter(|l| is_task_line(l)).count();
    let gradle = doc.lines.iter().any(|l| {
        l.starts_with("BUILD SUCCESSFUL")
            || l.starts_with("BUILD FAILED")
            || l.contains(" actionable task")
            || l.starts_with("FAILURE: Build ")
    });
    if tasks < MIN_TASKS || !gradle {
        return None;
    }
    let kinds: Vec<Option<&'static str>> = doc
        .lines
        .iter()
        .map(|l| (is_task_line(l) || is_configure_line(l)).then_some("gradle task"))
        .collect();
    let pieces = fold_kinds(doc, &kinds, &DEFAULT);
    folds_any(&pieces).then_some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn run(label: &str, text: &str) -> Option<String> {
        assert!(matches(&Label::parse(label)), "{label}");
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn labels() {
        for label in [
            "gradle build",
            "./gradlew test --console=plain",
            "gradlew.bat check",
        ] {
            assert!(matches(&Label::parse(label)), "{label}");
        }
        assert!(!matches(&Label::parse("mvn test")));
    }

    #[test]
    fn task_lines_fold_and_failures_stay() {
        let text = ":money:compileJava\n:money:processResources NO-SOURCE\n:money:classes\n:money:jar\n:money:test\n\ninvoicing.money.MoneyTest > roundsHalfCentsUp FAILED\n    java.lang.AssertionError at MoneyTest.java:9\n\n5 tests completed, 1 failed\n:money:test FAILED\n> Task :tax:jar UP-TO-DATE\n> Task :tax:check UP-TO-DATE\n> Task :tax:build UP-TO-DATE\n\nBUILD FAILED in 7s\n22 actionable tasks: 22 executed\n";
        let out = run("gradle build", text).unwrap();
        assert!(out.starts_with("[… 5 gradle task lines · sqz expand h:L1-5]\n\ninvoicing.money.MoneyTest > roundsHalfCentsUp FAILED\n    java.lang.AssertionError at MoneyTest.java:9\n"), "{out}");
        assert!(out.contains("5 tests completed, 1 failed\n:money:test FAILED\n[… 3 gradle task lines · sqz expand h:L12-14]\n"), "{out}");
        assert!(out.ends_with("BUILD FAILED in 7s\n22 actionable tasks: 22 executed\n"));
    }

    #[test]
    fn a_diagnostic_printed_on_a_task_line_stays() {
        let text = ":a:compileJava\n:a:classes\n:b:compileJava/src/B.java:15: warning: [deprecation] f() in A has been deprecated\n:b:classes\n:b:jar\n:b:build\nBUILD SUCCESSFUL in 2s\n";
        let out = run("gradle build", text).unwrap();
        assert!(
            out.contains(":b:compileJava/src/B.java:15: warning: [deprecation]"),
            "{out}"
        );
    }

    #[test]
    fn other_output_is_left_alone() {
        assert_eq!(run("gradle build", ":a:jar\n:b:jar\nnothing else\n"), None);
        assert_eq!(run("gradle tasks", "BUILD SUCCESSFUL in 1s\n"), None);
    }
}
