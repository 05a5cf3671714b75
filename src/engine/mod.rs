//! One `sqz compress` call, in order: strip the trailer (by the caller), route by risk, probe
//! for repeats, format, run the generic pipeline, apply the net-win gate. The result says what
//! to store and what to print; only the caller does I/O, so the same input and store state
//! always give the same bytes.

pub mod ansi;
pub mod blocks;
pub mod dedup;
pub mod delta;
pub mod gate;
pub mod pipeline;
pub mod route;
pub mod table;
pub mod trailer;

use crate::doc::{self, facts, reference, Doc};
use crate::store::Store;
use crate::{fmt, json, text, tokens};
use route::{Risk, Route};
use std::borrow::Cow;

pub use crate::store::EventKind as Kind;

/// Settings of one call, read from flags and the environment by the command layer.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub now: i64,
    pub ttl_ms: i64,
    /// References may be served (off with `--no-cache` or `SQZ_NO_DEDUP`).
    pub dedup: bool,
}

/// What one call decided.
pub struct Outcome {
    /// What goes out; `None` when that is the input as it came, which the caller holds (a
    /// huge output passed through is then not held twice while it is stored).
    pub stdout: Option<Vec<u8>>,
    /// The one stderr line for the agent, if any.
    pub header: Option<String>,
    pub kind: Kind,
    pub hash: String,
    pub tokens_in: usize,
    /// Tokens of stdout plus header.
    pub tokens_out: usize,
    /// Write the original and the served bytes to the store.
    pub store_entry: bool,
    /// Mark this entry as served now (a reference to it was sent).
    pub touch: Option<String>,
    pub path_key: Option<String>,
    /// Why the input passed through untouched, for the one-line notice.
    pub reason: Option<&'static str>,
    /// What the agent holds after this call when that is not `stdout`: the new text a delta
    /// turns its base into. It is what gets stored as served.
    pub held: Option<String>,
    /// The SimHash of what the agent holds, so a later near-repeat can find this entry.
    pub simhash: Option<u64>,
}

impl Outcome {
    fn passthrough(input: &[u8], kind: Kind, reason: Option<&'static str>) -> Outcome {
        let tokens = tokens::count_bytes(input);
        Outcome {
            stdout: None,
            header: None,
            kind,
            hash: text::hash16(input),
            tokens_in: tokens,
            tokens_out: tokens,
            store_entry: false,
            touch: None,
            path_key: None,
            reason,
            held: None,
            simhash: None,
        }
    }
}

impl Outcome {
    /// Output changed only losslessly (back-references), with nothing stored: the header
    /// names no hash. The input goes out as it is when that would not pay.
    fn unstored(input: &[u8], served: String, escaped: bool) -> Outcome {
        // The input is counted once, by the pass-through this starts from.
        let mut outcome = Outcome::passthrough(input, Kind::Safe, None);
        let tokens_in = outcome.tokens_in;
        let served_tokens = tokens::count(&served);
        let header = header_line(served_tokens, tokens_in, None);
        let total = served_tokens + tokens::count(&header);
        if !gate::NetWinGate::passes(tokens_in, total) {
            return outcome;
        }
        outcome.stdout = Some(if escaped {
            text::encode_bytes(&served)
        } else {
            served.into_bytes()
        });
        outcome.header = Some(header);
        outcome.tokens_out = total;
        outcome
    }
}

/// The output changed only in ways the agent can undo from what it sees, if anything changes:
/// repeated blocks point back to their first copy, and runs of lines that share a template
/// become value tables. The only stages allowed on what is never stored. Tables leave out the
/// lines of a stack trace, facts, indented lines and credentials, and are not built at all
/// where the risk is not a stack trace.
fn lossless_only(label: &str, text: &str, tables: bool) -> Option<String> {
    let doc = Doc::new(label, text);
    let kept = doc::all_kept(doc.lines.len());
    let pointed = blocks::point_back(&doc, &kept);
    let pieces = pointed.as_deref().unwrap_or(&kept);
    let tabled = tables
        .then(|| table::tabulate(&doc, pieces, |n| tabulable(doc.lines[n])))
        .flatten();
    // What goes out must read back to the input exactly: checked, not assumed, so a line
    // the document model shows differently (a lone escape byte) cannot slip through.
    tabled
        .or(pointed)
        .map(|pieces| doc::render(&doc, &pieces, ""))
        .filter(|served| table::reads_back(served, text))
}

