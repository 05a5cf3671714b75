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

pub fn run() -> Result<u8> {
    let dir = std::env::temp_dir().join(format!("sqz-demo-{}-{}", std::process::id(), now_ms()));
    let db = dir.join("sessions.db");
    let opened = Store::open(&db, now_ms()).map(|(mut store, _)| {
        let env = Env::from_lookup(|_| None);
        walk_through(&mut store, &env);
    });
    let _ = std::fs::remove_dir_all(&dir);
    opened
        .map(|()| 0)
        .map_err(|e| Error::failed(format!("demo: cannot create a throwaway store: {e}")))
}

fn walk_through(store: &mut Store, env: &Env) {
    let count = |b: &[u8]| crate::tokens::count_bytes(b);
    let now = now_ms();

    step(
        1,
        "a failing `cargo test`, as the agent sees it through sqz",
    );
    let first = serve("cargo test", TEST_RUN, Some(store), false, env, now);
    show(&first.stdout, first.header.as_deref());
    println!("  ({} tokens without sqz)", count(TEST_RUN));

    step(
        2,
        "the same command again: the output is unchanged, so a reference goes out",
    );
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
    let restored = store
        .original(&first.hash)
        .ok()
        .flatten()
        .unwrap_or_default();
    let same = restored == TEST_RUN;
    println!(
        "  {} bytes restored; byte for byte identical to the original: {}",
        restored.len(),
        if same { "yes" } else { "NO" }
    );

    step(6, "what this session saved");
    if let Ok(rows) = store.totals_by_kind() {
        let (mut tin, mut tout) = (0, 0);
        for (kind, calls, a, b) in rows {
            println!("  {kind:<10} {calls:>3} calls  {a:>6} → {b:>5} tokens");
            tin += a;
            tout += b;
        }
        println!(
            "  total            {tin:>6} → {tout:>5} tokens ({}% saved)",
            if tin > 0 { (tin - tout) * 100 / tin } else { 0 }
        );
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
