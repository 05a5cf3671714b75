//! git status, long form (English, German, French, Spanish, Italian, Portuguese) and short or
//! porcelain form. Folds git's advice lines (`(use "git add <file>..." …)`) into one counted
//! marker and groups bulk untracked trees (`node_modules/`, `vendor/`, `build/` …) by directory.
//! Section headings and every file line with its status stay verbatim and in place, so a file
//! never moves between staged, unstaged and untracked; unfamiliar output is refused.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "git" && label.subcommand() == Some("status")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let first = doc.lines.first()?;
    if BRANCH_LINES.iter().any(|p| first.starts_with(p)) {
        long_form(doc)
    } else {
        short_form(doc)
    }
}

/// How the first line of a long-form status starts, in every locale this formatter knows.
const BRANCH_LINES: [&str; 14] = [
    "On branch ",
    "HEAD detached ",
    "Not currently on any branch.",
    "Auf Branch ",
    "HEAD losgelöst ",
    "Sur la branche ",
    "HEAD détachée ",
    "En la rama ",
    "HEAD desacoplada ",
    "Sul branch ",
    "HEAD scollegato ",
    "Em ramo ",
    "No ramo ",
    "HEAD desanexada ",
];

/// Untracked-section headings, per locale.
const UNTRACKED_HEADINGS: [&str; 6] = [
    "Untracked files:",
    "Unversionierte Dateien:",
    "Fichiers non suivis:",
    "Archivos sin seguimiento:",
    "File non tracciati:",
    "Ficheiros desmonitorizados:",
];

/// Bulk runs shorter than this stay listed: a marker plus a summary would cost about as much.
const MIN_BULK_RUN: usize = 4;

fn long_form(doc: &Doc) -> Option<Vec<Piece>> {
    let hints: Vec<usize> = (0..doc.lines.len())
        .filter(|&n| is_hint(doc.lines[n]) && !is_fact(doc.lines[n]))
        .collect();
    // A single advice line costs less than the marker that would replace it.
    let fold_hints = hints.len() >= 2;
    let mut untracked = Vec::new();
    let mut in_untracked = false;
    let mut pieces = Vec::new();
    for (n, line) in doc.lines.iter().enumerate() {
        if !line.starts_with([' ', '\t']) {
            in_untracked = UNTRACKED_HEADINGS.contains(&line.trim_end());
        }
        if fold_hints && hints.contains(&n) {
            continue;
        }
        if in_untracked && line.starts_with('\t') {
            untracked.push((n, &line[1..]));
            continue;
        }
        flush_untracked(&mut untracked, &mut pieces, "\t");
        pieces.push(Piece::Keep(n));
    }
    flush_untracked(&mut untracked, &mut pieces, "\t");
    if fold_hints {
        pieces.push(Piece::Fold {
            lines: hints,
            what: "git hint".to_string(),
        });
    }
    pieces
        .iter()
        .any(|p| matches!(p, Piece::Fold { .. }))
        .then_some(pieces)
}

/// `git status --short` / `--porcelain`: already compact, so only bulk untracked trees fold.
fn short_form(doc: &Doc) -> Option<Vec<Piece>> {
    let mut untracked = Vec::new();
    let mut pieces = Vec::new();
    for (n, line) in doc.lines.iter().enumerate() {
        if !is_short_entry(line) && !line.starts_with("## ") {
            return None;
        }
        if let Some(path) = line.strip_prefix("?? ") {
            untracked.push((n, path));
            continue;
        }
        flush_untracked(&mut untracked, &mut pieces, "");
        pieces.push(Piece::Keep(n));
    }
    flush_untracked(&mut untracked, &mut pieces, "");
    pieces
        .iter()
        .any(|p| matches!(p, Piece::Fold { .. }))
        .then_some(pieces)
}

/// `XY path` with X and Y status letters or spaces, as `git status --short` prints.
fn is_short_entry(line: &str) -> bool {
    let b = line.as_bytes();
    let status = |c: u8| b" MTADRCU?!".contains(&c);
    b.len() > 3 && status(b[0]) && status(b[1]) && b[2] == b' ' && b[3] != b' '
}

