//! The binary as a hook or a user runs it: exit statuses through the trailer, references,
//! slices, secrets never stored, freshness, fail-open on broken stores, bad input.

mod common;

use common::{compress, expand, hash16, huge_find, sqz, with_trailer, Scratch};
use std::path::Path;
use std::process::Command;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

/// A realistic build log: long enough that folding and references pay.
fn build_log(tag: &str) -> String {
    let mut s = String::new();
    for n in 0..60 {
        s.push_str(&format!("   Compiling dependency-{n}-{tag} v0.{n}.3\n"));
    }
    s.push_str("error[E0308]: mismatched types\n  --> src/main.rs:4:5\n");
    s.push_str("error: could not compile `app` (bin \"app\") due to 1 previous error\n");
    s
}

#[test]
fn exit_statuses_pass_through_the_trailer() {
    let scratch = Scratch::new("exit");
    for code in [0, 1, 2, 42, 255] {
        let output = format!("output of a command that exits {code}\n");
        let run = sqz(
            bin(),
            &scratch.db(),
            &["compress", "--cmd", "make"],
            &with_trailer(output.as_bytes(), code),
            &[],
        );
        assert_eq!(run.code, code, "exit status {code}");
        assert_eq!(run.stdout_text(), output);
    }
    let marker_inside = b"__SQZ_EXIT_3__\nstill running\n";
    let run = sqz(bin(), &scratch.db(), &["compress"], marker_inside, &[]);
    assert_eq!(
        (run.code, run.stdout.as_slice()),
        (0, &marker_inside[..]),
        "a marker that is not last is data"
    );
}

/// Under `--trap` (the hook's EXIT-trap form) the last marker line is the trailer even with
/// background output after it, in memory and when the input is over `SQZ_MAX_INPUT_MB` and
/// streams through.
#[test]
fn late_output_after_a_trapped_trailer_keeps_the_status() {
    let scratch = Scratch::new("trap");
    let args = ["compress", "--cmd", "make", "--trap"];
    let small = b"__SQZ_EXIT_9__\nbuilt\n\n__SQZ_EXIT_3__\nlate from a job\n";
    let run = sqz(bin(), &scratch.db(), &args, small, &[]);
    assert_eq!(run.code, 3);
    assert_eq!(
        run.stdout_text(),
        "__SQZ_EXIT_9__\nbuilt\nlate from a job\n"
    );
    let mut big = "x".repeat(100).repeat(30_000).into_bytes();
    big.extend_from_slice(b"\n__SQZ_EXIT_4__\nlate from a job\n\n");
    let run = sqz(
        bin(),
        &scratch.db(),
        &args,
        &big,
        &[("SQZ_MAX_INPUT_MB", "1")],
    );
    assert_eq!(run.code, 4);
    let want = [&big[..3_000_000], b"late from a job\n\n"].concat();
    assert!(run.stdout == want, "{} bytes", run.stdout.len());
}

#[test]
fn final_newline_is_kept_or_not_as_given() {
    let scratch = Scratch::new("newline");
    let with = sqz(
        bin(),
        &scratch.db(),
        &["compress"],
        b"one\ntwo\n\n__SQZ_EXIT_0__\n",
        &[],
    );
    assert_eq!(with.stdout, b"one\ntwo\n");
    let without = sqz(
        bin(),
        &scratch.db(),
        &["compress"],
        b"one\ntwo\n__SQZ_EXIT_0__\n",
        &[],
    );
    assert_eq!(without.stdout, b"one\ntwo");
    let log = build_log("nl");
    let folded = compress(
        bin(),
        &scratch.db(),
        "cargo build",
        log.trim_end().as_bytes(),
    );
    assert!(!folded.stdout_text().ends_with('\n'));
    assert!(folded.stdout_text().contains("[… 60 build progress lines"));
}

#[test]
fn repeat_becomes_a_reference_that_expands() {
    let scratch = Scratch::new("ref");
    let log = build_log("ref");
    let first = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    assert!(first.stderr.starts_with("[sqz] "), "{}", first.stderr);
    let hash = hash16(log.as_bytes());
    let second = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    assert_eq!(second.stdout_text(), format!("§ref:{hash}§\n"));
    let token = format!("§ref:{hash}§");
    for reference in [hash.as_str(), &hash[..6], token.as_str()] {
        let expand = expand(bin(), &scratch.db(), reference);
        assert_eq!(expand.code, 0, "{reference}: {}", expand.stderr);
        assert_eq!(expand.stdout, log.as_bytes());
    }
}

