//! `sqz stats`, `sqz gain` and the HTML report, on the binary with a temp store filled by real
//! calls: the figures are the sums of what the calls printed, the regret signals count what
//! they should, every day gets its bar, colour only where it belongs, and the HTML page renders
//! in headless Chromium.

mod common;

use common::{compress, expand, sqz, Run, Scratch};
use sqz::json::Value;
use std::path::{Path, PathBuf};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures_dir().join(name).join("input.txt")).expect("fixture")
}

/// What one call cost the agent, read from what it printed: `(tokens in, tokens out)`. A
/// header with figures says `OUT/IN` for stdout, and the header is paid for too; a reference
/// costs its token and its note; output sent whole costs what it is.
fn paid(run: &Run, input: &[u8]) -> (u64, u64) {
    let count = |t: &str| sqz::tokens::count(t) as u64;
    let tokens_in = sqz::tokens::count_bytes(input) as u64;
    let header = run.stderr.lines().find(|l| l.starts_with("[sqz] "));
    let Some(header) = header else {
        return (tokens_in, tokens_in);
    };
    let figures = header
        .strip_prefix("[sqz] ")
        .and_then(|h| h.split_once(" tokens"))
        .and_then(|(f, _)| f.split_once('/'))
        .and_then(|(out, inp)| Some((out.parse::<u64>().ok()?, inp.parse::<u64>().ok()?)));
    match figures {
        Some((out, inp)) => {
            assert_eq!(
                inp, tokens_in,
                "the header counts the input as sqz tokens does"
            );
            (inp, out + count(header))
        }
        None => (
            tokens_in,
            count(run.stdout_text().trim_end_matches('\n')) + count(header),
        ),
    }
}

fn stats_json(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = vec!["stats", "--json"];
    all.extend_from_slice(args);
    let run = sqz(bin(), db, &all, b"", env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    sqz::json::parse(&run.stdout_text()).expect("stats --json is JSON")
}

fn number(v: &Value, path: &[&str]) -> u64 {
    let mut at = v;
    for key in path {
        at = at
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {path:?}"));
    }
    at.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a count"))
}

fn kind_calls(v: &Value, kind: &str) -> u64 {
    v.get("kinds")
        .and_then(Value::as_array)
        .and_then(|ks| {
            ks.iter()
                .find(|k| k.get("kind").and_then(Value::as_str) == Some(kind))
        })
        .and_then(|k| k.get("calls"))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no kind {kind}"))
}

/// Moves events in the store by `by_ms`, as if they had happened then: the reports read time
/// from the rows, and the calls themselves take milliseconds.
fn shift(db: &Path, which: &str, by_ms: i64) {
    let conn = rusqlite::Connection::open(db).expect("open store");
    conn.execute(
        &format!("UPDATE events SET at = at + ?1 WHERE {which}"),
        [by_ms],
    )
    .expect("shift events");
}

#[test]
fn a_scripted_session_gives_exactly_its_stats() {
    let s = Scratch::new("stats");
    let db = s.db();
    let test_run = fixture("cargo-test-failing");
    let source = fixture("cat-rust-source");
    let slice = sqz::serve::expand::line_range(&source, 41, 80)
        .expect("lines 41-80")
        .to_vec();
    let mut spent = (0, 0);
    let mut call = |label: &str, input: &[u8]| {
        let run = compress(bin(), &db, label, input);
        assert_eq!(run.code, 0);
        let (i, o) = paid(&run, input);
        spent = (spent.0 + i, spent.1 + o);
        run
    };
    // A fresh output, summarised by its formatter.
    let first = call("cargo test", &test_run);
    assert!(first.stderr.contains("sqz expand"), "{}", first.stderr);
    // The same output again: a reference.
    let repeat = call("cargo test", &test_run);
    assert!(repeat.stdout_text().starts_with("§ref:"));
    // A file read, then a slice of it.
    call("cat src/lib.rs", &source);
    let sliced = call("sed -n '41,80p' src/lib.rs", &slice);
    assert!(sliced.stdout_text().contains(":L41-80§"));
    // The test run once more, seconds after the repeat: a quick re-run.
    call("cargo test", &test_run);
    // And its original asked for.
    let hash = common::hash16(&test_run);
    assert_eq!(expand(bin(), &db, &hash).stdout, test_run);
    // The first call five minutes earlier: the repeat came outside the regret window, the
    // re-run inside it.
    shift(&db, "id = 1", -300_000);

    let v = stats_json(&db, &[], &[]);
    assert_eq!(number(&v, &["schema"]), 1);
    assert_eq!(number(&v, &["total", "calls"]), 5);
    assert_eq!(number(&v, &["total", "tokens_in"]), spent.0);
    assert_eq!(number(&v, &["total", "tokens_out"]), spent.1);
    assert_eq!(number(&v, &["total", "saved"]), spent.0 - spent.1);
    assert_eq!(kind_calls(&v, "formatter"), 1);
    assert_eq!(kind_calls(&v, "reference"), 2);
    assert_eq!(kind_calls(&v, "slice"), 1);
    assert_eq!(kind_calls(&v, "sent whole"), 1);
    assert_eq!(kind_calls(&v, "delta"), 0);
    assert_eq!(number(&v, &["regret", "quick_reruns"]), 1);
    assert_eq!(number(&v, &["regret", "expands"]), 1);
    assert_eq!(number(&v, &["regret", "window_secs"]), 120);
    let families = v
        .get("families")
        .and_then(Value::as_array)
        .expect("families");
    let cargo = families
        .iter()
        .find(|f| f.get("family").and_then(Value::as_str) == Some("cargo test"))
        .expect("cargo test family");
    assert_eq!(number(cargo, &["calls"]), 3);
    assert_eq!(number(cargo, &["quick_reruns"]), 1);
    assert_eq!(number(cargo, &["expands"]), 1);

    // No window, no quick re-runs.
    let off = stats_json(&db, &[], &[("SQZ_REGRET_WINDOW_SECS", "0")]);
    assert_eq!(number(&off, &["regret", "quick_reruns"]), 0);

    // The text report says the same.
    let text = sqz(bin(), &db, &["stats", "--breakdown", "--cost"], b"", &[]);
    let out = text.stdout_text();
    assert!(out.contains("calls       5\n"), "{out}");
    assert!(
        out.contains("1 quick re-run within 120 s (20.0% of calls), 1 expand (20.0% of calls)"),
        "{out}"
    );
    assert!(out.contains("an estimate"), "{out}");
    assert!(out.contains("\nby kind\n") && out.contains("\nregret by command\n"));
}

#[test]
fn stats_for_a_project_count_only_its_calls() {
    let s = Scratch::new("project");
    let db = s.db();
    let app = s.dir.join("app");
    let other = s.dir.join("other");
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let run_in = |dir: &PathBuf, label: &str, input: &[u8]| {
        let out = std::process::Command::new(bin())
            .args(["compress", "--cmd", label])
            .env("SQZ_DB_PATH", &db)
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(input)?;
                c.wait()
            })
            .expect("run sqz");
        assert!(out.success());
    };
    run_in(
        &app.join("src"),
        "cargo test",
        &fixture("cargo-test-failing"),
    );
    run_in(&other, "git status", &fixture("git-status-long"));
    let v = stats_json(&db, &["--project", app.to_str().unwrap()], &[]);
    assert_eq!(number(&v, &["total", "calls"]), 1);
    let all = stats_json(&db, &[], &[]);
    assert_eq!(number(&all, &["total", "calls"]), 2);
}