/// Turns a run of untracked entries into pieces: entries under one bulk directory become a
/// summary counted from the entries plus a fold; every other entry is kept.
fn flush_untracked(entries: &mut Vec<(usize, &str)>, pieces: &mut Vec<Piece>, indent: &str) {
    let mut i = 0;
    while i < entries.len() {
        let Some(dir) = bulk_dir(entries[i].1) else {
            pieces.push(Piece::Keep(entries[i].0));
            i += 1;
            continue;
        };
        let run = entries[i..]
            .iter()
            .take_while(|(_, path)| bulk_dir(path) == Some(dir) && !is_fact(path))
            .count()
            .max(1);
        let group = &entries[i..i + run];
        if run < MIN_BULK_RUN {
            pieces.extend(group.iter().map(|(n, _)| Piece::Keep(*n)));
        } else {
            let mut dirs: Vec<&str> = group
                .iter()
                .map(|(_, p)| p.rsplit_once('/').map_or("", |(d, _)| d))
                .collect();
            dirs.dedup();
            dirs.sort_unstable();
            dirs.dedup();
            let (files, n_dirs) = (group.len(), dirs.len());
            let dir_noun = if n_dirs == 1 {
                "directory"
            } else {
                "directories"
            };
            pieces.push(Piece::Summary(format!(
                "{indent}{dir}: {files} untracked files in {n_dirs} {dir_noun}"
            )));
            pieces.push(Piece::Fold {
                lines: group.iter().map(|(n, _)| *n).collect(),
                what: "untracked file".to_string(),
            });
        }
        i += run;
    }
    entries.clear();
}

/// The path up to and including its first bulk directory (`vendor/`, `a/node_modules/`).
fn bulk_dir(path: &str) -> Option<&str> {
    let mut end = 0;
    for part in path.split('/') {
        let next = end + part.len() + 1;
        if next > path.len() {
            return None; // the last component is the file itself
        }
        if super::bulk::is_bulk(part) {
            return Some(&path[..next]);
        }
        end = next;
    }
    None
}

