//! `sqz demo`: the main job end to end on bundled real outputs, in a throwaway store: a failing
//! cargo test run compressed, its repeat as a reference, a worker log folded by template, a line
//! slice of an earlier file read, and an expand that gives the original back byte for byte.

use crate::clock::now_ms;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::serve::compress as serve;
use crate::store::Store;

const TEST_RUN: &[u8] = include_bytes!("../../fixtures/cargo-test-failing/input.txt");
const SOURCE_FILE: &[u8] = include_bytes!("../../fixtures/cat-rust-source/input.txt");
const WORKER_LOG: &[u8] = include_bytes!("../../fixtures/cat-worker-log/input.txt");

/// Runs the demo; with `keep` the store stays and its path is printed, so `sqz stats` and
/// `sqz gain` can be tried on it.
pub fn run(keep: bool) -> Result<u8> {
    let dir = std::env::temp_dir().join(format!("sqz-demo-{}-{}", std::process::id(), now_ms()));
    let db = dir.join("sessions.db");
    let opened = Store::open(&db, now_ms()).map(|(mut store, _)| {
        let env = Env::from_lookup(|_| None);
        walk_through(&mut store, &env);
    });
    if keep && opened.is_ok() {
        println!("\nthe store is kept: {}", db.display());
        println!(
            "try: SQZ_DB_PATH={} sqz stats --breakdown   (or sqz gain)",
            db.display()
        );
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    opened
        .map(|()| 0)
        .map_err(|e| Error::failed(format!("demo: cannot create a throwaway store: {e}")))
}

fn walk_through(store: &mut Store, env: &Env) {
    let count = |b: &[u8]| crate::tokens::count_bytes(b);
    // The demo's calls play over three minutes that have just passed, so a `sqz stats` run on
    // a kept store right after counts every one of them.
    let now = now_ms() - 190_000;

    step(
        1,
        "a failing `cargo test`, as the agent sees it through sqz",
    );
    let first = serve("cargo test", TEST_RUN, Some(store), false, env, now);
    show(&first.stdout, first.header.as_deref());
    println!("  ({} tokens without sqz)", count(TEST_RUN));

    step(
        2,
        "the same command three minutes later: the output is unchanged, so a reference goes out",
    );
    // Past the two-minute regret window, so the stats count no quick re-run.
    let now = now + 180_000;
    let again = serve("cargo test", TEST_RUN, Some(store), false, env, now + 1000);
    show(&again.stdout, again.header.as_deref());

    step(
        3,
        "a worker log read with `cat`: its lines of one template fold, every ERROR and WARNING stays",
    );
    let log = serve(
        "cat worker.log",
        WORKER_LOG,
        Some(store),
        false,
        env,
        now + 1500,
    );
    show(&log.stdout, log.header.as_deref());
    println!(
        "  ({} lines and {} tokens without sqz)",
        crate::text::line_count(WORKER_LOG),
        count(WORKER_LOG)
    );

    step(
        4,
        "a file read, then lines 41-80 of it (`sed -n '41,80p'`): a ranged reference",
    );
    let read = serve(
        "cat src/lib.rs",
        SOURCE_FILE,
        Some(store),
        false,
        env,
        now + 2000,
    );
    println!(
        "  cat src/lib.rs: {} lines sent whole (source code is never changed)",
        crate::text::line_count(&read.stdout)
    );
    let slice = crate::serve::expand::line_range(SOURCE_FILE, 41, 80).unwrap_or(SOURCE_FILE);
    let ranged = serve(
        "sed -n '41,80p' src/lib.rs",
        slice,
        Some(store),
        false,
        env,
        now + 3000,
    );
    show(&ranged.stdout, ranged.header.as_deref());

    step(
        5,
        &format!("sqz expand {}: the original comes back", first.hash),
    );
    let restored = crate::serve::expand::lookup(store, &first.hash, now + 3500)
        .map(|(_, bytes)| bytes)
        .unwrap_or_default();
    let same = restored == TEST_RUN;
    println!(
        "  {} bytes restored; byte for byte identical to the original: {}",
        restored.len(),
        if same { "yes" } else { "NO" }
    );

    step(
        6,
        "what this session saved: sqz stats --breakdown on the demo's store",
    );
    if let Ok(rows) = store.events_since(0) {
        // Two days when the demo ran across midnight (UTC), so every call is counted.
        let start = now - 180_000;
        let end = now + 4000;
        let days = if crate::report::date(start) == crate::report::date(end) {
            1
        } else {
            2
        };
        let scope = crate::report::Scope {
            days,
            now: end,
            window_secs: env.regret_window_secs,
            project: None,
        };
        let report = crate::report::build(&rows, &scope);
        let view = crate::report::text::StatsView {
            breakdown: true,
            price: None,
        };
        for line in crate::report::text::stats(&report, &view).lines() {
            println!("  {line}");
        }
    }
}

fn step(n: usize, what: &str) {
    println!("\n── {n}. {what}");
}

fn show(stdout: &[u8], header: Option<&str>) {
    for line in String::from_utf8_lossy(stdout).lines() {
        println!("  │ {line}");
    }
    if let Some(header) = header {
        println!("  │ {header}   (stderr)");
    }
}
