//! The generic pipeline for output no formatter claims: folds runs of identical or
//! near-identical lines (only numbers, hex ids or timestamps varying) into counted markers.
//! It never folds a line that reports a fact. (JSON is compacted before it, in `json.rs`.)
//! Table padding is left alone: rows are facts an agent matches verbatim, and cl100k spends
//! one token on a run of spaces whatever its length.

use crate::doc::{Doc, Piece, Template};
use crate::tokens;
use std::collections::HashMap;

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

/// Interleaved templates (a request line, then a health check, then a query) fold together
/// when at most this many take turns.
const MAX_KINDS: usize = 5;
/// A run of interleaved templates needs this many lines to fold.
const MIN_MIXED_RUN: usize = 6;

/// Lossy folding of repeated lines; `facts[n]` says line `n` must stay. Returns `None` when
/// nothing would fold.
pub fn fold_runs(doc: &Doc, facts: &[bool], hash: &str) -> Option<Vec<Piece>> {
    // Shapes are compared by a hash, so a huge output costs no second copy of itself. A line's
    // fields are found again where a run needs them, rather than kept for every line.
    let mut spans = Vec::new();
    let shapes: Vec<u64> = doc
        .lines
        .iter()
        .map(|l| {
            fields_into(l, &mut spans);
            shape_hash(l, &spans)
        })
        .collect();
    let foldable = |n: usize| !facts[n] && !doc.lines[n].trim().is_empty();
    // How often each shape occurs among lines that may fold: only a common shape may take
    // turns with others in a run; a one-off line stays and ends the run.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    for n in (0..doc.lines.len()).filter(|&n| foldable(n)) {
        *seen.entry(shapes[n]).or_default() += 1;
    }
    let view = Lines {
        doc,
        shapes: &shapes,
    };
    let mut out = Emitted {
        pieces: Vec::new(),
        shown: std::collections::HashSet::new(),
    };
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
            folded_any |= emit_run(&view, i, &keep, Fold::Progress, hash, &mut out);
            i += progress_run;
            continue;
        }
        let mut j = i + 1;
        if foldable(i) {
            while j < doc.lines.len() && !facts[j] && shapes[j] == shapes[i] {
                j += 1;
            }
        }
        let mixed = if foldable(i) {
            mixed_run(doc, &shapes, &seen, i, foldable)
        } else {
            0
        };
        if mixed >= MIN_MIXED_RUN && mixed > j - i {
            let end = i + mixed;
            // The first line of each template shows it by example; in each template's lines,
            // those off its usual values stay too.
            let mut keep = vec![false; mixed];
            let mut kinds: Vec<u64> = Vec::new();
            for n in i..end {
                if !kinds.contains(&shapes[n]) {
                    kinds.push(shapes[n]);
                    keep[n - i] = !out.shown.contains(&shapes[n]);
                }
            }
            for kind in kinds {
                let group: Vec<usize> = (i..end).filter(|&n| shapes[n] == kind).collect();
                let off = outliers(group.len(), |k| doc.lines[group[k]]);
                for (k, off) in off.into_iter().enumerate() {
                    keep[group[k] - i] |= off;
                }
            }
            folded_any |= emit_run(&view, i, &keep, Fold::Template, hash, &mut out);
            i = end;
            continue;
        }
        if j - i < MIN_RUN {
            out.keep(i..j, &shapes);
        } else {
            let run = &doc.lines[i..j];
            let identical = run.iter().all(|l| *l == run[0]);
            let mut keep = if identical {
                vec![false; run.len()]
            } else {
                outliers(run.len(), |k| run[k])
            };
            // The first line shows the template by example, unless a line of it was shown
            // before the run broke; the marker shows its ranges. A run of one line repeated
            // always shows that line.
            keep[0] |= identical || !out.shown.contains(&shapes[i]);
            let how = if identical {
                Fold::Identical
            } else {
                Fold::Template
            };
            folded_any |= emit_run(&view, i, &keep, how, hash, &mut out);
        }
        i = j;
    }
    let mut pieces = out.pieces;
    tag_templates(&mut pieces, &shapes);
    folded_any.then_some(pieces)
}

/// What [`fold_runs`] has put out so far, and the shapes of the lines it showed: a template
/// already shown by example needs no second example after an error line breaks its run.
struct Emitted {
    pieces: Vec<Piece>,
    shown: std::collections::HashSet<u64>,
}