/// Whether a line may go into a value table: not a fact, not indented (a trace's body, a
/// code frame, a nested listing), not a stack frame, not a credential.
fn tabulable(line: &str) -> bool {
    !line.starts_with([' ', '\t'])
        && !route::is_trace_line(line)
        && !route::is_credential_line(line.trim())
        && !facts::is_fact(line)
}

/// Decides how to serve `input` (trailer already stripped). `store` is `None` when nothing may
/// be stored (no cache, store error): then only lossless stages run.
pub fn compress(label: &str, input: &[u8], store: Option<&Store>, settings: Settings) -> Outcome {
    if input.is_empty() {
        return Outcome::passthrough(input, Kind::Passthrough, Some("empty input"));
    }
    if memchr::memchr(0, input).is_some() {
        return Outcome::passthrough(input, Kind::Passthrough, Some("binary input (NUL bytes)"));
    }
    // Bytes that are not UTF-8 ride through every stage as stand-in characters and go out as
    // the bytes they were.
    let Some(decoded) = text::decode_bytes(input) else {
        return Outcome::passthrough(input, Kind::Passthrough, Some("input is not valid UTF-8"));
    };
    let escaped = matches!(decoded, Cow::Owned(_));
    let raw_text: &str = &decoded;
    let mut route = route::route(label, raw_text);
    // What is served is the colour-stripped text: a secret split by colour codes
    // (`grep --color=always PASSWORD .env`, `jq -C`) must be found there too. The stripped
    // text is kept to be served, unless routing it showed it must not be.
    let mut plain = None;
    if matches!(route, Route::Normal | Route::Verbatim) && raw_text.contains('\x1b') {
        let stripped = ansi::strip(raw_text);
        match route::route(label, &stripped) {
            risky @ (Route::Untouchable(_) | Route::NoStore) => route = risky,
            _ => plain = Some(stripped),
        }
    }
    // A test run that holds a stack trace may still be summarised by its formatter, which then
    // keeps every line of the trace's paragraphs; every other untouchable passes unstored.
    let test_run_trace = route == Route::Untouchable(Risk::StackTrace)
        && fmt::runs_tests(label)
        && fmt::find(label).is_some();
    if matches!(route, Route::Untouchable(_)) && !test_run_trace {
        // The one change allowed: a block repeated within the output points back to its
        // first copy, which the agent sees whole. Nothing is stored.
        let tables = route == Route::Untouchable(Risk::StackTrace);
        return match lossless_only(label, raw_text, tables) {
            Some(served) => Outcome::unstored(input, served, escaped),
            None => Outcome::passthrough(input, Kind::Safe, None),
        };
    }
    // Priced by the bytes the agent gets: a stand-in character costs more than its byte.
    let tokens_in = if escaped {
        tokens::count_bytes(input)
    } else {
        tokens::count(raw_text)
    };
    let hash = text::hash16(input);
    let store = if route == Route::NoStore { None } else { store };
    // Stripping colour and redrawn progress changes bytes, so it needs the original stored to
    // stay recoverable.
    // Where colour alone tells deleted from added words, the codes stay.
    let agent_text = if store.is_some() && !ansi::colour_carries_meaning(raw_text) {
        ansi::collapse_returns(plain.unwrap_or_else(|| ansi::strip(raw_text)))
    } else {
        Cow::Borrowed(raw_text)
    };
    let path_key = dedup::path_key(label);

    if let (Some(store), true) = (store, settings.dedup) {
        if let Some(outcome) = probe_refs(
            store,
            input,
            &agent_text,
            &hash,
            tokens_in,
            settings,
            path_key.as_deref(),
        ) {
            return outcome;
        }
    }

    let (served, kind) = match shape_output(label, &agent_text, &hash, route, store.is_some()) {
        Shaped::Changed(served, kind) => (Some(served), kind),
        // Unsummarised, a stack trace is untouchable: it goes out as is and is not stored.
        Shaped::Unchanged if test_run_trace => {
            return Outcome::passthrough(input, Kind::Safe, None)
        }
        // Source, configs and diffs stay byte for byte, stored or not.
        Shaped::Unchanged if store.is_none() && route != Route::Verbatim => {
            match lossless_only(label, &agent_text, true) {
                Some(served) => return Outcome::unstored(input, served, escaped),
                None => (None, Kind::Fresh),
            }
        }
        Shaped::Unchanged => (None, Kind::Fresh),
        // Nothing is stored, so colour stays as it came: the agent must be able to read the
        // original back from what it sees.
        Shaped::Untouchable => match lossless_only(label, raw_text, true) {
            Some(served) => return Outcome::unstored(input, served, escaped),
            None => return Outcome::passthrough(input, Kind::Safe, None),
        },
    };
    // Sent as the agent would have seen it: colour stripped when that is recoverable.
    let unchanged_tokens = match &agent_text {
        Cow::Borrowed(_) => tokens_in,
        Cow::Owned(stripped) => tokens::count(stripped),
    };
    // Stripping colour can, rarely, join pieces that count as more tokens than the original:
    // then the original goes out, so the output is never worse.
    let (agent_text, unchanged_tokens) = if unchanged_tokens > tokens_in {
        (Cow::Borrowed(raw_text), tokens_in)
    } else {
        (agent_text, unchanged_tokens)
    };
    let (mut stdout, header, kind, tokens_out) = match served {
        Some(served) => {
            let served_tokens = tokens::count(&served);
            let header = header_line(
                served_tokens,
                tokens_in,
                store.is_some().then_some(text::shown_hash(&hash)),
            );
            let total = served_tokens + tokens::count(&header);
            if gate::NetWinGate::passes(tokens_in, total) {
                (served.into(), Some(header), kind, total)
            } else if test_run_trace {
                return Outcome::passthrough(input, Kind::Safe, None);
            } else {
                (agent_text, None, Kind::Fresh, unchanged_tokens)
            }
        }
        None => (agent_text, None, Kind::Fresh, unchanged_tokens),
    };
    let kind = if store.is_none() && kind == Kind::Fresh {
        Kind::Passthrough
    } else {
        kind
    };
    let mut outcome = Outcome {
        stdout: None,
        header,
        kind,
        hash,
        tokens_in,
        tokens_out,
        store_entry: store.is_some(),
        touch: None,
        path_key,
        reason: None,
        held: None,
        simhash: None,
    };
    // Both sides stay small: a stored SimHash sits after the original in its row, so a large
    // original with one would make every later base search read through it.
    // A text with stand-ins is never a delta's base or result: deltas are diffed as text.
    let near_sized =
        !escaped && stdout.len() <= NEAR_REPEAT_MAX_BYTES && input.len() <= NEAR_REPEAT_MAX_BYTES;
    if let Some(store) = store.filter(|_| near_sized) {
        let sim = delta::simhash(&stdout);
        outcome.simhash = Some(sim);
        if settings.dedup {
            if let Some((text, header, cost)) = near_repeat(store, &stdout, sim, &outcome, settings)
            {
                outcome.header = Some(header);
                outcome.kind = Kind::Delta;
                outcome.tokens_out = cost;
                outcome.held = Some(std::mem::replace(&mut stdout, text.into()).into_owned());
            }
        }
    }
    outcome.stdout = match stdout {
        // The text as decoded, unchanged: its bytes are the input's.
        Cow::Borrowed(unchanged) if std::ptr::eq(unchanged, raw_text) => None,
        stdout if escaped => Some(text::encode_bytes(&stdout)),
        stdout => Some(stdout.into_owned().into_bytes()),
    };
    outcome
}

