//! The shape every compression stage works on: the agent-visible text split into lines that keep
//! their original line numbers, and the pieces a stage returns (kept lines, counted folds,
//! summaries). Rendering pieces is the only way output is built, so no stage can invent a line.
//! This is the floor of the compression layers: formatters and the engine build on it, and it
//! imports nothing above it.

pub mod facts;
pub mod label;
pub mod reference;

/// One output, ANSI already stripped, as lines numbered like the stored original.
pub struct Doc<'a> {
    pub label: &'a str,
    pub lines: Vec<&'a str>,
    pub ends_with_newline: bool,
}

impl<'a> Doc<'a> {
    pub fn new(label: &'a str, text: &'a str) -> Doc<'a> {
        let ends_with_newline = text.ends_with('\n');
        let body = text.strip_suffix('\n').unwrap_or(text);
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            // Sized exactly: on a huge output the index is a sixth of what it holds.
            let mut lines =
                Vec::with_capacity(memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1);
            lines.extend(body.split('\n'));
            lines
        };
        Doc {
            label,
            lines,
            ends_with_newline,
        }
    }
}

/// A piece of what the agent sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Line `n` (0-based) of the input, verbatim.
    Keep(usize),
    /// Lines `a..b` (0-based, never empty) of the input, verbatim: a run of [`Piece::Keep`] in
    /// one piece, so a long output the generic stages mostly keep costs no piece per line.
    KeepRange(std::ops::Range<usize>),
    /// Lines left out: their 0-based indices (ascending) and what kind they were, e.g.
    /// "passing tests". Rendered as a marker naming the exact expand command.
    Fold { lines: Vec<usize>, what: String },
    /// A line whose every number was counted from the input by the stage that made it.
    Summary(String),
    /// A replacement for line `n` that loses no information (JSON compaction, padding).
    Rewrite(usize, String),
    /// Lines of one template, or of a few interleaved ones, left out: their 0-based indices and
    /// each template with how many of the lines it stands for, varying fields shown by their
    /// ranges. Rendered as a marker naming the exact expand command.
    Like {
        lines: Vec<usize>,
        templates: Vec<Template>,
    },
    /// Lines that repeat an earlier block of the same output: `earlier` is that block's first
    /// 0-based line, and the lines at the offsets in `except` differ from it and are shown,
    /// verbatim, after the marker. Lossless: the agent can rebuild the block from what it sees.
    Same {
        lines: std::ops::Range<usize>,
        earlier: usize,
        except: Vec<usize>,
    },
    /// Lines that share a template, each rebuilt from the template and its row of values: the
    /// lossless fold for what is never stored. `template` is `None` when an earlier table gave
    /// it under `tag`; `tag` is `None` when no other table uses it.
    Table {
        lines: std::ops::Range<usize>,
        template: Option<String>,
        tag: Option<usize>,
        /// The first values of the field the template shows as `{n}`, which counts up by a
        /// fixed step and is left out of the rows: `"00304, 00305, …"`.
        counter: Option<String>,
        rows: Vec<String>,
    },
}

/// One template of a [`Piece::Like`] marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// The template, or `None` when an earlier marker gave it under the same tag.
    pub text: Option<String>,
    /// How many of the marker's lines it stands for.
    pub count: usize,
    /// The number the output's markers call it by, when more than one marker uses it.
    pub tag: Option<usize>,
}

impl Template {
    pub fn new(text: String, count: usize) -> Template {
        Template {
            text: Some(text),
            count,
            tag: None,
        }
    }

    /// `"T"`, `#2 "T"` where it is first given under a tag, `#2` where it was given before.
    fn render(&self) -> String {
        match (&self.text, self.tag) {
            (Some(text), None) => format!("\"{text}\""),
            (Some(text), Some(tag)) => format!("#{tag} \"{text}\""),
            (None, Some(tag)) => format!("#{tag}"),
            (None, None) => String::new(),
        }
    }
}

impl Piece {
    pub fn fold_range(first: usize, last: usize, what: &str) -> Piece {
        Piece::Fold {
            lines: (first..=last).collect(),
            what: what.to_string(),
        }
    }

    /// The lines the piece shows verbatim, in their place: a kept line or a kept run.
    pub fn kept(&self) -> Option<std::ops::Range<usize>> {
        match self {
            Piece::Keep(n) => Some(*n..*n + 1),
            Piece::KeepRange(lines) => Some(lines.clone()),
            _ => None,
        }
    }
}

