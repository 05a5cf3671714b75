//! Line-level deltas (SPEC §5): a re-read after a small edit is sent as `§delta:BASE§` and the
//! changed lines with one line of context each side, instead of the whole text. A delta is only
//! ever built when applying it to the base reproduces the new text exactly; `apply` checks that.

use std::collections::HashMap;

/// Edits beyond this many lines are not a small change: the text is sent whole.
const MAX_EDIT_LINES: usize = 200;
/// SimHash bits within which another fresh read is tried as a delta base.
pub const NEAR_DISTANCE: u32 = 12;
/// Bases tried for one delta: the smallest delta of these is sent.
pub const MAX_BASES: usize = 4;
/// Said after a shown line that has no line break, as unified diffs do.
pub const NO_NEWLINE: &str = "\\ No newline at end of file";

use crate::doc::reference::{delta_token, is_delta_head, opens_delta};

fn skip_line(n: usize) -> String {
    format!(" @@ skip {n} unchanged lines @@")
}

/// `N` of a ` @@ skip N unchanged lines @@` line.
fn parse_skip(line: &str) -> Option<usize> {
    line.strip_prefix(" @@ skip ")?
        .strip_suffix(" unchanged lines @@")?
        .parse()
        .ok()
}

/// A 64-bit SimHash over the text's lines: texts that share most lines have hashes a few bits
/// apart, so near-duplicates of a new read can be found without comparing whole bodies. Digits
/// do not count: a re-run whose lines differ only in timings, thread ids or counts is near.
pub fn simhash(text: &str) -> u64 {
    let mut weights = [0i32; 64];
    let mut any = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        any = true;
        let h = line_hash(line.as_bytes());
        for (bit, w) in weights.iter_mut().enumerate() {
            if h >> bit & 1 == 1 {
                *w += 1;
            } else {
                *w -= 1;
            }
        }
    }
    if !any {
        return 0;
    }
    weights.iter().enumerate().fold(
        0u64,
        |acc, (bit, w)| if *w > 0 { acc | 1 << bit } else { acc },
    )
}

/// FNV-1a over the line without its digits, then a splitmix finaliser so that nearby lines
/// spread over all 64 bits.
fn line_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes.iter().filter(|b| !b.is_ascii_digit()) {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d049bb133111eb);
    h ^ (h >> 31)
}

pub fn simhash_distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Same(usize),
    Removed(usize),
    Added(usize),
}

/// Whether a delta from `base` to `new` can pay at all: most of `new`'s lines must be lines of
/// `base`. A linear check, so a search through candidate bases spares the diff of texts that
/// share little.
pub fn worth_trying(base: &str, new: &str) -> bool {
    let shared: std::collections::HashSet<&str> = base.split_inclusive('\n').collect();
    let lines = new.split_inclusive('\n');
    let (total, kept) = lines.fold((0usize, 0usize), |(t, k), l| {
        (t + 1, k + usize::from(shared.contains(l)))
    });
    kept * 2 >= total
}

