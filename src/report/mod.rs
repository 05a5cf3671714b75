//! The reports a person reads: `sqz stats`, `sqz gain` and the last-day line of `sqz doctor`.
//! Everything is counted from the event rows the hot path already writes, with the token
//! figures the headers printed, so the totals are the sums of the headers. This layer reads
//! rows and returns text; the commands above it open the store and print.

pub mod html;
pub mod text;

use crate::store::EventRow;
use std::collections::HashMap;

pub const DAY_MS: i64 = 24 * 3600 * 1000;

/// The price `--cost` uses when none is given: US dollars per million input tokens, the list
/// price of the mid-size models most coding agents run on (Claude Sonnet, for one).
pub const DEFAULT_PRICE_PER_MTOK: f64 = 3.0;

/// What to count.
pub struct Scope {
    /// Whole UTC days, today included.
    pub days: u32,
    /// Unix milliseconds now.
    pub now: i64,
    /// A re-run of the same output within this many seconds of being served is a regret; 0
    /// counts none.
    pub window_secs: u64,
    /// Only calls made in this directory or below it.
    pub project: Option<String>,
}

impl Scope {
    /// The first millisecond of the first day counted.
    pub fn since(&self) -> i64 {
        (self.now.div_euclid(DAY_MS) - i64::from(self.days.max(1)) + 1) * DAY_MS
    }

    fn holds_project(&self, project: Option<&str>) -> bool {
        match (&self.project, project) {
            (None, _) => true,
            (Some(dir), Some(p)) => {
                let dir = dir.trim_end_matches('/');
                p == dir
                    || p.strip_prefix(dir)
                        .is_some_and(|rest| rest.starts_with('/'))
            }
            (Some(_), None) => false,
        }
    }
}

/// Calls and tokens, as the headers counted them.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Tally {
    pub calls: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

impl Tally {
    fn add(&mut self, row: &EventRow) {
        self.calls += 1;
        self.tokens_in += row.tokens_in.max(0) as u64;
        self.tokens_out += row.tokens_out.max(0) as u64;
    }

    pub fn saved(&self) -> u64 {
        self.tokens_in.saturating_sub(self.tokens_out)
    }

    /// The share saved, in percent, to one decimal.
    pub fn saved_pct(&self) -> f64 {
        if self.tokens_in == 0 {
            return 0.0;
        }
        (self.saved() as f64 * 1000.0 / self.tokens_in as f64).round() / 10.0
    }
}

/// One command family's figures.
#[derive(Clone, Debug)]
pub struct Family {
    pub family: String,
    pub tally: Tally,
    pub quick_reruns: u64,
    pub expands: u64,
}

/// The kinds of call, in the order the reports list them, with the words they use; the word
/// in the store comes first.
pub const KINDS: &[(&str, &str)] = &[
    ("ref", "reference"),
    ("slice", "slice"),
    ("delta", "delta"),
    ("formatter", "formatter"),
    ("template", "template fold"),
    ("generic", "generic"),
    ("fresh", "sent whole"),
    ("safe", "untouchable"),
    ("passthrough", "pass-through"),
];

/// Kinds where the agent was shown something other than the output itself: only after one of
/// these does seeing the same output again hint that something it needed was hidden.
const CHANGED: &[&str] = &["ref", "slice", "delta", "formatter", "template", "generic"];

/// Rows that are not calls: expands, and text the agent wrote itself.
fn is_call(kind: &str) -> bool {
    kind != "expand" && kind != "wrote"
}

/// Everything the reports show.
#[derive(Debug)]
pub struct Report {
    pub days: u32,
    pub since: i64,
    pub now: i64,
    pub window_secs: u64,
    pub project: Option<String>,
    pub total: Tally,
    /// Every kind of `KINDS`, in its order, with its word for people.
    pub kinds: Vec<(&'static str, Tally)>,
    /// Most tokens saved first.
    pub families: Vec<Family>,
    pub quick_reruns: u64,
    pub expands: u64,
    /// One entry per UTC day, oldest first, empty days included: the day's first millisecond
    /// and its figures.
    pub daily: Vec<(i64, Tally)>,
}

impl Report {
    /// Quick re-runs as a share of calls, in percent.
    pub fn rerun_rate(&self) -> f64 {
        rate(self.quick_reruns, self.total.calls)
    }

