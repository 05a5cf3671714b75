//! Lossless reads: text that must reach the agent whole (a file read, a search result, a
//! directory listing) or not at all. Its only saving is what the agent already holds: an exact
//! repeat becomes `§ref:HASH§`, lines of an earlier read `§ref:HASH:La-b§`, a re-read after an
//! edit `§delta:HASH§` with the changed lines. The same freshness rule, probe and cost rule as
//! `sqz compress` decide (`engine::dedup`). Any store problem means the whole text goes out,
//! which is always correct.

use crate::doc::reference;
use crate::engine::{dedup, delta, route};
use crate::env::Env;
use crate::store::{EntryWrite, EventKind, Record, Store};
use crate::{text, tokens};

/// One text to serve losslessly.
pub struct Lossless<'a> {
    /// The label of its event row, e.g. `sqz_read_file src/lib.rs`.
    pub label: &'a str,
    /// The bytes as read: what is stored and what `expand` gives back.
    pub original: &'a str,
    /// What the agent is shown when it goes out whole (colour codes stripped).
    pub body: &'a str,
    /// The file it came from: earlier reads of it are tried first as slice and delta bases.
    pub path_key: Option<&'a str>,
    /// It is part of a file: it may be a slice of an earlier read, never a delta base.
    pub partial: bool,
    /// It is a whole file: it may go out as a delta, and be a later delta's base.
    pub deltas: bool,
    /// The note shown beside each stand-in; counted in its cost.
    pub notes: &'a Notes,
}

/// What the front end shows beside a stand-in, so its cost is counted whole.
pub struct Notes {
    pub repeat: String,
    pub slice: String,
    pub delta: String,
}

/// How a lossless text went out.
#[derive(Debug, PartialEq, Eq)]
pub enum Shown {
    /// Sent whole and stored: colour codes are stripped, since the original is recoverable.
    Whole,
    /// Sent whole and not stored: byte for byte, colour codes included.
    Unstored,
    /// `§ref:HASH§`: the agent has it.
    Repeat(String),
    /// `§ref:HASH:La-b§`: lines of an earlier read the agent has.
    Slice(String),
    /// A `§delta:BASE§` text that turns an earlier read into this one.
    Delta(String),
}

/// Decides how `item` goes out and records the call at `now`.
pub fn serve(store: Option<&mut Store>, env: &Env, now: i64, item: &Lossless) -> Shown {
    // SQZ_NO_DEDUP: no references and nothing stored.
    let Some(store) = store.filter(|_| !env.no_dedup) else {
        return Shown::Unstored;
    };
    // Credentials, key blocks and the like are sent as they are and never stored.
    if !matches!(
        route::route(item.label, item.original),
        route::Route::Normal | route::Route::Verbatim
    ) {
        return Shown::Unstored;
    }
    let hash = text::hash16(item.original.as_bytes());
    let tokens_in = tokens::count(item.body);
    let simhash = item.deltas.then(|| delta::simhash(item.body));
    let (shown, touch) =
        stand_in(store, env, now, item, &hash, tokens_in, simhash).unwrap_or((Shown::Whole, None));
    let (kind, tokens_out) = match &shown {
        Shown::Whole | Shown::Unstored => (EventKind::Fresh, tokens_in),
        Shown::Repeat(t) => (EventKind::Ref, cost(t, &item.notes.repeat)),
        Shown::Slice(t) => (EventKind::Slice, cost(t, &item.notes.slice)),
        Shown::Delta(t) => (EventKind::Delta, cost(t, &item.notes.delta)),
    };
    // A delta's reader holds the new text once it applies it: later reads may refer to it.
    let new_entry = matches!(shown, Shown::Whole | Shown::Delta(_));
    let family = crate::doc::label::Label::parse(item.label).family();
    let label = route::redact_label(item.label);
    let record = Record {
        now,
        label: &label,
        family: &family,
        project: env.project.as_deref(),
        kind,
        tokens_in,
        tokens_out,
        hash: Some(&hash),
        entry: new_entry.then_some(EntryWrite {
            original: item.original.as_bytes(),
            served: item.body.as_bytes(),
            path_key: item.path_key,
            simhash,
        }),
        touch: touch.as_deref(),
    };
    match store.record(&record, env.limits()) {
        Ok(()) => shown,
        // A reference to an entry that could not be touched would still be valid, but an entry
        // that could not be written must not be referred to later: send the text.
        Err(_) => Shown::Unstored,
    }
}

/// Records `text`, which the agent wrote to `path` itself, as held by the agent now: a later read
/// of the same bytes is a repeat, of changed bytes a delta against it. Secrets are not stored,
/// and any store problem only means no reference later.
pub fn record_written(store: Option<&mut Store>, env: &Env, now: i64, path: &str, text: &str) {
    let Some(store) = store.filter(|_| !env.no_dedup) else {
        return;
    };
    let label = format!("wrote {path}");
    if !matches!(
        route::route(&label, text),
        route::Route::Normal | route::Route::Verbatim
    ) {
        return;
    }
    let hash = text::hash16(text.as_bytes());
    let record = Record {
        now,
        label: &label,
        family: "wrote",
        project: env.project.as_deref(),
        kind: EventKind::Wrote,
        tokens_in: 0,
        tokens_out: 0,
        hash: Some(&hash),
        entry: Some(EntryWrite {
            original: text.as_bytes(),
            served: text.as_bytes(),
            path_key: Some(path),
            simhash: Some(delta::simhash(text)),
        }),
        touch: None,
    };
    let _ = store.record(&record, env.limits());
}

fn cost(stand_in: &str, note: &str) -> usize {
    tokens::count(stand_in) + tokens::count(note)
}

/// A reference, slice reference or delta that pays, with the entry to mark served.
fn stand_in(
    store: &Store,
    env: &Env,
    now: i64,
    item: &Lossless,
    hash: &str,
    tokens_in: usize,
    simhash: Option<u64>,
) -> Option<(Shown, Option<String>)> {
    if !dedup::stand_in_pays(tokens_in, 0) {
        return None;
    }
    let fresh = dedup::Freshness::read(store, now, env.ttl_ms())?;
    let pays = |shown: Shown, note: &str, target: String| {
        let (Shown::Repeat(t) | Shown::Slice(t) | Shown::Delta(t)) = &shown else {
            return None;
        };
        dedup::stand_in_pays(tokens_in, cost(t, note)).then_some((shown, Some(target)))
    };
    let hit = dedup::probe(
        store,
        &fresh,
        hash,
        item.original.as_bytes(),
        item.body,
        item.path_key,
        item.partial,
    );
    match hit {
        Some(dedup::Hit::Repeat) => {
            return pays(
                Shown::Repeat(reference::ref_token(hash)),
                &item.notes.repeat,
                hash.to_string(),
            )
        }
        Some(dedup::Hit::Slice(s)) => {
            return pays(
                Shown::Slice(reference::slice_token(&s.hash, s.first, s.last)),
                &item.notes.slice,
                s.hash,
            )
        }
        None => {}
    }
    let sim = simhash?;
    let best = dedup::best_delta(store, &fresh, item.path_key, sim, item.body)?;
    // The delta's base was served when it was read; the new text is stored as its own entry.
    let (shown, _) = pays(Shown::Delta(best), &item.notes.delta, String::new())?;
    Some((shown, None))
}
