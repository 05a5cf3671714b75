//! find and tree listings: group paths by directory; the contents of bulk directories
//! (`node_modules`, `target`, `.git`, `.venv`, `__pycache__`, `dist`, `build`, `vendor`,
//! `.cache`) fold into a counted summary and marker, while project files stay visible. Lines
//! that are not paths (errors such as `find: …: Permission denied`) stay verbatim.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{keep_lines, unfold, Doc, Piece};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// A bulk directory with more non-empty subdirectories than this folds as one block.
const MAX_UNITS: usize = 12;
/// A subtree this small stays visible: a summary and a marker would cost more.
const MIN_FOLD: usize = 6;

pub fn matches(label: &Label) -> bool {
    matches!(label.program, "find" | "tree" | "fd" | "fdfind")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    // A name such as `error.rs` reads as a failure report: the engine wants it shown.
    let pieces = if Label::parse(doc.label).program == "tree" {
        let paths = tree_paths(doc)?;
        plan(|n| paths[n].as_deref(), doc.lines.len())
    } else if is_find_listing(doc) {
        // Each line is its own path: read again where needed rather than kept for every line.
        plan(|n| find_path(doc.lines[n]), doc.lines.len())
    } else {
        return None;
    };
    Some(unfold(pieces, |n| reports_failure(doc.lines[n])))
}

/// `find` prints one path per line; anything else (errors) is not a path.
fn find_path(line: &str) -> Option<&str> {
    let plain = !line.is_empty()
        && !line.starts_with(char::is_whitespace)
        && !line.contains('\t')
        && !line.starts_with("find: ");
    plain.then(|| line.trim_end_matches('/'))
}

/// Refuse to guess: a find listing is nearly all paths, most of them nested.
fn is_find_listing(doc: &Doc) -> bool {
    let with_slash = doc.lines.iter().filter(|l| l.contains('/')).count();
    let count = doc.lines.iter().filter(|l| find_path(l).is_some()).count();
    count >= 20 && count * 10 >= doc.lines.len() * 9 && with_slash * 2 >= count
}

/// `tree` draws each entry as 4-character indent cells and a name; its last line counts
/// directories and files.
fn tree_paths<'a>(doc: &Doc<'a>) -> Option<Vec<Option<Cow<'a, str>>>> {
    let summary = doc.lines.iter().rev().find(|l| !l.trim().is_empty())?;
    if !(summary.contains(" director") && summary.contains(" file")) {
        return None;
    }
    let mut stack: Vec<String> = Vec::new();
    let mut paths = Vec::with_capacity(doc.lines.len());
    let mut drawn = 0;
    for (n, line) in doc.lines.iter().enumerate() {
        let (depth, name) = match tree_entry(line) {
            Some(e) => e,
            None if n == 0 && !line.trim().is_empty() => (0, *line),
            None => {
                paths.push(None);
                continue;
            }
        };
        if depth > stack.len() {
            return None; // a jump of more than one level: not tree's drawing
        }
        stack.truncate(depth);
        stack.push(name.to_string());
        paths.push(Some(Cow::Owned(stack.join("/"))));
        drawn += usize::from(depth > 0);
    }
    (drawn >= 20).then_some(paths)
}

fn tree_entry(line: &str) -> Option<(usize, &str)> {
    let mut rest = line;
    let mut depth = 0;
    loop {
        if let Some(r) = rest
            .strip_prefix("├── ")
            .or_else(|| rest.strip_prefix("└── "))
        {
            return Some((depth + 1, r));
        }
        rest = rest
            .strip_prefix("│   ")
            .or_else(|| rest.strip_prefix("    "))
            .or_else(|| rest.strip_prefix("│\u{a0}\u{a0} "))?;
        depth += 1;
    }
}

/// What happens to each line: kept, or folded into the subtree unit that starts at a line.
/// `path(n)` is line `n` as a path, if it is one.
fn plan<'a>(path: impl Fn(usize) -> Option<&'a str>, line_count: usize) -> Vec<Piece> {
    // Lines below each bulk root, by root.
    let mut below: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for n in 0..line_count {
        let Some(p) = path(n) else { continue };
        if let Some(root) = bulk_root(p) {
            if root.len() < p.len() {
                below.entry(root).or_default().push(n);
            }
        }
    }
    let listed = |dir: &str| (0..line_count).any(|n| path(n) == Some(dir));
    let mut units: Vec<(String, Vec<usize>)> = Vec::new();
    for (root, lines) in below {
        split_units(root, lines, &path, &listed, true, &mut units);
    }
    let mut folded = vec![false; line_count];
    for (_, lines) in &units {
        lines.iter().for_each(|&n| folded[n] = true);
    }
    // A unit is shown where its first line was.
    units.sort_by_key(|(_, lines)| lines[0]);
    let mut units = units.into_iter().peekable();
    let mut pieces = Vec::new();
    for (n, folded) in folded.into_iter().enumerate() {
        let Some((dir, lines)) = units.next_if(|(_, lines)| lines[0] == n) else {
            if !folded {
                keep_lines(&mut pieces, n..n + 1);
            }
            continue;
        };
        let dirs: BTreeSet<&str> = lines
            .iter()
            .filter_map(|&m| path(m))
            .map(|p| p.rsplit_once('/').map_or("", |(d, _)| d))
            .collect();
        pieces.push(Piece::Summary(format!(
            "{dir}/: {} entries in {} {}",
            lines.len(),
            dirs.len(),
            if dirs.len() == 1 {
                "directory"
            } else {
                "directories"
            }
        )));
        pieces.push(Piece::Fold {
            lines,
            what: "bulk directory".to_string(),
        });
    }
    pieces
}