/// A store with calls on three of the last seven days.
fn store_over_a_week(s: &Scratch) -> PathBuf {
    let db = s.db();
    for (label, name) in [
        ("cargo test", "cargo-test-failing"),
        ("cat worker.log", "cat-worker-log"),
        ("git status", "git-status-long"),
    ] {
        assert_eq!(compress(bin(), &db, label, &fixture(name)).code, 0);
    }
    shift(&db, "id = 1", -5 * 86_400_000);
    shift(&db, "id = 2", -2 * 86_400_000);
    db
}

#[test]
fn gain_draws_one_bar_a_day_empty_days_included_and_no_colour_off_a_terminal() {
    let s = Scratch::new("gain");
    let db = store_over_a_week(&s);
    let run = sqz(bin(), &db, &["gain", "--days", "7"], b"", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = run.stdout_text();
    let bars: Vec<&str> = out.lines().filter(|l| l.contains(" │")).collect();
    assert_eq!(bars.len(), 7, "{out}");
    let empty = bars.iter().filter(|l| l.ends_with(" 0")).count();
    assert_eq!(empty, 4, "{out}");
    // Dates run one a day, oldest first.
    let days: Vec<&str> = bars.iter().map(|l| &l[..10]).collect();
    let mut sorted = days.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(days, sorted);
    assert!(!out.contains('\x1b'), "no escape codes into a pipe");
}

/// Runs `sqz gain` on a pseudo-terminal (util-linux `script`) and returns what it printed.
fn gain_on_a_terminal(db: &Path, no_color: bool) -> String {
    let mut cmd = std::process::Command::new("script");
    cmd.args([
        "-qec",
        &format!("{} gain --days 7", bin().display()),
        "/dev/null",
    ])
    .env("SQZ_DB_PATH", db)
    .env("COLUMNS", "100");
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
    let out = cmd.output().expect("script(1) from util-linux");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let s = Scratch::new("colour");
    let db = store_over_a_week(&s);
    assert!(gain_on_a_terminal(&db, false).contains("\x1b[32m"));
    let plain = gain_on_a_terminal(&db, true);
    assert!(plain.contains(" │"), "{plain}");
    assert!(!plain.contains('\x1b'), "{plain:?}");
}

#[test]
fn the_html_report_renders_in_chromium_with_one_bar_a_day() {
    let s = Scratch::new("html");
    let db = store_over_a_week(&s);
    let page = s.dir.join("gain.html");
    let run = sqz(
        bin(),
        &db,
        &["gain", "--days", "14", "--html", page.to_str().unwrap()],
        b"",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let html = std::fs::read_to_string(&page).expect("report written");
    // Self-contained: nothing is fetched.
    for outside in ["<script", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(outside), "{outside} in the report");
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&target).unwrap();
    let shot = target.join("sqz-gain-report.png");
    let _ = std::fs::remove_file(&shot);
    let url = format!("file://{}", page.display());
    let chromium = |extra: &[&str]| {
        let profile = s.dir.join("chromium-profile");
        let out = std::process::Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1280,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium (Debian package chromium) on PATH");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (_, log) = chromium(&[&format!("--screenshot={}", shot.display())]);
    assert!(shot.is_file(), "screenshot written: {log}");
    // Console messages are logged as `CONSOLE(...)`; the page must raise none.
    assert!(!log.contains("CONSOLE"), "console output: {log}");
    let (dom, log) = chromium(&["--dump-dom"]);
    assert!(!log.contains("CONSOLE"), "console output: {log}");
    assert_eq!(
        dom.matches("<rect class=\"bar\"").count(),
        14,
        "one bar a day"
    );
    assert!(dom.contains("By command") && dom.contains("Regret signals"));
}