/// The delta that turns `base` into `new`, headed by `§delta:BASE_HASH§`. `None` when the texts
/// are identical, differ in more than a few hundred lines, or hold a line that would read as a
/// delta's own syntax.
pub fn encode(base_hash: &str, base: &str, new: &str) -> Option<String> {
    if base == new {
        return None;
    }
    let old_lines: Vec<&str> = base.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    if old_lines
        .iter()
        .chain(&new_lines)
        .any(|l| looks_like_syntax(l.strip_suffix('\n').unwrap_or(l)))
    {
        return None;
    }
    let ops = diff(&old_lines, &new_lines)?;
    let mut out = delta_token(base_hash);
    out.push('\n');
    let shown = |out: &mut String, sign: char, line: &str| {
        out.push(sign);
        match line.strip_suffix('\n') {
            Some(body) => {
                out.push_str(body);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push('\n');
                out.push_str(NO_NEWLINE);
                out.push('\n');
            }
        }
    };
    let mut i = 0;
    while i < ops.len() {
        match ops[i] {
            Op::Removed(o) => {
                shown(&mut out, '-', old_lines[o]);
                i += 1;
            }
            Op::Added(n) => {
                shown(&mut out, '+', new_lines[n]);
                i += 1;
            }
            Op::Same(_) => {
                let start = i;
                while i < ops.len() && matches!(ops[i], Op::Same(_)) {
                    i += 1;
                }
                let run: Vec<usize> = ops[start..i]
                    .iter()
                    .map(|op| match op {
                        Op::Same(o) => *o,
                        _ => unreachable!("run holds only unchanged lines"),
                    })
                    .collect();
                let lead = usize::from(start > 0);
                let trail = usize::from(i < ops.len());
                if run.len() <= lead + trail {
                    for o in &run {
                        shown(&mut out, ' ', old_lines[*o]);
                    }
                    continue;
                }
                if lead == 1 {
                    shown(&mut out, ' ', old_lines[run[0]]);
                }
                out.push_str(&skip_line(run.len() - lead - trail));
                out.push('\n');
                if trail == 1 {
                    shown(&mut out, ' ', old_lines[run[run.len() - 1]]);
                }
            }
        }
    }
    debug_assert_eq!(apply(base, &out).as_deref(), Ok(new));
    Some(out)
}

fn looks_like_syntax(line: &str) -> bool {
    line == NO_NEWLINE || line.starts_with("@@ skip ") || opens_delta(line)
}

/// Applies a delta (with its `§delta:…§` first line) to `base`. Errors name the first line that
/// does not fit the base.
pub fn apply(base: &str, delta: &str) -> Result<String, String> {
    let mut lines = delta.split('\n');
    let head = lines.next().unwrap_or("");
    if !is_delta_head(head) {
        return Err("the first line is not §delta:HASH§".into());
    }
    let body: Vec<&str> = lines.collect();
    // A delta ends with a line break, which leaves one empty piece after the last line.
    let body = match body.split_last() {
        Some((&"", rest)) => rest,
        _ => &body[..],
    };
    let old: Vec<&str> = base.split_inclusive('\n').collect();
    let mut at = 0;
    let mut out = String::with_capacity(base.len());
    let mut k = 0;
    while k < body.len() {
        let line = body[k];
        let no_newline = body.get(k + 1) == Some(&NO_NEWLINE);
        let text = line.get(1..).unwrap_or("");
        let expected_base = |at: usize| -> Result<&str, String> {
            let Some(base_line) = old.get(at) else {
                return Err(format!("delta line {} runs past the base", k + 2));
            };
            let bare = base_line.strip_suffix('\n');
            if bare.unwrap_or(base_line) != text || bare.is_none() != no_newline {
                return Err(format!(
                    "delta line {} does not match base line {}",
                    k + 2,
                    at + 1
                ));
            }
            Ok(base_line)
        };
        if let Some(n) = parse_skip(line) {
            let Some(run) = old.get(at..at + n) else {
                return Err(format!("delta line {} skips past the base", k + 2));
            };
            run.iter().for_each(|l| out.push_str(l));
            at += n;
        } else if line.starts_with(' ') {
            out.push_str(expected_base(at)?);
            at += 1;
        } else if line.starts_with('-') {
            expected_base(at)?;
            at += 1;
        } else if line.starts_with('+') {
            out.push_str(text);
            if !no_newline {
                out.push('\n');
            }
        } else {
            return Err(format!("delta line {} is not a delta line", k + 2));
        }
        k += if no_newline { 2 } else { 1 };
    }
    if at != old.len() {
        return Err(format!(
            "the delta covers {at} of the base's {} lines",
            old.len()
        ));
    }
    Ok(out)
}

/// Myers' shortest edit script between two line lists, after trimming the common ends.
/// `None` when more than `MAX_EDIT_LINES` lines change.
fn diff<'a>(old: &[&'a str], new: &[&'a str]) -> Option<Vec<Op>> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut intern = |lines: &[&'a str]| -> Vec<u32> {
        lines
            .iter()
            .map(|l| {
                let next = ids.len() as u32;
                *ids.entry(*l).or_insert(next)
            })
            .collect()
    };
    let a = intern(&old[prefix..old.len() - suffix]);
    let b = intern(&new[prefix..new.len() - suffix]);
    let middle = myers(&a, &b)?;
    let mut ops: Vec<Op> = (0..prefix).map(Op::Same).collect();
    ops.extend(middle.into_iter().map(|op| match op {
        Op::Same(i) => Op::Same(prefix + i),
        Op::Removed(i) => Op::Removed(prefix + i),
        Op::Added(j) => Op::Added(prefix + j),
    }));
    ops.extend((old.len() - suffix..old.len()).map(Op::Same));
    Some(ops)
}

