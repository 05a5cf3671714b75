//! `du` listings (`du -ah`, `du -h`, often piped through `sort -h`): every entry of the project
//! itself and every big entry (at least 1% of the largest, e.g. `.` and `./node_modules`) stays
//! verbatim; the small entries inside a bulk directory (`node_modules`, `target`, `.git`,
//! `.venv`, …) fold into one summary per bulk directory with their count and the largest size
//! among them, taken from the input, plus a marker. Lines that are not `SIZE<TAB>PATH` stay;
//! output that is mostly something else is refused.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};
use std::collections::BTreeMap;

/// A bulk directory folds only when it has at least this many small entries.
const MIN_FOLD: usize = 8;

pub fn matches(label: &Label) -> bool {
    label.program == "du"
}

/// `4.0K` → 4096.0, `11M`, `123` (blocks) → 123.0: comparable within one output.
fn size(s: &str) -> Option<f64> {
    let (num, unit) = match s.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&s[..i], c),
        _ => (s, 'B'),
    };
    let mult = match unit.to_ascii_uppercase() {
        'B' => 1.0,
        'K' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => 1024.0f64.powi(3),
        'T' => 1024.0f64.powi(4),
        'P' => 1024.0f64.powi(5),
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    Some(v * mult)
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let last = doc.lines.len().checked_sub(1)?;
    // (size text, size, path) per line that is an entry.
    let entries: Vec<Option<(&str, f64, &str)>> = doc
        .lines
        .iter()
        .enumerate()
        .map(|(n, l)| {
            let cut = n == last && !doc.ends_with_newline;
            let (s, path) = l.split_once('\t')?;
            let v = size(s)?;
            (!cut && !path.is_empty() && !reports_failure(l)).then_some((s, v, path))
        })
        .collect();
    let count = entries.iter().flatten().count();
    let other = doc.lines.iter().filter(|l| !l.is_empty()).count() - count;
    if count < MIN_FOLD || other * 10 > count {
        return None;
    }
    let largest = entries.iter().flatten().map(|e| e.1).fold(0.0, f64::max);
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (n, e) in entries.iter().enumerate() {
        let Some((_, v, path)) = e else { continue };
        if *v * 100.0 >= largest {
            continue;
        }
        let parts: Vec<&str> = path.split('/').collect();
        // Entries strictly inside a bulk directory; the directory's own line stays.
        if let Some(i) = parts[..parts.len() - 1]
            .iter()
            .position(|p| super::bulk::is_bulk(p))
        {
            groups.entry(parts[..=i].join("/")).or_default().push(n);
        }
    }
    groups.retain(|_, lines| lines.len() >= MIN_FOLD);
    if groups.is_empty() {
        return None;
    }
    let mut folded = vec![false; doc.lines.len()];
    let mut at: BTreeMap<usize, (String, Vec<usize>)> = BTreeMap::new();
    for (root, lines) in groups {
        let biggest = lines
            .iter()
            .filter_map(|&n| entries[n])
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("", |e| e.0);
        for &n in &lines {
            folded[n] = true;
        }
        let summary = format!(
            "{root}/: {} smaller entries, the largest {biggest}",
            lines.len()
        );
        at.insert(lines[0], (summary, lines));
    }
    let mut pieces = Vec::new();
    for (n, &hidden) in folded.iter().enumerate() {
        if let Some((summary, lines)) = at.remove(&n) {
            pieces.push(Piece::Summary(summary));
            pieces.push(Piece::Fold {
                lines,
                what: "small entry".to_string(),
            });
        } else if !hidden {
            pieces.push(Piece::Keep(n));
        }
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORTED: &str = include_str!("../../fixtures/du-ah-sorted/input.txt");

    fn rendered(text: &str) -> String {
        let doc = Doc::new("du -ah | sort -h", text);
        let pieces = format(&doc).expect("formats");
        crate::fmt::render_checked(&doc, &pieces, "abc")
    }

    #[test]
    fn keeps_big_and_project_entries() {
        let out = rendered(SORTED);
        for kept in [
            "49M\t.\n",
            "49M\t./node_modules\n",
            "23M\t./node_modules/typescript/lib\n",
            "11M\t./node_modules/@esbuild/linux-x64/bin/esbuild\n",
            "4.0K\t./src/table.ts\n",
            "52K\t./package-lock.json\n",
        ] {
            assert!(out.contains(kept), "{kept} lost");
        }
        let small = SORTED
            .lines()
            .filter(|l| l.contains("./node_modules/") && !out.contains(&format!("{l}\n")))
            .count();
        assert!(out.contains(&format!(
            "./node_modules/: {small} smaller entries, the largest "
        )));
        assert!(out.len() * 4 < SORTED.len());
    }

    #[test]
    fn sizes_compare_across_units() {
        assert!(size("4.0K").unwrap() < size("1M").unwrap());
        assert_eq!(size("123"), Some(123.0));
        assert_eq!(size("x"), None);
    }

    #[test]
    fn small_or_foreign_output_is_refused() {
        let du_sh = include_str!("../../fixtures/du-sh/input.txt");
        assert!(format(&Doc::new("du -sh *", du_sh)).is_none());
        assert!(format(&Doc::new("du", "hello\nworld\n")).is_none());
    }

    #[test]
    fn truncated_output_keeps_the_cut_line() {
        let cut = &SORTED[..SORTED.len() - 3];
        let out = rendered(cut);
        assert!(out.ends_with("49M\t./node_modul"), "{out}");
    }

    #[test]
    fn interleaved_errors_unknown_lines_and_locale_stay() {
        let mut text = String::new();
        for (i, line) in SORTED.lines().enumerate() {
            text.push_str(line);
            text.push('\n');
            if i == 100 {
                text.push_str(
                    "du: cannot read directory './node_modules/.cache': Permission denied\n",
                );
                text.push_str("4,0K\t./node_modules/localised/size\n");
                text.push_str("NEW-FORMAT ./node_modules/x 4096\n");
            }
        }
        let out = rendered(&text);
        assert!(
            out.contains("du: cannot read directory './node_modules/.cache': Permission denied\n")
        );
        assert!(out.contains("4,0K\t./node_modules/localised/size\n"));
        assert!(out.contains("NEW-FORMAT ./node_modules/x 4096\n"));
    }
}
