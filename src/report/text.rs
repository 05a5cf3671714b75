//! The reports as terminal text and as JSON: `sqz stats`, `sqz gain`, and `sqz doctor`'s line.

use super::{date, thousands, Report, Tally};
use crate::json::Value;

/// How `sqz stats` is asked to show a report.
pub struct StatsView {
    pub breakdown: bool,
    /// US dollars per million input tokens, with `--cost`.
    pub price: Option<f64>,
}

/// How many families the plain `sqz stats` lists.
const TOP: usize = 5;

fn span(r: &Report) -> String {
    let first = date(r.since);
    let last = date(r.now);
    let project = r
        .project
        .as_deref()
        .map(|p| format!(", in {p}"))
        .unwrap_or_default();
    let days = if r.days == 1 { "day" } else { "days" };
    format!("last {} {days} (UTC, {first} to {last}){project}", r.days)
}

/// `1,234 → 345 saved 889 (72.0%)`-style columns for one row.
fn tally_row(name: &str, t: &Tally, width: usize) -> String {
    format!(
        "{name:<width$} {:>7} {:>12} {:>12} {:>12} {:>6.1}%",
        thousands(t.calls),
        thousands(t.tokens_in),
        thousands(t.tokens_out),
        thousands(t.saved()),
        t.saved_pct()
    )
}

fn tally_head(first: &str, width: usize) -> String {
    format!(
        "{first:<width$} {:>7} {:>12} {:>12} {:>12} {:>7}",
        "calls", "tokens in", "tokens out", "saved", "share"
    )
}

/// What one saved token is worth at `price` dollars per million, in dollars.
pub fn dollars(tokens: u64, price: f64) -> f64 {
    tokens as f64 * price / 1_000_000.0
}

/// The regret line: quick re-runs and expands, each with its share of calls.
fn regret_line(r: &Report) -> String {
    let reruns = if r.window_secs == 0 {
        "quick re-runs not counted (SQZ_REGRET_WINDOW_SECS=0)".to_string()
    } else {
        format!(
            "{} within {} s ({:.1}% of calls)",
            counted(r.quick_reruns, "quick re-run"),
            r.window_secs,
            r.rerun_rate()
        )
    };
    format!(
        "{reruns}, {} ({:.1}% of calls)",
        counted(r.expands, "expand"),
        r.expand_rate()
    )
}

/// `sqz stats` as text.
pub fn stats(r: &Report, view: &StatsView) -> String {
    let t = &r.total;
    let mut out = format!("sqz stats: {}\n", span(r));
    out.push_str(&format!("calls       {}\n", thousands(t.calls)));
    out.push_str(&format!("tokens in   {}\n", thousands(t.tokens_in)));
    out.push_str(&format!("tokens out  {}\n", thousands(t.tokens_out)));
    out.push_str(&format!(
        "saved       {} ({:.1}%)\n",
        thousands(t.saved()),
        t.saved_pct()
    ));
    if let Some(price) = view.price {
        out.push_str(&format!(
            "cost saved  ${:.2} at ${price:.2} per million input tokens (an estimate: each saved token priced once as fresh input; later turns re-read it from the prompt cache at a fraction of that, not counted)\n",
            dollars(t.saved(), price)
        ));
    }
    out.push_str(&format!("regret      {}\n", regret_line(r)));
    if t.calls == 0 {
        out.push_str("\nno calls recorded in this period\n");
        return out;
    }
    let width = r
        .families
        .iter()
        .map(|f| f.family.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(14, 40);
    let shown = if view.breakdown {
        r.families.len()
    } else {
        TOP.min(r.families.len())
    };
    out.push_str(&format!(
        "\n{}\n{}\n",
        if view.breakdown {
            "by command"
        } else {
            "top commands by tokens saved"
        },
        tally_head("command", width)
    ));
    for f in r.families.iter().filter(|f| f.tally.calls > 0).take(shown) {
        out.push_str(&tally_row(&f.family, &f.tally, width));
        out.push('\n');
    }
    if !view.breakdown {
        return out;
    }
    out.push_str(&format!("\nby kind\n{}\n", tally_head("kind", width)));
    for (kind, tally) in r.kinds.iter().filter(|(_, t)| t.calls > 0) {
        out.push_str(&tally_row(kind, tally, width));
        out.push('\n');
    }
    let blamed: Vec<_> = r
        .families
        .iter()
        .filter(|f| f.quick_reruns + f.expands > 0)
        .collect();
    out.push_str("\nregret by command\n");
    if blamed.is_empty() {
        out.push_str("none: no output was run again quickly and none was expanded\n");
        return out;
    }
    out.push_str(&format!(
        "{:<width$} {:>7} {:>12} {:>9}\n",
        "command", "calls", "quick re-runs", "expands"
    ));
    for f in blamed {
        out.push_str(&format!(
            "{:<width$} {:>7} {:>13} {:>9}\n",
            f.family,
            thousands(f.tally.calls),
            thousands(f.quick_reruns),
            thousands(f.expands)
        ));
    }
    out
}

/// A tally as JSON, after `name` (`("kind", "slice")`) when given.
fn tally_json(name: Option<(&str, &str)>, t: &Tally) -> Value {
    let mut o = Value::object();
    if let Some((key, value)) = name {
        o.set(key, Value::str(value));
    }
    o.set("calls", Value::uint(t.calls));
    o.set("tokens_in", Value::uint(t.tokens_in));
    o.set("tokens_out", Value::uint(t.tokens_out));
    o.set("saved", Value::uint(t.saved()));
    o
}

fn number(x: f64, decimals: usize) -> Value {
    Value::Number(format!("{x:.decimals$}"))
}

/// `sqz stats --json`: the schema the README documents. Members are only ever added.
pub fn stats_json(r: &Report, price: f64) -> String {
    let mut o = Value::object();
    o.set("schema", Value::int(1));
    o.set("days", Value::uint(u64::from(r.days)));
    o.set("from", Value::str(&date(r.since)));
    o.set("to", Value::str(&date(r.now)));
    o.set(
        "project",
        r.project.as_deref().map_or(Value::Null, Value::str),
    );
    let mut total = tally_json(None, &r.total);
    total.set("saved_pct", number(r.total.saved_pct(), 1));
    o.set("total", total);
    let mut regret = Value::object();
    regret.set("window_secs", Value::uint(r.window_secs));
    regret.set("quick_reruns", Value::uint(r.quick_reruns));
    regret.set("quick_rerun_pct", number(r.rerun_rate(), 1));
    regret.set("expands", Value::uint(r.expands));
    regret.set("expand_pct", number(r.expand_rate(), 1));
    o.set("regret", regret);
    let mut cost = Value::object();
    cost.set("usd_per_million_tokens", number(price, 2));
    cost.set("usd_saved", number(dollars(r.total.saved(), price), 4));
    o.set("cost", cost);
    let kinds = r
        .kinds
        .iter()
        .map(|(kind, t)| tally_json(Some(("kind", kind)), t))
        .collect();
    o.set("kinds", Value::Array(kinds));
    let families = r
        .families
        .iter()
        .map(|f| {
            let mut k = tally_json(Some(("family", &f.family)), &f.tally);
            k.set("quick_reruns", Value::uint(f.quick_reruns));
            k.set("expands", Value::uint(f.expands));
            k
        })
        .collect();
    o.set("families", Value::Array(families));
    let daily = r
        .daily
        .iter()
        .map(|(day, t)| tally_json(Some(("date", &date(*day))), t))
        .collect();
    o.set("daily", Value::Array(daily));
    let mut text = o.to_pretty();
    text.push('\n');
    text
}

/// How `sqz gain` draws.
pub struct GainView {
    /// Columns to fill.
    pub width: usize,
    pub colour: bool,
}

/// Eighths of a block, for bars finer than a character.
const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// A bar of `value` out of `max` in `width` columns, padded to `width`.
fn bar(value: u64, max: u64, width: usize) -> String {
    let eighths = if max == 0 {
        0
    } else {
        ((value as u128 * width as u128 * 8 + max as u128 / 2) / max as u128) as usize
    };
    let mut out = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        out.push(EIGHTHS[eighths % 8]);
    }
    // A day that saved something never looks empty.
    if out.is_empty() && value > 0 {
        out.push('▏');
    }
    let used = out.chars().count();
    out.push_str(&" ".repeat(width.saturating_sub(used)));
    out
}

