//! mvn: folds build progress (`[INFO] Download…`, `Progress (…)`, module and plugin banners,
//! `Copying`/`Compiling`/`Running`, separator and blank `[INFO]` lines) into one counted marker.
//! The `Building jar:` line names the artifact and stays. Every `[ERROR]`/`[WARNING]` line,
//! each test class's `Tests run:` line, failure traces, and the BUILD result stay verbatim.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    matches!(label.program, "mvn" | "mvnw" | "mvnd")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let recognised = doc.lines.iter().any(|l| {
        l.contains("[INFO] BUILD ")
            || l.contains("[INFO] Scanning for projects")
            || l.contains("[ERROR] BUILD ")
    });
    if !recognised {
        return None;
    }
    let folded: Vec<usize> = (0..doc.lines.len())
        .filter(|&n| is_progress(doc.lines[n]) && !is_fact(doc.lines[n]))
        .collect();
    if folded.len() < 2 {
        return Some((0..doc.lines.len()).map(Piece::Keep).collect());
    }
    // One marker for all progress, where the first progress line was; the rest keeps its order.
    let mut out = Vec::new();
    let mut next_folded = folded.iter().peekable();
    for n in 0..doc.lines.len() {
        if next_folded.peek() == Some(&&n) {
            next_folded.next();
            if n == folded[0] {
                out.push(Piece::Fold {
                    lines: folded.clone(),
                    what: "build progress".to_string(),
                });
            }
        } else {
            out.push(Piece::Keep(n));
        }
    }
    Some(out)
}

fn is_progress(line: &str) -> bool {
    if line.starts_with("Progress (") {
        return true;
    }
    let Some(info) = line
        .strip_prefix("\u{1b}[0m\u{1b}[0m")
        .unwrap_or(line)
        .strip_prefix("[INFO]")
    else {
        return false;
    };
    let t = info.trim();
    // What was built and the result stay.
    if t.starts_with("Tests run:")
        || t.starts_with("BUILD ")
        || t.starts_with("Total time")
        || t.starts_with("Finished at")
        || t.starts_with("Building jar:")
        || t.starts_with("Building war:")
        || t.starts_with("Installing ")
    {
        return false;
    }
    t.is_empty()
        || t.starts_with("Download")
        || t.starts_with("--- ")
        || t.starts_with("---------")
        || is_banner_rule(t)
        || is_module_banner(t)
        || t.starts_with("Copying ")
        || t.starts_with("Compiling ")
        || t.starts_with("Changes detected")
        || t.starts_with("skip non existing")
        || t.starts_with("Nothing to compile")
        || t.starts_with("Using ")
        || t.starts_with("Scanning for projects")
        || t.starts_with("Running ")
        || t == "T E S T S"
        || t == "Results:"
}

/// `-----< com.acme:billing-core >-----` and `-----[ jar ]-----` around a module's banner.
fn is_banner_rule(t: &str) -> bool {
    t.starts_with("---") && t.ends_with("---") && (t.contains("< ") || t.contains("[ "))
}

/// `Building billing-core 2.3.0-SNAPSHOT` or `Building billing-core 2.3.0 [2/4]` (not
/// `Building jar: …`, which names the artifact).
fn is_module_banner(t: &str) -> bool {
    let Some(rest) = t.strip_prefix("Building ") else {
        return false;
    };
    let words: Vec<&str> = rest.split(' ').collect();
    !rest.contains(':')
        && (2..=3).contains(&words.len())
        && words[1].starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    #[test]
    fn keeps_test_results_and_errors() {
        let text = "[INFO] Scanning for projects...\n[INFO] \n[INFO] --- maven-surefire-plugin:2.22.3:test (default-test) @ core ---\n[INFO] Running a.BTest\n[INFO] Tests run: 9, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.07 s - in a.BTest\n[ERROR] Tests run: 24, Failures: 2, Errors: 1, Skipped: 0\n[INFO] BUILD FAILURE\n";
        let doc = Doc::new("mvn test", text);
        let out = render(&doc, &format(&doc).unwrap(), "h");
        assert!(
            out.starts_with("[… 4 build progress lines · sqz expand h:L1-4]\n[INFO] Tests run: 9")
        );
        assert!(out.contains("[ERROR] Tests run: 24, Failures: 2, Errors: 1, Skipped: 0"));
        assert!(out.contains("[INFO] BUILD FAILURE"));
    }

    const PACKAGE: &str = include_str!("../../fixtures/mvn-package/input.txt");
    const FAILURES: &str = include_str!("../../fixtures/mvn-test-failures/input.txt");

    fn run(text: &str) -> String {
        let doc = Doc::new("mvn package", text);
        let pieces = format(&doc).expect("recognised");
        let fact = |n: usize| is_fact(doc.lines[n]);
        assert!(crate::doc::keeps_all(&pieces, fact, doc.lines.len()));
        render(&doc, &pieces, "h")
    }

    #[test]
    fn banners_fold_and_artifacts_and_per_class_results_stay() {
        let out = run(PACKAGE);
        assert_eq!(out.matches("build progress lines").count(), 1);
        assert!(!out.contains("[INFO] Building billing-core 2.3.0-SNAPSHOT"));
        assert!(!out.contains("[ jar ]"));
        assert!(out.contains(
            "[INFO] Building jar: /home/dev/billing-core/target/billing-core-2.3.0-SNAPSHOT.jar\n"
        ));
        let per_class = |s: &str| s.lines().filter(|l| l.contains("Tests run:")).count();
        assert_eq!(per_class(&out), per_class(PACKAGE));
        assert!(out.contains("[INFO] BUILD SUCCESS"));
    }

    #[test]
    fn failures_keep_their_traces() {
        let out = run(FAILURES);
        assert!(out.contains("org.junit.ComparisonFailure: expected:<CR-[0]5-0001> but was:<CR-[]5-0001>\n\tat com.acme.billing.NumberingTest.padsYear(NumberingTest.java:15)\n"));
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = PACKAGE.find("[INFO] Building jar:").unwrap() + 12;
        assert!(run(&PACKAGE[..cut]).ends_with("\n[INFO] Build"));
    }

    #[test]
    fn interleaved_parallel_build_keeps_unknown_thread_lines() {
        // `mvn -T 4` prefixes nothing but interleaves modules; a line of another shape stays.
        let text = PACKAGE.replacen(
            "[INFO] Copying 1 resource",
            "[INFO] Copying 1 resource\n[pool-1-thread-2] compiled module api",
            1,
        );
        assert!(run(&text).contains("\n[pool-1-thread-2] compiled module api\n"));
    }

    #[test]
    fn unknown_lines_stay_and_foreign_output_is_refused() {
        let text = PACKAGE.replacen(
            "[INFO] BUILD SUCCESS",
            "[INFO] Reactor cache: 3 hits\n[INFO] BUILD SUCCESS",
            1,
        );
        assert!(run(&text).contains("\n[INFO] Reactor cache: 3 hits\n"));
        // A localized wrapper's output with no Maven summary is refused.
        assert!(format(&Doc::new(
            "mvn package",
            "[INFO] Baue Projekt\n[INFO] ERFOLG\n"
        ))
        .is_none());
    }
}
