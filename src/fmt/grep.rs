//! grep -r / rg search results: regroups `path:NN:text` matches under one header per file
//! (the exact path and its counted matches), shows the first matches of each file and folds the
//! rest under a counted marker. When project files match too, vendored trees (`node_modules/`,
//! `target/`, `vendor/`, …) fold first as whole groups. Never hides a match without a marker;
//! lines that are not matches (`grep: x: Permission denied`, unknown lines) stay verbatim.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{unfold, Doc, Piece};

/// Matches of one file shown before the rest fold.
const SHOWN_PER_FILE: usize = 10;
/// Below this many matches in all, nothing is folded (regrouping only).
const FOLD_ABOVE: usize = 60;
/// Files with this many matches or fewer keep their lines verbatim: a header would not pay.
const VERBATIM_UP_TO: usize = 3;

pub fn matches(label: &Label) -> bool {
    match label.program {
        "rg" | "ag" => true,
        "grep" | "egrep" | "fgrep" | "git" => {
            let recursive = label.args.iter().any(|a| {
                a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('R'))
                    || *a == "--recursive"
                    || *a == "--dereference-recursive"
            });
            if label.program == "git" {
                label.subcommand() == Some("grep")
            } else {
                recursive
            }
        }
        _ => false,
    }
}

/// One match line split into its path and, when present, `NN:text`.
struct Match<'a> {
    path: &'a str,
    /// `NN:text` when the line carried a line number (grep -n, rg -n).
    numbered_rest: Option<&'a str>,
}

fn parse(line: &str) -> Option<Match<'_>> {
    let colon = line.find(':')?;
    let path = &line[..colon];
    let rest = &line[colon + 1..];
    if path.is_empty() || path.contains(char::is_whitespace) || path.starts_with('[') {
        return None;
    }
    // A path names a file: it has a separator or an extension.
    if !path.contains('/') && !path.contains('.') {
        return None;
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let numbered = digits > 0 && rest.as_bytes().get(digits) == Some(&b':');
    Some(Match {
        path,
        numbered_rest: numbered.then_some(rest),
    })
}

/// The vendored tree a path lies in (`./web/node_modules`), if any.
fn vendored_root(path: &str) -> Option<&str> {
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

struct Group<'a> {
    path: &'a str,
    lines: Vec<usize>,
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let parsed: Vec<Option<Match>> = doc.lines.iter().map(|l| parse(l)).collect();
    let matched = parsed.iter().filter(|m| m.is_some()).count();
    let non_empty = doc.lines.iter().filter(|l| !l.trim().is_empty()).count();
    // Refuse to guess: nearly every line must be a match line.
    if matched < 4 || matched * 10 < non_empty * 9 {
        return None;
    }
    // Consecutive lines of one file form a group; anything else stays verbatim in place.
    let mut groups: Vec<Group> = Vec::new();
    let mut order: Vec<Result<usize, usize>> = Vec::new(); // Ok(group) or Err(line kept)
    for (n, m) in parsed.iter().enumerate() {
        match m {
            Some(m) => match groups.last_mut() {
                Some(g) if g.path == m.path && matches!(order.last(), Some(Ok(_))) => {
                    g.lines.push(n)
                }
                _ => {
                    groups.push(Group {
                        path: m.path,
                        lines: vec![n],
                    });
                    order.push(Ok(groups.len() - 1));
                }
            },
            None => order.push(Err(n)),
        }
    }
    let fold = matched > FOLD_ABOVE;
    let has_project = groups.iter().any(|g| vendored_root(g.path).is_none());
    let fold_vendored = fold && has_project;

    let mut pieces = Vec::new();
    let mut vendored_done: Vec<&str> = Vec::new();
    for item in order {
        let g = match item {
            Err(n) => {
                pieces.push(Piece::Keep(n));
                continue;
            }
            Ok(i) => &groups[i],
        };
        if fold_vendored {
            if let Some(root) = vendored_root(g.path) {
                if !vendored_done.contains(&root) {
                    vendored_done.push(root);
                    pieces.extend(vendored_tree(root, &groups));
                }
                continue;
            }
        }
        pieces.extend(file_group(g, &parsed, fold));
    }
    // A match that reads as a failure report (`error`, `panic`, …) stays visible in place.
    Some(unfold(pieces, |n| reports_failure(doc.lines[n])))
}

/// Every match under one vendored root, as one counted summary and one fold.
fn vendored_tree(root: &str, groups: &[Group]) -> Vec<Piece> {
    let inside: Vec<&Group> = groups
        .iter()
        .filter(|g| vendored_root(g.path) == Some(root))
        .collect();
    let mut lines: Vec<usize> = inside.iter().flat_map(|g| g.lines.clone()).collect();
    lines.sort_unstable();
    let mut files: Vec<&str> = inside.iter().map(|g| g.path).collect();
    files.sort_unstable();
    files.dedup();
    vec![
        Piece::Summary(format!(
            "{root}/: {} {} in {} {}",
            lines.len(),
            plural(lines.len(), "match", "matches"),
            files.len(),
            plural(files.len(), "file", "files")
        )),
        Piece::Fold {
            lines,
            what: "vendored match".to_string(),
        },
    ]
}

