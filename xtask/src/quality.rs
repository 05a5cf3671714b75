//! `cargo xtask quality`: every fixture through the release binary as the hook runs it, with
//! tokens in and out, reduction, facts kept and any regression; then totals per formatter.

use crate::common::{evaluate, load_fixtures, Spent, Verdict};
use std::collections::BTreeMap;
use std::path::Path;

pub fn run(root: &Path) -> Result<(), String> {
    let bin = crate::release_binary(root)?;
    let fixtures = load_fixtures(&root.join("fixtures"));
    if fixtures.is_empty() {
        return Err("no fixtures found".into());
    }
    let verdicts: Vec<Verdict> = fixtures.iter().map(|f| evaluate(&bin, f)).collect();
    println!(
        "{:<34} {:<14} {:>8} {:>8} {:>7} {:>7}  notes",
        "fixture", "formatter", "in", "out", "saved", "facts"
    );
    let mut failures = 0;
    for v in &verdicts {
        let kept = v.facts_total - v.facts_missing.len();
        let problems = v.problems();
        failures += usize::from(!problems.is_empty());
        let kind = if v.identical { "identical" } else { "" };
        println!(
            "{:<34} {:<14} {:>8} {:>8} {:>6.1}% {:>3}/{:<3}  {kind}{}{}",
            cut(&v.name, 34),
            v.formatter,
            v.tokens_in,
            v.tokens_out,
            pct(v.tokens_in, v.tokens_out),
            kept,
            v.facts_total,
            if v.nocache { " nocache" } else { "" },
            if problems.is_empty() {
                String::new()
            } else {
                format!("  REGRESSION: {}", problems.join("; "))
            }
        );
    }
    let mut per_formatter: BTreeMap<&str, (usize, usize, usize, usize, usize)> = BTreeMap::new();
    let mut spent: BTreeMap<&str, Spent> = BTreeMap::new();
    for v in verdicts.iter().filter(|v| !v.identical) {
        spent.entry(v.formatter).or_default().add(v.spent);
        let e = per_formatter.entry(v.formatter).or_default();
        e.0 += 1;
        e.1 += v.tokens_in;
        e.2 += v.tokens_out;
        e.3 += v.facts_total - v.facts_missing.len();
        e.4 += v.facts_total;
    }
    println!(
        "\n{:<14} {:>8} {:>9} {:>9} {:>7} {:>9}",
        "formatter", "fixtures", "in", "out", "saved", "facts"
    );
    for (name, (n, tin, tout, kept, total)) in &per_formatter {
        println!(
            "{name:<14} {n:>8} {tin:>9} {tout:>9} {:>6.1}% {kept:>4}/{total:<4}",
            pct(*tin, *tout)
        );
    }
    // The five weakest families, with where what is left of their output goes.
    let mut weakest: Vec<(&str, f64)> = per_formatter
        .iter()
        .map(|(name, e)| (*name, pct(e.1, e.2)))
        .collect();
    weakest.sort_by(|a, b| a.1.total_cmp(&b.1));
    println!("\nweakest families, and what limits each (share of the tokens they still send):");
    for (name, saved) in weakest.iter().take(5) {
        let s = spent[name];
        let total = (s.facts + s.markers + s.other + s.whole).max(1) as f64;
        let share = |n: usize| 100.0 * n as f64 / total;
        println!(
            "{name:<14} {saved:>5.1}% saved: {:.0}% passes whole (nothing pays, or untouchable), {:.0}% fact lines, {:.0}% other kept lines, {:.0}% markers and summaries",
            share(s.whole),
            share(s.facts),
            share(s.other),
            share(s.markers)
        );
    }
    let (tin, tout) = verdicts
        .iter()
        .filter(|v| !v.identical)
        .fold((0, 0), |a, v| (a.0 + v.tokens_in, a.1 + v.tokens_out));
    let facts: usize = verdicts.iter().map(|v| v.facts_total).sum();
    let missing: usize = verdicts.iter().map(|v| v.facts_missing.len()).sum();
    println!(
        "\n{} fixtures; facts kept {}/{} ({:.1}%); aggregate reduction on non-identical fixtures {:.1}% ({tin} → {tout} tokens, header included); {failures} with regressions",
        verdicts.len(),
        facts - missing,
        facts,
        if facts == 0 { 100.0 } else { 100.0 * (facts - missing) as f64 / facts as f64 },
        pct(tin, tout)
    );
    if failures > 0 {
        return Err(format!("{failures} fixtures regressed"));
    }
    Ok(())
}

pub fn pct(tokens_in: usize, tokens_out: usize) -> f64 {
    if tokens_in == 0 {
        return 0.0;
    }
    100.0 * (tokens_in as f64 - tokens_out as f64) / tokens_in as f64
}

fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}
