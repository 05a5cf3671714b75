//! Back-references for repeated blocks (SPEC §4.1): within one output, a block of three or more
//! lines that repeats an earlier block, exactly or with some lines changed, is shown as
//! `[same N lines as lines A–B above, except: lines i, j below]` followed by the changed lines
//! verbatim. The earlier block is shown whole, so the agent can rebuild the later one from what
//! it sees: this loses nothing, and may run on stack traces and on output that is never stored.

use crate::doc::{self, Doc, Piece};
use std::collections::HashMap;

/// A block shorter than this stays as it is.
const MIN_BLOCK: usize = 3;
/// How far one block is followed, so a pathological input costs no quadratic scan.
const MAX_BLOCK: usize = 400;
/// A block ends after this many changed lines in a row.
const MAX_CHANGED_RUN: usize = 2;

/// `pieces` with every block that repeats an earlier shown block replaced by a back-reference.
/// `None` when no block repeats, or when the kept lines are not in input order.
pub fn point_back(doc: &Doc, pieces: &[Piece]) -> Option<Vec<Piece>> {
    let n = doc.lines.len();
    // Which lines are shown verbatim, in their place.
    let mut shown = vec![false; n];
    let mut last_kept = None;
    for lines in pieces.iter().filter_map(Piece::kept) {
        if last_kept.is_some_and(|last| lines.start <= last) {
            return None;
        }
        last_kept = Some(lines.end - 1);
        shown[lines].iter_mut().for_each(|s| *s = true);
    }
    let anchor = |k: usize| shown[k] && doc.lines[k].trim().len() >= 4;
    // Only a line shown more than once can start a block: the others never enter the maps
    // below, which on a long listing of distinct lines would hold every line twice.
    let mut hashes: Vec<u64> = (0..n)
        .filter(|&k| anchor(k))
        .map(|k| hash_line(doc.lines[k]))
        .collect();
    hashes.sort_unstable();
    let mut repeated: Vec<u64> = hashes
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    drop(hashes);
    repeated.dedup();
    if repeated.is_empty() {
        return None;
    }
    let mut first_seen: HashMap<u64, usize> = HashMap::new();
    let mut last_seen: HashMap<u64, usize> = HashMap::new();
    // Lines inside a back-reference: no longer shown where they were.
    let mut taken = vec![false; n];
    let mut blocks: Vec<(usize, Piece)> = Vec::new();
    let mut i = 0;
    while i < n {
        if !shown[i] {
            i += 1;
            continue;
        }
        let hash = anchor(i)
            .then(|| hash_line(doc.lines[i]))
            .filter(|h| repeated.binary_search(h).is_ok());
        let candidates = hash.map_or([None, None], |h| {
            [first_seen.get(&h).copied(), last_seen.get(&h).copied()]
        });
        let found = candidates
            .into_iter()
            .flatten()
            .filter_map(|p| block_at(doc, &shown, &taken, p, i))
            .max_by_key(|b| b.saved);
        if let Some(block) = found {
            let end = i + block.len;
            taken[i..end].iter_mut().for_each(|t| *t = true);
            blocks.push((
                i,
                Piece::Same {
                    lines: i..end,
                    earlier: block.earlier,
                    except: block.except,
                },
            ));
            i = end;
            continue;
        }
        if let Some(h) = hash {
            first_seen.entry(h).or_insert(i);
            last_seen.insert(h, i);
        }
        i += 1;
    }
    if blocks.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(pieces.len());
    let mut blocks = blocks.into_iter().peekable();
    for piece in pieces {
        let Some(lines) = piece.kept() else {
            out.push(piece.clone());
            continue;
        };
        // Kept lines stay where no block took them; a block goes where its first line was.
        let mut run = lines.start;
        for k in lines.clone() {
            if !taken[k] {
                continue;
            }
            doc::keep_lines(&mut out, run..k);
            run = k + 1;
            if blocks.peek().is_some_and(|(start, _)| *start == k) {
                out.extend(blocks.next().map(|(_, b)| b));
            }
        }
        if run == lines.start {
            out.push(piece.clone());
        } else {
            doc::keep_lines(&mut out, run..lines.end);
        }
    }
    Some(out)
}

struct Block {
    len: usize,
    earlier: usize,
    except: Vec<usize>,
    saved: usize,
}