    /// Expands as a share of calls, in percent.
    pub fn expand_rate(&self) -> f64 {
        rate(self.expands, self.total.calls)
    }
}

fn rate(n: u64, calls: u64) -> f64 {
    if calls == 0 {
        return 0.0;
    }
    (n as f64 * 1000.0 / calls as f64).round() / 10.0
}

/// The family a row counts under: the one recorded with it, or for rows from before the
/// store had the column, the one its label gives.
fn family_of(row: &EventRow) -> String {
    match &row.family {
        Some(f) if !f.is_empty() => f.clone(),
        _ => crate::doc::label::Label::parse(&row.label).family(),
    }
}

/// Counts `rows` (oldest first, as `Store::events_since` gives them) within `scope`.
pub fn build(rows: &[EventRow], scope: &Scope) -> Report {
    let since = scope.since();
    let window_ms = (scope.window_secs as i64).saturating_mul(1000);
    let mut total = Tally::default();
    let mut kinds: HashMap<&str, Tally> = HashMap::new();
    let mut families: HashMap<String, Family> = HashMap::new();
    let first_day = since.div_euclid(DAY_MS);
    let mut daily: Vec<(i64, Tally)> = (0..i64::from(scope.days.max(1)))
        .map(|d| ((first_day + d) * DAY_MS, Tally::default()))
        .collect();
    // The last time each output was served, and how: for quick re-runs.
    let mut last_served: HashMap<&str, (i64, &str)> = HashMap::new();
    // The family that served each output, for laying an expand to it.
    let mut served_by: HashMap<&str, String> = HashMap::new();
    let (mut quick_reruns, mut expands) = (0, 0);
    let blank = |family: &str| Family {
        family: family.to_string(),
        tally: Tally::default(),
        quick_reruns: 0,
        expands: 0,
    };
    for row in rows.iter().filter(|r| r.at >= since && r.at <= scope.now) {
        let hash = row.hash.as_deref();
        if row.kind == "expand" {
            // An expand is in scope when what it expands was served in scope, or (without
            // --project) always.
            let owner = hash.and_then(|h| served_by.get(h)).cloned();
            if scope.project.is_some() && owner.is_none() {
                continue;
            }
            let family = owner.unwrap_or_else(|| family_of(row));
            expands += 1;
            families
                .entry(family.clone())
                .or_insert_with(|| blank(&family))
                .expands += 1;
            continue;
        }
        if !is_call(&row.kind) || !scope.holds_project(row.project.as_deref()) {
            continue;
        }
        let family = family_of(row);
        let entry = families
            .entry(family.clone())
            .or_insert_with(|| blank(&family));
        entry.tally.add(row);
        total.add(row);
        let word = KINDS
            .iter()
            .find(|(k, _)| *k == row.kind)
            .map_or("passthrough", |(k, _)| k);
        kinds.entry(word).or_default().add(row);
        let day = (row.at.div_euclid(DAY_MS) - first_day) as usize;
        if let Some((_, tally)) = daily.get_mut(day) {
            tally.add(row);
        }
        if let Some(hash) = hash {
            if let Some((at, how)) = last_served.get(hash) {
                if window_ms > 0 && row.at - at <= window_ms && CHANGED.contains(how) {
                    quick_reruns += 1;
                    entry.quick_reruns += 1;
                }
            }
            last_served.insert(hash, (row.at, row.kind.as_str()));
            served_by.insert(hash, family);
        }
    }
    let mut families: Vec<Family> = families.into_values().collect();
    families.sort_by(|a, b| {
        b.tally
            .saved()
            .cmp(&a.tally.saved())
            .then(b.tally.calls.cmp(&a.tally.calls))
            .then(a.family.cmp(&b.family))
    });
    Report {
        days: scope.days.max(1),
        since,
        now: scope.now,
        window_secs: scope.window_secs,
        project: scope.project.clone(),
        total,
        kinds: KINDS
            .iter()
            .map(|(k, word)| (*word, kinds.get(k).copied().unwrap_or_default()))
            .collect(),
        families,
        quick_reruns,
        expands,
        daily,
    }
}

/// `YYYY-MM-DD` of the UTC day holding `ms`.
pub fn date(ms: i64) -> String {
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = ms.div_euclid(DAY_MS) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(at: i64, label: &str, kind: &str, tin: i64, tout: i64, hash: &str) -> EventRow {
        EventRow {
            at,
            label: label.to_string(),
            family: None,
            kind: kind.to_string(),
            tokens_in: tin,
            tokens_out: tout,
            hash: Some(hash.to_string()),
            project: Some("/home/dev/app".to_string()),
        }
    }

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(date(1_796_428_800_000 - 1), "2026-12-04");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn re_runs_count_only_after_a_changed_output_within_the_window() {
        let now = 100 * DAY_MS + 3_600_000;
        let t = now - 1_000_000;
        let rows = vec![
            row(t, "cargo test", "formatter", 1000, 200, "a"),
            // Five minutes on: a repeat, outside the two-minute window.
            row(t + 300_000, "cargo test", "ref", 1000, 20, "a"),
            // Ten seconds on: the same again, a quick re-run.
            row(t + 310_000, "cargo test", "ref", 1000, 20, "a"),
            // Sent whole, then again at once: nothing was hidden, no regret.
            row(t + 320_000, "ls", "fresh", 50, 50, "b"),
            row(t + 321_000, "ls", "fresh", 50, 50, "b"),
            row(t + 330_000, "a1b2", "expand", 0, 0, "a"),
        ];
        let scope = Scope {
            days: 7,
            now,
            window_secs: 120,
            project: None,
        };
        let r = build(&rows, &scope);
        assert_eq!(r.total.calls, 5);
        assert_eq!(r.total.tokens_in, 3100);
        assert_eq!(r.total.tokens_out, 340);
        assert_eq!(r.quick_reruns, 1);
        assert_eq!(r.expands, 1);
        assert_eq!(r.families[0].family, "cargo test");
        assert_eq!(r.families[0].quick_reruns, 1);
        assert_eq!(r.families[0].expands, 1);
        assert_eq!(r.daily.len(), 7);
        assert_eq!(r.daily[6].1.calls, 5);
        let off = build(
            &rows,
            &Scope {
                window_secs: 0,
                ..scope
            },
        );
        assert_eq!(off.quick_reruns, 0);
    }

    #[test]
    fn a_project_holds_its_subdirectories_only() {
        let scope = Scope {
            days: 1,
            now: 0,
            window_secs: 0,
            project: Some("/home/dev/app".into()),
        };
        assert!(scope.holds_project(Some("/home/dev/app")));
        assert!(scope.holds_project(Some("/home/dev/app/src")));
        assert!(!scope.holds_project(Some("/home/dev/apple")));
        assert!(!scope.holds_project(None));
    }
}
