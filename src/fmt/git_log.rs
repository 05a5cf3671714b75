//! git log (and git show without a patch) in the default and `--stat` formats. Every commit
//! line, subject and body stays; never limits commits. Folds `Author:` lines that repeat the
//! previous commit's author, and the per-file lines of a `--stat` block with many files (its
//! `N files changed` line always stays). `--oneline` is already compact and is left alone.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "git" && matches!(label.subcommand(), Some("log" | "show" | "whatchanged"))
}

/// A `--stat` block with more file lines than this folds them.
const MAX_STAT_FILES: usize = 12;

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    if !is_commit_line(doc.lines.first()?) {
        return None;
    }
    let authors: Vec<usize> = author_lines(doc);
    let commits = doc.lines.iter().filter(|l| is_commit_line(l)).count();
    let mut folded_authors: Vec<usize> = Vec::new();
    let mut summary = None;
    let distinct = {
        let mut a: Vec<&str> = authors.iter().map(|&n| doc.lines[n]).collect();
        a.sort_unstable();
        a.dedup();
        a.len()
    };
    if authors.len() >= 3 && authors.len() == commits && distinct == 1 {
        let who = doc.lines[authors[0]].trim_start_matches("Author:").trim();
        summary = Some(format!("all {commits} commits by {who}"));
        folded_authors = authors.clone();
    } else {
        for w in authors.windows(2) {
            if doc.lines[w[0]] == doc.lines[w[1]] {
                folded_authors.push(w[1]);
            }
        }
        if folded_authors.len() >= 3 {
            summary =
                Some("Author: is shown only where it differs from the commit above".to_string());
        }
    }
    folded_authors.retain(|&n| !is_fact(doc.lines[n]));
    if summary.is_none() || folded_authors.len() < 3 {
        folded_authors.clear();
        summary = None;
    }

    let mut pieces = Vec::new();
    if let Some(s) = summary {
        pieces.push(Piece::Summary(s));
        pieces.push(Piece::Fold {
            lines: folded_authors.clone(),
            what: "repeated Author".to_string(),
        });
    }
    let mut n = 0;
    while n < doc.lines.len() {
        let stat_run = doc.lines[n..]
            .iter()
            .take_while(|l| is_stat_line(l))
            .count();
        if stat_run > 0 {
            pieces.extend(stat_pieces(doc, n, stat_run));
            n += stat_run;
            continue;
        }
        if folded_authors.binary_search(&n).is_err() {
            pieces.push(Piece::Keep(n));
        }
        n += 1;
    }
    let folds = pieces.iter().any(|p| matches!(p, Piece::Fold { .. }));
    folds.then_some(pieces)
}

