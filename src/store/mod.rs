//! The store: one SQLite file (WAL, `synchronous=NORMAL`, busy timeout) that keeps originals,
//! what was served, one event row per call and an FTS5 index of served text. Only this module
//! touches SQLite. Every write of one call happens in one transaction.

mod schema;

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What an entry's agent was last shown. An entry served exactly as it came (a listing passed
/// through, a whole file read) keeps its text once, in `original`, with `served` left empty
/// and `served_bytes` giving its length: a 100 MB output is then neither stored twice nor held
/// twice while it is written.
const SERVED: &str =
    "CASE WHEN served_bytes > 0 AND length(served) = 0 THEN original ELSE served END";
/// Served text indexed for `recall` is cut to this many bytes per entry.
const FTS_CAP_BYTES: usize = 16 * 1024;
const WAL_TRUNCATE_BYTES: u64 = 512 * 1024;
const BUSY_TIMEOUT: Duration = Duration::from_millis(2500);
const PRUNE_EVERY_MS: i64 = 3600 * 1000;
const EVENT_RETENTION_MS: i64 = 90 * 24 * 3600 * 1000;
/// The most recently served entries a delta-base search compares SimHashes with: the search
/// stays bounded in time whatever the store holds.
const NEAR_SCAN: usize = 256;

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Size ceiling and retention, from the environment by the command layer.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: u64,
    pub retention_ms: i64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 512 * 1024 * 1024,
            retention_ms: 30 * 24 * 3600 * 1000,
        }
    }
}

#[derive(Debug)]
pub struct StoreError {
    pub path: PathBuf,
    pub message: String,
    pub corrupt: bool,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "store {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for StoreError {}

pub type Result<T> = std::result::Result<T, StoreError>;

/// What the dedup probes need to know about a stored entry.
#[derive(Clone, Copy, Debug)]
pub struct EntryState {
    pub pinned: bool,
    pub last_served: i64,
}

/// A recent file read that a new output may be a line slice of.
pub struct SliceCandidate {
    pub hash: String,
    pub original: Vec<u8>,
    pub served: Vec<u8>,
    pub state: EntryState,
}

/// An entry to write: the original and what the agent is shown.
pub struct EntryWrite<'a> {
    pub original: &'a [u8],
    pub served: &'a [u8],
    pub path_key: Option<&'a str>,
    /// SimHash of the served text, for entries that may later be the base of a delta.
    pub simhash: Option<u64>,
}

/// How one call was served, or what else it did: the `kind` of its event row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Stored and sent whole: nothing worth folding, or source code.
    Fresh,
    /// A formatter's result.
    Formatter,
    /// The generic pipeline's result (JSON compaction, runs of repeated lines, back-references).
    Generic,
    /// The generic pipeline's result where lines of one template folded or became value tables.
    Template,
    /// An exact repeat, sent as `§ref:HASH§`.
    Ref,
    /// Lines of an earlier output, sent as `§ref:HASH:La-b§`.
    Slice,
    /// A re-read after an edit, sent as `§delta:HASH§` and its changed lines.
    Delta,
    /// Not stored: binary, invalid UTF-8, oversized, empty, or no store available.
    Passthrough,
    /// Untouchable content (stack trace, PEM, credential, SQL DDL): byte for byte, never stored.
    Safe,
    /// `sqz expand` or an MCP expand of something served.
    Expand,
    /// Text the agent wrote itself (Claude Code Write or Edit), recorded so that a later read
    /// of it can be a reference or a delta; nothing was served.
    Wrote,
}

impl EventKind {
    pub const ALL: [EventKind; 11] = [
        EventKind::Fresh,
        EventKind::Formatter,
        EventKind::Generic,
        EventKind::Template,
        EventKind::Ref,
        EventKind::Slice,
        EventKind::Delta,
        EventKind::Passthrough,
        EventKind::Safe,
        EventKind::Expand,
        EventKind::Wrote,
    ];

    /// The word stored in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Fresh => "fresh",
            EventKind::Formatter => "formatter",
            EventKind::Generic => "generic",
            EventKind::Template => "template",
            EventKind::Ref => "ref",
            EventKind::Slice => "slice",
            EventKind::Delta => "delta",
            EventKind::Passthrough => "passthrough",
            EventKind::Safe => "safe",
            EventKind::Expand => "expand",
            EventKind::Wrote => "wrote",
        }
    }

    /// The kind a stored word names.
    pub fn parse(word: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == word)
    }
}

