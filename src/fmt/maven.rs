//! mvn: folds build progress (`[INFO] Download…`, plugin banners, `Copying`/`Compiling`,
//! separator and blank `[INFO]` lines) into counted markers. Every `[ERROR]`/`[WARNING]` line,
//! each test class's `Tests run:` line, failure traces, and the BUILD result stay verbatim.

use super::{fold_consecutive, Label};
use crate::engine::doc::{Doc, Piece};

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
    Some(fold_consecutive(doc, line_kind))
}

fn line_kind(line: &str) -> Option<&'static str> {
    let info = line
        .strip_prefix("\u{1b}[0m\u{1b}[0m")
        .unwrap_or(line)
        .strip_prefix("[INFO]")?;
    let t = info.trim();
    if t.starts_with("Tests run:")
        || t.starts_with("BUILD ")
        || t.starts_with("Total time")
        || t.starts_with("Finished at")
    {
        return None;
    }
    let progress = t.is_empty()
        || t.starts_with("Download")
        || t.starts_with("--- ")
        || t.starts_with("---------")
        || t.starts_with("Copying ")
        || t.starts_with("Compiling ")
        || t.starts_with("Changes detected")
        || t.starts_with("skip non existing")
        || t.starts_with("Nothing to compile")
        || t.starts_with("Using ")
        || t.starts_with("Scanning for projects")
        || t.starts_with("Running ")
        || t == "T E S T S"
        || t == "Results:";
    progress.then_some("build progress")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::doc::render;

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
}
