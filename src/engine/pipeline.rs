//! The generic pipeline for output no formatter claims: folds runs of identical or
//! near-identical lines (only numbers, hex ids or timestamps varying) into counted markers.
//! It never folds a line that reports a fact. (JSON is compacted before it, in `json.rs`.)
//! Table padding is left alone: rows are facts an agent matches verbatim, and cl100k spends
//! one token on a run of spaces whatever its length.

use crate::doc::{Doc, Piece};
use crate::tokens;

/// Runs shorter than this stay as they are.
const MIN_RUN: usize = 3;
/// Progress blocks (mixed progress verbs, as package managers print them) need a few more.
const MIN_PROGRESS_RUN: usize = 5;

/// First words of the lines installers and build tools print for each step of work done:
/// `Unpacking foo (1.2) ...`, `Collecting requests`, `Get:3 http://…`, `Compiling serde`.
const PROGRESS_VERBS: [&str; 40] = [
    "Adding",
    "Building",
    "Checking",
    "Cloning",
    "Collecting",
    "Compiling",
    "Configuring",
    "Copying",
    "Created",
    "Creating",
    "Downloaded",
    "Downloading",
    "Extracting",
    "Fetched",
    "Fetching",
    "Fresh",
    "Generating",
    "Get",
    "Hit",
    "Ign",
    "Installing",
    "Linking",
    "Loading",
    "Locking",
    "Obtaining",
    "Packing",
    "Preparing",
    "Processing",
    "Pulling",
    "Reading",
    "Receiving",
    "Removing",
    "Requirement",
    "Resolving",
    "Selecting",
    "Setting",
    "Stored",
    "Unpacking",
    "Updating",
    "Using",
];

/// A line that only reports a step of routine work, by its first word.
fn is_progress(line: &str) -> bool {
    let first = line.trim_start().split([' ', ':']).next().unwrap_or("");
    PROGRESS_VERBS.binary_search(&first).is_ok()
}

/// Lossy folding of repeated lines; `facts[n]` says line `n` must stay. Returns `None` when
/// nothing would fold.
pub fn fold_runs(doc: &Doc, facts: &[bool]) -> Option<Vec<Piece>> {
    // Shapes are compared by a hash, so a huge output costs no second copy of itself.
    let shapes: Vec<u64> = doc.lines.iter().map(|l| shape_hash(l)).collect();
    let mut pieces = Vec::with_capacity(doc.lines.len());
    let mut folded_any = false;
    let mut i = 0;
    while i < doc.lines.len() {
        let progress_run = (i..doc.lines.len())
            .take_while(|&n| !facts[n] && is_progress(doc.lines[n]))
            .count();
        if progress_run >= MIN_PROGRESS_RUN {
            let mut keep = vec![false; progress_run];
            keep[0] = true;
            keep[progress_run - 1] = true;
            folded_any |= emit_run(doc, i, &keep, "progress", &mut pieces);
            i += progress_run;
            continue;
        }
        let mut j = i + 1;
        if !facts[i] && !doc.lines[i].trim().is_empty() {
            while j < doc.lines.len() && !facts[j] && shapes[j] == shapes[i] {
                j += 1;
            }
        }
        if j - i < MIN_RUN {
            pieces.extend((i..j).map(Piece::Keep));
        } else {
            let run = &doc.lines[i..j];
            let identical = run.iter().all(|l| *l == run[0]);
            let mut keep = if identical {
                vec![false; run.len()]
            } else {
                outliers(run)
            };
            // The first line shows the shape; for similar lines the last shows the range.
            keep[0] = true;
            if !identical {
                keep[run.len() - 1] = true;
            }
            folded_any |= emit_run(
                doc,
                i,
                &keep,
                if identical { "identical" } else { "similar" },
                &mut pieces,
            );
        }
        i = j;
    }
    folded_any.then_some(pieces)
}

/// Kept lines of a run stay; each stretch between them folds if that pays.
fn emit_run(doc: &Doc, start: usize, keep: &[bool], what: &str, pieces: &mut Vec<Piece>) -> bool {
    let mut folded = false;
    let mut k = 0;
    while k < keep.len() {
        if keep[k] {
            pieces.push(Piece::Keep(start + k));
            k += 1;
            continue;
        }
        let end = (k..keep.len()).find(|&m| keep[m]).unwrap_or(keep.len());
        let lines: Vec<usize> = (start + k..start + end).collect();
        if worth_folding(doc, &lines, what) {
            pieces.push(Piece::Fold {
                lines,
                what: what.to_string(),
            });
            folded = true;
        } else {
            pieces.extend(lines.into_iter().map(Piece::Keep));
        }
        k = end;
    }
    folded
}