/// Everything one call writes.
pub struct Record<'a> {
    pub now: i64,
    pub label: &'a str,
    /// The command family the reports group by (`cargo test`).
    pub family: &'a str,
    /// The working directory of the call, if known.
    pub project: Option<&'a str>,
    pub kind: EventKind,
    pub tokens_in: usize,
    pub tokens_out: usize,
    pub hash: Option<&'a str>,
    /// Store or refresh this entry (new content, or content served again).
    pub entry: Option<EntryWrite<'a>>,
    /// Mark this already stored entry as served now (a reference to it was sent).
    pub touch: Option<&'a str>,
}

/// One event row as the reports read it.
pub struct EventRow {
    pub at: i64,
    pub label: String,
    /// `None` on rows written before the store had the column.
    pub family: Option<String>,
    pub kind: String,
    pub tokens_in: i64,
    pub tokens_out: i64,
    pub hash: Option<String>,
    pub project: Option<String>,
}

/// A stored entry as `recent_entries` lists it.
pub struct RecentEntry {
    pub hash: String,
    pub label: String,
    pub last_served: i64,
    pub tokens_in: i64,
    pub served: Vec<u8>,
}

/// A possible base for a delta: its hash and what the agent was shown of it.
pub struct DeltaCandidate {
    pub hash: String,
    pub served: Vec<u8>,
}

/// One `recall` result.
pub struct RecallHit {
    pub hash: String,
    pub label: String,
    pub last_served: i64,
    pub snippet: String,
}

/// Turns free text into an FTS5 query: each word quoted (so no word is read as syntax), any of
/// them may match, and BM25 ranks entries holding more of them first. `None` when the text has
/// no word.
pub fn recall_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .take(32)
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// How a hash prefix resolves.
pub enum Resolved {
    None,
    One(String),
    Ambiguous(usize),
}

impl Store {
    /// Opens the store at `path`, creating its directory (0700) and file (0600) when missing.
    /// A file that is not a readable SQLite database is moved aside and a new one started; the
    /// second value then says so.
    pub fn open(path: &Path, now: i64) -> Result<(Store, Option<String>)> {
        match Store::open_once(path) {
            Ok(store) => Ok((store, None)),
            Err(e) if e.corrupt => {
                let aside = move_aside(path, now).map_err(|io| StoreError {
                    path: path.to_path_buf(),
                    message: format!("corrupt, and cannot move it aside: {io}"),
                    corrupt: true,
                })?;
                let store = Store::open_once(path)?;
                let notice = format!(
                    "sqz: store {} was corrupt ({}); moved it to {} and started a new one",
                    path.display(),
                    e.message,
                    aside.display()
                );
                Ok((store, Some(notice)))
            }
            Err(e) => Err(e),
        }
    }