impl Emitted {
    /// Shows `lines` verbatim.
    fn keep(&mut self, lines: std::ops::Range<usize>, shapes: &[u64]) {
        self.shown.extend(shapes[lines.clone()].iter().copied());
        crate::doc::keep_lines(&mut self.pieces, lines);
    }
}

/// A template that more than one marker uses is given once, tagged `#N`, and named by its tag
/// in the markers after: a log broken up by error lines would otherwise repeat it each time.
fn tag_templates(pieces: &mut [Piece], shapes: &[u64]) {
    // A marker's templates are in the order its lines' shapes first appear (see `templates`).
    let kinds_of = |lines: &[usize]| {
        let mut kinds: Vec<u64> = Vec::new();
        for &n in lines {
            if !kinds.contains(&shapes[n]) {
                kinds.push(shapes[n]);
            }
        }
        kinds
    };
    let mut uses: HashMap<u64, usize> = HashMap::new();
    for piece in pieces.iter() {
        if let Piece::Like { lines, .. } = piece {
            for kind in kinds_of(lines) {
                *uses.entry(kind).or_default() += 1;
            }
        }
    }
    let mut tags: HashMap<u64, usize> = HashMap::new();
    for piece in pieces.iter_mut() {
        let Piece::Like { lines, templates } = piece else {
            continue;
        };
        for (kind, template) in kinds_of(lines).into_iter().zip(templates.iter_mut()) {
            if uses[&kind] < 2 {
                continue;
            }
            let next = tags.len() + 1;
            let tag = *tags.entry(kind).or_insert(next);
            if tag != next {
                template.text = None;
            }
            template.tag = Some(tag);
        }
    }
}

/// The length of the run from line `i` whose lines take turns among at most [`MAX_KINDS`]
/// common shapes, all of the same log level (an INFO run never takes in a DEBUG line).
fn mixed_run(
    doc: &Doc,
    shapes: &[u64],
    seen: &HashMap<u64, usize>,
    i: usize,
    foldable: impl Fn(usize) -> bool,
) -> usize {
    let common = |n: usize| seen.get(&shapes[n]).is_some_and(|&c| c >= MIN_RUN);
    if !common(i) {
        return 0;
    }
    let level0 = level(doc.lines[i]);
    let mut kinds: Vec<u64> = Vec::with_capacity(MAX_KINDS);
    let mut j = i;
    while j < doc.lines.len() && foldable(j) && common(j) && level(doc.lines[j]) == level0 {
        if !kinds.contains(&shapes[j]) {
            if kinds.len() == MAX_KINDS {
                break;
            }
            kinds.push(shapes[j]);
        }
        j += 1;
    }
    if kinds.len() < 2 {
        0
    } else {
        j - i
    }
}

/// The log level a line names among its first words (`INFO`, `[notice]`, `debug:`), if any.
fn level(line: &str) -> Option<&'static str> {
    const LEVELS: [&str; 16] = [
        "ALERT", "CRIT", "CRITICAL", "DEBUG", "EMERG", "ERR", "ERROR", "FATAL", "FINE", "INFO",
        "LOG", "NOTICE", "SEVERE", "TRACE", "WARN", "WARNING",
    ];
    line.split_whitespace().take(6).find_map(|word| {
        let bare = word.trim_matches(|c: char| !c.is_ascii_alphabetic());
        if bare.len() < 3 || bare.len() > 8 {
            return None;
        }
        let upper = bare.to_ascii_uppercase();
        LEVELS
            .binary_search(&upper.as_str())
            .ok()
            .map(|k| LEVELS[k])
    })
}

/// The lines of an output with the shape fold_runs found for each.
struct Lines<'a> {
    doc: &'a Doc<'a>,
    shapes: &'a [u64],
}

/// How a stretch of a run is shown when it folds.
#[derive(Clone, Copy)]
enum Fold {
    Progress,
    Identical,
    /// Lines of one template, or of a few taking turns: the marker gives each template and
    /// each field's range.
    Template,
}