/// Lines of a same-shape run whose number at some position differs from what most lines
/// agree on — `status=404` among `status=200`, `exit 1` among `exit 0`: the anomalies an agent
/// looks for. Positions where values vary freely (timestamps, counters, durations) mark only
/// their rare values.
fn outliers(run: &[&str]) -> Vec<bool> {
    let numbers: Vec<Vec<&str>> = run.iter().map(|l| number_tokens(l)).collect();
    let width = numbers.iter().map(Vec::len).min().unwrap_or(0);
    let mut keep = vec![false; run.len()];
    for p in 0..width {
        let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for line in &numbers {
            *counts.entry(line[p]).or_default() += 1;
        }
        let most = counts.values().copied().max().unwrap_or(0);
        if most * 2 <= run.len() {
            continue;
        }
        // A field with few values (a status, an exit code) keeps every line off its usual
        // value; a freer field keeps only its rare values.
        let categorical = counts.len() <= (run.len() / 8).max(3);
        for (n, line) in numbers.iter().enumerate() {
            let count = counts[line[p]];
            if (categorical && count < most) || count * 5 <= run.len() {
                keep[n] = true;
            }
        }
    }
    keep
}

/// The digit runs and long hex runs of a line: the parts `shape` masks.
fn number_tokens(line: &str) -> Vec<&str> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_hexdigit() {
            let start = i;
            let mut has_digit = false;
            while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                has_digit |= bytes[i].is_ascii_digit();
                i += 1;
            }
            let token = &line[start..i];
            if token.bytes().all(|b| b.is_ascii_digit()) || (has_digit && token.len() >= 7) {
                out.push(token);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// A fold pays only when the lines it hides cost more than its marker.
fn worth_folding(doc: &Doc, lines: &[usize], what: &str) -> bool {
    if lines.len() < 2 {
        return false;
    }
    let hidden: usize = lines.iter().map(|&n| tokens::count(doc.lines[n]) + 1).sum();
    let marker = crate::doc::marker("0123456789abcdef", lines, what);
    hidden > tokens::count(&marker) + 2
}

fn shape_hash(line: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    shape(line).hash(&mut hasher);
    hasher.finish()
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
    use crate::doc::facts::is_fact;
    use crate::doc::render;

    fn facts_of(doc: &Doc) -> Vec<bool> {
        doc.lines.iter().map(|l| is_fact(l)).collect()
    }

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
        let pieces = fold_runs(&doc, &facts_of(&doc)).expect("folds");
        let out = render(&doc, &pieces, "h");
        assert!(out.starts_with("[0] heartbeat"));
        assert!(out.contains("[… 28 similar lines · sqz expand h:L2-29]"));
        assert!(out.contains("[29] heartbeat"));
        assert_eq!(out.matches("error: disk full").count(), 6);
    }

    #[test]
    fn progress_verbs_are_sorted_for_binary_search() {
        assert!(PROGRESS_VERBS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn mixed_progress_blocks_fold_but_not_their_neighbours() {
        let text = "The following NEW packages will be installed:\n  cowsay figlet\nSelecting previously unselected package cowsay.\nPreparing to unpack .../cowsay.deb ...\nUnpacking cowsay (3.03) ...\nSelecting previously unselected package figlet.\nPreparing to unpack .../figlet.deb ...\nUnpacking figlet (2.2.5) ...\nSetting up figlet (2.2.5) ...\nE: Sub-process /usr/bin/dpkg returned an error code (1)\n";
        let doc = Doc::new("apt-get install cowsay figlet", text);
        let out = render(&doc, &fold_runs(&doc, &facts_of(&doc)).unwrap(), "h");
        assert!(out.contains("Selecting previously unselected package cowsay.\n[… 5 progress lines · sqz expand h:L4-8]\nSetting up figlet"), "{out}");
        assert!(out.contains("E: Sub-process /usr/bin/dpkg returned an error code (1)"));
    }

    #[test]
    fn rare_values_in_a_run_stay_visible() {
        let mut text = String::new();
        for n in 0..40 {
            let status = if n == 17 { 404 } else { 200 };
            text.push_str(&format!(
                "10:00:{n:02} method=GET path=/orders/{n} status={status} took={}ms\n",
                n % 7
            ));
        }
        let doc = Doc::new("docker logs api", &text);
        let out = render(&doc, &fold_runs(&doc, &facts_of(&doc)).unwrap(), "h");
        assert!(out.contains("path=/orders/17 status=404"), "{out}");
        assert!(
            out.contains("[… 16 similar lines · sqz expand h:L2-17]"),
            "{out}"
        );
    }
}
