//! Value tables, the lossless fold for what is never stored. A run of lines that differ only
//! in a few of their words (a worker log's `rendered RPT-… for tenant … in …ms` lines) becomes
//! one template with a `{}` per varying word and one row per line giving those words:
//!
//! ```text
//! [23 lines "11:21:12,{} INFO rendered RPT-2026-{} for tenant {}: 6 pages in {}ms", each row below fills its {}:]
//! 282 00304 umbrella 844
//! ```
//!
//! The agent can rebuild every line, byte for byte, from what it sees, so a table may run where
//! nothing is stored to expand from: around a stack trace in a log, or under `--no-cache`. The
//! stack trace itself, facts and indented lines never go into a table.

use crate::doc::{self, Doc, Piece};
use crate::tokens;

/// A run shorter than this stays as it is.
const MIN_ROWS: usize = 4;
/// A longer run becomes several tables (the later ones name a template they share by its tag),
/// so a huge log is split into words a window at a time rather than all at once.
const MAX_ROWS: usize = 1000;
/// A template needs at least this many words that every line shares.
const MIN_SHARED_WORDS: usize = 2;

/// `pieces` with each run of kept, `eligible` lines that shares a template turned into a
/// value table, where that costs fewer tokens. `None` when no table pays.
pub fn tabulate(
    doc: &Doc,
    pieces: &[Piece],
    eligible: impl Fn(usize) -> bool,
) -> Option<Vec<Piece>> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut templates: Vec<String> = Vec::new();
    let mut any = false;
    // The stretch of consecutive kept lines that may go into a table, being collected.
    let mut stretch = 0..0;
    for piece in pieces {
        let Some(lines) = piece.kept() else {
            any |= tables_in(doc, std::mem::take(&mut stretch), &mut templates, &mut out);
            out.push(piece.clone());
            continue;
        };
        for n in lines {
            if !eligible(n) {
                any |= tables_in(doc, std::mem::take(&mut stretch), &mut templates, &mut out);
                doc::keep_lines(&mut out, n..n + 1);
            } else if stretch.is_empty() || stretch.end != n {
                any |= tables_in(
                    doc,
                    std::mem::replace(&mut stretch, n..n + 1),
                    &mut templates,
                    &mut out,
                );
            } else {
                stretch.end += 1;
            }
        }
    }
    any |= tables_in(doc, stretch, &mut templates, &mut out);
    if !any {
        return None;
    }
    name_shared_templates(&mut out);
    Some(out)
}

/// Tags only the templates that more than one table uses, numbered `#1…` in order of first
/// use; the others are given in full with no tag.
fn name_shared_templates(pieces: &mut [Piece]) {
    let mut uses: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for piece in pieces.iter() {
        if let Piece::Table { tag: Some(t), .. } = piece {
            *uses.entry(*t).or_default() += 1;
        }
    }
    let mut renumber: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for piece in pieces.iter_mut() {
        if let Piece::Table { tag, .. } = piece {
            *tag = match *tag {
                Some(t) if uses[&t] > 1 => {
                    let next = renumber.len() + 1;
                    Some(*renumber.entry(t).or_insert(next))
                }
                _ => None,
            };
        }
    }
}