/// `sqz gain`: saved tokens per day as horizontal bars, one per day, empty days included.
pub fn gain(r: &Report, view: &GainView) -> String {
    let mut out = format!("saved tokens per day, {}\n", span(r));
    let max = r.daily.iter().map(|(_, t)| t.saved()).max().unwrap_or(0);
    let number_width = thousands(max).len().max(1);
    // `YYYY-MM-DD │bar number`
    let bar_width = view.width.saturating_sub(10 + 2 + 1 + number_width).max(10);
    let (on, off) = if view.colour {
        ("\x1b[32m", "\x1b[0m")
    } else {
        ("", "")
    };
    for (day, t) in &r.daily {
        out.push_str(&format!(
            "{} │{on}{}{off} {:>number_width$}\n",
            date(*day),
            bar(t.saved(), max, bar_width),
            thousands(t.saved())
        ));
    }
    let active = r.daily.iter().filter(|(_, t)| t.calls > 0).count();
    out.push_str(&format!(
        "total {} tokens saved of {} ({:.1}%) in {}, on {active} of {} days\n",
        thousands(r.total.saved()),
        thousands(r.total.tokens_in),
        r.total.saved_pct(),
        calls(r.total.calls),
        r.daily.len()
    ));
    out
}

/// `sqz doctor`'s line on the last 24 hours.
pub fn last_day_line(r: &Report) -> String {
    if r.total.calls == 0 {
        return "last 24 h: no calls recorded".to_string();
    }
    format!(
        "last 24 h: {}, {} of {} tokens saved ({:.1}%); regret {:.1}% ({}, {})",
        calls(r.total.calls),
        thousands(r.total.saved()),
        thousands(r.total.tokens_in),
        r.total.saved_pct(),
        rate_sum(r),
        counted(r.quick_reruns, "quick re-run"),
        counted(r.expands, "expand")
    )
}

/// `1 call`, `2,048 calls`.
fn calls(n: u64) -> String {
    counted(n, "call")
}

/// `n` things, `thing` taking an `s` unless there is one.
fn counted(n: u64, thing: &str) -> String {
    format!("{} {thing}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// Quick re-runs and expands together, as a share of calls.
fn rate_sum(r: &Report) -> f64 {
    super::rate(r.quick_reruns + r.expands, r.total.calls)
}

/// The report on `rows` read from 24 hours before `now` on, for `sqz doctor`: the scope's
/// two calendar days hold them all.
pub fn last_day(rows: &[crate::store::EventRow], now: i64, window_secs: u64) -> Report {
    super::build(
        rows,
        &super::Scope {
            days: 2,
            now,
            window_secs,
            project: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_width_and_keep_it() {
        assert_eq!(bar(10, 10, 4), "████");
        assert_eq!(bar(0, 10, 4), "    ");
        assert_eq!(bar(5, 10, 4), "██  ");
        assert_eq!(bar(1, 1000, 4), "▏   ");
        assert_eq!(bar(0, 0, 3), "   ");
    }
}