/// Whether `pieces` show each of `line_count` lines verbatim, in order, and nothing else: they
/// render the text as it is.
pub fn shows_every_line(pieces: &[Piece], line_count: usize) -> bool {
    let mut next = 0;
    for piece in pieces {
        match piece.kept() {
            Some(lines) if lines.start == next => next = lines.end,
            _ => return false,
        }
    }
    next == line_count
}

/// Every line of a `line_count`-line text kept, as one piece.
pub fn all_kept(line_count: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    keep_lines(&mut pieces, 0..line_count);
    pieces
}

/// Appends lines `lines` to `pieces` as kept, joined to a kept run or line just before them.
pub fn keep_lines(pieces: &mut Vec<Piece>, lines: std::ops::Range<usize>) {
    if lines.is_empty() {
        return;
    }
    let joined = match pieces.last() {
        Some(last) => last.kept().filter(|before| before.end == lines.start),
        None => None,
    };
    match joined {
        Some(before) => {
            if let Some(last) = pieces.last_mut() {
                *last = Piece::KeepRange(before.start..lines.end);
            }
        }
        None if lines.len() == 1 => pieces.push(Piece::Keep(lines.start)),
        None => pieces.push(Piece::KeepRange(lines)),
    }
}

/// The marker for a fold: the count, the kind, and the command that restores exactly those lines.
pub fn marker(hash: &str, lines: &[usize], what: &str) -> String {
    let (Some(&first), Some(&last)) = (lines.first(), lines.last()) else {
        return String::new();
    };
    let count = lines.len();
    let noun = if count == 1 { "line" } else { "lines" };
    let contiguous = last - first + 1 == count;
    if contiguous {
        format!(
            "[… {count} {what} {noun} · sqz expand {}]",
            reference::lines_target(hash, first + 1, last + 1)
        )
    } else {
        format!("[… {count} {what} {noun} · sqz expand {hash}]")
    }
}

/// The marker for lines of one template, or of a few interleaved ones: the count, each template
/// (with its share of the lines when there are several) and the expand command. A template
/// that several markers use is tagged `#N` where first given, and named by its tag after.
pub fn like_marker(hash: &str, lines: &[usize], templates: &[Template]) -> String {
    let (Some(&first), Some(&last)) = (lines.first(), lines.last()) else {
        return String::new();
    };
    let target = if last - first + 1 == lines.len() {
        reference::lines_target(hash, first + 1, last + 1)
    } else {
        hash.to_string()
    };
    let like = match templates {
        [one] => format!("like {}", one.render()),
        several => {
            let each: Vec<String> = several
                .iter()
                .map(|t| format!("{} ({})", t.render(), t.count))
                .collect();
            format!("of {} kinds: {}", several.len(), each.join(", "))
        }
    };
    format!("[… {} lines {like} · sqz expand {target}]", lines.len())
}

/// The marker for a repeated block (SPEC §4.1), 1-based line numbers of the original. The
/// changed lines follow it, one per line. It names no expand range: the agent rebuilds the
/// block from the earlier copy it sees, and the header's `sqz expand HASH` gives it all.
pub fn same_marker(lines: &std::ops::Range<usize>, earlier: usize, except: &[usize]) -> String {
    let count = lines.len();
    let mut out = format!(
        "[same {count} lines as lines {}–{} above",
        earlier + 1,
        earlier + count
    );
    if !except.is_empty() {
        let at: Vec<String> = except.iter().map(|k| (k + 1).to_string()).collect();
        let noun = if except.len() == 1 { "line" } else { "lines" };
        out.push_str(&format!(", except: {noun} {} below", at.join(", ")));
    }
    out.push(']');
    out
}

/// The line before a value table's rows: `[N lines "T", each row below fills its {}:]`, with
/// `#K` before the template where a later table uses it too, and `#K` alone after that.
pub fn table_marker(piece: &Piece) -> String {
    let Piece::Table {
        lines,
        template,
        tag,
        counter,
        ..
    } = piece
    else {
        return String::new();
    };
    let counting = match counter {
        Some(first) => format!(", n = {first};"),
        None => ",".to_string(),
    };
    let named = match (template, tag) {
        (Some(t), None) => format!("\"{t}\""),
        (Some(t), Some(k)) => format!("#{k} \"{t}\""),
        (None, Some(k)) => format!("#{k}"),
        (None, None) => String::new(),
    };
    format!(
        "[{} lines {named}{counting} each row below fills its {{}}:]",
        lines.len()
    )
}

