//! The engine targets: one per formatter and one for the generic pipeline. A case is a command
//! label on its first line and the command's output after it, so a saved case reads as
//! `sqz compress --cmd LINE1 < REST`. Each case runs the formatter and the template folder
//! directly, then the whole engine with a store, as `sqz compress` does, several times.

use super::Target;
use crate::common::Fixture;
use sqz::doc::facts::{self, Floor};
use sqz::doc::{self, reference, Doc};
use sqz::engine::{ansi, pipeline, table, Kind};
use sqz::env::Env;
use sqz::serve::{self, expand, Served};
use sqz::store::Store;
use sqz::text::{decode_bytes, encode_bytes};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// One label per formatter, so that each has a target even without a fixture of its own.
const FORMATTER_LABELS: &[&str] = &[
    "cargo build",
    "git status",
    "git log",
    "git branch -a",
    "git remote -v",
    "go test ./...",
    "npx jest",
    "npx vite build",
    "npm ls",
    "npm install",
    "pytest",
    "pip install requests",
    "make",
    "gradle build",
    "mix test",
    "mvn package",
    "grep -n serde Cargo.lock",
    "grep -rn TODO .",
    "find .",
    "docker ps",
    "ps aux",
    "du -ah",
    "ls -la",
    "docker build .",
    "kubectl get pods",
    "kubectl describe pod web",
    "terraform plan",
];

/// Labels no formatter claims: the generic pipeline decides alone.
const GENERIC_LABELS: &[&str] = &[
    "./run-worker.sh",
    "cat app.log",
    "tail -n 500 /var/log/app.log",
    "journalctl -u web",
    "node server.js",
];

/// Each case is this much later than the one before: more than the reference lifetime, so
/// no case references another and a saved case fails alone as it failed in the run.
const CASE_STEP_MS: i64 = 4_000_000;

/// A store and the clock of the cases run against it.
pub struct Engine {
    pub store: Store,
    pub env: Env,
    pub now: i64,
}

impl Engine {
    pub fn open(dir: &Path) -> Result<Engine, String> {
        let db = dir.join("sessions.db");
        let (store, _) = Store::open(&db, 0).map_err(|e| format!("cannot open {e}"))?;
        Ok(Engine {
            store,
            env: env(&db),
            now: 1_700_000_000_000,
        })
    }

    /// The clock of the next case.
    pub fn tick(&mut self) -> i64 {
        self.now += CASE_STEP_MS;
        self.now
    }

    /// Stores `body` as `sqz compress --cmd LABEL` would; the stored hash.
    pub fn serve(&mut self, label: &str, body: &[u8]) -> String {
        let now = self.tick();
        serve::compress(label, body, Some(&mut self.store), false, &self.env, now).hash
    }
}

/// The environment of a store at `db`, kept one day; nothing else is read from the process.
pub fn env(db: &Path) -> Env {
    Env::from_lookup(|name| match name {
        "SQZ_DB_PATH" => Some(db.into()),
        "SQZ_RETENTION_DAYS" => Some("1".into()),
        _ => None,
    })
}

/// `LABEL\nOUTPUT`, as the engine targets read their cases.
pub fn case(label: &str, output: &[u8]) -> Vec<u8> {
    let mut case = label.as_bytes().to_vec();
    case.push(b'\n');
    case.extend_from_slice(output);
    case
}

fn split_case(case: &[u8]) -> (String, &[u8]) {
    match memchr::memchr(b'\n', case) {
        Some(at) => (
            String::from_utf8_lossy(&case[..at]).into_owned(),
            &case[at + 1..],
        ),
        None => (String::from_utf8_lossy(case).into_owned(), &[]),
    }
}