/// Lines `lines`, as tables where they pay and kept lines elsewhere.
fn tables_in(
    doc: &Doc,
    lines: std::ops::Range<usize>,
    templates: &mut Vec<String>,
    out: &mut Vec<Piece>,
) -> bool {
    let mut window = Window {
        doc,
        first: lines.start,
        end: lines.end,
        words: std::collections::VecDeque::new(),
    };
    let mut any = false;
    let mut kept = lines.start;
    let mut i = lines.start;
    while i < lines.end {
        window.advance(i);
        let run = window.run();
        if run >= MIN_ROWS {
            if let Some(table) = Table::build(window.head(run)) {
                let tag = templates.iter().position(|t| *t == table.template);
                let template = table.template.clone();
                let piece = table.into_piece(i, tag.map(|t| t + 1), templates.len() + 1);
                if pays(&template, &piece) {
                    if let Piece::Table {
                        template: Some(t), ..
                    } = &piece
                    {
                        templates.push(t.clone());
                    }
                    doc::keep_lines(out, kept..i);
                    out.push(piece);
                    any = true;
                    i += run;
                    kept = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    doc::keep_lines(out, kept..lines.end);
    any
}

/// The lines of a stretch from `first` on, split into words as far as a run has looked ahead.
struct Window<'a> {
    doc: &'a Doc<'a>,
    first: usize,
    end: usize,
    words: std::collections::VecDeque<Words<'a>>,
}

impl<'a> Window<'a> {
    /// Drops the lines before `first`.
    fn advance(&mut self, first: usize) {
        let gone = (first - self.first).min(self.words.len());
        self.words.drain(..gone);
        self.first = first;
    }

    /// Splits lines up to the one `k` lines after the first; whether the stretch holds it.
    fn load(&mut self, k: usize) -> bool {
        while self.words.len() <= k && self.first + self.words.len() < self.end {
            let line = self.doc.lines[self.first + self.words.len()];
            self.words.push_back(Words::split(line));
        }
        k < self.words.len()
    }

    /// The first `count` lines, split (loaded by [`Window::run`]).
    fn head(&mut self, count: usize) -> &[Words<'a>] {
        &self.words.make_contiguous()[..count]
    }

    /// How many lines from the first (at most [`MAX_ROWS`]) share the word layout of the
    /// first and, together, vary in no more words than they share.
    fn run(&mut self) -> usize {
        if !self.load(0) {
            return 0;
        }
        let count = self.words[0].words.len();
        if count < MIN_SHARED_WORDS + 1 {
            return 1;
        }
        let mut varying = vec![false; count];
        let mut len = 1;
        while len < MAX_ROWS && self.load(len) {
            let (head, line) = (&self.words[0], &self.words[len]);
            if line.gaps != head.gaps {
                break;
            }
            let mut next = varying.clone();
            for (p, w) in line.words.iter().enumerate() {
                if *w != head.words[p] {
                    next[p] = true;
                }
            }
            let changing = next.iter().filter(|v| **v).count();
            if changing * 2 > count || count - changing < MIN_SHARED_WORDS {
                break;
            }
            varying = next;
            len += 1;
        }
        len
    }
}

/// A line as its words and the whitespace around them: `gaps[k]` comes before `words[k]`, and
/// the last gap ends the line.
struct Words<'a> {
    words: Vec<&'a str>,
    gaps: Vec<&'a str>,
}

impl<'a> Words<'a> {
    fn split(line: &'a str) -> Words<'a> {
        let mut words = Vec::new();
        let mut gaps = Vec::new();
        let bytes = line.as_bytes();
        let mut at = 0;
        while at <= bytes.len() {
            let gap_end = (at..bytes.len())
                .find(|&k| !matches!(bytes[k], b' ' | b'\t'))
                .unwrap_or(bytes.len());
            gaps.push(&line[at..gap_end]);
            if gap_end == bytes.len() {
                break;
            }
            let word_end = (gap_end..bytes.len())
                .find(|&k| matches!(bytes[k], b' ' | b'\t'))
                .unwrap_or(bytes.len());
            words.push(&line[gap_end..word_end]);
            at = word_end;
        }
        Words { words, gaps }
    }
}

/// A run's template and rows, before rendering.
struct Table {
    template: String,
    rows: Vec<String>,
    /// The first values of the one field that counts up by a fixed step from line to line,
    /// shown once as `{n}` instead of in every row.
    counter: Option<String>,
}

impl Table {
    /// `None` if the template would hold a literal `{}` an agent could not tell apart.
    fn build(run: &[Words]) -> Option<Table> {
        let head = &run[0];
        let mut template = String::new();
        let mut columns: Vec<Vec<&str>> = Vec::new();
        let mut counter = None;
        for (p, word) in head.words.iter().enumerate() {
            template.push_str(head.gaps[p]);
            let values: Vec<&str> = run.iter().map(|l| l.words[p]).collect();
            if values.iter().all(|v| v == word) {
                if word.contains('{') {
                    return None;
                }
                template.push_str(word);
                continue;
            }
            let (front, back) = shared_ends(&values);
            let literal_front = &word[..front];
            let literal_back = &word[word.len() - back..];
            if literal_front.contains('{') || literal_back.contains('{') {
                return None;
            }
            template.push_str(literal_front);
            let cells: Vec<&str> = values.iter().map(|v| &v[front..v.len() - back]).collect();
            if counter.is_none() && counts_up(&cells) {
                template.push_str("{n}");
                counter = Some(format!("{}, {}, …", cells[0], cells[1]));
            } else {
                template.push_str("{}");
                columns.push(cells);
            }
            template.push_str(literal_back);
        }
        template.push_str(head.gaps[head.words.len()]);
        let rows = (0..run.len())
            .map(|r| {
                let cells: Vec<&str> = columns.iter().map(|c| c[r]).collect();
                cells.join(" ")
            })
            .collect();
        if columns.is_empty() {
            return None;
        }
        Some(Table {
            template,
            rows,
            counter,
        })
    }

    /// The piece for lines `first..`, naming an earlier table's template by its tag, or giving
    /// it under the tag `next` (used only if a later table shares it).
    fn into_piece(self, first: usize, earlier: Option<usize>, next: usize) -> Piece {
        let lines = first..first + self.rows.len();
        match earlier {
            Some(tag) => Piece::Table {
                lines,
                template: None,
                tag: Some(tag),
                counter: self.counter,
                rows: self.rows,
            },
            None => Piece::Table {
                lines,
                template: Some(self.template),
                tag: Some(next),
                counter: self.counter,
                rows: self.rows,
            },
        }
    }
}

/// Whole numbers of one width that go up by the same step from each line to the next: a
/// counter, a sequence number, an id handed out in order.
fn counts_up(cells: &[&str]) -> bool {
    let width = cells[0].len();
    if width > 18
        || cells
            .iter()
            .any(|c| c.len() != width || !c.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    let numbers: Vec<u64> = cells.iter().filter_map(|c| c.parse().ok()).collect();
    let step = numbers[1].wrapping_sub(numbers[0]);
    numbers[1] > numbers[0]
        && numbers
            .windows(2)
            .all(|w| w[1].checked_sub(w[0]) == Some(step))
}

/// How many leading and trailing bytes every value shares, kept off the inside of a run of
/// letters or of digits (`RPT-2026-00304` and `RPT-2026-00305` share `RPT-2026-`, not
/// `RPT-2026-0030`), and left so that no value is empty.
fn shared_ends(values: &[&str]) -> (usize, usize) {
    let first = values[0].as_bytes();
    let mut front = first.len();
    let mut back = first.len();
    for v in &values[1..] {
        let v = v.as_bytes();
        front = front.min(first.iter().zip(v).take_while(|(a, b)| a == b).count());
        back = back.min(
            first
                .iter()
                .rev()
                .zip(v.iter().rev())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    let same_class = |a: u8, b: u8| {
        (a.is_ascii_digit() && b.is_ascii_digit())
            || (a.is_ascii_alphabetic() && b.is_ascii_alphabetic())
    };
    // Back off until the cut falls on a character boundary, between characters of different
    // kinds, in every value.
    let cut_ok = |at_front: bool, len: usize| {
        values.iter().all(|v| {
            let v = v.as_bytes();
            let at = if at_front { len } else { v.len() - len };
            let boundary = at == v.len() || (v[at] as i8) >= -0x40;
            boundary && (at == 0 || at == v.len() || !same_class(v[at - 1], v[at]))
        })
    };
    while front > 0 && !cut_ok(true, front) {
        front -= 1;
    }
    while back > 0 && !cut_ok(false, back) {
        back -= 1;
    }
    let shortest = values.iter().map(|v| v.len()).min().unwrap_or(0);
    if front + back >= shortest {
        return (0, 0);
    }
    (front, back)
}

/// A table pays when it costs fewer tokens than the lines it stands for. Each line is priced
/// as its template's literal text plus its row's words, which is what it is made of, so the
/// lines themselves need not be counted (on a 1 MB log that counting was a fifth of the time).
fn pays(template: &str, piece: &Piece) -> bool {
    let Piece::Table { rows, .. } = piece else {
        return false;
    };
    let literal = tokens::count(&template.replace("{}", " ").replace("{n}", " "));
    let row_tokens: usize = rows.iter().map(|r| tokens::count(r) + 1).sum();
    let hidden = rows.len() * literal + row_tokens;
    let head = crate::doc::table_marker(piece);
    let cost = tokens::count(&head) + row_tokens;
    cost + 2 < hidden
}

/// Where read-back lines go: collected, or compared with the original as they come.
trait Sink {
    /// Takes the next line; `None` stops the reading (a line that differs).
    fn push(&mut self, line: &str) -> Option<()>;
    /// Line `n` (0-based) of what was read back so far.
    fn earlier(&self, n: usize) -> Option<String>;
}

struct Collect(Vec<String>);

impl Sink for Collect {
    fn push(&mut self, line: &str) -> Option<()> {
        self.0.push(line.to_string());
        Some(())
    }

    fn earlier(&self, n: usize) -> Option<String> {
        self.0.get(n).cloned()
    }
}

/// Compares with the original's lines without building the read-back text: a line read back
/// so far equals the original's, so an earlier line is the original's.
struct Check<'a> {
    lines: Vec<&'a str>,
    at: usize,
}

impl Sink for Check<'_> {
    fn push(&mut self, line: &str) -> Option<()> {
        (self.lines.get(self.at) == Some(&line)).then(|| self.at += 1)
    }

    fn earlier(&self, n: usize) -> Option<String> {
        (n < self.at).then(|| self.lines[n].to_string())
    }
}

/// `text` as an agent reads it back: every value table turned into the lines it stands for,
/// and every repeated block (`[same N lines as lines A–B above, except: …]`) into its copy of
/// the earlier lines with the changed ones put in. The check that these stages lose nothing.
/// `None` if a marker does not parse.
pub fn rebuild(text: &str) -> Option<String> {
    let mut out = Collect(Vec::new());
    replay(text, &mut out)?;
    let mut rebuilt = out.0.join("\n");
    if text.ends_with('\n') {
        rebuilt.push('\n');
    }
    Some(rebuilt)
}

/// Whether `served` reads back to exactly `original` (see [`rebuild`]), checked line by line
/// without building the read-back text.
pub fn reads_back(served: &str, original: &str) -> bool {
    if served.ends_with('\n') != original.ends_with('\n') {
        return false;
    }
    let body = original.strip_suffix('\n').unwrap_or(original);
    let mut check = Check {
        lines: body.split('\n').collect(),
        at: 0,
    };
    replay(served, &mut check).is_some() && check.at == check.lines.len()
}

/// Reads `text` back into `out`, line by line.
fn replay(text: &str, out: &mut impl Sink) -> Option<()> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut given: Vec<(usize, &str)> = Vec::new();
    let mut lines = body.split('\n');
    while let Some(line) = lines.next() {
        if let Some(rest) = line
            .strip_prefix("[same ")
            .and_then(|r| r.strip_suffix(']'))
        {
            let (count, rest) = rest.split_once(" lines as lines ")?;
            let count: usize = count.parse().ok()?;
            let (first, rest) = rest.split_once('–')?;
            let first: usize = first.parse::<usize>().ok()?.checked_sub(1)?;
            let except: Vec<usize> = match rest.split_once(", except: ") {
                Some((_, at)) => at
                    .trim_start_matches("lines ")
                    .trim_start_matches("line ")
                    .trim_end_matches(" below")
                    .split(", ")
                    .map(|k| k.parse::<usize>().ok()?.checked_sub(1))
                    .collect::<Option<_>>()?,
                None => Vec::new(),
            };
            for k in 0..count {
                if except.contains(&k) {
                    out.push(lines.next()?)?;
                } else {
                    let copy = out.earlier(first + k)?;
                    out.push(&copy)?;
                }
            }
            continue;
        }
        let Some(rest) = line
            .strip_prefix('[')
            .filter(|h| h.ends_with(" each row below fills its {}:]"))
        else {
            out.push(line)?;
            continue;
        };
        let (count, rest) = rest.split_once(" lines ")?;
        let count: u64 = count.parse().ok()?;
        // `#K "T"` gives template T the tag K, `"T"` gives it untagged, `#K` names it again.
        let tag: Option<usize> = rest
            .strip_prefix('#')
            .and_then(|r| r.split([',', ' ']).next())
            .map(|k| k.parse().ok())
            .unwrap_or(None);
        let template = match (rest.find('"'), rest.rfind('"')) {
            (Some(open), Some(close)) if close > open => {
                let t = &rest[open + 1..close];
                if let Some(k) = tag {
                    given.push((k, t));
                }
                t
            }
            _ => given.iter().find(|(k, _)| Some(*k) == tag)?.1,
        };
        // `n = 00304, 00305, …;`: where the counter starts, its step and its width.
        let counter = match rest.rfind(", n = ") {
            Some(at) => {
                let mut values = rest[at + 6..].split(", ");
                let first = values.next()?;
                let start: u64 = first.parse().ok()?;
                let second: u64 = values.next()?.parse().ok()?;
                Some((start, second.checked_sub(start)?, first.len()))
            }
            None => None,
        };
        for k in 0..count {
            let mut cells = lines.next()?.split(' ');
            let mut parts = template.split('{');
            let mut row = parts.next()?.to_string();
            for part in parts {
                let (field, after) = part.split_once('}')?;
                if field == "n" {
                    let (start, step, width) = counter?;
                    row.push_str(&format!("{:0width$}", start + k * step));
                } else {
                    row.push_str(cells.next()?);
                }
                row.push_str(after);
            }
            out.push(&row)?;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn rebuild(text: &str) -> String {
        super::rebuild(text).expect("tables parse")
    }

    fn lines_of(n: usize) -> String {
        let tenants = ["acme", "umbrella", "stark"];
        (0..n)
            .map(|k| {
                format!(
                    "2026-12-03 11:21:12,{} INFO reports.worker: rendered RPT-2026-{:05} for tenant {}: 6 pages in {}ms\n",
                    280 + k % 3,
                    300 + k,
                    tenants[k % 3],
                    100 + 37 * k
                )
            })
            .collect()
    }

    #[test]
    fn a_run_becomes_a_table_that_rebuilds_byte_for_byte() {
        let text = lines_of(12);
        let doc = Doc::new("tail app.log", &text);
        let keep: Vec<Piece> = (0..doc.lines.len()).map(Piece::Keep).collect();
        let pieces = tabulate(&doc, &keep, |_| true).expect("a table pays");
        let out = render(&doc, &pieces, "h");
        assert!(
            out.starts_with("[12 lines \"2026-12-03 11:21:12,{} INFO reports.worker: rendered RPT-2026-{n} for tenant {}: 6 pages in {}ms\", n = 00300, 00301, …; each row below fills its {}:]\n280 acme 100\n"),
            "{out}"
        );
        assert_eq!(rebuild(&out), text);
        assert!(reads_back(&out, &text));
        assert!(!reads_back(&out, &text.replacen("acme", "acmf", 1)));
        assert!(!reads_back(&out, text.trim_end()));
        assert!(tokens::count(&out) * 3 < tokens::count(&text));
    }

    #[test]
    fn lines_that_may_not_fold_split_the_run_and_a_template_is_named_once() {
        let mut text = lines_of(6);
        text.push_str("Traceback (most recent call last):\n");
        text.push_str(&lines_of(6));
        let doc = Doc::new("tail app.log", &text);
        let keep: Vec<Piece> = (0..doc.lines.len()).map(Piece::Keep).collect();
        let pieces = tabulate(&doc, &keep, |n| n != 6).expect("tables pay");
        let out = render(&doc, &pieces, "h");
        assert!(
            out.contains("\nTraceback (most recent call last):\n[6 lines #1, n = 00300, 00301, …; each row below fills its {}:]\n"),
            "{out}"
        );
        assert_eq!(rebuild(&out), text);
    }

    #[test]
    fn a_run_longer_than_a_table_holds_becomes_tables_that_share_a_template() {
        let text = lines_of(2 * MAX_ROWS + 500);
        let doc = Doc::new("tail app.log", &text);
        let keep = doc::all_kept(doc.lines.len());
        let pieces = tabulate(&doc, &keep, |_| true).expect("tables pay");
        let rows: Vec<usize> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Table { lines, .. } => Some(lines.len()),
                _ => None,
            })
            .collect();
        assert_eq!(rows, [MAX_ROWS, MAX_ROWS, 500]);
        let out = render(&doc, &pieces, "h");
        assert!(
            out.contains("\n[1000 lines #1, n = 01300, 01301, …; each row below fills its {}:]\n"),
            "{out}"
        );
        assert_eq!(rebuild(&out), text);
        assert!(reads_back(&out, &text));
    }

    #[test]
    fn values_keep_their_words_whole_and_never_go_empty() {
        assert_eq!(shared_ends(&["RPT-2026-00304", "RPT-2026-00305"]), (9, 0));
        assert_eq!(shared_ends(&["844ms", "90ms"]), (0, 2));
        assert_eq!(shared_ends(&["a1", "a12"]), (1, 0));
        assert_eq!(shared_ends(&["x", "xy"]), (0, 0));
    }

    #[test]
    fn short_or_unlike_runs_stay() {
        let text = "alpha beta gamma 1\nalpha beta gamma 2\nalpha beta gamma 3\none two\n";
        let doc = Doc::new("x", text);
        let keep: Vec<Piece> = (0..doc.lines.len()).map(Piece::Keep).collect();
        assert!(tabulate(&doc, &keep, |_| true).is_none());
    }
}