#[test]
fn slice_reference_after_a_full_read_in_real_bash() {
    let scratch = Scratch::new("slice");
    let file = scratch.dir.join("lib.rs");
    let source: String = (1..=200)
        .map(|n| format!("pub fn handler_{n}(input: &str) -> usize {{ input.len() + {n} }}\n"))
        .collect();
    std::fs::write(&file, &source).unwrap();
    let run = |command: &str, label: &str| {
        let rewritten = format!(
            "{{ {command} 2>&1; printf '\\n__SQZ_EXIT_%d__\\n' \"$?\"; }} | '{}' compress --cmd '{label}'",
            bin().display()
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(rewritten)
            .current_dir(&scratch.dir)
            .env("SQZ_DB_PATH", scratch.db())
            .env_remove("SQZ_QUIET")
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.code(),
        )
    };
    let (full, code) = run("cat lib.rs", "cat lib.rs");
    assert_eq!(full, source, "a source read passes through byte for byte");
    assert_eq!(code, Some(0));
    let hash = hash16(source.as_bytes());
    let (ranged, _) = run("sed -n '41,80p' lib.rs", "sed -n '41,80p' lib.rs");
    assert_eq!(ranged, format!("§ref:{hash}:L41-80§\n"));
    let (head, _) = run("head -50 lib.rs", "head -50 lib.rs");
    assert_eq!(head, format!("§ref:{hash}:L1-50§\n"));
    let expand = expand(bin(), &scratch.db(), &format!("{hash}:L41-80"));
    let expected: String = source
        .lines()
        .skip(40)
        .take(40)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(expand.stdout_text(), expected);
    // Too small to be worth a slice reference: sent whole.
    let (tiny, _) = run("sed -n '3,3p' lib.rs", "sed -n '3,3p' lib.rs");
    assert_eq!(tiny, format!("{}\n", source.lines().nth(2).unwrap()));
}

#[test]
fn secrets_are_never_stored() {
    let scratch = Scratch::new("secrets");
    let env_file = "DATABASE_URL=postgres://app:pa55w0rd-very-secret@db:5432/app\nSTRIPE_SECRET_KEY=sk_test_51Hx9zQeZvKYlo2C0aBcDeFgHiJ\nDEBUG=false\nPORT=8080\n";
    let pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n";
    for (label, text) in [("cat .env", env_file), ("cat server.key", pem)] {
        let first = compress(bin(), &scratch.db(), label, text.as_bytes());
        assert_eq!(
            first.stdout_text(),
            text,
            "{label} passes through byte for byte"
        );
        let second = compress(bin(), &scratch.db(), label, text.as_bytes());
        assert_eq!(second.stdout_text(), text, "{label} is never a reference");
        let expand = expand(bin(), &scratch.db(), &hash16(text.as_bytes()));
        assert_eq!(expand.code, 1);
    }
    for secret in [
        "sk_test_51Hx9zQeZvKYlo2C0aBcDeFgHiJ",
        "pa55w0rd-very-secret",
        "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    ] {
        assert!(
            !common::store_contains(&scratch.db(), secret.as_bytes()),
            "{secret} found in the store files"
        );
    }
}

#[test]
fn ttl_zero_gives_no_reference() {
    let scratch = Scratch::new("ttl");
    let log = build_log("ttl");
    let env = [("SQZ_REF_TTL_SECS", "0")];
    let args = ["compress", "--cmd", "cargo build"];
    sqz(
        bin(),
        &scratch.db(),
        &args,
        &with_trailer(log.as_bytes(), 0),
        &env,
    );
    let second = sqz(
        bin(),
        &scratch.db(),
        &args,
        &with_trailer(log.as_bytes(), 0),
        &env,
    );
    assert!(!second.stdout_text().contains("§ref:"));
    assert!(second
        .stdout_text()
        .contains("error[E0308]: mismatched types"));
}

#[test]
fn compaction_marker_invalidates_references() {
    let scratch = Scratch::new("compact");
    let log = build_log("compact");
    compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    let hook = sqz(
        bin(),
        &scratch.db(),
        &["hook", "precompact"],
        b"{\"hook_event_name\":\"PreCompact\"}",
        &[],
    );
    assert_eq!(hook.stdout_text().trim(), "{}");
    let after = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    assert!(
        !after.stdout_text().contains("§ref:"),
        "served in full after compaction"
    );
    let again = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    assert!(
        again.stdout_text().contains("§ref:"),
        "served after the marker, so fresh again"
    );
}

