//! Elixir's mix (`mix compile`, `mix deps.compile`, `mix test`, …): folds the lines that only
//! report a dependency or the project being built (`==> jason`, `Compiling 12 files (.ex)`,
//! `Generated jason app`) into counted markers, each followed by the names of the apps it
//! built (`Generated 7 apps: jason plug …`). Every warning and error with its location, the
//! failure blocks of `mix test` and its `N tests, M failures` count stay verbatim, and so do
//! `* Getting …` lines, which are the only place `mix deps.get` names what it fetched.

use super::fold::{fold_kinds, folds_any, DEFAULT};
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "mix"
}

/// `==> jason`, `Compiling 12 files (.ex)`, `Compiling 1 file (.erl)`, `Generated jason app`.
fn is_build_step(line: &str) -> bool {
    let one_word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    };
    if let Some(dep) = line.strip_prefix("==> ") {
        return one_word(dep);
    }
    if let Some(app) = line
        .strip_prefix("Generated ")
        .and_then(|r| r.strip_suffix(" app"))
    {
        return one_word(app);
    }
    line.strip_prefix("Compiling ").is_some_and(|rest| {
        let mut words = rest.split(' ');
        let count = words.next().is_some_and(|n| n.parse::<u32>().is_ok());
        let noun = matches!(words.next(), Some("file" | "files"));
        let ext = words
            .next()
            .is_some_and(|e| e.starts_with("(.") && e.ends_with(')'));
        count && noun && ext && words.next().is_none()
    })
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let kinds: Vec<Option<&'static str>> = doc
        .lines
        .iter()
        .map(|l| is_build_step(l).then_some("build step"))
        .collect();
    let folded = fold_kinds(doc, &kinds, &DEFAULT);
    if !folds_any(&folded) {
        return None;
    }
    // Under each fold, the apps it built, by name: which dependency was compiled is a fact an
    // agent may act on.
    let mut pieces = Vec::with_capacity(folded.len());
    for piece in folded {
        let built: Vec<&str> = match &piece {
            Piece::Fold { lines, .. } => lines
                .iter()
                .filter_map(|&n| {
                    doc.lines[n]
                        .strip_prefix("Generated ")
                        .and_then(|r| r.strip_suffix(" app"))
                })
                .collect(),
            _ => Vec::new(),
        };
        pieces.push(piece);
        if !built.is_empty() {
            pieces.push(Piece::Summary(format!(
                "Generated {} apps: {}",
                built.len(),
                built.join(" ")
            )));
        }
    }
    Some(pieces)
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
    fn dependency_builds_fold_and_warnings_stay() {
        let text = "==> csv_lite\nCompiling 2 files (.ex)\nwarning: variable \"headers\" is unused\n  lib/csv_lite.ex:6: CsvLite.parse/2\n\nGenerated csv_lite app\n==> decimal_lite\nCompiling 2 files (.ex)\nGenerated decimal_lite app\n==> storefront\nCompiling 4 files (.ex)\nGenerated storefront app\n";
        let out = run("mix compile", text).unwrap();
        assert!(out.starts_with("==> csv_lite\nCompiling 2 files (.ex)\nwarning: variable \"headers\" is unused\n  lib/csv_lite.ex:6: CsvLite.parse/2\n\n[… 7 build step lines · sqz expand h:L6-12]\nGenerated 3 apps: csv_lite decimal_lite storefront\n"), "{out}");
    }

    #[test]
    fn test_runs_keep_their_failures() {
        let text = "Compiling 4 files (.ex)\nGenerated accounts app\n..\n\n  1) test rejects blanks (Accounts.PasswordTest)\n     test/accounts/password_test.exs:17\n\n24 tests, 1 failure\n";
        assert_eq!(run("mix test", text), None, "two build lines do not pay");
        assert!(is_build_step("Compiling 1 file (.erl)"));
        assert!(!is_build_step("Compiling the release"));
        assert!(!is_build_step("==> two words"));
    }
}
