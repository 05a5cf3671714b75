//! Folding shared by formatters: a formatter names the kind of each line it may fold, and this
//! turns runs of one kind into counted folds. `fold_kinds` never folds a line its floor keeps,
//! and it leaves runs too short to pay alone.

use crate::doc::facts::Floor;
use crate::doc::{Doc, Piece};

/// How a formatter's line kinds become pieces.
pub struct Folding {
    /// What must stay: the floor of the formatter that folds.
    pub floor: Floor,
    /// A blank line between two lines of the same kind joins their run.
    pub absorb_blanks: bool,
    /// Runs shorter than this stay visible: their marker would cost about as much as they do.
    pub min_run: usize,
}

pub const DEFAULT: Folding = Folding {
    floor: Floor::Facts,
    absorb_blanks: false,
    min_run: 3,
};

/// Folds each run of consecutive lines that share a kind; every other line is kept.
/// `kinds[n]` is the kind of line `n`, or `None` to keep it.
pub fn fold_kinds(doc: &Doc, kinds: &[Option<&'static str>], how: &Folding) -> Vec<Piece> {
    let protected = |n: usize| how.floor.keeps(doc.lines[n]);
    let kind_of = |n: usize| kinds.get(n).copied().flatten().filter(|_| !protected(n));
    let mut pieces = Vec::new();
    let mut n = 0;
    while n < doc.lines.len() {
        let Some(what) = kind_of(n) else {
            pieces.push(Piece::Keep(n));
            n += 1;
            continue;
        };
        let mut run = vec![n];
        let mut next = n + 1;
        loop {
            if kind_of(next) == Some(what) {
                run.push(next);
                next += 1;
                continue;
            }
            // Blank lines followed by more of the same kind join the run.
            let mut after = next;
            while how.absorb_blanks && after < doc.lines.len() && doc.lines[after].trim().is_empty()
            {
                after += 1;
            }
            if after > next && kind_of(after) == Some(what) {
                run.extend(next..=after);
                next = after + 1;
                continue;
            }
            break;
        }
        if run.len() >= how.min_run.max(2) {
            pieces.push(Piece::Fold {
                lines: run,
                what: what.to_string(),
            });
        } else {
            pieces.extend(run.into_iter().map(Piece::Keep));
        }
        n = next;
    }
    pieces
}

/// Whether any piece folds something: a formatter with nothing to fold returns `None`.
pub fn folds_any(pieces: &[Piece]) -> bool {
    pieces.iter().any(|p| matches!(p, Piece::Fold { .. }))
}

/// Groups consecutive foldable lines into one fold each; all other lines are kept.
/// `kind(line)` names what a foldable line is, or `None` to keep it.
pub fn fold_consecutive(doc: &Doc, kind: impl Fn(&str) -> Option<&'static str>) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    for (n, line) in doc.lines.iter().enumerate() {
        match kind(line) {
            Some(what) => match pieces.last_mut() {
                Some(Piece::Fold { lines, what: w })
                    if w == what && lines.last() == Some(&(n - 1)) =>
                {
                    lines.push(n)
                }
                _ => pieces.push(Piece::Fold {
                    lines: vec![n],
                    what: what.to_string(),
                }),
            },
            None => pieces.push(Piece::Keep(n)),
        }
    }
    // A fold of a single line hides nothing worth a marker.
    pieces
        .into_iter()
        .flat_map(|p| match p {
            Piece::Fold { lines, .. } if lines.len() == 1 => vec![Piece::Keep(lines[0])],
            other => vec![other],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    #[test]
    fn folds_runs_but_never_facts() {
        let doc = Doc::new("x", "a\np1\np2\np3 error\np4\np5\np6\nb\n");
        let kinds: Vec<_> = doc
            .lines
            .iter()
            .map(|l| l.starts_with('p').then_some("p"))
            .collect();
        let out = render(&doc, &fold_kinds(&doc, &kinds, &DEFAULT), "h");
        assert_eq!(
            out,
            "a\np1\np2\np3 error\n[… 3 p lines · sqz expand h:L5-7]\nb\n"
        );
    }

    #[test]
    fn blank_lines_join_a_run_only_between_its_lines() {
        let doc = Doc::new("x", "p\n\np\n\np\n\nq\n");
        let kinds: Vec<_> = doc
            .lines
            .iter()
            .map(|l| (*l == "p").then_some("p"))
            .collect();
        let how = Folding {
            absorb_blanks: true,
            ..DEFAULT
        };
        let out = render(&doc, &fold_kinds(&doc, &kinds, &how), "h");
        assert_eq!(out, "[… 5 p lines · sqz expand h:L1-5]\n\nq\n");
    }
}
