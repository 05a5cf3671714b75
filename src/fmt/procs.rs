//! `ps` listings whose header ends in the command column (`ps aux`, `ps -ef`, `ps -eo …,args`):
//! the header and every anomalous process stay verbatim — zombie, stopped, uninterruptible or
//! dead (`STAT` Z, T, t, D, X), busy (`%CPU` or `C` ≥ 5), big (`%MEM` ≥ 5, or a resident size
//! ten times the listing's median and over 100 MB) — and in each run of at least [`MIN_RUN`]
//! ordinary processes the detail columns fold under a marker while every row's PID and full
//! command line stay: the command line, arguments and all, is what names a process. Headers of
//! another shape are refused.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// A run folds only when it has at least this many rows.
const MIN_RUN: usize = 4;

pub fn matches(label: &Label) -> bool {
    label.program == "ps"
}

struct Proc<'a> {
    pid: &'a str,
    /// The detail cells, in header order (every column but PID and the command).
    detail: Vec<&'a str>,
    cpu: f64,
    mem: f64,
    rss: u64,
    stat: &'a str,
    command: &'a str,
}

/// The column layout of a header: names before the command column, and where PID is.
struct Layout<'a> {
    names: Vec<&'a str>,
    pid: usize,
}

fn layout(header: &str) -> Option<Layout<'_>> {
    let words: Vec<&str> = header.split_whitespace().collect();
    let (last, names) = words.split_last()?;
    if !matches!(*last, "COMMAND" | "CMD" | "ARGS") || names.len() < 2 {
        return None;
    }
    let pid = names.iter().position(|w| *w == "PID")?;
    Some(Layout {
        names: names.to_vec(),
        pid,
    })
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let header = *doc.lines.first()?;
    let layout = layout(header)?;
    let last = doc.lines.len() - 1;
    let procs: Vec<Option<Proc>> = doc
        .lines
        .iter()
        .enumerate()
        .map(|(n, l)| {
            // The header, a failure report, and a last line cut mid-way are no rows.
            let cut = n == last && !doc.ends_with_newline;
            (n > 0 && !cut && !reports_failure(l))
                .then(|| parse(l, &layout))
                .flatten()
        })
        .collect();
    let mut rss: Vec<u64> = procs.iter().flatten().map(|p| p.rss).collect();
    if rss.len() < MIN_RUN {
        return None;
    }
    rss.sort_unstable();
    let median = rss[rss.len() / 2];
    let ordinary: Vec<bool> = procs
        .iter()
        .map(|p| {
            p.as_ref().is_some_and(|p| {
                let big = p.mem >= 5.0 || (p.rss >= 100_000 && p.rss >= median.saturating_mul(10));
                !big && p.cpu < 5.0 && !p.stat.contains(['Z', 'T', 't', 'D', 'X'])
            })
        })
        .collect();

    let mut pieces = Vec::new();
    let mut folded_any = false;
    let mut n = 0;
    while n < doc.lines.len() {
        let end = (n..doc.lines.len())
            .find(|&m| !ordinary[m])
            .unwrap_or(doc.lines.len());
        if end - n >= MIN_RUN {
            let run: Vec<&Proc> = procs[n..end].iter().flatten().collect();
            pieces.push(Piece::fold_range(n, end - 1, "ordinary process"));
            pieces.push(Piece::Summary(run_heading(&layout, &run)));
            pieces.extend(command_lines(&run).into_iter().map(Piece::Summary));
            folded_any = true;
            n = end;
        } else if end > n {
            pieces.extend((n..end).map(Piece::Keep));
            n = end;
        } else {
            pieces.push(Piece::Keep(n));
            n += 1;
        }
    }
    folded_any.then_some(pieces)
}

