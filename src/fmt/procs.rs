//! `ps aux` (BSD-style `ps` with the `USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND`
//! header): the header and every anomalous process stay verbatim — zombie, stopped,
//! uninterruptible or dead (`STAT` Z, T, t, D, X), busy (`%CPU` ≥ 5), big (`%MEM` ≥ 5, or a
//! resident size ten times the listing's median and over 100 MB) — and runs of at least
//! [`MIN_RUN`] ordinary processes become one summary naming each program with its pids,
//! counted from the input, with a marker that restores the rows. Other `ps` formats are refused.

use crate::doc::facts::reports_failure;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// A run folds only when it has at least this many rows.
const MIN_RUN: usize = 8;

pub fn matches(label: &Label) -> bool {
    label.program == "ps"
        && label
            .args
            .iter()
            .any(|a| !a.starts_with('-') && a.contains('u') && a.contains('x'))
}

struct Proc<'a> {
    pid: &'a str,
    cpu: f64,
    mem: f64,
    rss: u64,
    stat: &'a str,
    program: &'a str,
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let header = *doc.lines.first()?;
    let words: Vec<&str> = header.split_whitespace().collect();
    let expected = [
        "USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND",
    ];
    if words != expected {
        return None;
    }
    let last = doc.lines.len() - 1;
    let procs: Vec<Option<Proc>> = doc
        .lines
        .iter()
        .enumerate()
        .map(|(n, l)| {
            // The header, a failure report, and a last line cut mid-way are no rows.
            let cut = n == last && !doc.ends_with_newline;
            (n > 0 && !cut && !reports_failure(l))
                .then(|| parse(l))
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
            // Programs in order of first appearance, each with its pids.
            let mut by_program: Vec<(&str, Vec<&str>)> = Vec::new();
            for p in procs[n..end].iter().flatten() {
                match by_program.iter_mut().find(|(name, _)| *name == p.program) {
                    Some((_, pids)) => pids.push(p.pid),
                    None => by_program.push((p.program, vec![p.pid])),
                }
            }
            let list: Vec<String> = by_program
                .iter()
                .map(|(name, pids)| format!("{name} (pids {})", pids.join(" ")))
                .collect();
            pieces.push(Piece::Summary(format!(
                "{} processes: {}",
                end - n,
                list.join("; ")
            )));
            pieces.push(Piece::fold_range(n, end - 1, "ordinary process"));
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

fn parse(line: &str) -> Option<Proc<'_>> {
    let mut rest = line;
    let mut fields = Vec::with_capacity(10);
    for _ in 0..10 {
        rest = rest.trim_start();
        let end = rest.find(' ')?;
        fields.push(&rest[..end]);
        rest = &rest[end..];
    }
    let command = rest.trim_start();
    let first = command.split(' ').next().filter(|w| !w.is_empty())?;
    let program = if first.starts_with('[') {
        first
    } else {
        first.rsplit('/').next().unwrap_or(first)
    };
    let pid = fields[1];
    if !pid.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(Proc {
        pid,
        cpu: fields[2].parse().ok()?,
        mem: fields[3].parse().ok()?,
        rss: fields[5].parse().ok()?,
        stat: fields[7],
        program,
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
        assert!(!matches(&Label::parse("ps -ef")));
        let ef = "UID PID PPID C STIME TTY TIME CMD\nroot 1 0 0 14:18 ? 00:00:00 bash\n";
        assert!(format(&Doc::new("ps aux", ef)).is_none());
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
        assert!(out.contains("python3 (pids 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)"));
        assert!(out.contains("node (pids 20 21 22 23 24 25 26 27)"));
        // Counts are counted: the summarised runs and the kept rows add up.
        let summarised: usize = out
            .lines()
            .filter_map(|l| {
                l.split_once(" processes: ")
                    .map(|(n, _)| n.parse::<usize>().unwrap())
            })
            .sum();
        let kept = out
            .lines()
            .filter(|l| MANY.lines().any(|m| m == *l))
            .count();
        assert_eq!(summarised + kept, MANY.lines().count());
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
        let other = MANY.replacen("USER", "UTILISATEUR", 1);
        assert!(format(&Doc::new("ps aux", &other)).is_none());
        let comma = MANY.replace(" 0.0 ", " 0,0 ");
        let doc = Doc::new("ps aux", &comma);
        if let Some(pieces) = format(&doc) {
            let out = crate::doc::render(&doc, &pieces, "abc");
            assert!(out.contains("0,0"));
        }
    }
}