/// A target per formatter, named after it, seeded from its fixtures.
pub fn formatters(scratch: &Path, fixtures: &[Fixture]) -> Result<Vec<Target>, String> {
    let mut families: BTreeMap<&'static str, Vec<Vec<u8>>> = BTreeMap::new();
    for label in FORMATTER_LABELS {
        if let Some(f) = sqz::fmt::find(label) {
            families.entry(f.name).or_default();
        }
    }
    for fixture in fixtures {
        if let Some(f) = sqz::fmt::find(&fixture.cmd) {
            families
                .entry(f.name)
                .or_default()
                .push(case(&fixture.cmd, &fixture.input));
        }
    }
    let mut targets = Vec::new();
    for (k, (name, mut seeds)) in families.into_iter().enumerate() {
        // Output of other shapes under this formatter's label: what it must refuse to guess.
        let label = FORMATTER_LABELS
            .iter()
            .find(|l| sqz::fmt::find(l).is_some_and(|f| f.name == name))
            .copied()
            .unwrap_or(name);
        for fixture in fixtures.iter().skip(k % 7).step_by(23) {
            seeds.push(case(label, &fixture.input));
        }
        let target_name = format!("fmt-{}", slug(name));
        targets.push(engine_target(target_name, seeds, scratch)?);
    }
    Ok(targets)
}

/// The generic pipeline and template folder, on every fixture under labels no formatter claims.
pub fn pipeline(scratch: &Path, fixtures: &[Fixture]) -> Result<Target, String> {
    let seeds = fixtures
        .iter()
        .enumerate()
        .map(|(k, f)| match sqz::fmt::find(&f.cmd) {
            None => case(&f.cmd, &f.input),
            Some(_) => case(GENERIC_LABELS[k % GENERIC_LABELS.len()], &f.input),
        })
        .collect();
    engine_target("pipeline".into(), seeds, scratch)
}

fn engine_target(name: String, seeds: Vec<Vec<u8>>, scratch: &Path) -> Result<Target, String> {
    let mut engine = Engine::open(&scratch.join(&name))?;
    Ok(Target {
        name,
        seeds,
        inner: Vec::new(),
        wrap: None,
        tokens: &[],
        check: Box::new(move |case| check(&mut engine, case)),
    })
}

/// `cargo build`, `jest/vitest` → `cargo-build`, `jest-vitest`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Every invariant of one engine case.
fn check(engine: &mut Engine, case: &[u8]) -> Result<(), String> {
    let (label, body) = split_case(case);
    let label = label.as_str();
    if let Some(text) = decode_bytes(body) {
        let plain = ansi::collapse_returns(ansi::strip(&text));
        direct(label, &plain)?;
        // A value table or back-reference reader must take any text.
        let _ = table::rebuild(&text);
    }
    let now = engine.tick();
    let runs: [(&str, &[u8], i64); 3] = [
        ("first run", body, now),
        ("second run", body, now + 1_000),
        (
            "run without the last line",
            without_last_line(body),
            now + 2_000,
        ),
    ];
    for (run, input, at) in runs {
        if input.is_empty() {
            continue;
        }
        let served = serve::compress(
            label,
            input,
            Some(&mut engine.store),
            false,
            &engine.env,
            at,
        );
        served_well(engine, label, input, &served, at).map_err(|why| format!("{run}: {why}"))?;
    }
    // With nothing stored, only lossless stages may run: the output reads back to the input.
    let unstored = serve::compress(label, body, None, true, &engine.env, now);
    if unstored.stdout != body && !reads_back(&unstored.stdout, body) {
        return Err(format!(
            "unstored ({:?}): the output does not read back to the input",
            unstored.kind
        ));
    }
    Ok(())
}

/// The formatter that claims the label, and the template folder, called as the engine calls
/// them: no panic, and the template folder never folds a fact.
fn direct(label: &str, text: &str) -> Result<(), String> {
    let doc = Doc::new(label, text);
    if let Some(f) = sqz::fmt::find(label) {
        if let Some(pieces) = (f.format)(&doc) {
            let _ = doc::render(&doc, &pieces, "0123456789ab");
            if !doc::keeps_all_said(&doc, &pieces, |n| f.floor.keeps(doc.lines[n])) {
                return Err(format!(
                    "the {} formatter hid a line its floor keeps",
                    f.name
                ));
            }
        }
    }
    let is_fact: Vec<bool> = doc.lines.iter().map(|l| facts::is_fact(l)).collect();
    if let Some(pieces) = pipeline::fold_runs(&doc, &is_fact, "0123456789ab") {
        if !doc::keeps_all_said(&doc, &pieces, |n| is_fact[n]) {
            return Err("the template folder folded a fact line".into());
        }
        let _ = doc::render(&doc, &pieces, "0123456789ab");
    }
    Ok(())
}