/// What the folded rows share: `PID COMMAND of those rows (USER root, TTY ?)`, naming each
/// detail column whose value is the same in every row.
fn run_heading(layout: &Layout, run: &[&Proc]) -> String {
    let same: Vec<String> = (0..layout.names.len() - 1)
        .filter(|&c| run.iter().all(|p| p.detail[c] == run[0].detail[c]))
        .map(|c| format!("{} {}", detail_name(layout, c), run[0].detail[c]))
        .collect();
    if same.is_empty() {
        "PID COMMAND of those rows:".to_string()
    } else {
        format!("PID COMMAND of those rows ({}):", same.join(", "))
    }
}

/// The header name of detail cell `c` (PID is not among the detail cells).
fn detail_name<'a>(layout: &Layout<'a>, c: usize) -> &'a str {
    layout.names[if c < layout.pid { c } else { c + 1 }]
}

/// One line per row, `PID COMMAND`; rows in a row with the same command share a line,
/// `PID,PID COMMAND`, and rows whose pid and one number of the command both count up by one
/// share one too, `3-18 python3 -m http.server {8101…8116}`: every command line can be read
/// back exactly. Row order is kept.
fn command_lines(run: &[&Proc]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < run.len() {
        let same = (i + 1..run.len())
            .take_while(|&j| run[j].command == run[i].command)
            .count();
        if same > 0 {
            let pids: Vec<&str> = run[i..=i + same].iter().map(|p| p.pid).collect();
            out.push(format!("{} {}", pids.join(","), run[i].command));
            i += same + 1;
            continue;
        }
        let counting = counting_run(run, i);
        if counting >= 3 {
            let (first, last) = (run[i], run[i + counting - 1]);
            let at = differing_word(first.command, run[i + 1].command).unwrap_or(0);
            let words: Vec<&str> = first.command.split(' ').collect();
            let last_value = last.command.split(' ').nth(at).unwrap_or("");
            let mut shown: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            shown[at] = format!("{{{}…{last_value}}}", words[at]);
            out.push(format!("{}-{} {}", first.pid, last.pid, shown.join(" ")));
            i += counting;
            continue;
        }
        out.push(format!("{} {}", run[i].pid, run[i].command));
        i += 1;
    }
    out
}

/// How many rows from `i` on have pids counting up by one and commands that differ from the
/// previous row in one word only, a number one higher.
fn counting_run(run: &[&Proc], i: usize) -> usize {
    let mut len = 1;
    let mut at = None;
    while i + len < run.len() {
        let (a, b) = (run[i + len - 1], run[i + len]);
        let step = |x: &str, y: &str| {
            matches!((x.parse::<u64>(), y.parse::<u64>()), (Ok(x), Ok(y)) if y == x + 1)
                && !x.starts_with('0')
        };
        let Some(word) = differing_word(a.command, b.command) else {
            break;
        };
        let (x, y) = (
            a.command.split(' ').nth(word).unwrap_or(""),
            b.command.split(' ').nth(word).unwrap_or(""),
        );
        if !step(a.pid, b.pid) || !step(x, y) || at.is_some_and(|w| w != word) {
            break;
        }
        at = Some(word);
        len += 1;
    }
    len
}

/// The one word (split on single spaces) in which two commands differ, if exactly one does.
fn differing_word(a: &str, b: &str) -> Option<usize> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    if a.len() != b.len() {
        return None;
    }
    let mut diff = (0..a.len()).filter(|&k| a[k] != b[k]);
    let first = diff.next()?;
    diff.next().is_none().then_some(first)
}