/// Builds the agent-visible text from pieces.
pub fn render(doc: &Doc, pieces: &[Piece], hash: &str) -> String {
    let kept: usize = pieces
        .iter()
        .map(|p| match p.kept() {
            Some(lines) => doc.lines[lines].iter().map(|l| l.len() + 1).sum(),
            None => 64,
        })
        .sum();
    let mut out = String::with_capacity(kept);
    for piece in pieces {
        match piece {
            Piece::Keep(n) => out.push_str(doc.lines[*n]),
            Piece::KeepRange(lines) => {
                for (k, line) in doc.lines[lines.clone()].iter().enumerate() {
                    if k > 0 {
                        out.push('\n');
                    }
                    out.push_str(line);
                }
            }
            Piece::Fold { lines, what } => out.push_str(&marker(hash, lines, what)),
            Piece::Like { lines, templates } => out.push_str(&like_marker(hash, lines, templates)),
            Piece::Same {
                lines,
                earlier,
                except,
            } => {
                out.push_str(&same_marker(lines, *earlier, except));
                for k in except {
                    out.push('\n');
                    out.push_str(doc.lines[lines.start + k]);
                }
            }
            Piece::Table { rows, .. } => {
                out.push_str(&table_marker(piece));
                for row in rows {
                    out.push('\n');
                    out.push_str(row);
                }
            }
            Piece::Summary(s) | Piece::Rewrite(_, s) => out.push_str(s),
        }
        out.push('\n');
    }
    if !doc.ends_with_newline && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// Takes the `protected` lines out of every fold and shows them verbatim in place; what is left
/// of a fold stays folded where it is still at least two lines.
pub fn unfold(pieces: Vec<Piece>, protected: impl Fn(usize) -> bool) -> Vec<Piece> {
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let (lines, what) = match piece {
            Piece::Fold { lines, what } => (lines, what),
            // A template's ranges would no longer be exact once lines leave it.
            Piece::Like { lines, .. } => (lines, "similar".to_string()),
            Piece::Same { lines, .. } | Piece::Table { lines, .. }
                if lines.clone().any(&protected) =>
            {
                out.extend(lines.map(Piece::Keep));
                continue;
            }
            other => {
                out.push(other);
                continue;
            }
        };
        let mut rest: Vec<usize> = Vec::new();
        let flush = |rest: &mut Vec<usize>, out: &mut Vec<Piece>| match rest.len() {
            0 => {}
            1 => out.push(Piece::Keep(rest[0])),
            _ => out.push(Piece::Fold {
                lines: std::mem::take(rest),
                what: what.clone(),
            }),
        };
        for n in lines {
            if protected(n) {
                flush(&mut rest, &mut out);
                rest.clear();
                out.push(Piece::Keep(n));
            } else {
                rest.push(n);
            }
        }
        flush(&mut rest, &mut out);
    }
    out
}

/// Every input line that a stage must not lose is either kept or rewritten without loss.
pub fn keeps_all(pieces: &[Piece], must_keep: impl Fn(usize) -> bool, line_count: usize) -> bool {
    let shown = shown_lines(pieces, line_count);
    (0..line_count).all(|n| shown[n] || !must_keep(n))
}

/// Which input lines the pieces show verbatim or rewritten without loss.
fn shown_lines(pieces: &[Piece], line_count: usize) -> Vec<bool> {
    let mut shown = vec![false; line_count];
    for piece in pieces {
        let lines = match piece {
            Piece::Rewrite(n, _) => *n..*n + 1,
            other => other.kept().unwrap_or_default(),
        };
        let end = lines.end.min(line_count);
        shown[lines.start.min(end)..end].fill(true);
    }
    shown
}

/// Like [`keeps_all`], but a line that must stay may be left out when what it says stands
/// whole in a line that is shown: vitest lists each failure's message under its test
/// (`→ expected 3 to be 5`) and again in the failure's own block (`AssertionError: expected 3
/// to be 5`). What it says is the line without its indent and leading bullet, and it must be
/// long enough to be a statement rather than a word.
pub fn keeps_all_said(doc: &Doc, pieces: &[Piece], must_keep: impl Fn(usize) -> bool) -> bool {
    let shown = shown_lines(pieces, doc.lines.len());
    let missing: Vec<usize> = (0..doc.lines.len())
        .filter(|&n| !shown[n] && must_keep(n))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let said: Vec<&str> = (0..doc.lines.len())
        .filter(|&n| shown[n])
        .map(|n| doc.lines[n])
        .collect();
    missing.iter().all(|&n| {
        let core = what_it_says(doc.lines[n]);
        core.len() >= 12 && said.iter().any(|l| l.contains(core))
    })
}