/// `commit <40 hex>`, optionally followed by decorations.
fn is_commit_line(line: &str) -> bool {
    line.strip_prefix("commit ").is_some_and(|rest| {
        let hash = rest.split(' ').next().unwrap_or("");
        hash.len() == 40 && hash.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// The `Author:` line of each commit header (the lines between `commit` and the first blank).
fn author_lines(doc: &Doc) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_header = false;
    for (n, line) in doc.lines.iter().enumerate() {
        if is_commit_line(line) {
            in_header = true;
        } else if line.is_empty() {
            in_header = false;
        } else if in_header && line.starts_with("Author: ") {
            out.push(n);
        }
    }
    out
}

/// ` path | 12 ++--` or ` path | Bin 0 -> 12 bytes`, as `--stat` and `git pull` print.
pub(super) fn is_stat_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix(' ') else {
        return false;
    };
    let Some((path, change)) = rest.rsplit_once(" | ") else {
        return false;
    };
    let change = change.trim();
    let mut parts = change.splitn(2, ' ');
    let count = parts.next().unwrap_or("");
    let bar = parts.next().unwrap_or("");
    !path.trim().is_empty()
        && ((count.bytes().all(|b| b.is_ascii_digit())
            && !count.is_empty()
            && bar.bytes().all(|b| b == b'+' || b == b'-'))
            || change.starts_with("Bin "))
}

/// A block of `--stat` file lines starting at `first`: kept when short, otherwise a summary of
/// files per top-level directory (counted from the lines) and a fold. Fact lines stay.
pub(super) fn stat_pieces(doc: &Doc, first: usize, len: usize) -> Vec<Piece> {
    let lines = first..first + len;
    if len <= MAX_STAT_FILES {
        return lines.map(Piece::Keep).collect();
    }
    let mut groups: Vec<(&str, usize)> = Vec::new();
    for n in lines.clone() {
        let path = doc.lines[n][1..]
            .rsplit_once(" | ")
            .map_or("", |(p, _)| p.trim());
        let top = match path.split_once('/') {
            Some((dir, _)) => &path[..dir.len() + 1],
            None => "./",
        };
        match groups.iter_mut().find(|(d, _)| *d == top) {
            Some((_, count)) => *count += 1,
            None => groups.push((top, 1)),
        }
    }
    let mut pieces = Vec::new();
    let by_dir: Vec<String> = groups.iter().map(|(d, c)| format!("{d} {c}")).collect();
    pieces.push(Piece::Summary(format!(
        " {len} file stat lines by directory: {}",
        by_dir.join(", ")
    )));
    let mut run: Vec<usize> = Vec::new();
    for n in lines {
        if is_fact(doc.lines[n]) {
            flush_stat(&mut run, &mut pieces);
            pieces.push(Piece::Keep(n));
        } else {
            run.push(n);
        }
    }
    flush_stat(&mut run, &mut pieces);
    pieces
}

fn flush_stat(run: &mut Vec<usize>, pieces: &mut Vec<Piece>) {
    match run.len() {
        0 => {}
        1 => pieces.push(Piece::Keep(run[0])),
        _ => pieces.push(Piece::Fold {
            lines: std::mem::take(run),
            what: "file stat".to_string(),
        }),
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn out(label: &str, text: &str) -> Option<String> {
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    const LOG: &str = include_str!("../../fixtures/git-log/input.txt");
    const LONG: &str = include_str!("../../fixtures/git-log-long/input.txt");
    const LONG_STAT: &str = include_str!("../../fixtures/git-log-long-stat/input.txt");

    /// Every line that is not an `Author:` or stat line stays, in order.
    fn keeps_commits_and_bodies(input: &str, output: &str) {
        let expected: Vec<&str> = input
            .lines()
            .filter(|l| !l.starts_with("Author: ") && !is_stat_line(l))
            .collect();
        let got: Vec<&str> = output
            .lines()
            .filter(|l| expected.contains(l) || l.starts_with("commit "))
            .collect();
        assert_eq!(expected, got);
    }

    #[test]
    fn one_author_becomes_one_counted_summary() {
        let o = out("git log", LOG).unwrap();
        let commits = LOG.lines().filter(|l| l.starts_with("commit ")).count();
        assert!(o.starts_with(&format!(
            "all {commits} commits by Dev <dev@example.com>\n[… {commits} repeated Author lines · sqz expand h]\n"
        )));
        keeps_commits_and_bodies(LOG, &o);
    }

    #[test]
    fn several_authors_show_where_the_author_changes() {
        let o = out("git log", LONG).unwrap();
        assert!(o.starts_with("Author: is shown only where it differs from the commit above\n"));
        keeps_commits_and_bodies(LONG, &o);
        // the first commit keeps its author, and so does every change of author
        let authors_in = LONG.lines().filter(|l| l.starts_with("Author: "));
        let mut changes: Vec<&str> = authors_in.collect();
        changes.dedup();
        let kept: Vec<&str> = o
            .lines()
            .filter(|l| l.starts_with("Author: ") && l.contains('<'))
            .collect();
        assert_eq!(changes, kept);
    }

    #[test]
    fn big_stat_blocks_fold_and_keep_their_summary() {
        let o = out("git log --stat", LONG_STAT).unwrap();
        assert!(o.contains(" 23 file stat lines by directory: .vim/ 1, src/ 22\n[… 23 file stat lines · sqz expand h:L"));
        assert!(o.contains(" 23 files changed, 8050 insertions(+)"));
        assert!(o.contains(" NOTES.md | 1 +\n 1 file changed, 1 insertion(+)"));
        keeps_commits_and_bodies(LONG_STAT, &o);
    }

    #[test]
    fn stat_lines_that_are_facts_stay() {
        let mut text = String::from("commit 74e0c34f887e7acca9642efb9db8817b8c1f1acd\nAuthor: Dev <dev@example.com>\nDate:   Mon Mar 25 14:02:00 2024 +0100\n\n    big\n\n");
        for i in 0..20 {
            text.push_str(&format!(" src/m{i}.rs | 2 +-\n"));
        }
        text.push_str(
            " src/error.rs | 3 ++-\n 21 files changed, 22 insertions(+), 21 deletions(-)\n",
        );
        let o = out("git log --stat", &text).unwrap();
        assert!(o.contains(" src/error.rs | 3 ++-\n"));
        assert!(o.contains("[… 20 file stat lines · sqz expand h:L7-26]"));
    }

    #[test]
    fn oneline_and_other_output_are_refused() {
        let oneline = include_str!("../../fixtures/git-log-oneline/input.txt");
        assert!(out("git log --oneline", oneline).is_none());
        assert!(out(
            "git log",
            "fatal: your current branch 'main' does not have any commits yet\n"
        )
        .is_none());
    }

    #[test]
    fn truncated_log_keeps_what_it_has() {
        let cut = &LONG[..LONG.len() / 2 + 7];
        let o = out("git log", cut).unwrap();
        let last = cut.rsplit('\n').next().unwrap();
        assert!(o.ends_with(last));
        keeps_commits_and_bodies(cut, &o);
    }

    #[test]
    fn unknown_header_lines_of_a_newer_git_are_kept() {
        let text = LOG.replacen(
            "Date:   Mon Mar 25 14:02:00 2024 +0100",
            "Date:   Mon Mar 25 14:02:00 2024 +0100\nSigned-by: key 0xABCD (trusted)",
            1,
        );
        let o = out("git log", &text).unwrap();
        assert!(o.contains("Signed-by: key 0xABCD (trusted)"));
        keeps_commits_and_bodies(&text, &o);
    }
}