/// The first bulk directory on a path (`./web/node_modules`), if any.
fn bulk_root(path: &str) -> Option<&str> {
    let mut end = 0;
    for comp in path.split('/') {
        end += comp.len();
        if super::bulk::is_bulk(comp) {
            return Some(&path[..end]);
        }
        end += 1;
    }
    None
}

/// Splits the lines below `root` into fold units: one per non-empty subdirectory, or the whole
/// root when it has too many. Entries directly in `root` stay visible. Cargo's profile
/// directories (`target/debug`) are opened one level further when listed themselves: their
/// binaries are what an agent looks for.
fn split_units<'a>(
    root: &str,
    lines: Vec<usize>,
    path: &impl Fn(usize) -> Option<&'a str>,
    listed: &impl Fn(&str) -> bool,
    open_profiles: bool,
    units: &mut Vec<(String, Vec<usize>)>,
) {
    let mut by_child: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &n in &lines {
        let p = path(n).unwrap_or("");
        let rel = &p[root.len() + 1..];
        if let Some((child, _)) = rel.split_once('/') {
            by_child.entry(child).or_default().push(n);
        }
    }
    if by_child.len() > MAX_UNITS && lines.len() >= MIN_FOLD {
        units.push((root.to_string(), lines));
        return;
    }
    drop(lines);
    for (child, inner) in by_child {
        let dir = format!("{root}/{child}");
        let profile = open_profiles
            && root.ends_with("target")
            && matches!(child, "debug" | "release")
            && listed(&dir);
        if profile {
            split_units(&dir, inner, path, listed, false, units);
        } else if inner.len() >= MIN_FOLD {
            units.push((dir, inner));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    const FIND: &str = include_str!("../../fixtures/find-project/input.txt");
    const TREE: &str = include_str!("../../fixtures/tree-project/input.txt");

    fn run(label: &str, text: &str) -> Option<String> {
        let doc = Doc::new(label, text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    fn accounted(label: &str, text: &str) -> bool {
        let doc = Doc::new(label, text);
        crate::fmt::accounts_for_every_line(doc.lines.len(), &format(&doc).unwrap())
    }

    #[test]
    fn find_folds_target_but_keeps_project_files_and_binaries() {
        let out = run("find .", FIND).unwrap();
        for kept in [
            "./src/lib.rs\n",
            "./tests/api.rs\n",
            "./target/debug/slugwrap\n",
        ] {
            assert!(out.contains(kept), "{kept}");
        }
        assert!(out.contains("./target/debug/incremental/: "));
        assert!(!out.contains("./target/debug/deps/lib"));
        assert!(accounted("find .", FIND));
    }

    #[test]
    fn tree_keeps_the_vendored_crates_and_folds_their_contents() {
        let out = run("tree", TREE).unwrap();
        assert!(out.contains("    ├── aho-corasick\n./vendor/aho-corasick/: "));
        assert!(out.ends_with("32 directories, 140 files\n"));
        // Names that read as failure reports stay visible inside a folded subtree.
        assert_eq!(
            out.lines().filter(|l| l.ends_with("├── error.rs")).count(),
            2
        );
        assert!(accounted("tree", TREE));
    }

    #[test]
    fn errors_and_unknown_lines_stay() {
        let mut lines: Vec<&str> = FIND.lines().collect();
        lines.insert(200, "find: './target/debug/build/x': Permission denied");
        lines.insert(100, "  an indented line a newer find might print");
        let text = lines.join("\n") + "\n";
        let out = run("find .", &text).unwrap();
        assert!(out.contains("\nfind: './target/debug/build/x': Permission denied\n"));
        assert!(out.contains("\n  an indented line a newer find might print\n"));
    }

    #[test]
    fn truncated_or_foreign_output_is_refused_or_fully_accounted() {
        let cut = &FIND[..FIND.len() / 3 + 5];
        assert!(accounted("find .", cut));
        // tree cut before its count line is refused.
        assert!(run("tree", TREE.split_at(TREE.find("memchr").unwrap()).0).is_none());
        // tree in another locale still ends with a count line it does not recognise: refused.
        let de = TREE.replace("32 directories, 140 files", "32 Verzeichnisse, 140 Dateien");
        assert!(run("tree", &de).is_none());
        assert!(run("find .", "find: unknown predicate `-nmae'\n").is_none());
    }

    #[test]
    fn interleaved_paths_fold_per_subtree() {
        // Parallel walkers (fd) interleave directories: every line still ends up kept or folded.
        let mut text = String::new();
        for i in 0..30 {
            text.push_str(&format!("./node_modules/a/f{i}.js\n./src/m{i}.rs\n"));
        }
        let out = run("fd", &text).unwrap();
        assert!(out.contains("./node_modules/a/: 30 entries in 1 directory\n"));
        assert!(out.contains("./src/m29.rs\n"));
        assert!(accounted("fd", &text));
    }
}
