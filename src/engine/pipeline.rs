//! The generic pipeline for output no formatter claims: folds runs of identical or
//! near-identical lines (only numbers, hex ids or timestamps varying) into counted markers.
//! It never folds a line that reports a fact. (JSON is compacted before it, in `json.rs`.)
//! Table padding is left alone: rows are facts an agent matches verbatim, and cl100k spends
//! one token on a run of spaces whatever its length.

use super::doc::{Doc, Piece};
use super::facts::is_fact;
use crate::tokens;

/// Runs shorter than this stay as they are.
const MIN_RUN: usize = 3;

/// Lossy folding of repeated lines. Returns `None` when nothing would fold.
pub fn fold_runs(doc: &Doc) -> Option<Vec<Piece>> {
    let shapes: Vec<String> = doc.lines.iter().map(|l| shape(l)).collect();
    let facts: Vec<bool> = doc.lines.iter().map(|l| is_fact(l)).collect();
    let mut pieces = Vec::with_capacity(doc.lines.len());
    let mut folded_any = false;
    let mut i = 0;
    while i < doc.lines.len() {
        let mut j = i + 1;
        if !facts[i] && !doc.lines[i].trim().is_empty() {
            while j < doc.lines.len() && !facts[j] && shapes[j] == shapes[i] {
                j += 1;
            }
        }
        let run = j - i;
        if run >= MIN_RUN {
            let identical = doc.lines[i..j].iter().all(|l| *l == doc.lines[i]);
            let last_kept = if identical { j } else { j - 1 };
            let folded: Vec<usize> = (i + 1..last_kept).collect();
            let what = if identical { "identical" } else { "similar" };
            if worth_folding(doc, &folded, what) {
                pieces.push(Piece::Keep(i));
                pieces.push(Piece::Fold {
                    lines: folded,
                    what: what.to_string(),
                });
                if !identical {
                    pieces.push(Piece::Keep(j - 1));
                }
                folded_any = true;
                i = j;
                continue;
            }
        }
        pieces.extend((i..j).map(Piece::Keep));
        i = j;
    }
    folded_any.then_some(pieces)
}

/// A fold pays only when the lines it hides cost more than its marker.
fn worth_folding(doc: &Doc, lines: &[usize], what: &str) -> bool {
    if lines.len() < 2 {
        return false;
    }
    let hidden: usize = lines.iter().map(|&n| tokens::count(doc.lines[n]) + 1).sum();
    let marker = super::doc::marker("0123456789abcdef", lines, what);
    hidden > tokens::count(&marker) + 2
}

/// A line with every digit run and long hex run replaced by `#`, so lines that differ only in
/// counters, durations, timestamps or ids share a shape.
pub fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_hexdigit() {
            let start = i;
            let mut has_digit = false;
            while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                has_digit |= bytes[i].is_ascii_digit();
                i += 1;
            }
            let all_digits = bytes[start..i].iter().all(u8::is_ascii_digit);
            let hex_id = has_digit && i - start >= 7;
            if all_digits || hex_id {
                out.push('#');
            } else {
                // Plain word that happens to be made of hex letters ("added", "face"): but a
                // word may continue with non-hex letters, so copy the run and go on.
                out.push_str(&line[start..i]);
            }
            continue;
        }
        let ch_len = utf8_len(b);
        out.push_str(&line[i..i + ch_len]);
        i += ch_len;
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::doc::render;

    #[test]
    fn shapes_mask_numbers_and_ids() {
        assert_eq!(
            shape("took 12ms at 10:04:33"),
            shape("took 9ms at 10:05:01")
        );
        assert_eq!(shape("commit 3f9a2b1c"), shape("commit 77aa0e12"));
        assert_ne!(shape("Compiling serde"), shape("Compiling tokio"));
    }

    #[test]
    fn folds_repeats_but_not_facts() {
        let mut text = String::new();
        for n in 0..30 {
            text.push_str(&format!(
                "[{n}] heartbeat from worker pool, all queues drained\n"
            ));
        }
        text.push_str("error: disk full\n");
        for _ in 0..5 {
            text.push_str("error: disk full\n");
        }
        let doc = Doc::new("x", &text);
        let pieces = fold_runs(&doc).expect("folds");
        let out = render(&doc, &pieces, "h");
        assert!(out.starts_with("[0] heartbeat"));
        assert!(out.contains("[… 28 similar lines · sqz expand h:L2-29]"));
        assert!(out.contains("[29] heartbeat"));
        assert_eq!(out.matches("error: disk full").count(), 6);
    }
}