    fn open_once(path: &Path) -> Result<Store> {
        let err = |e: rusqlite::Error| StoreError::from_sqlite(path, e);
        prepare_file(path).map_err(|io| StoreError {
            path: path.to_path_buf(),
            message: io_message(&io),
            corrupt: false,
        })?;
        let mut conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
                .map_err(err)?;
        }
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0; PRAGMA cache_size=-1024",
        )
        .map_err(err)?;
        // Every sqz process is short-lived and usually the last connection: a checkpoint on
        // each close would cost fsyncs on every call. Instead `record` truncates the WAL once
        // it passes `WAL_TRUNCATE_BYTES`, which also bounds what each new process reads to
        // rebuild the WAL index (a new process always rebuilds it).
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(err)?;
        schema::migrate(&mut conn).map_err(err)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing store for reading only, where it cannot be written: a read-only mount,
    /// or a file the user may read but not write. Nothing is created, migrated or tightened.
    /// Without a WAL file beside it the database is all in its main file and is opened as
    /// immutable, since SQLite could not create the shared-memory file it otherwise needs.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let err = |e: rusqlite::Error| StoreError::from_sqlite(path, e);
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut uri = String::from("file:");
        for c in path.to_string_lossy().chars() {
            match c {
                '%' => uri.push_str("%25"),
                '?' => uri.push_str("%3f"),
                '#' => uri.push_str("%23"),
                c => uri.push(c),
            }
        }
        uri.push_str(if Path::new(&wal).exists() {
            "?mode=ro"
        } else {
            "?immutable=1"
        });
        let conn = Connection::open_with_flags(&uri, flags).map_err(err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(err)?;
        if version != schema::VERSION {
            return Err(StoreError {
                path: path.to_path_buf(),
                message: format!(
                    "read-only, and its schema v{version} is not this sqz's v{}",
                    schema::VERSION
                ),
                corrupt: false,
            });
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether SQLite could open the file only for reading (a read-only mount, a file this user
    /// may not write): nothing can be recorded in it.
    pub fn is_read_only(&self) -> bool {
        self.conn
            .is_readonly(rusqlite::DatabaseName::Main)
            .unwrap_or(true)
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::from_sqlite(&self.path, e)
    }

    pub fn lookup(&self, hash: &str) -> Result<Option<EntryState>> {
        self.conn
            .query_row(
                "SELECT pinned, last_served FROM entries WHERE hash = ?1",
                [hash],
                |r| {
                    Ok(EntryState {
                        pinned: r.get::<_, i64>(0)? != 0,
                        last_served: r.get(1)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The time of the latest compaction marker (0 when none was set).
    pub fn compaction_marker(&self) -> Result<i64> {
        let value: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'compaction_marker'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    pub fn set_compaction_marker(&mut self, now: i64) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO meta(key, value) VALUES('compaction_marker', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [now.to_string()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Recent file reads that may contain a slice: those of the same file first, then the most
    /// recent other reads, each no larger than `max_bytes`.
    pub fn slice_candidates(
        &self,
        path_key: Option<&str>,
        min_bytes: usize,
        max_bytes: usize,
    ) -> Result<Vec<SliceCandidate>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT hash, original, {SERVED}, pinned, last_served FROM entries
                     WHERE path_key IS NOT NULL AND original_bytes > ?2 AND original_bytes <= ?3
                     ORDER BY (path_key = ?1) DESC, last_served DESC LIMIT 4"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![path_key, min_bytes as i64, max_bytes as i64], |r| {
                Ok(SliceCandidate {
                    hash: r.get(0)?,
                    original: r.get(1)?,
                    served: r.get(2)?,
                    state: EntryState {
                        pinned: r.get::<_, i64>(3)? != 0,
                        last_served: r.get(4)?,
                    },
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Writes one call in one transaction: the entry (if any), the touch (if any), the event,
    /// the FTS row for new served text, then eviction over the ceiling and periodic pruning.
    pub fn record(&mut self, rec: &Record, limits: Limits) -> Result<()> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::from_sqlite(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        if let (Some(entry), Some(hash)) = (&rec.entry, rec.hash) {
            // Text served as it came is kept once: `served` stays empty (see `SERVED`).
            let served = if entry.served == entry.original && !entry.served.is_empty() {
                &[][..]
            } else {
                entry.served
            };
            let previous: Option<(i64, Vec<u8>)> = tx
                .query_row(
                    "SELECT rowid, served FROM entries WHERE hash = ?1",
                    [hash],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(err)?;
            execute_in_place(
                &tx,
                "INSERT INTO entries(hash, original, served, label, path_key, original_bytes, served_bytes,
                                     tokens_in, tokens_out, first_served, last_served, simhash)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)
                 ON CONFLICT(hash) DO UPDATE SET served = excluded.served, served_bytes = excluded.served_bytes,
                     tokens_out = excluded.tokens_out, label = excluded.label,
                     path_key = coalesce(excluded.path_key, path_key), last_served = excluded.last_served,
                     simhash = coalesce(excluded.simhash, simhash)",
                &[
                    ValueRef::Text(hash.as_bytes()),
                    ValueRef::Blob(entry.original),
                    ValueRef::Blob(served),
                    ValueRef::Text(rec.label.as_bytes()),
                    entry
                        .path_key
                        .map_or(ValueRef::Null, |p| ValueRef::Text(p.as_bytes())),
                    ValueRef::Integer(entry.original.len() as i64),
                    ValueRef::Integer(entry.served.len() as i64),
                    ValueRef::Integer(rec.tokens_in as i64),
                    ValueRef::Integer(rec.tokens_out as i64),
                    ValueRef::Integer(rec.now),
                    entry.simhash.map_or(ValueRef::Null, |h| ValueRef::Integer(h as i64)),
                ],
            )
            .map_err(err)?;
            let unchanged = previous
                .as_ref()
                .is_some_and(|(_, before)| before == served);
            if !unchanged {
                let rowid: i64 = match previous {
                    Some((rowid, _)) => rowid,
                    None => tx.last_insert_rowid(),
                };
                tx.execute("DELETE FROM served_fts WHERE rowid = ?1", [rowid])
                    .map_err(err)?;
                let body = String::from_utf8_lossy(entry.served);
                tx.execute(
                    "INSERT INTO served_fts(rowid, body) VALUES(?1, ?2)",
                    params![rowid, crate::text::cut_at_char(&body, FTS_CAP_BYTES)],
                )
                .map_err(err)?;
            }
        }
        if let Some(hash) = rec.touch {
            tx.execute(
                "UPDATE entries SET last_served = ?2 WHERE hash = ?1",
                params![hash, rec.now],
            )
            .map_err(err)?;
        }
        tx.execute(
            "INSERT INTO events(at, label, kind, tokens_in, tokens_out, hash, family, project)
             VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                rec.now,
                rec.label,
                rec.kind.as_str(),
                rec.tokens_in as i64,
                rec.tokens_out as i64,
                rec.hash,
                rec.family,
                rec.project
            ],
        )
        .map_err(err)?;
        if let (Some(_), Some(hash)) = (&rec.entry, rec.hash) {
            evict_over_ceiling(&tx, limits.max_bytes, hash).map_err(err)?;
            prune_if_due(&tx, rec.now, limits.retention_ms).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        self.truncate_wal_if_large();
        Ok(())
    }

    /// Checkpoints and empties the WAL once it has grown past `WAL_TRUNCATE_BYTES`. Best
    /// effort: when other processes hold it, a later call does it.
    fn truncate_wal_if_large(&self) {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        let size = std::fs::metadata(PathBuf::from(wal))
            .map(|m| m.len())
            .unwrap_or(0);
        if size > WAL_TRUNCATE_BYTES {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }

    /// Records one event outside a compression call (an expand). `family` is that of the call
    /// that served what is expanded, so the reports can blame that call.
    pub fn record_event(&mut self, rec: &Record) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO events(at, label, kind, tokens_in, tokens_out, hash, family, project)
                 VALUES(?1, ?2, ?3, 0, 0, ?4, ?5, ?6)",
                params![
                    rec.now,
                    rec.label,
                    rec.kind.as_str(),
                    rec.hash,
                    rec.family,
                    rec.project
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The label of the stored entry `hash`, if there is one.
    pub fn entry_label(&self, hash: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT label FROM entries WHERE hash = ?1", [hash], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The event rows from `since` (unix ms) on, oldest first: what the reports count.
    pub fn events_since(&self, since: i64) -> Result<Vec<EventRow>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT at, label, family, kind, tokens_in, tokens_out, hash, project
                 FROM events WHERE at >= ?1 ORDER BY at, id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([since], |r| {
                Ok(EventRow {
                    at: r.get(0)?,
                    label: r.get(1)?,
                    family: r.get(2)?,
                    kind: r.get(3)?,
                    tokens_in: r.get(4)?,
                    tokens_out: r.get(5)?,
                    hash: r.get(6)?,
                    project: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Resolves a lowercase hex prefix to one stored hash.
    pub fn resolve(&self, prefix: &str) -> Result<Resolved> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT hash FROM entries WHERE hash GLOB ?1 LIMIT 2")
            .map_err(|e| self.err(e))?;
        let hashes: Vec<String> = stmt
            .query_map([format!("{prefix}*")], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        Ok(match hashes.len() {
            0 => Resolved::None,
            1 => Resolved::One(hashes.into_iter().next().unwrap_or_default()),
            _ => {
                let n: i64 = self
                    .conn
                    .query_row(
                        "SELECT count(*) FROM entries WHERE hash GLOB ?1",
                        [format!("{prefix}*")],
                        |r| r.get(0),
                    )
                    .map_err(|e| self.err(e))?;
                Resolved::Ambiguous(n as usize)
            }
        })
    }

    pub fn original(&self, hash: &str) -> Result<Option<Vec<u8>>> {
        self.conn
            .query_row(
                "SELECT original FROM entries WHERE hash = ?1",
                [hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Sets or clears the pin of one entry; false when there is no such entry.
    pub fn set_pinned(&mut self, hash: &str, pinned: bool) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE entries SET pinned = ?2 WHERE hash = ?1",
                params![hash, pinned as i64],
            )
            .map(|n| n > 0)
            .map_err(|e| self.err(e))
    }

    /// Deletes one entry and its index row; false when there is no such entry.
    pub fn forget(&mut self, hash: &str) -> Result<bool> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| StoreError::from_sqlite(&self.path, e))?;
        tx.execute(
            "DELETE FROM served_fts WHERE rowid IN (SELECT rowid FROM entries WHERE hash = ?1)",
            [hash],
        )
        .map_err(|e| StoreError::from_sqlite(&self.path, e))?;
        let n = tx
            .execute("DELETE FROM entries WHERE hash = ?1", [hash])
            .map_err(|e| StoreError::from_sqlite(&self.path, e))?;
        tx.commit()
            .map_err(|e| StoreError::from_sqlite(&self.path, e))?;
        Ok(n > 0)
    }

    /// Clears the cache (entries and their index); with `everything`, events and metadata too.
    /// Returns the number of entries removed.
    pub fn reset(&mut self, everything: bool) -> Result<usize> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::from_sqlite(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let n = tx.execute("DELETE FROM entries", []).map_err(err)?;
        tx.execute("DELETE FROM served_fts", []).map_err(err)?;
        if everything {
            tx.execute("DELETE FROM events", []).map_err(err)?;
            tx.execute("DELETE FROM meta", []).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        self.conn.execute_batch("VACUUM").map_err(err)?;
        Ok(n)
    }

    /// When the newest event was recorded (ms since the epoch), for `sqz doctor`.
    pub fn last_event_at(&self) -> Result<Option<i64>> {
        self.conn
            .query_row("SELECT max(at) FROM events", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Totals per event kind: (kind, calls, tokens in, tokens out).
    pub fn totals_by_kind(&self) -> Result<Vec<(String, i64, i64, i64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT kind, count(*), total(tokens_in), total(tokens_out) FROM events GROUP BY kind ORDER BY kind")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get::<_, f64>(2)? as i64,
                    r.get::<_, f64>(3)? as i64,
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// The `limit` most recently served entries, newest first, for `sqz resume`.
    pub fn recent_entries(&self, limit: usize) -> Result<Vec<RecentEntry>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT hash, label, last_served, tokens_in, {SERVED} FROM entries ORDER BY last_served DESC, rowid DESC LIMIT ?1"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([limit as i64], |r| {
                Ok(RecentEntry {
                    hash: r.get(0)?,
                    label: r.get(1)?,
                    last_served: r.get(2)?,
                    tokens_in: r.get(3)?,
                    served: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Fresh entries that may be the base of a delta for a new text: those read from the same
    /// path first (newest first), then those whose SimHash is within `max_distance` bits,
    /// closest first; at most `limit`. `fresh_after` is `dedup::Freshness::oldest()`, the
    /// freshness rule as a bound, so only entries the caller could reference are read.
    pub fn delta_candidates(
        &self,
        path_key: Option<&str>,
        simhash: u64,
        max_distance: u32,
        fresh_after: i64,
        limit: usize,
    ) -> Result<Vec<DeltaCandidate>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT hash, simhash, coalesce(path_key = ?1, 0), last_served FROM entries
                 WHERE simhash IS NOT NULL AND (pinned != 0 OR last_served > ?2)
                 ORDER BY last_served DESC LIMIT ?3",
            )
            .map_err(|e| self.err(e))?;
        let mut near: Vec<(bool, u32, i64, String)> = stmt
            .query_map(params![path_key, fresh_after, NEAR_SCAN as i64], |r| {
                let hash: String = r.get(0)?;
                let theirs = r.get::<_, i64>(1)? as u64;
                let same_path = r.get::<_, i64>(2)? != 0;
                Ok((same_path, (theirs ^ simhash).count_ones(), r.get(3)?, hash))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        near.retain(|(same_path, distance, _, _)| *same_path || *distance <= max_distance);
        near.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(if a.0 { b.2.cmp(&a.2) } else { a.1.cmp(&b.1) })
                .then(a.3.cmp(&b.3))
        });
        near.truncate(limit);
        let mut out = Vec::with_capacity(near.len());
        for (_, _, _, hash) in near {
            if let Some(served) = self.served(&hash)? {
                out.push(DeltaCandidate { hash, served });
            }
        }
        Ok(out)
    }

    /// What the agent was last shown of an entry.
    pub fn served(&self, hash: &str) -> Result<Option<Vec<u8>>> {
        self.conn
            .query_row(
                &format!("SELECT {SERVED} FROM entries WHERE hash = ?1"),
                [hash],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Full-text search (BM25) over served text: the best `limit` entries for `query`, each with
    /// a short snippet around the matched words. `query` is FTS5 syntax; see `recall_query`.
    pub fn recall(&self, query: &str, limit: usize) -> Result<Vec<RecallHit>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT e.hash, e.label, e.last_served, snippet(served_fts, 0, '', '', '…', 16)
                 FROM served_fts JOIN entries e ON e.rowid = served_fts.rowid
                 WHERE served_fts MATCH ?1 ORDER BY bm25(served_fts), e.last_served DESC LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![query, limit as i64], |r| {
                Ok(RecallHit {
                    hash: r.get(0)?,
                    label: r.get(1)?,
                    last_served: r.get(2)?,
                    snippet: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// `PRAGMA integrity_check`, for tests and doctor.
    pub fn integrity_check(&self) -> Result<String> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }
}

impl StoreError {
    /// Whether the store could not be opened for lack of rights or on a read-only file system
    /// (what a sandbox does), rather than for what it holds.
    pub fn denied(&self) -> bool {
        matches!(self.message.as_str(), "permission denied" | "read-only")
            || self.message.starts_with("Read-only file system")
    }

    fn from_sqlite(path: &Path, e: rusqlite::Error) -> StoreError {
        let corrupt = matches!(
            e.sqlite_error_code(),
            Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt)
        );
        let message = match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
                "locked by another process".to_string()
            }
            Some(ErrorCode::ReadOnly) => "read-only".to_string(),
            Some(ErrorCode::CannotOpen) => "cannot open".to_string(),
            Some(ErrorCode::PermissionDenied) => "permission denied".to_string(),
            Some(ErrorCode::DiskFull) => "disk full".to_string(),
            _ => e.to_string(),
        };
        StoreError {
            path: path.to_path_buf(),
            message,
            corrupt,
        }
    }
}

/// Runs one statement with its parameters bound where they lie (`SQLITE_STATIC`). rusqlite
/// binds every text and blob as `SQLITE_TRANSIENT`, which SQLite copies before it copies them
/// again into the row it builds: a 100 MB original was held three times at once.
fn execute_in_place(conn: &Connection, sql: &str, params: &[ValueRef]) -> rusqlite::Result<()> {
    use rusqlite::ffi;
    use std::os::raw::c_int;
    let failure = |db: *mut ffi::sqlite3, code: c_int| {
        // SAFETY: `db` is the open connection; SQLite owns the message, copied here at once.
        let message = unsafe { std::ffi::CStr::from_ptr(ffi::sqlite3_errmsg(db)) };
        rusqlite::Error::SqliteFailure(
            ffi::Error::new(code),
            Some(message.to_string_lossy().into_owned()),
        )
    };
    let too_long = |_| rusqlite::Error::ToSqlConversionFailure("statement too long".into());
    let sql_len = c_int::try_from(sql.len()).map_err(too_long)?;
    // SAFETY: the connection is open and used by this thread alone. The statement is
    // prepared, bound, run and finalized here, so every pointer bound to it (borrowed from
    // `sql` and `params`) outlives it.
    unsafe {
        let db = conn.handle();
        let mut stmt = std::ptr::null_mut();
        let mut code = ffi::sqlite3_prepare_v2(
            db,
            sql.as_ptr().cast(),
            sql_len,
            &mut stmt,
            std::ptr::null_mut(),
        );
        if code != ffi::SQLITE_OK {
            return Err(failure(db, code));
        }
        for (at, param) in (1..).zip(params) {
            code = match *param {
                ValueRef::Null => ffi::sqlite3_bind_null(stmt, at),
                ValueRef::Integer(n) => ffi::sqlite3_bind_int64(stmt, at, n),
                ValueRef::Real(x) => ffi::sqlite3_bind_double(stmt, at, x),
                ValueRef::Text(t) => ffi::sqlite3_bind_text64(
                    stmt,
                    at,
                    t.as_ptr().cast(),
                    t.len() as u64,
                    ffi::SQLITE_STATIC(),
                    ffi::SQLITE_UTF8 as u8,
                ),
                ValueRef::Blob(b) => ffi::sqlite3_bind_blob64(
                    stmt,
                    at,
                    b.as_ptr().cast(),
                    b.len() as u64,
                    ffi::SQLITE_STATIC(),
                ),
            };
            if code != ffi::SQLITE_OK {
                break;
            }
        }
        if code == ffi::SQLITE_OK {
            code = ffi::sqlite3_step(stmt);
        }
        let result = match code {
            ffi::SQLITE_DONE => Ok(()),
            code => Err(failure(db, code)),
        };
        ffi::sqlite3_finalize(stmt);
        result
    }
}

fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::NotFound => "no such directory".to_string(),
        _ => e.to_string(),
    }
}

/// Creates the directory (0700) and an empty file (0600) so SQLite's WAL and shared-memory
/// files, which copy the database file's mode, are private too.
fn prepare_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => tighten(path),
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Takes group and other access away from a store made elsewhere or by an older sqz: the
/// database with its WAL and shared memory, and the directory when it is sqz's own `.sqz`
/// (a directory given in SQZ_DB_PATH may be shared, and is left as it is). Best effort.
fn tighten(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let private = |p: &Path, mode: u32| {
        if let Ok(meta) = std::fs::metadata(p) {
            let now = meta.permissions().mode() & 0o777;
            if now & 0o077 != 0 {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(now & mode));
            }
        }
    };
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        private(Path::new(&name), 0o600);
    }
    if let Some(dir) = path
        .parent()
        .filter(|d| d.file_name() == Some(".sqz".as_ref()))
    {
        private(dir, 0o700);
    }
}

/// Moves a corrupt store to `PATH.corrupt-<now in ms>`.
fn move_aside(path: &Path, now: i64) -> std::io::Result<PathBuf> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".corrupt-{now}"));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside)?;
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(side));
    }
    Ok(aside)
}

/// Deletes least recently served unpinned entries while the pages in use exceed the ceiling, then,
/// if that is not enough, the oldest event rows.
fn evict_over_ceiling(conn: &Connection, max_bytes: u64, keep: &str) -> rusqlite::Result<()> {
    loop {
        let used: i64 = conn.query_row(
            "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())",
            [],
            |r| r.get(0),
        )?;
        let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        if (used * page) as u64 <= max_bytes {
            return Ok(());
        }
        // A few at a time, oldest first, never the entry this call just wrote.
        let victims = "SELECT rowid FROM entries WHERE pinned = 0 AND hash != ?1 ORDER BY last_served LIMIT 4";
        conn.execute(
            &format!("DELETE FROM served_fts WHERE rowid IN ({victims})"),
            [keep],
        )?;
        if conn.execute(
            &format!("DELETE FROM entries WHERE rowid IN ({victims})"),
            [keep],
        )? > 0
        {
            continue;
        }
        // No entry left to evict: the event rows count against the ceiling too, oldest first.
        if conn.execute(
            "DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY at LIMIT 1000)",
            [],
        )? == 0
        {
            return Ok(());
        }
    }
}

/// At most once an hour: drops unpinned entries not served within the retention period, and
/// old events.
fn prune_if_due(conn: &Connection, now: i64, retention_ms: i64) -> rusqlite::Result<()> {
    let last: i64 = conn
        .query_row("SELECT value FROM meta WHERE key = 'last_prune'", [], |r| {
            r.get::<_, String>(0)
        })
        .optional()?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if now - last < PRUNE_EVERY_MS {
        return Ok(());
    }
    let stale = "SELECT rowid FROM entries WHERE pinned = 0 AND last_served < ?1";
    conn.execute(
        &format!("DELETE FROM served_fts WHERE rowid IN ({stale})"),
        [now - retention_ms],
    )?;
    conn.execute(
        &format!("DELETE FROM entries WHERE rowid IN ({stale})"),
        [now - retention_ms],
    )?;
    conn.execute(
        "DELETE FROM events WHERE at < ?1",
        [now - EVENT_RETENTION_MS],
    )?;
    conn.execute(
        "INSERT INTO meta(key, value) VALUES('last_prune', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [now.to_string()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> (PathBuf, Store) {
        let dir = std::env::temp_dir().join(format!("sqz-store-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (store, _) = Store::open(&dir.join("s.db"), 0).expect("open");
        (dir, store)
    }

    fn put(store: &mut Store, hash: &str, body: &[u8], now: i64, limits: Limits) {
        let rec = Record {
            now,
            label: "test",
            family: "test",
            project: None,
            kind: EventKind::Fresh,
            tokens_in: 1,
            tokens_out: 1,
            hash: Some(hash),
            entry: Some(EntryWrite {
                original: body,
                served: body,
                path_key: None,
                simhash: None,
            }),
            touch: None,
        };
        store.record(&rec, limits).expect("record");
    }

    #[test]
    fn an_output_served_as_it_came_is_stored_once_and_read_back_whole() {
        let (dir, mut store) = temp("once");
        let body = b"./src/lib.rs\n./src/main.rs\n".repeat(1000);
        put(&mut store, "00000000000000cc", &body, 1, Limits::default());
        let stored = |store: &Store, hash: &str| -> (i64, i64) {
            store
                .conn
                .query_row(
                    "SELECT length(served), served_bytes FROM entries WHERE hash = ?1",
                    [hash],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap()
        };
        assert_eq!(stored(&store, "00000000000000cc"), (0, body.len() as i64));
        assert_eq!(
            store.served("00000000000000cc").unwrap(),
            Some(body.clone())
        );
        assert_eq!(store.recent_entries(1).unwrap()[0].served, body);
        // What was served changed: it is stored as it is.
        let rec = Record {
            now: 2,
            label: "test",
            family: "test",
            project: None,
            kind: EventKind::Generic,
            tokens_in: 1,
            tokens_out: 1,
            hash: Some("00000000000000cc"),
            entry: Some(EntryWrite {
                original: &body,
                served: b"[sqz] folded\n",
                path_key: None,
                simhash: None,
            }),
            touch: None,
        };
        store.record(&rec, Limits::default()).unwrap();
        assert_eq!(stored(&store, "00000000000000cc"), (13, 13));
        assert_eq!(
            store.served("00000000000000cc").unwrap().as_deref(),
            Some(&b"[sqz] folded\n"[..])
        );
        assert_eq!(store.original("00000000000000cc").unwrap(), Some(body));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn ceiling_evicts_least_recently_served_unpinned() {
        let (dir, mut store) = temp("evict");
        let limits = Limits {
            max_bytes: 2 << 20,
            retention_ms: i64::MAX / 2,
        };
        let body: Vec<u8> = (0..400_000u32).map(|n| b'a' + (n % 23) as u8).collect();
        put(&mut store, "00000000000000aa", &body, 1, limits);
        store.set_pinned("00000000000000aa", true).unwrap();
        for n in 0..8 {
            put(
                &mut store,
                &format!("{n:016x}"),
                &body,
                10 + n as i64,
                limits,
            );
        }
        assert!(
            store.original("00000000000000aa").unwrap().is_some(),
            "pinned entry kept"
        );
        assert!(
            store.original(&format!("{:016x}", 7)).unwrap().is_some(),
            "newest kept"
        );
        assert!(
            store.original(&format!("{:016x}", 0)).unwrap().is_none(),
            "oldest evicted"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn event_rows_count_against_the_ceiling_once_no_entry_is_left() {
        let (dir, mut store) = temp("evict-events");
        let roomy = Limits {
            max_bytes: 1 << 30,
            retention_ms: i64::MAX / 2,
        };
        // Some 40,000 event rows with long labels: several MB of history.
        let label = "x".repeat(200);
        for n in 0..40_000i64 {
            store
                .record_event(&Record {
                    now: n,
                    label: &label,
                    family: "test",
                    project: None,
                    kind: EventKind::Expand,
                    tokens_in: 0,
                    tokens_out: 0,
                    hash: None,
                    entry: None,
                    touch: None,
                })
                .unwrap();
        }
        let tight = Limits {
            max_bytes: 2 << 20,
            ..roomy
        };
        put(&mut store, "00000000000000bb", b"new output", 50_000, tight);
        let left = store.events_since(0).unwrap();
        assert!(left.len() < 20_000, "{} event rows left", left.len());
        // The oldest went first, and the call that was just recorded stays.
        assert!(left.first().unwrap().at > 10_000);
        assert_eq!(left.last().unwrap().at, 50_000);
        assert!(store.original("00000000000000bb").unwrap().is_some());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn retention_prunes_entries_not_served_recently() {
        let (dir, mut store) = temp("retain");
        let day = 24 * 3600 * 1000;
        let limits = Limits {
            max_bytes: 1 << 30,
            retention_ms: 2 * day,
        };
        put(&mut store, "1111111111111111", b"old output", day, limits);
        put(
            &mut store,
            "2222222222222222",
            b"recent output",
            4 * day,
            limits,
        );
        // The next prune is due an hour later: the old entry has not been served for 3 days.
        put(
            &mut store,
            "3333333333333333",
            b"newest output",
            4 * day + 2 * PRUNE_EVERY_MS,
            limits,
        );
        assert!(store.original("1111111111111111").unwrap().is_none());
        assert!(store.original("2222222222222222").unwrap().is_some());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn newer_schema_is_refused_not_damaged() {
        let (dir, store) = temp("schema");
        store
            .conn
            .pragma_update(None, "user_version", schema::VERSION + 1)
            .unwrap();
        drop(store);
        let err = Store::open(&dir.join("s.db"), 0).err().expect("refused");
        assert!(err.message.contains("newer"), "{}", err.message);
        let _ = std::fs::remove_dir_all(dir);
    }
}
