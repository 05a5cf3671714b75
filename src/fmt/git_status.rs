//! git status in long form: folds git's advice lines (`(use "git add <file>..." …)`), which
//! repeat on every call, into one counted marker. Section headings and every file line with
//! its status stay verbatim; output that is not a git status is refused.

use super::Label;
use crate::engine::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    label.program == "git" && label.subcommand() == Some("status")
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let first = doc.lines.first()?;
    if !(first.starts_with("On branch ") || first.starts_with("HEAD detached ")) {
        return None;
    }
    // Advice lines come one or two per section: one marker at the end stands for all of them.
    let (hints, kept): (Vec<usize>, Vec<usize>) =
        (0..doc.lines.len()).partition(|&n| is_hint(doc.lines[n]));
    if hints.len() < 2 {
        return None;
    }
    let mut pieces: Vec<Piece> = kept.into_iter().map(Piece::Keep).collect();
    pieces.push(Piece::Fold {
        lines: hints,
        what: "git hint".to_string(),
    });
    Some(pieces)
}

fn is_hint(line: &str) -> bool {
    let t = line.trim_start();
    t.len() != line.len() && (t.starts_with("(use \"git ") || t.starts_with("(commit or discard"))
}
