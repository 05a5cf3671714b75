//! The store's versioned schema. `user_version` holds the version; each migration moves the
//! store forward by one step inside a transaction, so an old store upgrades in place.

use rusqlite::Connection;

pub const VERSION: i64 = 3;

const MIGRATIONS: [&str; 3] = [
    r#"
CREATE TABLE entries (
    hash           TEXT PRIMARY KEY,     -- first 16 hex digits of the SHA-256 of the original
    original       BLOB NOT NULL,        -- the bytes the command printed, trailer stripped
    served         BLOB NOT NULL,        -- what the agent was shown the last time
    label          TEXT NOT NULL,
    path_key       TEXT,                 -- the file a `cat FILE`-like label read
    original_bytes INTEGER NOT NULL,
    served_bytes   INTEGER NOT NULL,
    tokens_in      INTEGER NOT NULL,
    tokens_out     INTEGER NOT NULL,
    first_served   INTEGER NOT NULL,     -- unix milliseconds
    last_served    INTEGER NOT NULL,
    pinned         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX entries_last_served ON entries(last_served);
CREATE INDEX entries_path_key ON entries(path_key) WHERE path_key IS NOT NULL;
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,         -- unix milliseconds
    label      TEXT NOT NULL,
    kind       TEXT NOT NULL,            -- fresh, formatter, generic, ref, slice, passthrough, safe, expand (template, delta, wrote: see EventKind)
    tokens_in  INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    hash       TEXT
);
CREATE INDEX events_at ON events(at);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE VIRTUAL TABLE served_fts USING fts5(body, tokenize = 'unicode61');
"#,
    r#"
-- SimHash of the served text's lines, for finding the base of a delta (MCP file reads).
ALTER TABLE entries ADD COLUMN simhash INTEGER;
"#,
    r#"
-- What the reports group by: the command family (`cargo test`, `git status`) and the working
-- directory of the call. Rows from before this step have neither; reports derive the family
-- from the label.
ALTER TABLE events ADD COLUMN family TEXT;
ALTER TABLE events ADD COLUMN project TEXT;
"#,
];

/// Brings the schema to `VERSION`. A store from a newer sqz is refused rather than damaged.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current == VERSION {
        return Ok(());
    }
    if current > VERSION {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_MISMATCH),
            Some(format!(
                "store schema v{current} is newer than this sqz (v{VERSION})"
            )),
        ));
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Another process may have migrated while we waited for the lock.
    let mut version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    while version < VERSION {
        tx.execute_batch(MIGRATIONS[version as usize])?;
        version += 1;
        tx.pragma_update(None, "user_version", version)?;
    }
    tx.commit()
}