/// What one `sqz compress` printed: no notice, never worse than the input, expandable to
/// the input byte for byte, every floor line shown and every marker exact.
fn served_well(
    engine: &mut Engine,
    label: &str,
    body: &[u8],
    served: &Served,
    now: i64,
) -> Result<(), String> {
    if let Some(notice) = &served.notice {
        return Err(format!("notice: {notice}"));
    }
    let tokens_in = sqz::tokens::count_bytes(body);
    let tokens_out = sqz::tokens::count_bytes(&served.stdout)
        + served.header.as_deref().map_or(0, sqz::tokens::count);
    if tokens_out > tokens_in {
        return Err(format!(
            "{:?}: worse than the input, {tokens_in} → {tokens_out} tokens",
            served.kind
        ));
    }
    if served.stdout == body {
        return Ok(());
    }
    round_trip(&mut engine.store, body, served, now)?;
    if matches!(served.kind, Kind::Ref | Kind::Slice | Kind::Delta) {
        return Ok(());
    }
    floor(label, body, served)?;
    markers(&mut engine.store, body, served, now)
}

/// The input comes back from what the output names (the header's hash, or the lone
/// reference), or, where nothing names it, from the output itself.
fn round_trip(store: &mut Store, body: &[u8], served: &Served, now: i64) -> Result<(), String> {
    let text = String::from_utf8_lossy(&served.stdout);
    let named = served
        .header
        .as_deref()
        .and_then(|h| h.rsplit_once("· sqz expand "))
        .map(|(_, target)| target.trim().to_string());
    let lone_ref = reference::refs_in(&text)
        .into_iter()
        .next()
        .filter(|token| text.trim_end() == token);
    let Some(target) = named.or(lone_ref) else {
        // Sent whole with colour stripped, the original stored under its hash; or changed
        // only in ways the agent undoes from what it sees.
        let stored = store.original(&sqz::text::hash16(body)).ok().flatten();
        if stored.as_deref() == Some(body) || reads_back(&served.stdout, body) {
            return Ok(());
        }
        return Err(format!(
            "{:?}: the output names nothing to expand, and neither the store nor the output gives the input back",
            served.kind
        ));
    };
    match expand::lookup(store, &target, now) {
        Ok((_, bytes)) if bytes == body => Ok(()),
        Ok((hash, bytes)) => Err(format!(
            "{:?}: sqz expand {target} gives {} bytes of {hash}, not the {} bytes of the input",
            served.kind,
            bytes.len(),
            body.len()
        )),
        Err(e) => Err(format!("{:?}: sqz expand {target}: {e}", served.kind)),
    }
}

/// Whether the agent reads `body` back from unstored output: value tables and back-references
/// undone, stand-ins for bytes that are not UTF-8 turned back into those bytes, or JSON's
/// agent form decoded to the same values.
pub(super) fn reads_back(stdout: &[u8], body: &[u8]) -> bool {
    let (Some(served), Some(input)) = (decode_bytes(stdout), decode_bytes(body)) else {
        return false;
    };
    let escaped = std::str::from_utf8(stdout).is_err();
    if table::rebuild(&served).is_some_and(|text| as_bytes(&text, escaped) == body) {
        return true;
    }
    let decoded = sqz::json::decode_agent_form(&served).ok();
    decoded.is_some() && decoded == super::targets::json_values(&input)
}

/// Text back to the bytes it came from: stand-ins too when the bytes were not UTF-8 (valid
/// text may hold the stand-in characters themselves).
fn as_bytes(text: &str, escaped: bool) -> Cow<'_, [u8]> {
    if escaped {
        Cow::Owned(encode_bytes(text))
    } else {
        Cow::Borrowed(text.as_bytes())
    }
}