/// A line without its indent and the bullet before its first word (`→ `, `× `, `- `).
pub fn what_it_says(line: &str) -> &str {
    line.trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fact_said_again_elsewhere_may_be_left_out() {
        let text = "   × Cart > merges quantities 8ms\n     → expected 3 to be 5 // Object.is equality\n FAIL  cart.test.ts > Cart > merges quantities\nAssertionError: expected 3 to be 5 // Object.is equality\n";
        let doc = Doc::new("npx vitest run", text);
        let fact = |n: usize| crate::doc::facts::is_fact(doc.lines[n]);
        let folded = vec![Piece::fold_range(0, 1, "x"), Piece::Keep(2), Piece::Keep(3)];
        assert!(keeps_all_said(&doc, &folded, fact));
        // Without the restatement the fact must stay.
        let hidden = vec![Piece::fold_range(0, 1, "x"), Piece::Keep(2)];
        assert!(!keeps_all_said(&doc, &hidden, fact));
    }

    #[test]
    fn markers_name_ranges() {
        assert_eq!(
            marker("abc", &[2, 3, 4], "similar"),
            "[… 3 similar lines · sqz expand abc:L3-5]"
        );
        assert_eq!(
            marker("abc", &[2, 4], "passing test"),
            "[… 2 passing test lines · sqz expand abc]"
        );
    }

    #[test]
    fn unfold_shows_protected_lines_in_place() {
        let pieces = vec![Piece::Keep(0), Piece::fold_range(1, 6, "x")];
        let out = unfold(pieces, |n| n == 3 || n == 6);
        assert_eq!(
            out,
            vec![
                Piece::Keep(0),
                Piece::fold_range(1, 2, "x"),
                Piece::Keep(3),
                Piece::fold_range(4, 5, "x"),
                Piece::Keep(6)
            ]
        );
    }

    #[test]
    fn kept_lines_join_into_one_piece_that_renders_as_each_line_kept() {
        let doc = Doc::new("x", "a\nb\nc\nd\n");
        let mut pieces = Vec::new();
        keep_lines(&mut pieces, 0..1);
        keep_lines(&mut pieces, 1..3);
        keep_lines(&mut pieces, 3..3);
        assert_eq!(pieces, vec![Piece::KeepRange(0..3)]);
        pieces.push(Piece::Summary("s".into()));
        keep_lines(&mut pieces, 3..4);
        assert_eq!(pieces[2], Piece::Keep(3));
        assert_eq!(render(&doc, &pieces, "h"), "a\nb\nc\ns\nd\n");
        assert!(keeps_all(&pieces, |_| true, 4));
        assert!(!keeps_all(&pieces[..1], |n| n == 3, 4));
    }

    #[test]
    fn pieces_that_show_every_line_in_place_render_the_text_as_it_is() {
        for text in ["a\nb\nc\n", "a\nb\nc", "\n", "a\n\n"] {
            let doc = Doc::new("x", text);
            let n = doc.lines.len();
            let mut pieces = vec![Piece::Keep(0)];
            keep_lines(&mut pieces, 1..n);
            assert!(shows_every_line(&pieces, n), "{text:?}");
            assert_eq!(render(&doc, &pieces, "h"), text);
        }
        let doc = Doc::new("x", "a\nb\nc\n");
        assert!(!shows_every_line(&[Piece::KeepRange(0..2)], 3));
        assert!(!shows_every_line(&[Piece::Keep(1), Piece::Keep(0)], 2));
        let summary = [Piece::KeepRange(0..3), Piece::Summary("s".into())];
        assert!(!shows_every_line(&summary, doc.lines.len()));
    }

    #[test]
    fn render_keeps_final_newline_state() {
        let doc = Doc::new("x", "a\nb\nc");
        assert_eq!(render(&doc, &[Piece::Keep(0), Piece::Keep(2)], "h"), "a\nc");
        let doc = Doc::new("x", "a\nb\n");
        assert_eq!(render(&doc, &[Piece::Keep(1)], "h"), "b\n");
        assert_eq!(Doc::new("x", "").lines.len(), 0);
    }
}
