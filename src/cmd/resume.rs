//! `sqz resume`: after a compaction (Claude Code SessionStart, source `compact`), a short guide
//! to what sqz served recently, counted from the store and never invented: each entry's label,
//! a few of its key lines, and the `sqz expand` command that brings it back.

use crate::clock::now_ms;
use crate::env::Env;
use crate::serve::recall::age;
use crate::store::{RecentEntry, Store};
use std::io::{IsTerminal, Read};

/// Entries the guide lists.
const ENTRIES: usize = 6;
/// Key lines shown per entry.
const KEY_LINES: usize = 3;
/// Bytes kept of one label or key line.
const LINE_BYTES: usize = 140;
/// The whole guide stays under this many bytes.
const GUIDE_BYTES: usize = 2048;

/// Always succeeds: as a hook it must not block the session, so a store problem is one line
/// on stderr and a guide that says so.
pub fn run(env: &Env) -> u8 {
    // As a hook the SessionStart payload arrives on stdin; it says nothing the guide needs,
    // so it is drained. Typed at a terminal there is none to wait for.
    if !std::io::stdin().is_terminal() {
        let mut payload = Vec::new();
        let _ = std::io::stdin()
            .lock()
            .take(1 << 20)
            .read_to_end(&mut payload);
    }
    let guide = if env.db_path.exists() {
        match Store::open(&env.db_path, now_ms())
            .and_then(|(store, _)| store.recent_entries(ENTRIES))
        {
            Ok(entries) => guide(&entries, now_ms()),
            Err(e) => {
                eprintln!("sqz: resume: {e}");
                "[sqz] resume: the store could not be read; nothing to recall.\n".to_owned()
            }
        }
    } else {
        guide(&[], 0)
    };
    super::io::write_stdout(guide.as_bytes());
    0
}

/// The guide for `entries`, newest first, at most `GUIDE_BYTES` long.
pub fn guide(entries: &[RecentEntry], now: i64) -> String {
    if entries.is_empty() {
        return "[sqz] resume: sqz has served nothing yet; there is nothing to recall.\n"
            .to_owned();
    }
    let mut out = String::from(
        "[sqz] Outputs sqz served recently, newest first. To see one again, run its sqz expand\ncommand instead of re-running the command.\n",
    );
    for entry in entries {
        let mut block = format!(
            "- {} ({} tokens, {} ago): sqz expand {}\n",
            crate::text::cut_at_char(entry.label.lines().next().unwrap_or(""), LINE_BYTES),
            entry.tokens_in,
            age(now.saturating_sub(entry.last_served)),
            crate::text::shown_hash(&entry.hash),
        );
        for line in key_lines(&String::from_utf8_lossy(&entry.served)) {
            block.push_str("    ");
            block.push_str(line);
            block.push('\n');
        }
        if out.len() + block.len() > GUIDE_BYTES {
            break;
        }
        out.push_str(&block);
    }
    out
}

/// Up to `KEY_LINES` lines of `served` that report a fact, each cut to `LINE_BYTES`.
fn key_lines(served: &str) -> Vec<&str> {
    served
        .lines()
        .filter(|line| crate::doc::facts::is_fact(line))
        .map(|line| crate::text::cut_at_char(line.trim(), LINE_BYTES))
        .take(KEY_LINES)
        .collect()
}

/// How long ago, in the largest whole unit: `42s`, `5m`, `3h`, `2d`.
#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000_000;

    fn served(hash: &str, label: &str, text: &str) -> RecentEntry {
        RecentEntry {
            hash: hash.into(),
            label: label.into(),
            last_served: NOW - 90_000,
            tokens_in: 1200,
            served: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn empty_store_says_so_in_one_line() {
        assert_eq!(guide(&[], NOW).lines().count(), 1);
    }

    #[test]
    fn guide_lists_label_key_lines_and_expand() {
        let text = guide(&[served(
            "0123456789abcdef",
            "cargo test",
            "running 3 tests\ntest a ... ok\nerror[E0308]: mismatched types\n  --> src/lib.rs:4:5\n",
        )], NOW);
        assert!(text.contains("- cargo test (1200 tokens, 1m ago): sqz expand 0123456789ab\n"));
        assert!(text.contains("    error[E0308]: mismatched types\n"));
        assert!(!text.contains("test a ... ok"));
    }

    #[test]
    fn guide_is_bounded() {
        let long = "error: ".to_owned() + &"é".repeat(500);
        let many: Vec<RecentEntry> = (0..50)
            .map(|i| {
                served(
                    &format!("{i:016x}"),
                    &long,
                    &format!("{long}\n{long}\n{long}\n{long}\n"),
                )
            })
            .collect();
        let text = guide(&many, NOW);
        assert!(text.len() <= GUIDE_BYTES, "{}", text.len());
        assert!(text.lines().count() <= 40);
    }
}
