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
/// `PID,PID COMMAND`. Row order is kept.
fn command_lines(run: &[&Proc]) -> Vec<String> {
    let mut out: Vec<(Vec<&str>, &str)> = Vec::new();
    for p in run {
        match out.last_mut() {
            Some((pids, command)) if *command == p.command => pids.push(p.pid),
            _ => out.push((vec![p.pid], p.command)),
        }
    }
    out.into_iter()
        .map(|(pids, command)| format!("{} {command}", pids.join(",")))
        .collect()
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
        // Every row's pid and full command line stays, folded rows included.
        for row in MANY.lines().skip(1) {
            let words: Vec<&str> = row.split_whitespace().collect();
            let command = words[10..].join(" ");
            assert!(out.contains(&command), "lost {command}\n{out}");
            assert!(
                out.contains(&format!("{} {command}", words[1])) || out.contains(row),
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