fn file_group(g: &Group, parsed: &[Option<Match>], fold: bool) -> Vec<Piece> {
    let count = g.lines.len();
    let numbered = g.lines.iter().all(|&n| {
        parsed[n]
            .as_ref()
            .is_some_and(|m| m.numbered_rest.is_some())
    });
    let shown = if fold {
        count.min(SHOWN_PER_FILE)
    } else {
        count
    };
    let mut pieces = Vec::new();
    if count > VERBATIM_UP_TO && numbered {
        pieces.push(Piece::Summary(format!(
            "{}: {count} {}",
            g.path,
            plural(count, "match", "matches")
        )));
        for &n in &g.lines[..shown] {
            let rest = parsed[n]
                .as_ref()
                .and_then(|m| m.numbered_rest)
                .unwrap_or("");
            pieces.push(Piece::Rewrite(n, rest.to_string()));
        }
    } else {
        pieces.extend(g.lines[..shown].iter().map(|&n| Piece::Keep(n)));
    }
    match count - shown {
        0 => {}
        1 => pieces.push(Piece::Keep(g.lines[shown])),
        _ => pieces.push(Piece::Fold {
            lines: g.lines[shown..].to_vec(),
            what: "more match".to_string(),
        }),
    }
    pieces
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{keeps_all, render};

    const FIXTURE: &str = include_str!("../../fixtures/grep-recursive/input.txt");

    fn run(text: &str) -> Option<String> {
        let doc = Doc::new("grep -rn x .", text);
        format(&doc).map(|p| render(&doc, &p, "h"))
    }

    #[test]
    fn regroups_under_counted_headers_and_marks_every_fold() {
        let out = run(FIXTURE).unwrap();
        assert!(out.contains("./vendor/aho-corasick/src/packed/vector.rs: 116 matches\n"));
        assert!(out.contains("[… 106 more match lines · sqz expand h:L61-166]"));
        // Small files keep their lines verbatim.
        assert!(out.contains("./vendor/aho-corasick/src/packed/ext.rs:8:    unsafe fn distance("));
        // Every line is shown, rewritten or inside a fold.
        assert!(accounted(&Doc::new("grep -rn x .", FIXTURE)));
    }

    fn accounted(doc: &Doc) -> bool {
        crate::fmt::accounts_for_every_line(doc.lines.len(), &format(doc).unwrap())
    }

    #[test]
    fn vendored_trees_fold_first_when_project_files_match() {
        let mut text =
            String::from("./src/lib.rs:3:unsafe fn a()\n./src/main.rs:9:unsafe fn b()\n");
        text.push_str(FIXTURE);
        let out = run(&text).unwrap();
        assert!(out.starts_with("./src/lib.rs:3:unsafe fn a()\n./src/main.rs:9:unsafe fn b()\n"));
        assert!(out.contains("./vendor/: 387 matches in 25 files\n"));
        assert!(out.contains("[… 387 vendored match lines · sqz expand h:L3-389]"));
    }

    #[test]
    fn small_results_are_only_regrouped() {
        let text = "./a.rs:1:x\n./a.rs:2:x\n./a.rs:3:x\n./a.rs:4:x\n./b.rs:5:x\n";
        let out = run(text).unwrap();
        assert_eq!(out, "./a.rs: 4 matches\n1:x\n2:x\n3:x\n4:x\n./b.rs:5:x\n");
    }

    #[test]
    fn refuses_output_that_is_not_matches() {
        assert!(run("usage: grep [OPTION]... PATTERNS [FILE]...\n").is_none());
        let locale = "Verwendung: grep [OPTION]... MUSTER [DATEI]...\nWeitere Informationen mit »grep --help«.\n";
        assert!(run(locale).is_none());
    }

    #[test]
    fn errors_and_unknown_lines_stay_verbatim() {
        let mut lines: Vec<&str> = FIXTURE.lines().collect();
        lines.insert(50, "grep: ./vendor/secret: Permission denied");
        lines.insert(120, "some line a newer grep prints");
        let text = lines.join("\n") + "\n";
        let doc = Doc::new("grep -rn x .", &text);
        let pieces = format(&doc).unwrap();
        assert!(keeps_all(
            &pieces,
            |n| reports_failure(doc.lines[n]),
            doc.lines.len()
        ));
        let out = render(&doc, &pieces, "h");
        assert!(out.contains("\ngrep: ./vendor/secret: Permission denied\n"));
        assert!(out.contains("\nsome line a newer grep prints\n"));
    }

    #[test]
    fn truncated_and_interleaved_output_loses_nothing() {
        // Cut mid-line: the last partial match still counts and shows or folds with a marker.
        let cut = &FIXTURE[..FIXTURE.len() / 2 + 7];
        assert!(accounted(&Doc::new("grep -rn x .", cut)));
        // Interleaved files (parallel search) make separate groups; nothing merges wrongly.
        let text = "./a.rs:1:x\n./b.rs:1:y\n./a.rs:2:x\n./b.rs:2:y\n";
        assert_eq!(run(text).unwrap(), text);
    }
}