fn parse<'a>(line: &'a str, layout: &Layout) -> Option<Proc<'a>> {
    let mut rest = line;
    let mut cells = Vec::with_capacity(layout.names.len());
    for _ in 0..layout.names.len() {
        rest = rest.trim_start();
        let end = rest.find(' ')?;
        cells.push(&rest[..end]);
        rest = &rest[end..];
    }
    let command = rest.trim_start();
    if command.is_empty() {
        return None;
    }
    let pid = cells[layout.pid];
    if !pid.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let at = |name: &str| layout.names.iter().position(|w| *w == name);
    // A column that is there must read as its kind; one that is not counts as unremarkable.
    let number =
        |name: &str| -> Option<f64> { at(name).map_or(Some(0.0), |i| cells[i].parse().ok()) };
    let cpu = number("%CPU")?.max(number("C")?);
    let mem = number("%MEM")?;
    let rss = at("RSS").map_or(Some(0), |i| cells[i].parse().ok())?;
    let stat = at("STAT").or(at("S")).map_or("", |i| cells[i]);
    let mut detail = cells;
    detail.remove(layout.pid);
    Some(Proc {
        pid,
        detail,
        cpu,
        mem,
        rss,
        stat,
        command,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANY: &str = include_str!("../../fixtures/ps-aux-many/input.txt");

    fn rendered(text: &str) -> String {
        let doc = Doc::new("ps aux", text);
        let pieces = format(&doc).expect("formats");
        crate::fmt::render_checked(&doc, &pieces, "abc")
    }

    fn line_with(text: &str, needle: &str) -> String {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap()
            .to_string()
    }

    #[test]
    fn claims_bsd_ps_only() {
        assert!(matches(&Label::parse("ps aux")));
        assert!(matches(&Label::parse("ps auxww")));
        assert!(matches(&Label::parse("ps -ef")));
        assert!(!matches(&Label::parse("pstree")));
        let no_command = "UID PID PPID C STIME TTY TIME\nroot 1 0 0 14:18 ? 00:00:00\n";
        assert!(format(&Doc::new("ps -ef", no_command)).is_none());
    }

    #[test]
    fn keeps_anomalous_processes_and_names_the_rest() {
        let out = rendered(MANY);
        for needle in [
            "USER         PID %CPU %MEM",
            "python3 hog.py",
            "sh -c while :; do :; done",
            "[sleep] <defunct>",
            " T    15:24 ",
        ] {
            let line = line_with(MANY, needle);
            assert!(out.contains(&format!("{line}\n")), "lost {line}\n{out}");
        }
        // Every row's pid and full command line stays, folded rows included (the counting
        // lines are checked in tests/identifiers.rs, which spells them out).
        for row in MANY.lines().skip(1) {
            let words: Vec<&str> = row.split_whitespace().collect();
            let command = words[10..].join(" ");
            let counted = ["http.server", "api.js", "sleep 36"]
                .iter()
                .any(|c| command.contains(c));
            assert!(
                counted || out.contains(&format!("{} {command}", words[1])) || out.contains(row),
                "{row}\n{out}"
            );
        }
        assert!(
            out.contains("PID COMMAND of those rows (USER root, TTY ?, START 15:24, TIME 0:00):\n")
        );
        assert!(out.len() * 2 < MANY.len());
    }

    #[test]
    fn truncated_output_keeps_the_cut_row() {
        let cut = &MANY[..MANY.find("sleep 3615").unwrap() + 7];
        let out = rendered(cut);
        assert!(out.ends_with("0:00 sleep 3"), "{out}");
    }

    #[test]
    fn interleaved_and_unknown_lines_stay() {
        let mut text = String::new();
        for (i, line) in MANY.lines().enumerate() {
            text.push_str(line);
            text.push('\n');
            if i == 10 {
                text.push_str("ps: warning: bad ps syntax, perhaps a bogus '-'?\n");
            }
            if i == 30 {
                text.push_str("root  new-column-layout  sleep 5\n");
            }
        }
        let out = rendered(&text);
        assert!(out.contains("ps: warning: bad ps syntax"));
        assert!(out.contains("root  new-column-layout  sleep 5\n"));
    }

    #[test]
    fn another_locale_is_refused() {
        // A localised header (or a decimal comma) does not fit: no guess.
        let other = MANY.replacen("COMMAND", "COMMANDE", 1);
        assert!(format(&Doc::new("ps aux", &other)).is_none());
        let comma = MANY.replace(" 0.0 ", " 0,0 ");
        let doc = Doc::new("ps aux", &comma);
        if let Some(pieces) = format(&doc) {
            let out = crate::doc::render(&doc, &pieces, "abc");
            assert!(out.contains("0,0"));
        }
    }
}
