//! git clone, fetch, pull, push and merge: folds transfer progress (`Receiving objects: 45% …`,
//! `remote: Counting objects …`, often hundreds of `\r` updates on one line) into one marker per
//! run, showing each progress line's final state (`…, done.`) as it last appeared. Ref updates,
//! `CONFLICT` lines, server messages and the diffstat summary stay; big diffstats fold.

use super::git_log::{is_stat_line, stat_pieces};
use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "git"
        && matches!(
            label.subcommand(),
            Some("clone" | "fetch" | "pull" | "push" | "merge")
        )
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut n = 0;
    let mut recognised = false;
    while n < doc.lines.len() {
        let line = doc.lines[n];
        recognised |= is_git_transfer_line(line);
        let progress = doc.lines[n..]
            .iter()
            .take_while(|l| is_progress(l) && !is_fact(l))
            .count();
        if progress > 0 {
            recognised = true;
            let run = n..n + progress;
            for m in run.clone() {
                if let Some(last) = final_state(doc.lines[m]) {
                    pieces.push(Piece::Summary(last.to_string()));
                }
            }
            let carries_updates = doc.lines[n].contains('\r');
            if progress >= 2 || carries_updates {
                pieces.push(Piece::Fold {
                    lines: run.collect(),
                    what: "transfer progress".to_string(),
                });
            } else {
                pieces.push(Piece::Keep(n));
            }
            n += progress;
            continue;
        }
        let stats = doc.lines[n..]
            .iter()
            .take_while(|l| is_stat_line(l))
            .count();
        if stats > 0 {
            pieces.extend(stat_pieces(doc, n, stats));
            n += stats;
            continue;
        }
        pieces.push(Piece::Keep(n));
        n += 1;
    }
    let folds = pieces.iter().any(|p| matches!(p, Piece::Fold { .. }));
    (recognised && folds).then_some(pieces)
}

/// A progress line of git or of the remote's pack-objects, with or without `\r` updates.
fn is_progress(line: &str) -> bool {
    const STEPS: [&str; 13] = [
        "Enumerating objects:",
        "Counting objects:",
        "Compressing objects:",
        "Writing objects:",
        "Receiving objects:",
        "Resolving deltas:",
        "Unpacking objects:",
        "Checking out files:",
        "Updating files:",
        "Checking connectivity:",
        "Finding sources:",
        "Delta compression using up to ",
        "Total ",
    ];
    // A line cut in the middle of its updates may end in `\r`: look at the written parts.
    let mut parts = line.split('\r').filter(|p| !p.trim().is_empty());
    let (Some(first), last) = (parts.next(), parts.next_back()) else {
        return false;
    };
    [first, last.unwrap_or(first)].iter().all(|part| {
        let part = part.strip_prefix("remote: ").unwrap_or(part);
        STEPS.iter().any(|s| part.starts_with(s))
    })
}

/// The state a terminal shows last for a line of `\r` updates (or for the line the engine has
/// already collapsed to that state), when it reports completion.
fn final_state(line: &str) -> Option<&str> {
    let last = line.rsplit_once('\r').map_or(line, |(_, last)| last);
    let last = last.trim_end();
    // Only a counted step (`100% (224/224)`) redraws itself; `Enumerating objects: 224, done.`
    // was printed once and folds with the rest.
    (last.ends_with(", done.") && last.contains("% (")).then_some(last)
}

/// Lines only git's transfer commands print: the output is git's and not something else.
fn is_git_transfer_line(line: &str) -> bool {
    line.starts_with("Cloning into ")
        || line.starts_with("From ")
        || line.starts_with("To ")
        || line.starts_with("Updating ")
        || line.starts_with("Already up to date.")
        || line.starts_with("Merge made by ")
        || line.starts_with("Fast-forward")
        || line.starts_with("Auto-merging ")
        || line.starts_with("CONFLICT (")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn out(label: &str, text: &str) -> Option<String> {
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    const CLONE: &str = include_str!("../../fixtures/git-clone-progress/input.txt");
    const FETCH: &str = include_str!("../../fixtures/git-fetch-progress/input.txt");

    #[test]
    fn clone_progress_folds_to_final_states() {
        let o = out("git clone --progress file:///x y", CLONE).unwrap();
        assert!(!o.contains('\r'));
        assert!(o.starts_with("Cloning into 'git-longlog-clone'...\n"));
        assert!(o.contains("Receiving objects: 100% (224/224), "));
        assert!(o.contains("Resolving deltas: 100% (103/103), done.\n[… 6 transfer progress lines · sqz expand h:L2-7]"));
    }

    #[test]
    fn fetch_keeps_every_ref_update() {
        let o = out("git fetch --progress", FETCH).unwrap();
        for line in FETCH.lines().skip_while(|l| !l.starts_with("From ")) {
            assert!(o.contains(line), "{line}");
        }
        assert!(o.contains("[… 4 transfer progress lines · sqz expand h:L1-4]"));
    }

    #[test]
    fn quiet_outputs_are_left_alone() {
        let pull = include_str!("../../fixtures/git-pull/input.txt");
        assert!(out("git pull", pull).is_none());
        let conflict = include_str!("../../fixtures/git-merge-conflict/input.txt");
        assert!(out("git merge x", conflict).is_none());
        assert!(out("git push", "Everything up-to-date\n").is_none());
    }

    #[test]
    fn interleaved_server_messages_and_errors_stay() {
        // the remote's messages arrive between the progress lines
        let text = FETCH.replacen(
            "remote: Compressing",
            "remote: warning: the repository moved to file:///home/dev/elsewhere\nremote: Compressing",
            1,
        );
        let o = out("git fetch --progress", &text).unwrap();
        assert!(o.contains("remote: warning: the repository moved to file:///home/dev/elsewhere\n"));
        assert!(o.contains("[… 2 transfer progress lines · sqz expand h:L1-2]"));
        assert!(o.contains("[… 2 transfer progress lines · sqz expand h:L4-5]"));
    }

    #[test]
    fn truncated_progress_is_folded_without_a_final_state() {
        let cut = &CLONE[..CLONE.find("Receiving objects:  30%").unwrap()];
        let o = out("git clone --progress", cut).unwrap();
        assert!(!o.contains("Receiving objects:"));
        assert!(o.contains("transfer progress lines"));
    }

    #[test]
    fn unknown_lines_and_other_locales_are_kept() {
        let text = CLONE.replacen(
            "Cloning into 'git-longlog-clone'...",
            "Klone nach 'git-longlog-clone' ...\nPrefetching 12 bundles",
            1,
        );
        let o = out("git clone --progress", &text).unwrap();
        assert!(o.starts_with("Klone nach 'git-longlog-clone' ...\nPrefetching 12 bundles\n"));
    }
}