/// Outputs larger than this are neither a delta nor a delta's base: the line diff and the
/// SimHash stay cheap on the hot path.
const NEAR_REPEAT_MAX_BYTES: usize = 256 * 1024;

/// A near-repeat of a fresh earlier output (a test re-run with one failure fewer, a file read
/// again after an edit): the delta that turns what the agent was shown then into `served`, with
/// its header and cost, when it costs less than `served` would.
fn near_repeat(
    store: &Store,
    served: &str,
    sim: u64,
    outcome: &Outcome,
    settings: Settings,
) -> Option<(String, String, usize)> {
    let fresh = dedup::Freshness::read(store, settings.now, settings.ttl_ms)?;
    let best = dedup::best_delta(store, &fresh, outcome.path_key.as_deref(), sim, served)?;
    let header = format!(
        "[sqz] changed since an earlier output: apply the delta to it · sqz expand {}",
        text::shown_hash(&outcome.hash)
    );
    let cost = tokens::count(&best) + tokens::count(&header);
    (cost < outcome.tokens_out && dedup::stand_in_pays(outcome.tokens_in, cost))
        .then_some((best, header, cost))
}

/// Exact repeat first, then a line slice of an earlier read. Store errors here only mean no
/// reference: the content is then sent in full.
fn probe_refs(
    store: &Store,
    input: &[u8],
    agent_text: &str,
    hash: &str,
    tokens_in: usize,
    settings: Settings,
    path_key: Option<&str>,
) -> Option<Outcome> {
    if !dedup::stand_in_pays(tokens_in, 0) {
        return None;
    }
    let fresh = dedup::Freshness::read(store, settings.now, settings.ttl_ms)?;
    let (token, note, kind, target) =
        match dedup::probe(store, &fresh, hash, input, agent_text, path_key, true)? {
            dedup::Hit::Repeat => (
                reference::ref_token(hash),
                "[sqz] same output as before".to_string(),
                Kind::Ref,
                hash.to_string(),
            ),
            dedup::Hit::Slice(slice) => (
                reference::slice_token(&slice.hash, slice.first, slice.last),
                format!(
                    "[sqz] lines {}-{} of earlier output",
                    slice.first, slice.last
                ),
                Kind::Slice,
                slice.hash,
            ),
        };
    let cost = tokens::count(&token) + tokens::count(&note);
    dedup::stand_in_pays(tokens_in, cost).then(|| Outcome {
        stdout: Some(format!("{token}\n").into_bytes()),
        header: Some(note),
        kind,
        hash: hash.to_string(),
        tokens_in,
        tokens_out: cost,
        store_entry: false,
        touch: Some(target),
        path_key: None,
        reason: None,
        held: None,
        simhash: None,
    })
}