/// Myers' O(ND) algorithm, keeping each round's frontier to walk the path back.
fn myers(a: &[u32], b: &[u32]) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    if max == 0 {
        return Some(Vec::new());
    }
    let limit = max.min(MAX_EDIT_LINES);
    let offset = limit as isize + 1;
    let mut v = vec![0isize; 2 * limit + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'rounds: for d in 0..=limit as isize {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let idx = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'rounds;
            }
            k += 2;
        }
    }
    let d_end = found?;
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=d_end).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let idx = (k + offset) as usize;
        let prev_k = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = v[(prev_k + offset) as usize];
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            ops.push(Op::Same(x as usize));
        }
        if x == prev_x {
            y -= 1;
            ops.push(Op::Added(y as usize));
        } else {
            x -= 1;
            ops.push(Op::Removed(x as usize));
        }
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        ops.push(Op::Same(x as usize));
    }
    ops.reverse();
    Some(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn one_changed_line_shows_one_line_of_context_each_side() {
        let base = numbered(10);
        let new = base.replace("line 5\n", "line five\n");
        let delta = encode("abc", &base, &new).unwrap();
        assert_eq!(
            delta,
            "§delta:abc§\n @@ skip 3 unchanged lines @@\n line 4\n-line 5\n+line five\n line 6\n @@ skip 4 unchanged lines @@\n"
        );
        assert_eq!(apply(&base, &delta).unwrap(), new);
    }

    #[test]
    fn missing_final_newline_round_trips() {
        let base = "a\nb\nc";
        let new = "a\nb\nc\nd";
        let delta = encode("h", base, new).unwrap();
        assert!(delta.contains(NO_NEWLINE), "{delta}");
        assert_eq!(apply(base, &delta).unwrap(), new);
        let delta = encode("h", new, base).unwrap();
        assert_eq!(apply(new, &delta).unwrap(), base);
    }

    #[test]
    fn insertions_deletions_and_edges() {
        let base = numbered(30);
        let cases = [
            format!("new first\n{base}"),
            format!("{base}new last\n"),
            base.replacen("line 1\n", "", 1),
            base.replace("line 12\n", "").replace("line 20\n", "x\ny\n"),
            String::new(),
        ];
        for new in cases {
            let delta = encode("h", &base, &new).unwrap();
            assert_eq!(apply(&base, &delta).unwrap(), new, "{delta}");
        }
    }

    #[test]
    fn refuses_lines_that_look_like_delta_syntax_and_big_rewrites() {
        let base = numbered(5);
        assert!(encode("h", &base, &format!("{base}@@ skip 2 unchanged lines @@\n")).is_none());
        let other: String = (1..=400).map(|i| format!("other {i}\n")).collect();
        assert!(encode("h", &numbered(400), &other).is_none());
        assert!(encode("h", &base, &base).is_none());
    }

    #[test]
    fn apply_rejects_a_delta_for_another_base() {
        let base = numbered(10);
        let delta = encode("h", &base, &base.replace("line 5\n", "x\n")).unwrap();
        assert!(apply(&numbered(9), &delta).is_err());
        assert!(apply(&base.replace("line 4\n", "y\n"), &delta).is_err());
    }

    #[test]
    fn simhash_is_close_for_small_edits_and_far_for_other_text() {
        let base = numbered(200);
        let edited = base.replace("line 50\n", "line fifty\n");
        let other: String = (1..=200).map(|i| format!("something else {i}\n")).collect();
        assert!(simhash_distance(simhash(&base), simhash(&edited)) <= 6);
        assert!(simhash_distance(simhash(&base), simhash(&other)) > 12);
    }
}