#[test]
fn pinned_entries_survive_compaction() {
    let scratch = Scratch::new("pin");
    let log = build_log("pin");
    compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    let hash = hash16(log.as_bytes());
    assert_eq!(
        sqz(bin(), &scratch.db(), &["pin", &hash[..8]], b"", &[]).code,
        0
    );
    sqz(bin(), &scratch.db(), &["hook", "precompact"], b"{}", &[]);
    let after = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    assert_eq!(after.stdout_text(), format!("§ref:{hash}§\n"));
    assert_eq!(
        sqz(bin(), &scratch.db(), &["unpin", &hash], b"", &[]).code,
        0
    );
    assert_eq!(
        sqz(bin(), &scratch.db(), &["forget", &hash], b"", &[]).code,
        0
    );
    assert_eq!(expand(bin(), &scratch.db(), &hash).code, 1);
}

#[test]
fn corrupt_store_fails_open_and_is_moved_aside() {
    let scratch = Scratch::new("corrupt");
    let db = scratch.db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, vec![0x5a; 8192]).unwrap();
    let log = build_log("corrupt");
    let run = compress(bin(), &db, "cargo build", log.as_bytes());
    assert!(run.stdout_text().contains("error[E0308]: mismatched types"));
    assert!(run.stderr.contains("was corrupt"), "{}", run.stderr);
    let moved = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains(".corrupt-"));
    assert!(moved);
    let expand = expand(bin(), &db, &hash16(log.as_bytes()));
    assert_eq!(expand.stdout, log.as_bytes(), "the new store works");
}

#[test]
fn unwritable_store_path_fails_open_with_full_output() {
    let scratch = Scratch::new("readonly");
    let log = build_log("ro");
    let blocked = scratch.dir.join("not-a-dir");
    std::fs::write(&blocked, b"file").unwrap();
    let db = blocked.join("sessions.db");
    let run = sqz(
        bin(),
        &db,
        &["compress", "--cmd", "cargo build"],
        &with_trailer(log.as_bytes(), 7),
        &[],
    );
    assert_eq!(
        run.stdout_text(),
        log,
        "nothing can be stored, so nothing lossy runs"
    );
    assert_eq!(run.code, 7);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("sqz: cannot open store"),
        "{}",
        run.stderr
    );
}

#[test]
fn locked_store_fails_open() {
    let scratch = Scratch::new("locked");
    let db = scratch.db();
    sqz(
        bin(),
        &db,
        &["compress"],
        b"warm up the store so it exists\n",
        &[],
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let log = build_log("locked");
    let run = sqz(
        bin(),
        &db,
        &["compress", "--cmd", "cargo build"],
        &with_trailer(log.as_bytes(), 4),
        &[],
    );
    assert_eq!(run.stdout_text(), log);
    assert_eq!(run.code, 4);
    assert!(run.stderr.contains("locked"), "{}", run.stderr);
    conn.execute_batch("ROLLBACK").unwrap();
}

/// Nothing saved, nothing said: an agent pays for every stderr line.
#[test]
fn binary_invalid_and_empty_input_pass_through_silently() {
    let scratch = Scratch::new("binary");
    let cases: [(&[u8], &str); 3] = [
        (
            b"\x7fELF\x02\x01\x01\x00\x00\x00binary\x00data\n",
            "binary input",
        ),
        (b"caf\xe9 au lait, latin-1 bytes\n", "not valid UTF-8"),
        (b"", "empty input"),
    ];
    for (input, reason) in cases {
        let run = sqz(bin(), &scratch.db(), &["compress"], input, &[]);
        assert_eq!(run.stdout, input);
        assert_eq!(run.code, 0);
        assert_eq!(run.stderr, "", "{reason}");
        let hooked = sqz(
            bin(),
            &scratch.db(),
            &["compress"],
            &with_trailer(input, 9),
            &[],
        );
        assert_eq!(hooked.stdout, input);
        assert_eq!(hooked.code, 9);
        assert_eq!(hooked.stderr, "", "{reason}");
    }
}

#[test]
fn hundred_megabytes_stream_through_in_bounded_memory() {
    let scratch = Scratch::new("big");
    let big = scratch.dir.join("big.txt");
    let line = "2026-12-02T10:00:00Z worker-7 processed batch with 512 records in 12ms\n";
    let mut data = line.repeat((100 << 20) / line.len() + 1).into_bytes();
    data.extend_from_slice(b"\n__SQZ_EXIT_5__\n");
    std::fs::write(&big, &data).unwrap();
    // 90 MB of address space is less than the input: holding it whole would abort.
    let script = format!(
        "ulimit -v 90000; '{}' compress --cmd 'tail -f log' < '{}' | wc -c",
        bin().display(),
        big.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("{script}; exit ${{PIPESTATUS[0]}}"))
        .env("SQZ_DB_PATH", scratch.db())
        .output()
        .unwrap();
    let count: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(count, data.len() - "\n__SQZ_EXIT_5__\n".len());
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "nothing saved, nothing said"
    );
}

