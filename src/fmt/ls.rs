//! `ls -l` / `ls -la` / `ls -lR` long listings: within each directory section, ordinary rows
//! that share permissions, owner, group and date (e.g. the 95 package directories of
//! `node_modules`, all unpacked in the same minute) become one summary line that still names
//! every entry, with a marker that restores the rows (link counts and, for directories, the
//! usual size; a directory of unusual size stays as a row).
//! Files keep their sizes in the summary. `total N`, hidden entries (`.`, `..`, `.bin`), symlinks (`-> target`), device
//! files, section headers, error lines (`ls: cannot access …`) and any line that is not a long
//! row stay verbatim. Groups smaller than [`MIN_GROUP`] stay as they are.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};
use std::collections::BTreeMap;

/// A group folds only when it has at least this many rows: below that the summary and its
/// marker cost about as much as the rows.
const MIN_GROUP: usize = 8;

pub fn matches(label: &Label) -> bool {
    matches!(label.program, "ls" | "ll")
        && (label.program == "ll"
            || label.args.iter().any(|a| {
                (a.starts_with('-') && !a.starts_with("--") && a.contains('l'))
                    || *a == "--format=long"
                    || *a == "--format=verbose"
            }))
}

/// One parsed long-format row.
struct Row<'a> {
    perms: &'a str,
    owners: String,
    date: &'a str,
    size: &'a str,
    name: &'a str,
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let last = doc.lines.len().checked_sub(1)?;
    let rows: Vec<Option<Row>> = doc
        .lines
        .iter()
        .enumerate()
        // A last line cut mid-way may hold half a name: it stays verbatim.
        .map(|(n, l)| {
            (n != last || doc.ends_with_newline)
                .then(|| parse_row(l))
                .flatten()
        })
        .collect();
    // Refuse to guess: a long listing is nearly all rows, `total N` lines and section headers.
    let parsed = rows.iter().flatten().count();
    let other = doc
        .lines
        .iter()
        .zip(&rows)
        .filter(|(l, r)| r.is_none() && !l.is_empty() && !is_total(l) && !l.ends_with(':'))
        .count();
    if parsed < MIN_GROUP || other * 10 > parsed {
        return None;
    }

    // Groups per section (a section ends at a blank line or a `dir:` header).
    let mut section = 0;
    let mut groups: BTreeMap<(usize, &str, String, &str, char), Vec<usize>> = BTreeMap::new();
    for (n, row) in rows.iter().enumerate() {
        let line = doc.lines[n];
        if line.is_empty() || (row.is_none() && line.ends_with(':')) {
            section += 1;
            continue;
        }
        let Some(row) = row else { continue };
        let kind = row.perms.chars().next().unwrap_or('?');
        let ordinary = matches!(kind, '-' | 'd')
            // Hidden entries (`.bin`, `.env`, `.git`) are what `-a` was asked for: they stay.
            && !row.name.starts_with('.')
            && !row.size.contains(',')
            && !row.name.contains(" -> ")
            && !reports_failure(line);
        if ordinary {
            groups
                .entry((section, row.perms, row.owners.clone(), row.date, kind))
                .or_default()
                .push(n);
        }
    }

    // The first row of each folded group carries its summary and marker.
    let mut folded = vec![false; doc.lines.len()];
    let mut at: BTreeMap<usize, (String, Vec<usize>)> = BTreeMap::new();
    for ((_, perms, owners, date, kind), mut members) in groups {
        if kind == 'd' {
            // A directory whose size differs from its group's usual one (`20480` among
            // `4096`s: a directory with many entries) stays as a row.
            let size = |n: usize| rows[n].as_ref().map_or("", |r| r.size);
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for &n in &members {
                *counts.entry(size(n)).or_default() += 1;
            }
            let usual = counts.iter().max_by_key(|(_, c)| **c).map(|(s, _)| *s);
            members.retain(|&n| Some(size(n)) == usual);
        }
        if members.len() < MIN_GROUP {
            continue;
        }
        let names: Vec<String> = members
            .iter()
            .map(|&n| {
                let r = rows[n].as_ref().expect("grouped rows parsed");
                if kind == 'd' {
                    r.name.to_string()
                } else {
                    format!("{} ({})", r.name, r.size)
                }
            })
            .collect();
        let noun = if kind == 'd' { "directories" } else { "files" };
        let summary = format!(
            "{perms} {owners} {date}: {} {noun}: {}",
            members.len(),
            names.join(", ")
        );
        let original: usize = members.iter().map(|&n| doc.lines[n].len() + 1).sum();
        // Only when it pays: the summary plus a marker must be clearly shorter.
        if summary.len() + 64 >= original {
            continue;
        }
        for &n in &members {
            folded[n] = true;
        }
        at.insert(members[0], (summary, members));
    }
    if at.is_empty() {
        return None;
    }
    let mut pieces = Vec::new();
    for (n, &hidden) in folded.iter().enumerate() {
        if let Some((summary, members)) = at.remove(&n) {
            pieces.push(Piece::Summary(summary));
            pieces.push(Piece::Fold {
                lines: members,
                what: "listed entry".to_string(),
            });
        } else if !hidden {
            pieces.push(Piece::Keep(n));
        }
    }
    Some(pieces)
}