/// Kept lines of a run stay; each stretch between them folds if that pays.
fn emit_run(
    view: &Lines,
    start: usize,
    keep: &[bool],
    how: Fold,
    hash: &str,
    out: &mut Emitted,
) -> bool {
    let doc = view.doc;
    let mut folded = false;
    let mut k = 0;
    while k < keep.len() {
        if keep[k] {
            out.keep(start + k..start + k + 1, view.shapes);
            k += 1;
            continue;
        }
        let end = (k..keep.len()).find(|&m| keep[m]).unwrap_or(keep.len());
        let lines: Vec<usize> = (start + k..start + end).collect();
        let piece = match how {
            Fold::Template => match templates(view, &lines) {
                Some(templates) => Piece::Like { lines, templates },
                None => Piece::Fold {
                    lines,
                    what: "similar".into(),
                },
            },
            Fold::Identical => Piece::Fold {
                lines,
                what: "identical".into(),
            },
            Fold::Progress => Piece::Fold {
                lines,
                what: "progress".into(),
            },
        };
        // A template costs about a line: a short stretch pays only with the plain marker.
        let piece = match piece {
            Piece::Like { lines, .. } if !worth_folding(doc, &piece, hash) => Piece::Fold {
                lines,
                what: "similar".into(),
            },
            other => other,
        };
        if worth_folding(doc, &piece, hash) {
            out.pieces.push(piece);
            folded = true;
        } else {
            out.keep(start + k..start + end, view.shapes);
        }
        k = end;
    }
    folded
}

/// The template of each shape among `lines`, in order of first appearance, with how many of
/// the lines it stands for. `None` if some shape's lines do not split into the same fields.
fn templates(view: &Lines, lines: &[usize]) -> Option<Vec<Template>> {
    let mut kinds: Vec<(u64, Vec<usize>)> = Vec::new();
    for &n in lines {
        match kinds.iter_mut().find(|(shape, _)| *shape == view.shapes[n]) {
            Some((_, group)) => group.push(n),
            None => kinds.push((view.shapes[n], vec![n])),
        }
    }
    kinds
        .into_iter()
        .map(|(_, group)| {
            let text = template(view.doc, &group)?;
            Some(Template::new(text, group.len()))
        })
        .collect()
}

/// Lines of a same-shape run whose whole number at some position differs from what most lines
/// agree on — `status=404` among `status=200`, `exit 1` among `exit 0`: the anomalies an agent
/// looks for. Positions where values vary freely (counters, sizes) mark only their rare values;
/// timestamps, durations and versions mark none. `line(k)` is the run's line `k` of `count`.
///
/// Each line's fields are found again in each pass rather than kept: a first pass finds the
/// positions that hold only whole numbers and the value most of a position's lines may agree
/// on, and only a position where most do is counted value by value.
fn outliers<'a>(count: usize, line: impl Fn(usize) -> &'a str) -> Vec<bool> {
    let mut keep = vec![false; count];
    let mut spans = Vec::new();
    // Per position: whether every value is a whole number, and the majority vote's candidate.
    let mut width = usize::MAX;
    let mut positions: Vec<(bool, &str, usize)> = Vec::new();
    for k in 0..count {
        let l = line(k);
        fields_into(l, &mut spans);
        width = width.min(spans.len());
        positions.truncate(width);
        for (p, span) in spans.iter().take(width).enumerate() {
            let value = &l[span.clone()];
            if p == positions.len() {
                positions.push((true, value, 0));
            }
            let (whole, candidate, votes) = &mut positions[p];
            // Timestamps, versions and addresses are not codes: a second that ticks over during
            // a run is no anomaly. Only whole numbers (a status, an exit code, a count) are.
            *whole &= value.bytes().all(|b| b.is_ascii_digit());
            if *votes == 0 {
                *candidate = value;
            }
            *votes = if *candidate == value {
                *votes + 1
            } else {
                *votes - 1
            };
        }
    }
    let width = width.min(positions.len());
    // A value most lines agree on, if any, is the vote's candidate: count it.
    let mut agreed: Vec<(usize, &str, usize)> = (0..width)
        .filter(|&p| positions[p].0)
        .map(|p| (p, positions[p].1, 0))
        .collect();
    if agreed.is_empty() {
        return keep;
    }
    for k in 0..count {
        let l = line(k);
        fields_into(l, &mut spans);
        for (p, candidate, most) in agreed.iter_mut() {
            *most += usize::from(&l[spans[*p].clone()] == *candidate);
        }
    }
    agreed.retain(|&(_, _, most)| most * 2 > count);
    if agreed.is_empty() {
        return keep;
    }
    let mut counts: Vec<HashMap<&str, usize>> = vec![HashMap::new(); agreed.len()];
    for k in 0..count {
        let l = line(k);
        fields_into(l, &mut spans);
        for ((p, _, _), counts) in agreed.iter().zip(&mut counts) {
            *counts.entry(&l[spans[*p].clone()]).or_default() += 1;
        }
    }
    for (k, keep) in keep.iter_mut().enumerate() {
        let l = line(k);
        fields_into(l, &mut spans);
        for ((p, _, most), counts) in agreed.iter().zip(&counts) {
            // A field with few values (a status, an exit code) keeps every line off its usual
            // value; a freer field keeps only its rare values.
            let categorical = counts.len() <= (count / 8).max(3);
            let seen = counts[&l[spans[*p].clone()]];
            *keep |= (categorical && seen < *most) || seen * 5 <= count;
        }
    }
    keep
}