#[test]
fn twenty_concurrent_compressions_share_one_store() {
    let scratch = Scratch::new("concurrent");
    let db = scratch.db();
    sqz(
        bin(),
        &db,
        &["compress"],
        b"create the store first, so every writer finds it\n",
        &[],
    );
    let logs: Vec<String> = (0..20).map(|n| build_log(&format!("c{n}"))).collect();
    let handles: Vec<_> = logs
        .iter()
        .cloned()
        .map(|log| {
            let db = db.clone();
            std::thread::spawn(move || compress(bin(), &db, "cargo build", log.as_bytes()))
        })
        .collect();
    for (handle, log) in handles.into_iter().zip(&logs) {
        let run = handle.join().unwrap();
        assert_eq!(run.code, 0);
        assert!(run.stdout_text().contains("error[E0308]"), "{}", run.stderr);
        assert!(!run.stderr.contains("sqz:"), "{}", run.stderr);
        let _ = log;
    }
    for log in &logs {
        let expand = expand(bin(), &db, &hash16(log.as_bytes()));
        assert_eq!(expand.stdout, log.as_bytes());
    }
    let (store, _) = sqz::store::Store::open(&db, 0).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn store_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new("perms");
    compress(
        bin(),
        &scratch.db(),
        "cargo build",
        build_log("perms").as_bytes(),
    );
    let dir = scratch.db().parent().unwrap().to_path_buf();
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{:?}", entry.file_name());
    }
}

#[test]
fn usage_errors_are_one_line_and_exit_two() {
    let scratch = Scratch::new("usage");
    for args in [
        &["compress", "--bogus"][..],
        &["frobnicate"],
        &["expand"],
        &["pin", "a", "b"],
    ] {
        let run = sqz(bin(), &scratch.db(), args, b"", &[]);
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("sqz: "));
    }
    let malformed = expand(bin(), &scratch.db(), "§ref:not-hex§");
    assert_eq!(malformed.code, 2);
    assert!(malformed.stderr.contains("malformed reference"));
    let none = expand(bin(), &scratch.db(), "ffffffff");
    assert_eq!(none.code, 1);
}

#[test]
fn ambiguous_prefix_exits_two() {
    let scratch = Scratch::new("ambiguous");
    // Store enough entries that some share a first hex digit.
    let mut first_digits = std::collections::HashMap::new();
    for n in 0..40 {
        let log = build_log(&format!("amb{n}"));
        compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
        *first_digits
            .entry(hash16(log.as_bytes()).chars().next().unwrap())
            .or_insert(0) += 1;
    }
    let (digit, _) = first_digits.into_iter().find(|(_, n)| *n > 1).unwrap();
    let run = expand(bin(), &scratch.db(), &digit.to_string());
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn help_lists_every_command_and_variable() {
    let scratch = Scratch::new("help");
    let help = sqz(bin(), &scratch.db(), &["help"], b"", &[]).stdout_text();
    for word in [
        "compress",
        "expand",
        "tokens",
        "pin",
        "unpin",
        "forget",
        "reset",
        "demo",
        "--version",
    ] {
        assert!(help.contains(word), "{word}");
    }
    for variable in sqz::env::VARIABLES {
        assert!(help.contains(variable.name), "{}", variable.name);
    }
    let version = sqz(bin(), &scratch.db(), &["--version"], b"", &[]);
    assert!(version.stdout_text().starts_with("sqz "));
}

#[test]
fn tokens_prints_a_count() {
    let scratch = Scratch::new("tokens");
    let run = sqz(bin(), &scratch.db(), &["tokens"], b"hello world\n", &[]);
    let n: usize = run.stdout_text().trim().parse().unwrap();
    assert!((2..=4).contains(&n), "{n}");
}

#[test]
fn no_cache_stores_nothing_and_stays_lossless() {
    let scratch = Scratch::new("nocache");
    let log = build_log("nocache");
    let run = sqz(
        bin(),
        &scratch.db(),
        &["compress", "--no-cache", "--cmd", "cargo build"],
        &with_trailer(log.as_bytes(), 0),
        &[],
    );
    assert_eq!(run.stdout_text(), log);
    let again = sqz(
        bin(),
        &scratch.db(),
        &["compress", "--no-cache", "--cmd", "cargo build"],
        &with_trailer(log.as_bytes(), 0),
        &[],
    );
    assert_eq!(again.stdout_text(), log);
    assert_eq!(
        expand(bin(), &scratch.db(), &hash16(log.as_bytes())).code,
        1
    );
}

#[test]
fn reset_clears_the_cache() {
    let scratch = Scratch::new("reset");
    let log = build_log("reset");
    compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    let run = sqz(bin(), &scratch.db(), &["reset"], b"", &[]);
    assert_eq!(run.code, 0);
    assert!(run.stdout_text().contains("cleared 1 stored entries"));
    assert_eq!(
        expand(bin(), &scratch.db(), &hash16(log.as_bytes())).code,
        1
    );
    assert_eq!(
        sqz(bin(), &scratch.db(), &["reset", "--all"], b"", &[]).code,
        0
    );
}

#[test]
fn demo_shows_reference_slice_and_exact_expand() {
    let out = Command::new(bin()).arg("demo").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("§ref:"));
    assert!(text.contains(":L41-80§"));
    assert!(text.contains("identical to the original: yes"));
    // The worker log folds by template and keeps its errors.
    assert!(text.contains(" lines like #1 \"2026-12-03 09:05:43,{774…797} INFO"));
    assert!(text
        .contains("ERROR [billing.worker] batch 305 failed: invoice INV-17314 has no customer id"));
}