fn is_total(line: &str) -> bool {
    line.strip_prefix("total ").is_some_and(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',' || c.is_ascii_alphabetic())
    })
}

/// Word spans `(start, end)` of a line split at spaces.
fn spans(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c == ' ', start) {
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, line.len()));
    }
    out
}

fn is_perms(w: &str) -> bool {
    let b = w.as_bytes();
    (b.len() == 10 || (b.len() == 11 && matches!(b[10], b'.' | b'+' | b'@')))
        && b"-dlcbpsD".contains(&b[0])
        && b[1..10].iter().all(|c| b"rwxsStTl-".contains(c))
}

/// `14:18`, `14:18:03.123456789`, or a year such as `2024`.
fn is_time_or_year(w: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    (w.len() == 4 && digits(w))
        || w.split_once(':')
            .is_some_and(|(h, m)| h.len() <= 2 && digits(h) && m.get(..2).is_some_and(digits))
}

fn is_iso_date(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 10 && b[4] == b'-' && b[7] == b'-'
}

fn parse_row(line: &str) -> Option<Row<'_>> {
    let sp = spans(line);
    let word = |i: usize| &line[sp[i].0..sp[i].1];
    if sp.len() < 7 || !is_perms(word(0)) || !word(1).bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // The date ends at the first time-or-year word after owner, group and size.
    // (Searching from the sixth word: a size such as `2024` is no year.)
    let j = (5..sp.len() - 1).find(|&j| is_time_or_year(word(j)))?;
    let date_start = if is_iso_date(word(j - 1)) {
        j - 1
    } else if word(j - 1).starts_with(|c: char| c.is_ascii_digit()) {
        j - 2
    } else {
        return None;
    };
    if date_start < 4 {
        return None;
    }
    let size_at = date_start - 1;
    let owners = (2..size_at).map(word).collect::<Vec<_>>().join(" ");
    // The name starts one space after the time word.
    let name = line.get(sp[j].1 + 1..)?;
    if name.is_empty() {
        return None;
    }
    Some(Row {
        perms: word(0),
        owners,
        date: &line[sp[date_start].0..sp[j].1],
        size: word(size_at),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: &str = include_str!("../../fixtures/ls-la-big/input.txt");

    fn rendered(text: &str) -> String {
        let doc = Doc::new("ls -la node_modules", text);
        let pieces = format(&doc).expect("formats");
        crate::fmt::render_checked(&doc, &pieces, "abc")
    }

    #[test]
    fn a_time_whose_minutes_cut_a_character_is_no_time() {
        assert!(!is_time_or_year("14:1\u{feff}"));
        let line = "-rw-r--r-- 1 root root 5 Dec  2 14:1\u{feff} notes.txt";
        assert!(parse_row(line).is_none());
    }

    #[test]
    fn claims_long_listings_only() {
        assert!(matches(&Label::parse("ls -la node_modules")));
        assert!(matches(&Label::parse("ls -lR src")));
        assert!(matches(&Label::parse("ls --format=long")));
        assert!(!matches(&Label::parse("ls node_modules")));
        assert!(!matches(&Label::parse("ls -a")));
    }

    #[test]
    fn groups_node_modules_keeping_every_name() {
        let out = rendered(BIG);
        for kept in [
            "total 432\n",
            "drwxr-xr-x 95 root root  4096 Dec  2 14:18 .\n",
            "drwxr-xr-x  4 root root  4096 Dec  2 14:18 ..\n",
            "drwxr-xr-x  2 root root  4096 Dec  2 14:18 .bin\n",
            "-rw-r--r--  1 root root 36160 Dec  2 14:18 .package-lock.json\n",
            // unusual size: a directory with many entries
            "drwxr-xr-x  3 root root 20480 Dec  2 14:18 lodash\n",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        // The count is counted: every grouped name once.
        let summary = out.lines().find(|l| l.contains(" directories: ")).unwrap();
        let names = summary.split(": ").nth(2).unwrap().split(", ").count();
        assert!(
            summary.contains(&format!(": {names} directories: ")),
            "{summary}"
        );
        for line in BIG.lines().skip(1) {
            let name = line.rsplit(' ').next().unwrap();
            assert!(out.contains(name), "{name} lost");
        }
        assert!(out.len() * 3 < BIG.len());
    }

    #[test]
    fn files_keep_their_sizes() {
        let mut text = String::from("total 40\n");
        for i in 0..10 {
            text.push_str(&format!(
                "-rw-r--r-- 1 dev dev {} Dec  2 14:18 module_{i}.py\n",
                1000 + i
            ));
        }
        let out = rendered(&text);
        assert!(out.contains("10 files: module_0.py (1000), module_1.py (1001)"));
    }

    #[test]
    fn small_or_mixed_listings_are_left_alone() {
        let few: String = BIG.lines().take(9).map(|l| format!("{l}\n")).collect();
        assert!(format(&Doc::new("ls -la", &few)).is_none());
        assert!(format(&Doc::new("ls -la", "hello\nworld\n")).is_none());
    }

    #[test]
    fn truncated_output_keeps_the_cut_row() {
        let cut = &BIG[..BIG.find("verror").unwrap() + 3];
        let out = rendered(cut);
        assert!(out.ends_with("Dec  2 14:18 ver"), "{out}");
        assert!(!out.contains(", ver,") && !out.contains(", ver\n"));
    }

    #[test]
    fn interleaved_errors_and_unknown_lines_stay() {
        let mut text = String::new();
        for (i, line) in BIG.lines().enumerate() {
            text.push_str(line);
            text.push('\n');
            if i == 30 {
                text.push_str("ls: cannot access 'missing': No such file or directory\n");
            }
            if i == 50 {
                text.push_str("drwxr-xr-x  2 root root  4096 Dec  2 14:18 newfmt extra@field\n");
                text.push_str("?????????? ? ? ? ? ? broken-entry\n");
            }
        }
        let out = rendered(&text);
        assert!(out.contains("ls: cannot access 'missing': No such file or directory\n"));
        assert!(out.contains("?????????? ? ? ? ? ? broken-entry\n"));
        assert!(out.contains("newfmt extra@field"));
    }

    #[test]
    fn other_locale_and_iso_dates_group_the_same_way() {
        let de = BIG.replace("Dec  2 14:18", "Dez  2 14:18");
        let out = rendered(&de);
        assert!(out.contains("drwxr-xr-x root root Dez  2 14:18: "), "{out}");
        let iso = BIG.replace("Dec  2 14:18", "2026-12-02 14:18");
        let out = rendered(&iso);
        assert!(
            out.contains("drwxr-xr-x root root 2026-12-02 14:18: "),
            "{out}"
        );
    }

    #[test]
    fn recursive_listings_group_per_section() {
        let mut text = String::from(".:\ntotal 8\n");
        for i in 0..9 {
            text.push_str(&format!("drwxr-xr-x 2 dev dev 4096 Dec  2 14:18 pkg{i}\n"));
        }
        text.push_str("\n./pkg0:\ntotal 4\n");
        for i in 0..9 {
            text.push_str(&format!("-rw-r--r-- 1 dev dev 12 Dec  2 14:18 f{i}.txt\n"));
        }
        let out = rendered(&text);
        assert!(out.contains("9 directories: pkg0, pkg1"));
        assert!(out.contains("\n./pkg0:\ntotal 4\n"));
        assert!(out.contains("9 files: f0.txt (12)"));
    }
}
