//! `sqz gain --html FILE`: one self-contained page, with no script, font or request of any
//! kind: the daily chart as inline SVG, the totals, the split per command and per kind, and
//! the regret table. It reads at laptop width and prints on paper.

use super::{date, thousands, Report, Tally};

/// Text made safe for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6576; --line: #d9dee7; --bar: #2f7d4f; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--ink); background: #fff; }
main { max-width: 980px; margin: 0 auto; padding: 28px 24px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
p.sub { color: var(--muted); margin: 0 0 20px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card b { display: block; font-size: 20px; font-variant-numeric: tabular-nums; }
.card span { color: var(--muted); font-size: 13px; }
svg { width: 100%; height: auto; display: block; }
svg .bar { fill: var(--bar); }
svg .axis { stroke: var(--line); }
svg text { font-size: 11px; fill: var(--muted); }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { font-weight: 600; color: var(--muted); font-size: 13px; white-space: nowrap; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; }
@media (max-width: 760px) { .grid { grid-template-columns: 1fr; } }
@media print {
  main { max-width: none; padding: 0; }
  .card, table, svg { break-inside: avoid; }
  svg .bar { fill: #000; }
  body { font-size: 11pt; }
}
";

/// The chart's size in SVG units; it scales with the page.
const WIDTH: f64 = 920.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 64.0;
const BOTTOM: f64 = 28.0;
const TOP: f64 = 12.0;

/// The daily chart: one `rect.bar` per day, empty days included (with no height), each with
/// its day and figures as a tooltip.
fn chart(r: &Report) -> String {
    let max = r.daily.iter().map(|(_, t)| t.saved()).max().unwrap_or(0);
    let plot_w = WIDTH - LEFT - 8.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / r.daily.len().max(1) as f64;
    let bar_w = (slot * 0.72).max(1.0);
    let mut svg = format!(
        "<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"saved tokens per day\" xmlns=\"http://www.w3.org/2000/svg\">\n"
    );
    // The axis and a top gridline with the largest day's figure.
    svg.push_str(&format!(
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>\n",
        TOP + plot_h,
        WIDTH - 8.0,
        TOP + plot_h
    ));
    svg.push_str(&format!(
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{:.1}\" y2=\"{TOP}\" stroke-dasharray=\"3 3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>\n",
        WIDTH - 8.0,
        LEFT - 6.0,
        TOP + 4.0,
        thousands(max),
        LEFT - 6.0,
        TOP + plot_h + 4.0
    ));
    // Label about eight days along the axis, whatever the span.
    let every = r.daily.len().div_ceil(8).max(1);
    for (i, (day, t)) in r.daily.iter().enumerate() {
        let h = if max == 0 {
            0.0
        } else {
            plot_h * t.saved() as f64 / max as f64
        };
        let x = LEFT + slot * i as f64 + (slot - bar_w) / 2.0;
        svg.push_str(&format!(
            "<rect class=\"bar\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{h:.1}\"><title>{}: {} tokens saved of {} in {} calls</title></rect>\n",
            TOP + plot_h - h,
            date(*day),
            thousands(t.saved()),
            thousands(t.tokens_in),
            thousands(t.calls)
        ));
        if i % every == 0 || i + 1 == r.daily.len() {
            svg.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                x + bar_w / 2.0,
                HEIGHT - 8.0,
                &date(*day)[5..]
            ));
        }
    }
    svg.push_str("</svg>\n");
    svg
}

fn tally_cells(t: &Tally) -> String {
    format!(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td>",
        thousands(t.calls),
        thousands(t.tokens_in),
        thousands(t.tokens_out),
        thousands(t.saved()),
        t.saved_pct()
    )
}

const TALLY_HEAD: &str =
    "<th>calls</th><th>tokens in</th><th>tokens out</th><th>saved</th><th>share</th>";

/// The whole page.
pub fn page(r: &Report) -> String {
    let t = &r.total;
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>sqz: tokens saved</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<main>\n<h1>sqz: tokens saved</h1>\n");
    out.push_str(&format!(
        "<p class=\"sub\">{} to {} (UTC), {} days{}</p>\n",
        date(r.since),
        date(r.now),
        r.days,
        r.project
            .as_deref()
            .map(|p| format!(", in {}", esc(p)))
            .unwrap_or_default()
    ));
    let card = |value: String, what: &str| {
        format!("<div class=\"card\"><b>{value}</b><span>{what}</span></div>")
    };
    out.push_str("<div class=\"cards\">");
    out.push_str(&card(thousands(t.saved()), "tokens saved"));
    out.push_str(&card(format!("{:.1}%", t.saved_pct()), "of tokens in"));
    out.push_str(&card(thousands(t.calls), "calls"));
    out.push_str(&card(
        format!("{:.1}%", r.rerun_rate()),
        &format!("quick re-runs ({})", thousands(r.quick_reruns)),
    ));
    out.push_str(&card(
        format!("{:.1}%", r.expand_rate()),
        &format!("expands ({})", thousands(r.expands)),
    ));
    out.push_str("</div>\n<h2>Saved tokens per day</h2>\n");
    out.push_str(&chart(r));
    out.push_str("<div class=\"grid\">\n<section>\n<h2>By command</h2>\n<table>\n");
    out.push_str(&format!("<tr><th>command</th>{TALLY_HEAD}</tr>\n"));
    for f in r.families.iter().filter(|f| f.tally.calls > 0) {
        out.push_str(&format!(
            "<tr><td>{}</td>{}</tr>\n",
            esc(&f.family),
            tally_cells(&f.tally)
        ));
    }
    out.push_str("</table>\n</section>\n<section>\n<h2>By kind</h2>\n<table>\n");
    out.push_str(&format!("<tr><th>kind</th>{TALLY_HEAD}</tr>\n"));
    for (kind, tally) in r.kinds.iter().filter(|(_, t)| t.calls > 0) {
        out.push_str(&format!(
            "<tr><td>{}</td>{}</tr>\n",
            esc(kind),
            tally_cells(tally)
        ));
    }
    out.push_str("</table>\n</section>\n</div>\n<h2>Regret signals</h2>\n");
    out.push_str(&format!(
        "<p class=\"sub\">A quick re-run is the same output again within {} s of being served compressed; an expand is <code>sqz expand</code> of something served. Both hint that something the agent needed was folded away.</p>\n<table>\n<tr><th>command</th><th>calls</th><th>quick re-runs</th><th>expands</th></tr>\n",
        r.window_secs
    ));
    let blamed: Vec<_> = r
        .families
        .iter()
        .filter(|f| f.quick_reruns + f.expands > 0)
        .collect();
    if blamed.is_empty() {
        out.push_str("<tr><td>none</td><td></td><td>0</td><td>0</td></tr>\n");
    }
    for f in blamed {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&f.family),
            thousands(f.tally.calls),
            thousands(f.quick_reruns),
            thousands(f.expands)
        ));
    }
    out.push_str("</table>\n</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