/// An advice line: two spaces, then one parenthesised sentence naming a git command.
fn is_hint(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("  (") else {
        return false;
    };
    rest.ends_with(')') && (rest.contains("\"git ") || rest.contains("«git "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn out(label: &str, text: &str) -> Option<String> {
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    const LONG: &str = include_str!("../../fixtures/git-status-long/input.txt");
    const FRENCH: &str = include_str!("../../fixtures/git-status-french/input.txt");
    const UNTRACKED: &str = include_str!("../../fixtures/git-status-untracked-all/input.txt");
    const SHORT: &str = include_str!("../../fixtures/git-status-short-untracked/input.txt");

    #[test]
    fn folds_hints_and_keeps_sections_in_place() {
        let o = out("git status", LONG).unwrap();
        assert!(!o.contains("(use \"git"));
        assert!(o.contains("[… 5 git hint lines · sqz expand h]"));
        let staged = o.find("Changes to be committed:").unwrap();
        let unstaged = o.find("Changes not staged for commit:").unwrap();
        let untracked = o.find("Untracked files:").unwrap();
        let deleted_staged = o.find("\tdeleted:    scripts/old_bench.sh").unwrap();
        let deleted_unstaged = o.find("\tdeleted:    tests/legacy.rs").unwrap();
        assert!(staged < deleted_staged && deleted_staged < unstaged);
        assert!(unstaged < deleted_unstaged && deleted_unstaged < untracked);
        assert!(o.contains("\tnew file:   src/metrics.rs"));
    }

    #[test]
    fn every_known_locale_folds_its_hints() {
        for name in ["german", "french", "spanish", "italian", "portuguese"] {
            let path = format!(
                "{}/fixtures/git-status-{name}/input.txt",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(path).unwrap();
            let o = out("git status", &text).unwrap_or_else(|| panic!("{name} refused"));
            assert!(o.contains(" git hint lines · sqz expand h]"), "{name}: {o}");
            // every entry line stays, in order
            let entries: Vec<&str> = text.lines().filter(|l| l.starts_with('\t')).collect();
            let kept: Vec<&str> = o.lines().filter(|l| l.starts_with('\t')).collect();
            assert_eq!(entries, kept, "{name}");
        }
    }

    #[test]
    fn groups_bulk_untracked_directories_with_counts() {
        let o = out("git status -uall", UNTRACKED).unwrap();
        let vendored = UNTRACKED
            .lines()
            .filter(|l| l.starts_with("\tvendor/"))
            .count();
        assert!(o.contains(&format!("\tvendor/: {vendored} untracked files in ")));
        assert!(o.contains("\tbuild/: 30 untracked files in 2 directories"));
        assert!(o.contains("\tbenches/throughput.rs\n\t"));
        assert!(o.contains("\tnotes.txt\n\tsrc/snapshot.rs\n"));
        assert!(!o.contains("unit13.o"));
    }

    #[test]
    fn short_form_groups_only_untracked_bulk() {
        let o = out("git status --short -uall", SHORT).unwrap();
        assert!(o.starts_with(" M README.md\nR  docs/PROTOCOL.md -> docs/protocol.md\n"));
        assert!(o.contains(" D tests/legacy.rs\n?? benches/throughput.rs\n"));
        assert!(o.contains("build/: 30 untracked files in 2 directories"));
        // a compact short status with nothing bulky is left alone
        let small = include_str!("../../fixtures/git-status-porcelain/input.txt");
        assert!(out("git status --porcelain", small).is_none());
    }

    #[test]
    fn bulk_dir_is_the_first_bulk_component() {
        assert_eq!(
            bulk_dir("web/node_modules/a/b.js"),
            Some("web/node_modules/")
        );
        assert_eq!(bulk_dir("vendor/x.go"), Some("vendor/"));
        assert_eq!(bulk_dir("src/build.rs"), None);
        assert_eq!(bulk_dir("build"), None);
    }

    #[test]
    fn refuses_other_output_and_unknown_locales() {
        assert!(out("git status", "fatal: not a git repository\n").is_none());
        let japanese = LONG.replace("On branch main", "ブランチ main");
        assert!(out("git status", &japanese).is_none());
    }

    #[test]
    fn truncated_output_keeps_every_line_it_has() {
        let cut = &FRENCH[..FRENCH.find("src/config.rs").unwrap() + 5];
        let doc = Doc::new("git status", cut);
        let o = render(&doc, &format(&doc).unwrap(), "h");
        // French puts a no-break space before the colon.
        assert!(o.contains("\tmodifié\u{a0}:         src/c\n[… 4 git hint lines"));
        assert!(o.contains("\tsupprimé\u{a0}:        scripts/old_bench.sh"));
    }

    #[test]
    fn unknown_lines_of_a_newer_git_are_kept() {
        let text = LONG.replace(
            "Changes to be committed:",
            "Sparse checkout: 40% of tracked files present.\n\nChanges to be committed:",
        );
        let o = out("git status", &text).unwrap();
        assert!(o.contains("Sparse checkout: 40% of tracked files present."));
        // a short status with a line of unknown shape is refused
        let short = format!("{SHORT}?? \n#3 unknown\n");
        assert!(out("git status -s", &short).is_none());
    }

    #[test]
    fn conflict_hints_are_facts_and_stay() {
        let text = "On branch main\nYou have unmerged paths.\n  (fix conflicts and run \"git commit\")\n  (use \"git merge --abort\" to abort the merge)\n\nUnmerged paths:\n  (use \"git add <file>...\" to mark resolution)\n\tboth modified:   src/store.rs\n\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n\tnotes.txt\n";
        let o = out("git status", text).unwrap();
        assert!(o.contains("  (fix conflicts and run \"git commit\")"));
        assert!(o.contains("\tboth modified:   src/store.rs"));
        assert!(o.contains("  (use \"git merge --abort\" to abort the merge)"));
        assert!(o.contains("[… 2 git hint lines"));
    }
}