/// The block at `start` that repeats the lines from `earlier` on, if one pays: it ends on a
/// line equal to its twin, at least half its lines are equal, and the tokens of the equal
/// lines outweigh the marker.
fn block_at(
    doc: &Doc,
    shown: &[bool],
    taken: &[bool],
    earlier: usize,
    start: usize,
) -> Option<Block> {
    let gap = start - earlier;
    let mut len = 0;
    let mut equal = 0;
    let mut changed_run = 0;
    let mut same = Vec::new();
    while same.len() < gap.min(MAX_BLOCK) && start + same.len() < doc.lines.len() {
        let k = same.len();
        let (a, b) = (earlier + k, start + k);
        if !shown[a] || taken[a] || !shown[b] {
            break;
        }
        let is_same = doc.lines[a] == doc.lines[b];
        same.push(is_same);
        if is_same {
            equal += 1;
            len = k + 1;
            changed_run = 0;
        } else {
            changed_run += 1;
            if changed_run > MAX_CHANGED_RUN {
                break;
            }
        }
    }
    same.truncate(len);
    let except: Vec<usize> = (0..len).filter(|&k| !same[k]).collect();
    if len < MIN_BLOCK || equal < MIN_BLOCK || equal < except.len() {
        return None;
    }
    // Priced in bytes first: this runs for every candidate block.
    let hidden: usize = (0..len)
        .filter(|&k| same[k])
        .map(|k| doc.lines[start + k].len() + 1)
        .sum();
    let marker = doc::same_marker(&(start..start + len), earlier, &except);
    if hidden <= marker.len() + 16 {
        return None;
    }
    // A block that passes on bytes is priced again in tokens: short lines (blank ones, a
    // `1 file changed`) cost more tokens per byte than the marker does.
    let hidden_tokens: usize = (0..len)
        .filter(|&k| same[k])
        .map(|k| crate::tokens::count(doc.lines[start + k]) + 1)
        .sum();
    let marker_tokens = crate::tokens::count(&marker);
    (hidden_tokens > marker_tokens + 2).then(|| Block {
        len,
        earlier,
        except,
        saved: hidden - marker.len(),
    })
}

fn hash_line(line: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    line.hash(&mut hasher);
    hasher.finish()
}

/// Rebuilds the lines a rendering of `pieces` stands for, taking each back-reference's lines
/// from its earlier block: the check that a back-reference loses nothing.
#[cfg(test)]
pub fn rebuild<'a>(doc: &Doc<'a>, pieces: &[Piece]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Keep(_) | Piece::KeepRange(_) => {
                out.extend(piece.kept().into_iter().flatten().map(|k| doc.lines[k]))
            }
            Piece::Same {
                lines,
                earlier,
                except,
            } => {
                for k in 0..lines.len() {
                    out.push(if except.contains(&k) {
                        doc.lines[lines.start + k]
                    } else {
                        doc.lines[earlier + k]
                    });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::render;

    fn all_kept(doc: &Doc) -> Vec<Piece> {
        (0..doc.lines.len()).map(Piece::Keep).collect()
    }

    #[test]
    fn a_repeated_failure_points_back_with_its_changed_lines() {
        let mut text = String::from("running 3 tests\n");
        for (name, line) in [("alpha", 12), ("beta", 40), ("gamma", 77)] {
            text.push_str(&format!(
                "  test {name} (Shop.OrderTest)\n     test/order_test.exs:{line}\n     ** (ArgumentError) invalid amount\n     stacktrace:\n       (shop 0.1.0) lib/shop/money.ex:8: Shop.Money.parse!/1\n       (shop 0.1.0) lib/shop/order.ex:19: Shop.Order.parse_line/1\n       test/order_test.exs:{}: (test)\n       (ex_unit 1.14.0) lib/ex_unit/runner.ex:512: ExUnit.Runner.exec_test/1\n\n",
                line + 1
            ));
        }
        let doc = Doc::new("mix test", &text);
        let pieces = point_back(&doc, &all_kept(&doc)).expect("points back");
        let out = render(&doc, &pieces, "h");
        assert!(
            out.contains("  test beta (Shop.OrderTest)\n     test/order_test.exs:40\n[same 7 lines as lines 4–10 above, except: line 5 below]\n       test/order_test.exs:41: (test)\n  test gamma"),
            "{out}"
        );
        assert!(out.contains("test/order_test.exs:77"), "{out}");
        assert_eq!(rebuild(&doc, &pieces), doc.lines);
        // The same lines kept as one run point back the same way.
        let run = [Piece::KeepRange(0..doc.lines.len())];
        let ranged = point_back(&doc, &run).expect("points back");
        assert_eq!(render(&doc, &ranged, "h"), out);
        assert_eq!(rebuild(&doc, &ranged), doc.lines);
    }

    #[test]
    fn a_repeated_trace_points_back_to_its_first_copy() {
        let block = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    main()\n  File \"a.py\", line 2, in main\n    raise ValueError(\"bad\")\nValueError: bad\n";
        let text = format!("{block}retrying\n{block}");
        let doc = Doc::new("python a.py", &text);
        let pieces = point_back(&doc, &all_kept(&doc)).expect("points back");
        let out = render(&doc, &pieces, "");
        assert!(
            out.ends_with("retrying\n[same 6 lines as lines 1–6 above]\n"),
            "{out}"
        );
        assert_eq!(rebuild(&doc, &pieces), doc.lines);
    }

    #[test]
    fn blocks_that_do_not_repeat_stay() {
        let doc = Doc::new("x", "one line here\ntwo line here\nthree line here\nfour\n");
        assert!(point_back(&doc, &all_kept(&doc)).is_none());
    }
}