#[test]
fn expand_reports_a_store_error_with_exit_three_and_records_events() {
    let scratch = Scratch::new("expand3");
    let blocked = scratch.dir.join("file");
    std::fs::write(&blocked, b"x").unwrap();
    let run = expand(bin(), &blocked.join("sessions.db"), "abcd");
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1);

    let log = build_log("events");
    compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    expand(bin(), &scratch.db(), &hash16(log.as_bytes()));
    let (store, _) = sqz::store::Store::open(&scratch.db(), 0).unwrap();
    let kinds: Vec<String> = store
        .totals_by_kind()
        .unwrap()
        .into_iter()
        .map(|(kind, ..)| kind)
        .collect();
    assert!(kinds.contains(&"expand".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"formatter".to_string()), "{kinds:?}");
}

#[test]
fn every_marker_names_the_command_that_restores_its_lines() {
    let scratch = Scratch::new("markers");
    let log = build_log("markers");
    let run = compress(bin(), &scratch.db(), "cargo build", log.as_bytes());
    let out = run.stdout_text();
    let marker = out
        .lines()
        .find(|l| l.starts_with("[… "))
        .expect("a marker");
    // `[… 60 build progress lines · sqz expand HASH:L1-60]`
    let count: usize = marker["[… ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let command = marker.split("· ").nth(1).unwrap().trim_end_matches(']');
    let reference = command.strip_prefix("sqz expand ").unwrap();
    let restored = expand(bin(), &scratch.db(), reference);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    let (first, last) = reference
        .split_once(":L")
        .unwrap()
        .1
        .split_once('-')
        .unwrap();
    let (first, last): (usize, usize) = (first.parse().unwrap(), last.parse().unwrap());
    let expected: String = log
        .lines()
        .skip(first - 1)
        .take(last - first + 1)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(restored.stdout_text(), expected);
    assert_eq!(count, last - first + 1);
    // The header names a prefix that expands to the whole original.
    let shown = run.stderr.rsplit(' ').next().unwrap().trim();
    assert_eq!(expand(bin(), &scratch.db(), shown).stdout, log.as_bytes());
}

#[test]
fn a_500k_line_find_is_grouped_not_passed_through() {
    let scratch = Scratch::new("hugefind");
    let listing = huge_find();
    assert!(listing.lines().count() >= 500_000);
    let run = sqz(
        bin(),
        &scratch.db(),
        &["compress", "--cmd", "find ."],
        &with_trailer(listing.as_bytes(), 0),
        &[],
    );
    assert_eq!(run.code, 0);
    let out = run.stdout_text();
    for project_file in ["./package.json", "./src/index.js", "./src/server.js"] {
        assert!(
            out.lines().any(|l| l == project_file),
            "{project_file} stays visible"
        );
    }
    assert!(out.len() < listing.len() / 100, "{} bytes out", out.len());
    assert!(
        out.contains("sqz expand"),
        "the bulk is folded with a marker"
    );
    assert_eq!(
        expand(bin(), &scratch.db(), &hash16(listing.as_bytes())).stdout,
        listing.as_bytes()
    );
}

/// Bad input for formatters, through the binary: real outputs cut mid-line, with a line from a
/// newer tool version inserted, or two runs interleaved. Whatever a formatter does, the unknown
/// line and every fact line stay visible.
#[test]
fn formatters_keep_unknown_lines_and_facts_of_cut_or_interleaved_output() {
    let scratch = Scratch::new("badinput");
    let fixtures = common::load_fixtures(&common::fixtures_dir());
    let by_name = |name: &str| {
        fixtures
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let unknown = "cache: 3 artifacts reused from the remote store (new in this version)";
    for name in [
        "cargo-test-failing",
        "pytest-fail-verbose",
        "jest-ts-fail-verbose",
        "go-test-fail-verbose",
        "git-status-long",
        "make-gcc-errors",
        "vitest-fail",
        "cargo-nextest-failing",
    ] {
        let fixture = by_name(name);
        let text = String::from_utf8_lossy(&fixture.input).into_owned();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(3.min(lines.len()), unknown);
        let mut cut = lines.join("\n");
        let mut end = cut.len() * 2 / 3;
        while !cut.is_char_boundary(end) {
            end -= 1;
        }
        cut.truncate(end);
        let other = by_name("cargo-test-passing");
        let interleaved: String = cut
            .lines()
            .zip(
                String::from_utf8_lossy(&other.input)
                    .lines()
                    .chain(std::iter::repeat("")),
            )
            .flat_map(|(a, b)| [a, b])
            .collect::<Vec<_>>()
            .join("\n");
        for input in [cut.clone(), interleaved] {
            let run = sqz(
                bin(),
                &scratch.db(),
                &["compress", "--no-abbrev", "--cmd", &fixture.cmd],
                &with_trailer(input.as_bytes(), 1),
                &[],
            );
            assert_eq!(run.code, 1);
            let mut out = run.stdout_text();
            if out.starts_with("§ref:") {
                continue;
            }
            // A near-repeat comes as a delta against what the agent was shown before: the
            // facts must be in the text it turns that into.
            if let Some(base) = out
                .strip_prefix("§delta:")
                .and_then(|rest| rest.split_once('§'))
                .map(|(base, _)| base.to_string())
            {
                let (store, _) = sqz::store::Store::open(&scratch.db(), 0).unwrap();
                let shown = store
                    .served(&base)
                    .unwrap()
                    .expect("the delta's base is stored");
                out = sqz::engine::delta::apply(&String::from_utf8(shown).unwrap(), &out)
                    .expect("the delta applies to its base");
            }
            assert!(
                out.contains(unknown),
                "{name}: the unknown line was dropped"
            );
            for line in input.lines().filter(|l| sqz::doc::facts::is_fact(l)) {
                assert!(out.contains(line), "{name}: fact line dropped: {line}");
            }
        }
    }
}

#[test]
fn recall_finds_an_earlier_output_by_its_words() {
    let scratch = Scratch::new("recall");
    let log = std::fs::read(common::fixtures_dir().join("cargo-test-failing/input.txt")).unwrap();
    let run = sqz(
        bin(),
        &scratch.db(),
        &["compress", "--cmd", "cargo test"],
        &with_trailer(&log, 101),
        &[],
    );
    assert_eq!(run.code, 101);
    let found = sqz(
        bin(),
        &scratch.db(),
        &["recall", "vat_rounding_half_up failed"],
        b"",
        &[],
    );
    assert_eq!(found.code, 0, "{}", found.stderr);
    let reference = format!("§ref:{}§", hash16(&log));
    assert!(
        found.stdout_text().contains(&reference),
        "{}",
        found.stdout_text()
    );
    assert!(found.stdout_text().starts_with("1. cargo test ("));
    let none = sqz(bin(), &scratch.db(), &["recall", "kubernetes"], b"", &[]);
    assert_eq!(
        (none.code, none.stdout_text().as_str()),
        (1, "nothing served so far matches\n")
    );
    let bad = sqz(bin(), &scratch.db(), &["recall", "!!! ---"], b"", &[]);
    assert_eq!(bad.code, 2);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
}

/// The words of a command's name, then `rest`.
fn command_line<'a>(spec: &'a sqz::cli::CommandSpec, rest: &[&'a str]) -> Vec<&'a str> {
    spec.name.split(' ').chain(rest.iter().copied()).collect()
}

/// Operands that satisfy a usage line's `REF`, `-- CMD ARGS…`; optional ones are left out.
fn sample_operands(args: &str) -> Vec<&str> {
    args.split_whitespace()
        .filter(|a| !a.starts_with('[') && !a.ends_with('…'))
        .map(|a| if a == "--" { "--" } else { "true" })
        .collect()
}

/// A value a flag's value name accepts: the first of `stdio|http`, a number for `N`.
fn sample_value(name: &str) -> &str {
    match name {
        "N" => "3000",
        "USD" => "3.00",
        _ => name.split('|').next().unwrap(),
    }
}

#[test]
fn every_command_table_makes_its_help_and_its_parser() {
    use sqz::cli::{parse, Command as Parsed, COMMANDS, HELP};
    let scratch = Scratch::new("tables");
    for spec in COMMANDS {
        let flags: Vec<_> = spec.flags.iter().chain([&HELP]).collect();
        for args in [
            [&["help"][..], &command_line(spec, &[])].concat(),
            command_line(spec, &["--help"]),
            command_line(spec, &["-h"]),
        ] {
            let run = sqz(bin(), &scratch.db(), &args, b"", &[]);
            assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
            let out = run.stdout_text();
            assert!(
                out.starts_with(&format!("usage: {}\n", sqz::cli::usage(spec))),
                "{args:?}: {out}"
            );
            for flag in &flags {
                let mut shown = format!("--{}", flag.long);
                if let Some(short) = flag.short {
                    shown = format!("-{short}, {shown}");
                }
                if let Some(value) = flag.value {
                    shown = format!("{shown} {value}");
                }
                assert!(out.contains(&shown), "{args:?} lacks {shown}: {out}");
                assert!(out.contains(flag.meaning), "{args:?}: {out}");
            }
        }
        let operands = sample_operands(spec.args);
        for flag in spec.flags {
            let long = format!("--{}", flag.long);
            let short = flag.short.map(|c| format!("-{c}"));
            for form in std::iter::once(&long).chain(&short) {
                let mut rest = vec![form.as_str()];
                rest.extend(flag.value.map(sample_value));
                rest.extend(&operands);
                let args = command_line(spec, &rest);
                let parsed = parse(args.iter().map(|a| a.into()));
                assert!(
                    matches!(parsed, Ok(ref c) if !matches!(c, Parsed::Help { .. })),
                    "{args:?}: {}",
                    parsed.err().map(|e| e.to_string()).unwrap_or_default()
                );
            }
        }
        let mut rest = vec!["--not-in-the-table"];
        rest.extend(&operands);
        let args = command_line(spec, &rest);
        assert!(parse(args.iter().map(|a| a.into())).is_err(), "{args:?}");
    }
}

#[test]
fn help_names_no_variable_outside_the_table() {
    let scratch = Scratch::new("helpvars");
    let help = sqz(bin(), &scratch.db(), &["help"], b"", &[]).stdout_text();
    let names: Vec<&str> = sqz::env::VARIABLES.iter().map(|v| v.name).collect();
    for name in &names {
        assert!(help.contains(&format!("\n  {name} ")), "{name} not listed");
    }
    let looks_like_a_variable = |w: &str| {
        w.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            && (w.contains('_') || w.starts_with("SQZ"))
            && w.len() > 2
    };
    for word in help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if looks_like_a_variable(word) {
            assert!(names.contains(&word), "{word} is not in env::VARIABLES");
        }
    }
    for args in [&["help", "--x"][..], &["help", "nope"], &["help", "-q"]] {
        let run = sqz(bin(), &scratch.db(), args, b"", &[]);
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(
            run.stderr,
            format!("sqz: no help for '{}' (see sqz help)\n", args[1])
        );
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn colour_words_diff_keeps_the_colour_that_tells_old_from_new() {
    let s = Scratch::new("color-words");
    let repo = s.dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=dev", "-c", "user.email=dev@example.test"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    };
    git(&["init", "-q", "."]);
    std::fs::write(repo.join("a.txt"), "the quick brown fox\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "a"]);
    std::fs::write(repo.join("a.txt"), "the slow brown cat\n").unwrap();
    let diff = git(&["diff", "--color-words", "--color=always"]);
    let run = common::compress(
        bin(),
        &s.db(),
        "git diff --color-words --color=always",
        &diff,
    );
    assert_eq!(run.code, 0);
    let shown = String::from_utf8_lossy(&run.stdout);
    assert!(!shown.contains("quickslow"), "{shown}");
    assert_eq!(run.stdout, diff);
}

#[test]
fn a_command_killed_midway_still_shows_what_it_printed() {
    use std::io::Write as _;
    use std::os::unix::process::ExitStatusExt;
    let s = Scratch::new("sigterm");
    let printed = "   Compiling billing v0.9.0 (/home/dev/billing)\nerror[E0308]: mismatched types\n  --> src/lib.rs:12:5\n";
    let mut child = Command::new(bin())
        .args(["compress", "--cmd", "cargo build"])
        .env("SQZ_DB_PATH", s.db())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(printed.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The build is still running (stdin stays open) when the agent's timeout ends it: once
    // sqz catches SIGTERM (bit 15 of SigCgt in /proc), as it does before it reads.
    let catches_term = || {
        std::fs::read_to_string(format!("/proc/{}/status", child.id()))
            .ok()
            .and_then(|status| {
                let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
                u64::from_str_radix(mask.trim(), 16).ok()
            })
            .is_some_and(|mask| mask & (1 << 14) != 0)
    };
    for _ in 0..1000 {
        if catches_term() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(catches_term());
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(String::from_utf8_lossy(&out.stdout), printed);
    assert_eq!(out.status.signal(), Some(15), "{:?}", out.status);
}

#[test]
fn an_oversized_output_keeps_its_status_when_blank_lines_follow_the_trailer() {
    let s = Scratch::new("oversized-blank");
    let mut input: Vec<u8> = "   Compiling a v1.0.0\n".repeat(60_000).into_bytes();
    assert!(input.len() > 1 << 20);
    input.extend_from_slice(b"\n__SQZ_EXIT_2__\n");
    // A background writer's blank lines arrive after the trailer.
    input.extend_from_slice(&b"\n".repeat(200));
    let run = sqz(
        bin(),
        &s.db(),
        &["compress", "--cmd", "make"],
        &input,
        &[("SQZ_MAX_INPUT_MB", "1")],
    );
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout.len(), 60_000 * 22);
}

#[test]
fn a_store_left_open_to_others_is_made_private_again() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("store-modes");
    let home = s.dir.join("home");
    let dir = home.join(".sqz");
    let db = dir.join("sessions.db");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let set =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    let run = || {
        Command::new(bin())
            .args(["compress", "--cmd", "cargo build"])
            .env("HOME", &home)
            .env_remove("SQZ_DB_PATH")
            .output()
            .unwrap()
    };
    run();
    assert_eq!((mode(&dir), mode(&db)), (0o700, 0o600));
    // A store that some other tool or an old umask opened up.
    set(&dir, 0o777);
    set(&db, 0o644);
    run();
    assert_eq!((mode(&dir), mode(&db)), (0o700, 0o600));
    // A directory given in SQZ_DB_PATH may be shared: only the files are tightened.
    let shared = s.dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    set(&shared, 0o755);
    let mine = shared.join("s.db");
    sqz(bin(), &mine, &["compress", "--cmd", "ls"], b"x\n", &[]);
    set(&mine, 0o644);
    sqz(bin(), &mine, &["compress", "--cmd", "ls"], b"y\n", &[]);
    assert_eq!((mode(&shared), mode(&mine)), (0o755, 0o600));
}

/// `sqz expand`, `recall` and `stats` only read: on a store whose directory is a read-only
/// mount they used to exit 3 ("cannot open") once the WAL had been checkpointed away. They
/// read it read-only now, with or without a WAL beside it. The mount is made in a private
/// mount namespace (`unshare -m`), so nothing outside the test sees it.
#[test]
fn expand_reads_a_store_on_a_read_only_mount() {
    let scratch = Scratch::new("read-only");
    let output = build_log("read-only");
    let first = compress(bin(), &scratch.db(), "make", output.as_bytes());
    assert_eq!(first.code, 0);
    let hash = &hash16(output.as_bytes())[..12];
    let store_dir = scratch.db().parent().unwrap().to_path_buf();
    let read_only = |command: &str| {
        let script = format!(
            "mount --bind -o ro '{dir}' '{dir}' && touch '{dir}/probe' 2>/dev/null && exit 99; \
             SQZ_DB_PATH='{db}' '{bin}' {command}",
            dir = store_dir.display(),
            db = scratch.db().display(),
            bin = bin().display()
        );
        let out = Command::new("unshare")
            .args(["-m", "sh", "-c", &script])
            .output()
            .expect("unshare runs");
        assert_ne!(out.status.code(), Some(99), "the mount is not read-only");
        (
            out.status.code(),
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for wal in [true, false] {
        if !wal {
            // The WAL checkpointed into the database and removed, as SQLite does when its last
            // connection closes normally.
            let conn = rusqlite::Connection::open(scratch.db()).unwrap();
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
            drop(conn);
            assert!(!store_dir.join("sessions.db-wal").exists());
        }
        let (code, stdout, stderr) = read_only(&format!("expand {hash}"));
        assert_eq!(code, Some(0), "wal {wal}: {stderr}");
        assert!(stdout == output.as_bytes(), "wal {wal}: {stderr}");
        let (code, stdout, stderr) = read_only("stats --json");
        assert_eq!(code, Some(0), "wal {wal}: {stderr}");
        assert!(
            String::from_utf8_lossy(&stdout).contains("\"calls\""),
            "{stderr}"
        );
    }
}