/// The template of lines that share one shape: the literal text of the first, each varying
/// field shown as `{a|b}` (up to three values, in order of appearance), `{min…max}` (numbers)
/// or `{first…last}`; a field that does not vary is shown as it is. `None` if the lines do not
/// split into the same fields.
fn template(doc: &Doc, lines: &[usize]) -> Option<String> {
    let first = doc.lines[*lines.first()?];
    let spans = fields(first);
    let mut ranges: Vec<FieldRange> = Vec::with_capacity(spans.len());
    let mut line_spans = Vec::new();
    for &n in lines {
        let line = doc.lines[n];
        fields_into(line, &mut line_spans);
        if line_spans.len() != spans.len() {
            return None;
        }
        for (p, span) in line_spans.iter().enumerate() {
            let value = &line[span.clone()];
            match ranges.get_mut(p) {
                Some(range) => range.add(value),
                None => ranges.push(FieldRange::new(value)),
            }
        }
    }
    let mut out = String::with_capacity(first.len() + 16);
    let mut at = 0;
    for (span, range) in spans.iter().zip(&ranges) {
        out.push_str(&first[at..span.start]);
        at = span.end;
        out.push_str(&range.render());
    }
    out.push_str(&first[at..]);
    Some(out)
}

/// One field's values in a template's lines, taken a line at a time, and how they are shown:
/// `{a|b}` for up to three values (in order of appearance), `{min…max}` for numbers,
/// `{first…last}` otherwise, and the value itself when it does not vary.
struct FieldRange<'a> {
    /// The first four distinct values, in order of appearance.
    distinct: Vec<&'a str>,
    first: &'a str,
    last: &'a str,
    /// While every value reads as a number: the lowest and the highest (the first of equals).
    numbers: Option<[(f64, &'a str); 2]>,
    /// How many leading bytes every value shares with the first.
    shared: usize,
}

impl<'a> FieldRange<'a> {
    fn new(value: &'a str) -> FieldRange<'a> {
        FieldRange {
            distinct: vec![value],
            first: value,
            last: value,
            numbers: as_number(value).map(|x| [(x, value), (x, value)]),
            shared: value.len(),
        }
    }

    fn add(&mut self, value: &'a str) {
        if self.distinct.len() < 4 && !self.distinct.contains(&value) {
            self.distinct.push(value);
        }
        self.last = value;
        self.numbers = match (self.numbers, as_number(value)) {
            (Some([low, high]), Some(x)) => Some([
                if x < low.0 { (x, value) } else { low },
                if x > high.0 { (x, value) } else { high },
            ]),
            _ => None,
        };
        let shared = self
            .first
            .bytes()
            .zip(value.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        self.shared = self.shared.min(shared);
    }

    fn render(&self) -> String {
        match (self.distinct.as_slice(), self.numbers) {
            ([one], _) => one.to_string(),
            (few @ ([_, _] | [_, _, _]), _) => format!("{{{}}}", few.join("|")),
            (_, Some([(_, low), (_, high)])) => format!("{{{low}…{high}}}"),
            (_, None) => {
                // Timestamps of one minute share their head: `09:05:{43,774…44,010}`, cut
                // back to just after a separator.
                let head = self.first.as_bytes()[..self.shared]
                    .iter()
                    .rposition(|b| matches!(b, b':' | b'.' | b',' | b'-' | b'/'))
                    .map_or(0, |p| p + 1);
                format!(
                    "{}{{{}…{}}}",
                    &self.first[..head],
                    &self.first[head..],
                    &self.last[head..]
                )
            }
        }
    }
}

/// A field that reads as one number: digits with at most one decimal point.
fn as_number(v: &str) -> Option<f64> {
    let plain = v.bytes().all(|b| b.is_ascii_digit() || b == b'.') && v.matches('.').count() <= 1;
    if plain {
        v.parse().ok()
    } else {
        None
    }
}

/// A fold pays only when the lines it hides cost more than its marker.
fn worth_folding(doc: &Doc, piece: &Piece, hash: &str) -> bool {
    let (lines, marker) = match piece {
        Piece::Fold { lines, what } => (lines, crate::doc::marker(hash, lines, what)),
        Piece::Like { lines, templates } => {
            (lines, crate::doc::like_marker(hash, lines, templates))
        }
        _ => return false,
    };
    if lines.len() < 2 {
        return false;
    }
    let hidden: usize = lines.iter().map(|&n| tokens::count(doc.lines[n]) + 1).sum();
    hidden > tokens::count(&marker) + 2
}

/// Rule characters that cost more than a token apiece: box drawing (`─`, `━`, `═`), the
/// horizontal line extension vitest draws its separators with (`⎯`), and long dashes.
fn is_rule_char(c: char) -> bool {
    matches!(
        c,
        '\u{2500}'..='\u{257f}' | '\u{23af}' | '\u{2014}' | '\u{2015}' | '\u{2e3a}' | '\u{2e3b}'
    )
}

/// A rule drawn with more than this many of one such character is cut to this many.
const RULE_KEPT: usize = 3;

/// `text` with every run of one rule character longer than [`RULE_KEPT`] cut to that length:
/// vitest's `⎯⎯⎯…⎯[3/21]⎯` separators cost some 70 tokens a line and say only `[3/21]`. A
/// fact line keeps its rules, as it keeps every byte. Only for what is stored, since the
/// rule's length is lost.
pub fn shorten_rules(text: &str) -> std::borrow::Cow<'_, str> {
    // Every rule character is three bytes of UTF-8, led by 0xE2.
    let has_rule = |t: &str| {
        t.as_bytes()
            .windows(3 * (RULE_KEPT + 1))
            .any(|w| w[0] == 0xe2 && w[..3] == w[3..6] && w[..3] == w[6..9] && w[..3] == w[9..12])
    };
    if !has_rule(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if !has_rule(line) || crate::doc::facts::is_fact(line.trim_end_matches('\n')) {
            out.push_str(line);
            continue;
        }
        let mut run: Option<(char, usize)> = None;
        for c in line.chars() {
            if let Some((r, n)) = run.filter(|(r, _)| *r == c) {
                if n < RULE_KEPT {
                    out.push(c);
                }
                run = Some((r, n + 1));
                continue;
            }
            run = is_rule_char(c).then_some((c, 1));
            out.push(c);
        }
    }
    if out.len() == text.len() {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(out)
}

/// The hash of [`shape`] of `line`, from its fields, without building the shape.
fn shape_hash(line: &str, spans: &[Span]) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut at = 0;
    for span in spans {
        hasher.write(&line.as_bytes()[at..span.start]);
        hasher.write_u8(0xff); // never a byte of UTF-8 text: the field stand-in
        at = span.end;
    }
    hasher.write(&line.as_bytes()[at..]);
    hasher.finish()
}

/// A field's byte range in its line.
type Span = std::ops::Range<usize>;

/// A line with every varying field (see [`fields`]) replaced by `#`, so lines that differ only
/// in counters, durations, timestamps or ids share a shape.
pub fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for span in fields(line) {
        out.push_str(&line[at..span.start]);
        out.push('#');
        at = span.end;
    }
    out.push_str(&line[at..]);
    out
}

/// The byte ranges of a line's varying fields: numbers, hex ids (7 or more hex digits with a
/// digit among them), and the timestamps, dates, versions and UUIDs they make when joined by
/// one of `:.,-/` (`09:05:43,797`, `2026-12-03`, `1.2.3`, `3f9a…-…`). Plain words made of hex
/// letters (`added`, `face`) are not fields.
pub fn fields(line: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    fields_into(line, &mut out);
    out
}

/// [`fields`] into `out`, which is cleared first: a loop over many lines reuses one buffer.
fn fields_into(line: &str, out: &mut Vec<Span>) {
    out.clear();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_hexdigit() {
            i += 1;
            continue;
        }
        let start = i;
        let end = hex_run_end(bytes, i);
        let run = &bytes[start..end];
        let is_field = run.iter().all(u8::is_ascii_digit)
            || (run.len() >= 7 && run.iter().any(u8::is_ascii_digit));
        if !is_field {
            // Hex letters of a word (`added`, `face`); digits later in the word still count.
            i = end;
            continue;
        }
        // Join a following `SEP field` while the next run is itself a field or a UUID group.
        let mut stop = end;
        while stop + 1 < bytes.len() && matches!(bytes[stop], b':' | b'.' | b',' | b'-' | b'/') {
            let next_end = hex_run_end(bytes, stop + 1);
            let next = &bytes[stop + 1..next_end];
            let joins = !next.is_empty()
                && (next.iter().all(u8::is_ascii_digit)
                    || (next.len() >= 7 && next.iter().any(u8::is_ascii_digit))
                    || (bytes[stop] == b'-' && matches!(next.len(), 4 | 12)));
            if !joins {
                break;
            }
            stop = next_end;
        }
        out.push(start..stop);
        i = stop;
    }
}

