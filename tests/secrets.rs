//! Secrets never reach the store: not through colour codes that split them from their key, not
//! in formats first missed, and not in the command label of an event row.

mod common;

use common::{compress, Scratch};
use std::path::Path;
use std::process::Command;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sqz"))
}

/// Whether any of the store's files (the database, its WAL and shared memory) holds `secret`.
fn store_holds(db: &Path, secret: &str) -> bool {
    ["", "-wal", "-shm"].iter().any(|suffix| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        std::fs::read(Path::new(&name))
            .map(|bytes| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
            .unwrap_or(false)
    })
}

/// A filler of ordinary output, so there is something worth storing around the secret.
fn build_log() -> String {
    (0..40)
        .map(|k| format!("   Compiling crate-{k} v0.{k}.1 (/home/dev/app/crates/crate-{k})\n"))
        .collect()
}

#[test]
fn a_secret_split_from_its_key_by_colour_codes_is_not_stored() {
    let s = Scratch::new("secret-colour");
    let dir = s.dir.join("app");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".env"),
        "DB_HOST=localhost\nDB_PASSWORD=hunter2colour\nDB_PORT=5432\n",
    )
    .unwrap();
    // The real grep, coloured as an agent's shell alias or a flag makes it.
    let out = Command::new("grep")
        .args(["--color=always", "-n", "DB_", ".env"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.stdout.contains(&0x1b), "grep coloured its output");
    let mut input = build_log().into_bytes();
    input.extend_from_slice(&out.stdout);
    let run = compress(bin(), &s.db(), "grep --color=always -n DB_ .env", &input);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, input, "untouchable: passed byte for byte");
    assert!(!store_holds(&s.db(), "hunter2colour"));
}

#[test]
fn secrets_in_formats_once_missed_are_not_stored() {
    for line in [
        "PGPASSWORD=hunter2pg",
        "REDIS_PASS=hunter2redis",
        "SIGNING_PASSPHRASE=hunter2phrase",
        "GITHUB_PAT=hunter2pat",
        "token: ghp_hunter2ghp0123456789abcdefABCDEF",
        "set-cookie: id=eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoxfQ.hunter2jwt123; Path=/",
        "machine api.example.test login bob password hunter2netrc",
        "posting to https://hooks.slack.com/services/T0001/B0001/hunter2slack",
        "dsn https://hunter2sentry0123456789abcdef@o1.ingest.sentry.io/7",
        ".dockerconfigjson: eyJhdXRocyI6hunter2dockerconfigjson0123456789=",
        "  \".dockerconfigjson\": \"eyJhdXRocyI6hunter2dockerjson0123456789\",",
        "bob  77  0.0  0.0  9000  2000 ?  S  10:03 0:00 curl -u deploy:hunter2curl https://x",
        "ci   78  0.3  0.2 99120 20480 ?  Sl 10:02 0:04 node deploy.js --api-key=hunter2flag",
    ] {
        let s = Scratch::new("secret-format");
        // The part of each line that must not be stored.
        let secret = line
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| w.contains("hunter2"))
            .unwrap();
        let input = format!("{}{line}\n{}", build_log(), build_log());
        let run = compress(bin(), &s.db(), "env", input.as_bytes());
        assert_eq!(run.code, 0);
        assert!(!store_holds(&s.db(), secret), "{line} was stored");
    }
}

#[test]
fn credentials_in_command_labels_are_redacted_before_any_write() {
    let s = Scratch::new("secret-label");
    let output = build_log();
    for label in [
        "curl -u admin:hunter2label https://api.example.test/builds",
        "mysql -uroot -phunter2label -e 'select 1'",
        "git push https://bob:hunter2label@git.example.test/app.git",
    ] {
        let run = compress(bin(), &s.db(), label, output.as_bytes());
        assert_eq!(run.code, 0);
        assert!(
            !store_holds(&s.db(), "hunter2label"),
            "{label} reached the store"
        );
    }
    // The calls were recorded, under their redacted labels.
    let conn = rusqlite::Connection::open(s.db()).unwrap();
    let labels: Vec<String> = conn
        .prepare("SELECT label FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(labels.len(), 3);
    assert!(labels[0].starts_with("curl -u *** "), "{labels:?}");
}

#[test]
fn prose_and_columns_that_name_passwords_still_compress() {
    let s = Scratch::new("secret-prose");
    let mut input = build_log();
    input.push_str("warning: the password reset flow has no rate limit\n");
    input.push_str("migrating column users.password_hash to argon2id\n");
    input.push_str("fixture: password=changeme (placeholder for tests)\n");
    input.push_str(&build_log());
    let run = compress(bin(), &s.db(), "cargo build", input.as_bytes());
    // The repeated build lines fold (losslessly where a line could be a credential).
    assert!(run.stderr.starts_with("[sqz] "), "{}", run.stderr);
    assert!(run.stdout.len() * 2 < input.len() * 3 / 2 && run.stdout.len() < input.len());
    let out = String::from_utf8(run.stdout).unwrap();
    assert!(out.contains("the password reset flow has no rate limit"));
    assert!(out.contains("users.password_hash"));
}

/// `ps` shows every process's command line, and a MySQL client started with `-pSECRET` shows
/// its password there. A real `ps aux`, with such a process running, is not stored.
#[test]
fn a_mysql_password_in_ps_output_is_not_stored() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("secret-ps");
    let client = s.dir.join("mysql");
    std::fs::write(&client, "#!/bin/sh\nsleep 30\n").unwrap();
    std::fs::set_permissions(&client, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut running = Command::new(&client)
        .args(["-uroot", "-phunter2ps", "-h", "db.internal", "app"])
        .spawn()
        .unwrap();
    let ps = Command::new("ps").args(["aux"]).output().unwrap();
    let _ = running.kill();
    let _ = running.wait();
    let listing = String::from_utf8_lossy(&ps.stdout).into_owned();
    assert!(listing.contains("-phunter2ps"), "ps shows the command line");
    let run = compress(bin(), &s.db(), "ps aux", listing.as_bytes());
    assert_eq!(run.code, 0);
    assert!(String::from_utf8_lossy(&run.stdout).contains("-phunter2ps"));
    assert!(
        !store_holds(&s.db(), "hunter2ps"),
        "the password was stored"
    );
}