enum Shaped {
    Changed(String, Kind),
    Unchanged,
    /// A stack trace the formatter could not summarise around: it passes through unstored.
    Untouchable,
}

/// Pretty-printed JSON folded by the generic pipeline, line by line, if anything folds.
fn fold_json_lines(label: &str, agent_text: &str, hash: &str) -> Option<String> {
    let doc = Doc::new(label, agent_text);
    let facts: Vec<bool> = doc.lines.iter().map(|l| facts::is_fact(l)).collect();
    let shown = text::shown_hash(hash);
    let pieces = pipeline::fold_runs(&doc, &facts, shown)?;
    Some(doc::render(&doc, &pieces, shown))
}

/// The compressed text, if any stage changed something, and which kind of stage did.
fn shape_output(label: &str, agent_text: &str, hash: &str, route: Route, stored: bool) -> Shaped {
    let trace = matches!(route, Route::Untouchable(_));
    if route == Route::Verbatim {
        return Shaped::Unchanged;
    }
    if !trace {
        if let Some(compact) = json::compact_for_agent(agent_text) {
            // Compaction keeps every value. When it saves little, the pretty-printed lines may
            // hold long runs of one shape (a package's versions and their release times),
            // which fold further once the original is stored.
            let little = compact.len() * 10 > agent_text.len() * 7;
            if stored && little {
                if let Some(folded) = fold_json_lines(label, agent_text, hash) {
                    if tokens::count(&folded) < tokens::count(&compact) {
                        return Shaped::Changed(folded, Kind::Generic);
                    }
                }
            }
            return Shaped::Changed(compact, Kind::Generic);
        }
    }
    if !stored {
        return if trace {
            Shaped::Untouchable
        } else {
            Shaped::Unchanged
        };
    }
    let doc = Doc::new(label, agent_text);
    // Which lines are facts: needed for a non-listing formatter's floor and for the generic
    // pipeline, so a listing that a formatter halves never pays for it.
    let facts_cell = std::cell::OnceCell::new();
    let facts = || -> &Vec<bool> {
        facts_cell.get_or_init(|| doc.lines.iter().map(|l| facts::is_fact(l)).collect())
    };
    // A stack trace inside a test run is kept whole, paragraph by paragraph.
    let in_trace = if trace {
        route::trace_paragraphs(&doc.lines)
    } else {
        vec![false; doc.lines.len()]
    };
    let formatted = fmt::find(label).and_then(|f| {
        let pieces = doc::unfold((f.format)(&doc)?, |n| in_trace[n]);
        // `Floor::Facts` reuses the fact lines computed once for the generic pipeline.
        let floor = |n: usize| match f.floor {
            facts::Floor::Facts => facts()[n],
            other => other.keeps(doc.lines[n]),
        };
        doc::keeps_all_said(&doc, &pieces, floor).then_some(pieces)
    });
    let shown = text::shown_hash(hash);
    let point_back = |pieces: Vec<doc::Piece>| blocks::point_back(&doc, &pieces).unwrap_or(pieces);
    let formatted = formatted.map(point_back);
    let render = |pieces: &[doc::Piece]| doc::render(&doc, pieces, shown);
    // A formatter that keeps every line in place (a listing with nothing to fold) gives the
    // input back: not built a second time, so a huge output is not held twice.
    let by_formatter = formatted.map(|pieces| {
        if doc::shows_every_line(&pieces, doc.lines.len()) {
            Cow::Borrowed(agent_text)
        } else {
            Cow::Owned(render(&pieces))
        }
    });
    // A formatter that at least halved the output leaves the generic pipeline nothing to win,
    // so it is not run (a huge listing would cost a second pass for nothing).
    let halved = by_formatter
        .as_ref()
        .is_some_and(|f| f.len() * 2 <= agent_text.len());
    let by_generic = if trace || halved {
        None
    } else {
        let folded = pipeline::fold_runs(&doc, facts(), shown);
        let pieces = folded.unwrap_or_else(|| doc::all_kept(doc.lines.len()));
        let pieces = blocks::point_back(&doc, &pieces).unwrap_or(pieces);
        let pieces = table::tabulate(&doc, &pieces, |n| tabulable(doc.lines[n])).unwrap_or(pieces);
        let by_template = pieces
            .iter()
            .any(|p| matches!(p, doc::Piece::Like { .. } | doc::Piece::Table { .. }));
        Some(pieces)
            .filter(|pieces| pieces.iter().any(|p| p.kept().is_none()))
            .map(|pieces| (render(&pieces), by_template))
    };
    let (served, kind) = match (by_formatter, by_generic) {
        (Some(by_formatter), Some(by_generic)) => {
            // A formatter that saves less than the generic pipeline gives way to it.
            if tokens::count(&by_generic.0) < tokens::count(&by_formatter) {
                (Cow::Owned(by_generic.0), generic_kind(by_generic.1))
            } else {
                (by_formatter, Kind::Formatter)
            }
        }
        (Some(served), None) => (served, Kind::Formatter),
        (None, Some((served, by_template))) => (Cow::Owned(served), generic_kind(by_template)),
        (None, None) if trace => return Shaped::Untouchable,
        (None, None) => match pipeline::shorten_rules(agent_text) {
            Cow::Owned(shorter) => return Shaped::Changed(shorter, Kind::Generic),
            Cow::Borrowed(_) => return Shaped::Unchanged,
        },
    };
    // A stack trace's lines stay byte for byte, rules among them included.
    let served = match (trace, served) {
        (false, Cow::Borrowed(served)) => pipeline::shorten_rules(served),
        (false, Cow::Owned(served)) => match pipeline::shorten_rules(&served) {
            Cow::Owned(shorter) => Cow::Owned(shorter),
            Cow::Borrowed(_) => Cow::Owned(served),
        },
        (true, served) => served,
    };
    if served == agent_text {
        return Shaped::Unchanged;
    }
    Shaped::Changed(served.into_owned(), kind)
}