/// Where a run of hex digits starting at `i` ends.
fn hex_run_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
        i += 1;
    }
    i
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
        let pieces = fold_runs(&doc, &facts_of(&doc), "h").expect("folds");
        let out = render(&doc, &pieces, "h");
        assert!(out.starts_with("[0] heartbeat"));
        assert!(
            out.contains("[… 29 lines like \"[{1…29}] heartbeat from worker pool, all queues drained\" · sqz expand h:L2-30]"),
            "{out}"
        );
        assert_eq!(out.matches("error: disk full").count(), 6);
    }

    #[test]
    fn long_rules_are_cut_and_everything_else_stays() {
        let sep = "⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[3/21]⎯\n ⎯⎯⎯⎯⎯⎯ Failed Tests 21 ⎯⎯⎯⎯⎯⎯⎯\n";
        // The heading says a test failed: a fact, kept byte for byte.
        assert_eq!(
            shorten_rules(sep),
            "⎯⎯⎯[3/21]⎯\n ⎯⎯⎯⎯⎯⎯ Failed Tests 21 ⎯⎯⎯⎯⎯⎯⎯\n"
        );
        let bar = "████████░░░░ 60% ───\n";
        assert!(matches!(shorten_rules(bar), std::borrow::Cow::Borrowed(_)));
        let line = sep.lines().next().unwrap();
        assert!(tokens::count(&shorten_rules(line)) * 4 < tokens::count(line));
    }

    #[test]
    fn progress_verbs_are_sorted_for_binary_search() {
        assert!(PROGRESS_VERBS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn mixed_progress_blocks_fold_but_not_their_neighbours() {
        let text = "The following NEW packages will be installed:\n  cowsay figlet\nSelecting previously unselected package cowsay.\nPreparing to unpack .../cowsay.deb ...\nUnpacking cowsay (3.03) ...\nSelecting previously unselected package figlet.\nPreparing to unpack .../figlet.deb ...\nUnpacking figlet (2.2.5) ...\nSetting up figlet (2.2.5) ...\nE: Sub-process /usr/bin/dpkg returned an error code (1)\n";
        let doc = Doc::new("apt-get install cowsay figlet", text);
        let out = render(&doc, &fold_runs(&doc, &facts_of(&doc), "h").unwrap(), "h");
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
        let out = render(&doc, &fold_runs(&doc, &facts_of(&doc), "h").unwrap(), "h");
        assert!(out.contains("path=/orders/17 status=404"), "{out}");
        assert!(
            out.contains("[… 16 lines like #1 \"10:00:{01…16} method=GET path=/orders/{1…16} status=200 took={0…6}ms\" · sqz expand h:L2-17]"),
            "{out}"
        );
        // The template given once is named by its tag after the break.
        assert!(
            out.ends_with("status=404 took=3ms\n[… 22 lines like #1 · sqz expand h:L19-40]\n"),
            "{out}"
        );
    }
}
