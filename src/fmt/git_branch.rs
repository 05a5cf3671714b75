//! `git branch -a` / `-r` listings: a `remotes/<remote>/<name>` entry whose `<name>` is also a
//! local branch repeats what the local list shows. When at least [`MIN_MIRRORS`] such entries
//! exist for a remote, they fold into one summary per remote, which names the local branches
//! that have NO entry there (so the exact set stays readable), counted from the input. The
//! current branch (`* …`), every local branch, `HEAD -> …`, remote-only branches and any other
//! line stay verbatim. `-v`/`-vv` output (hashes, ahead/behind/gone) is left alone.

use crate::doc::label::Label;
use crate::doc::{Doc, Piece};
use std::collections::{BTreeMap, BTreeSet};

/// Fold a remote's mirrors only when there are at least this many.
const MIN_MIRRORS: usize = 8;

pub fn matches(label: &Label) -> bool {
    label.program == "git"
        && label.subcommand() == Some("branch")
        && label
            .args
            .iter()
            .any(|a| matches!(*a, "-a" | "--all" | "-r" | "--remotes"))
        && !label
            .args
            .iter()
            .any(|a| a.starts_with("-v") || *a == "--verbose" || a.starts_with("--format"))
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let last = doc.lines.len().checked_sub(1)?;
    // Every line of a plain listing is `* name`, `+ name` or `  name` with no spaces inside.
    let mut locals: Vec<&str> = Vec::new();
    let mut remote_rows: Vec<(usize, &str, &str)> = Vec::new(); // (line, remote, name)
    for (n, line) in doc.lines.iter().enumerate() {
        let (Some(mark), Some(name)) = (line.get(..2), line.get(2..)) else {
            return None;
        };
        if !matches!(mark, "  " | "* " | "+ ") || name.is_empty() {
            return None;
        }
        let cut = n == last && !doc.ends_with_newline;
        if let Some(rest) = name.strip_prefix("remotes/") {
            let plain = !rest.contains(' ') && mark == "  " && !cut;
            if let (true, Some((remote, branch))) = (plain, rest.split_once('/')) {
                remote_rows.push((n, remote, branch));
            }
        } else if !name.contains(' ') && !cut {
            locals.push(name);
        }
    }
    let local_set: BTreeSet<&str> = locals.iter().copied().collect();
    let mut mirrors: BTreeMap<&str, Vec<(usize, &str)>> = BTreeMap::new();
    for &(n, remote, branch) in &remote_rows {
        if local_set.contains(branch) {
            mirrors.entry(remote).or_default().push((n, branch));
        }
    }
    mirrors.retain(|_, rows| rows.len() >= MIN_MIRRORS);
    if mirrors.is_empty() {
        return None;
    }
    // Each remote's summary and marker go where its first mirror was.
    let mut at: BTreeMap<usize, (String, Vec<usize>)> = BTreeMap::new();
    let mut folded = BTreeSet::new();
    for (remote, rows) in &mirrors {
        let mirrored: BTreeSet<&str> = rows.iter().map(|(_, b)| *b).collect();
        let without: Vec<&str> = locals
            .iter()
            .copied()
            .filter(|l| !mirrored.contains(l))
            .collect();
        let except = if without.is_empty() {
            String::new()
        } else {
            format!(" except {}", without.join(", "))
        };
        let summary = format!(
            "  remotes/{remote}/: {} more, one for each local branch{except}",
            rows.len()
        );
        let lines: Vec<usize> = rows.iter().map(|(n, _)| *n).collect();
        folded.extend(lines.iter().copied());
        at.insert(lines[0], (summary, lines));
    }
    let mut pieces = Vec::new();
    for n in 0..doc.lines.len() {
        if let Some((summary, lines)) = at.remove(&n) {
            pieces.push(Piece::Summary(summary));
            pieces.push(Piece::Fold {
                lines,
                what: "mirrored remote branch".to_string(),
            });
        } else if !folded.contains(&n) {
            pieces.push(Piece::Keep(n));
        }
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    const MANY: &str = include_str!("../../fixtures/git-branch-a-many/input.txt");

    fn rendered(text: &str) -> String {
        let doc = Doc::new("git branch -a", text);
        render(&doc, &format(&doc).expect("formats"), "abc")
    }

    #[test]
    fn claims_plain_all_listings_only() {
        assert!(matches(&Label::parse("git branch -a")));
        assert!(matches(&Label::parse("git branch --remotes")));
        assert!(!matches(&Label::parse("git branch -vv")));
        assert!(!matches(&Label::parse("git branch -a -vv")));
        assert!(!matches(&Label::parse("git branch")));
    }

    #[test]
    fn folds_mirrors_and_names_the_locals_without_one() {
        let out = rendered(MANY);
        assert!(out.contains("* feature/catalog-search\n"));
        assert!(out.contains("  remotes/origin/HEAD -> origin/main\n"));
        // exp/new-ui's upstream is gone; spike/local-only never had one.
        let mirrors = MANY
            .lines()
            .filter(|l| {
                l.strip_prefix("  remotes/origin/").is_some_and(|b| {
                    MANY.lines()
                        .any(|m| m.get(2..) == Some(b) && !m.contains("remotes/"))
                })
            })
            .count();
        assert!(
            out.contains(&format!(
                "  remotes/origin/: {mirrors} more, one for each local branch except exp/new-ui, spike/local-only\n"
            )),
            "{out}"
        );
        // Remote-only branches stay visible.
        for b in ["feature/auth-saml", "release/1.1", "test/load-k6"] {
            assert!(out.contains(&format!("  remotes/origin/{b}\n")));
        }
        // Every local branch line stays.
        for l in MANY.lines().filter(|l| !l.contains("remotes/")) {
            assert!(out.contains(&format!("{l}\n")));
        }
    }

    #[test]
    fn few_branches_are_left_alone() {
        let small = include_str!("../../fixtures/git-branch-all/input.txt");
        assert!(format(&Doc::new("git branch -a", small)).is_none());
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = &MANY[..MANY.find("remotes/origin/test/load-k6").unwrap() + 20];
        let out = rendered(cut);
        assert!(out.ends_with("  remotes/origin/test/"), "{out}");
        // A cut local name is not used to decide what mirrors it.
        let cut_local = &MANY[..MANY.find("spike/local-only").unwrap() + 5];
        assert!(format(&Doc::new("git branch -a", cut_local)).is_none());
    }

    #[test]
    fn unknown_or_localised_lines_are_refused() {
        // Interleaved stderr, another locale's message, a newer git's extra column: no guess.
        for extra in [
            "warning: ignoring broken ref refs/remotes/origin/broken\n",
            "avertissement : référence cassée ignorée\n",
            "~ worktree-marker/new\n",
        ] {
            let text = MANY.replacen(
                "  remotes/origin/develop\n",
                &format!("{extra}  remotes/origin/develop\n"),
                1,
            );
            assert!(
                format(&Doc::new("git branch -a", &text)).is_none(),
                "{extra}"
            );
        }
    }
}