/// What the generic pipeline's result counts as in the stats: a template fold when it folded
/// lines by template or wrote value tables, plain generic otherwise.
fn generic_kind(by_template: bool) -> Kind {
    if by_template {
        Kind::Template
    } else {
        Kind::Generic
    }
}

/// `[sqz] OUT/IN tokens (-P%) · sqz expand HASH`; without a hash when nothing was stored.
fn header_line(out: usize, tokens_in: usize, hash: Option<&str>) -> String {
    let saved = tokens_in.saturating_sub(out);
    let pct = (saved * 100).checked_div(tokens_in).unwrap_or(0);
    match hash {
        Some(hash) => format!("[sqz] {out}/{tokens_in} tokens (-{pct}%) · sqz expand {hash}"),
        None => format!("[sqz] {out}/{tokens_in} tokens (-{pct}%)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: input that is not UTF-8 was priced by its stand-in characters, which cost
    /// more than its bytes, so the reference to a short repeat could cost more than the repeat.
    #[test]
    fn input_that_is_not_utf8_is_priced_by_its_bytes() {
        let dir = std::env::temp_dir().join(format!("sqz-engine-price-{}", std::process::id()));
        let (store, _) = Store::open(&dir.join("sessions.db"), 0).expect("store");
        let input = b"k|\x06-0\xc0\xaf\xde\x96\x82\xda\xbf\xe6 fuzz\n";
        let settings = Settings {
            now: 1_000,
            ttl_ms: 1_800_000,
            dedup: true,
        };
        let outcome = compress("kubectl get pods", input, Some(&store), settings);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(outcome.tokens_in, tokens::count_bytes(input));
    }
}