/// Every line the floor keeps is shown, colour stripped or not, or what it says stands whole
/// in a shown line (the engine's own rule). JSON is exempt: its agent form writes values in
/// tables, losslessly, not line by line.
fn floor(label: &str, body: &[u8], served: &Served) -> Result<(), String> {
    let (Some(input), Some(output)) = (decode_bytes(body), decode_bytes(&served.stdout)) else {
        return Ok(());
    };
    let plain = ansi::collapse_returns(ansi::strip(&input));
    if sqz::json::compact_for_agent(&plain).is_some()
        || sqz::json::compact_for_agent(&input).is_some()
    {
        return Ok(());
    }
    let floor = match (served.kind, sqz::fmt::find(label)) {
        (Kind::Formatter, Some(f)) => f.floor,
        _ => Floor::Facts,
    };
    // Compared as bytes: a stripped colour code may join the stand-ins of a broken character
    // back into the character they came from.
    let escaped_in = std::str::from_utf8(body).is_err();
    let escaped_out = std::str::from_utf8(&served.stdout).is_err();
    let output_plain = ansi::collapse_returns(ansi::strip(&output));
    let output_plain = as_bytes(&output_plain, escaped_out);
    let shown: HashSet<&[u8]> = served
        .stdout
        .split(|&b| b == b'\n')
        .chain(output_plain.split(|&b| b == b'\n'))
        .collect();
    for line in plain.split('\n') {
        if !floor.keeps(line) || shown.contains(&as_bytes(line, escaped_in)[..]) {
            continue;
        }
        // A formatter may show a line without the `path:` it groups lines under (grep).
        let bytes = as_bytes(line, escaped_in);
        let regrouped = served.kind == Kind::Formatter
            && memchr::memchr_iter(b':', &bytes).any(|at| shown.contains(&bytes[at + 1..]));
        if regrouped {
            continue;
        }
        let core = as_bytes(doc::what_it_says(line), escaped_in);
        if core.len() >= 12 && memchr::memmem::find(&output_plain, &core).is_some() {
            continue;
        }
        return Err(format!(
            "{:?}: a line the {floor:?} floor keeps is not shown: {:?}",
            served.kind,
            short(line)
        ));
    }
    Ok(())
}

/// Each marker the output adds (`[… N lines · sqz expand HASH:La-b]`) expands to exactly the
/// lines it stands for, and counts them right.
fn markers(store: &mut Store, body: &[u8], served: &Served, now: i64) -> Result<(), String> {
    let output = String::from_utf8_lossy(&served.stdout);
    let input = String::from_utf8_lossy(body);
    // Lines of the input itself, as they came or as shown (colour stripped, redraws collapsed).
    let plain = ansi::collapse_returns(ansi::strip(&input));
    let input_lines: HashSet<&str> = input.split('\n').chain(plain.split('\n')).collect();
    for line in output.split('\n') {
        if !line.starts_with('[') || !line.ends_with(']') || input_lines.contains(line) {
            continue;
        }
        // A marker ends in its expand target; a line that only holds the words (compacted
        // JSON with a marker in a string) is no marker.
        let target = line
            .rsplit_once("· sqz expand ")
            .map(|(_, target)| target.trim_end_matches(']'))
            .filter(|target| !target.contains([' ', '"']));
        let Some(target) = target else {
            continue;
        };
        let bytes = match expand::lookup(store, target, now) {
            Ok((_, bytes)) => bytes,
            Err(e) => {
                return Err(format!(
                    "marker {:?} does not expand: {}",
                    short(line),
                    short(&e.to_string())
                ))
            }
        };
        let range = target
            .split_once(":L")
            .and_then(|(_, r)| r.split_once('-'))
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
        let want = match range {
            Some((a, b)) => expand::line_range(body, a, b).unwrap_or_default(),
            None => body,
        };
        if bytes != want {
            return Err(format!(
                "marker {:?} expands to {} bytes, not the {} it stands for",
                short(line),
                bytes.len(),
                want.len()
            ));
        }
        if let Some((a, b)) = range {
            let count = line
                .strip_prefix("[… ")
                .or_else(|| line.strip_prefix("[same "))
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse::<usize>().ok());
            if count.is_some_and(|n| n != b - a + 1) {
                return Err(format!(
                    "marker {:?} counts other than its range",
                    short(line)
                ));
            }
        }
    }
    Ok(())
}

/// The output without its last line: part of an earlier output (a slice reference), or a
/// small change to it (a delta).
fn without_last_line(body: &[u8]) -> &[u8] {
    let trimmed = body.strip_suffix(b"\n").unwrap_or(body);
    match memchr::memrchr(b'\n', trimmed) {
        Some(at) => &body[..at + 1],
        None => &[],
    }
}

/// A line cut for a one-line report.
pub fn short(line: &str) -> Cow<'_, str> {
    if line.len() <= 160 {
        return Cow::Borrowed(line);
    }
    Cow::Owned(format!("{}…", sqz::text::cut_at_char(line, 160)))
}
