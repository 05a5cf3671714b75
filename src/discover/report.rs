//! A replay's report as a table for people and as JSON for scripts (the schema is in the
//! README, under `sqz discover`, and only grows).

use super::{ClientReport, Column, Kind, Report, Tally, ToolRow};
use crate::json::Value;

/// How many calls larger than raw the table lists.
const LISTED: usize = 20;

fn pct(raw: usize, out: usize) -> String {
    if raw == 0 {
        return "—".into();
    }
    format!("{:.1}%", 100.0 * (raw as f64 - out as f64) / raw as f64)
}

fn cut(s: &str, n: usize) -> String {
    let one_line = s.split('\n').next().unwrap_or("");
    let mut out: String = one_line.chars().take(n).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// The header and one line per row used, then the total; with `names`, each row's tools as
/// the client names them after it.
fn rows_table(out: &mut String, first: &str, rows: &[ToolRow], total: &ToolRow, names: bool) {
    out.push_str(&format!(
        "{:<14} {:>6} {:>9} {:>9} {:>7} {:>9} {:>7}\n",
        first, "calls", "raw", "hook", "saved", "routed", "saved"
    ));
    let row = |out: &mut String, t: &ToolRow| {
        let line = format!(
            "{:<14} {:>6} {:>9} {:>9} {:>7} {:>9} {:>7}",
            t.tool,
            t.calls,
            t.raw,
            t.hook,
            pct(t.raw, t.hook),
            t.routed,
            pct(t.raw, t.routed)
        );
        match names && !t.names.is_empty() {
            true => out.push_str(&format!("{line}   {}\n", cut(&t.names.join(", "), 48))),
            false => out.push_str(&format!("{line}\n")),
        }
    };
    for t in rows.iter().filter(|t| t.calls > 0) {
        row(out, t);
    }
    row(
        out,
        &ToolRow {
            names: Vec::new(),
            ..total.clone()
        },
    );
}

/// The table.
pub fn text(r: &Report) -> String {
    let mut out = format!(
        "sqz discover --replay: {} files, {} sessions, {} tool calls, {} compactions\n",
        r.files, r.sessions, r.calls, r.compactions
    );
    if r.without_tool_use_result > 0 || r.unanswered > 0 {
        out.push_str(&format!(
            "({} Claude Code results without toolUseResult, so the PostToolUse hook gets no tool_response for them; {} calls without a result)\n",
            r.without_tool_use_result, r.unanswered
        ));
    }
    for client in r.clients.iter().filter(|c| c.files > 0) {
        out.push_str(&format!(
            "\n{}: {} sessions of {} files; hook: {}\n",
            client.client, client.sessions, client.files, client.hook_says
        ));
        rows_table(&mut out, "tool", &client.tools, &client.total(), true);
    }
    let per_client: Vec<ToolRow> = r
        .clients
        .iter()
        .map(|c| ToolRow {
            tool: c.client,
            ..c.total()
        })
        .collect();
    out.push_str("\nall clients\n");
    rows_table(&mut out, "client", &per_client, &r.total(), false);
    out.push('\n');
    rows_table(&mut out, "tool", &r.tools(), &r.total(), false);
    out.push_str(&format!(
        "\n{:<14} {:>6} {:>9} {:>9} {:>7}   {:>6} {:>9} {:>9} {:>7}\n",
        "kind", "hook", "raw", "out", "saved", "routed", "raw", "out", "saved"
    ));
    for ((kind, hook), (_, routed)) in r.hook_kinds.iter().zip(&r.routed_kinds) {
        if hook.calls + routed.calls == 0 {
            continue;
        }
        out.push_str(&format!(
            "{:<14} {:>6} {:>9} {:>9} {:>7}   {:>6} {:>9} {:>9} {:>7}\n",
            kind.name(),
            hook.calls,
            hook.raw,
            hook.out,
            pct(hook.raw, hook.out),
            routed.calls,
            routed.raw,
            routed.out,
            pct(routed.raw, routed.out)
        ));
    }
    let count = |c: Column| r.larger.iter().filter(|l| l.column == c).count();
    out.push_str(&format!(
        "\ncalls larger than raw: hook {}, routed {}\n",
        count(Column::Hook),
        count(Column::Routed)
    ));
    for l in r.larger.iter().take(LISTED) {
        out.push_str(&format!(
            "  {:<6} {:<12} {:<8} {:>6} → {:<6} {}\n",
            l.column.name(),
            l.client,
            l.tool,
            l.raw,
            l.out,
            cut(&l.label, 60)
        ));
    }
    if r.larger.len() > LISTED {
        out.push_str(&format!(
            "  … {} more (--json lists all)\n",
            r.larger.len() - LISTED
        ));
    }
    out.push_str(&format!(
        "references and deltas expanded byte for byte: {} of {}\n",
        r.checked - r.failures.len(),
        r.checked
    ));
    for f in &r.failures {
        out.push_str(&format!(
            "  FAILED {} {} {} {}: {} ({})\n",
            f.column.name(),
            f.file,
            f.tool,
            cut(&f.label, 60),
            f.token,
            f.reason
        ));
    }
    out
}

fn n(v: usize) -> Value {
    Value::uint(v as u64)
}

fn object(members: &[(&str, Value)]) -> Value {
    let mut o = Value::object();
    for (k, v) in members {
        o.set(k, v.clone());
    }
    o
}

fn kinds(rows: &[(Kind, Tally)]) -> Value {
    Value::Array(
        rows.iter()
            .map(|(kind, t)| {
                object(&[
                    ("kind", Value::str(kind.name())),
                    ("calls", n(t.calls)),
                    ("raw", n(t.raw)),
                    ("out", n(t.out)),
                ])
            })
            .collect(),
    )
}

fn tool(t: &ToolRow) -> Value {
    object(&[
        ("tool", Value::str(t.tool)),
        ("calls", n(t.calls)),
        ("raw", n(t.raw)),
        ("hook", n(t.hook)),
        ("routed", n(t.routed)),
        (
            "names",
            Value::Array(t.names.iter().map(|s| Value::str(s)).collect()),
        ),
    ])
}

fn client(c: &ClientReport) -> Value {
    object(&[
        ("client", Value::str(c.client)),
        ("hook_rule", Value::str(c.hook_says)),
        ("files", n(c.files)),
        ("sessions", n(c.sessions)),
        ("tools", Value::Array(c.tools.iter().map(tool).collect())),
        ("total", tool(&c.total())),
    ])
}

/// The report as one JSON document (the schema in the README).
pub fn json(r: &Report) -> String {
    let count = |c: Column| n(r.larger.iter().filter(|l| l.column == c).count());
    // Where a call is, then what is said about it.
    let call = |column: Column,
                client: &str,
                file: &str,
                tool: &str,
                label: &str,
                rest: [(&str, Value); 2]| {
        let mut o = object(&[
            ("column", Value::str(column.name())),
            ("client", Value::str(client)),
            ("file", Value::str(file)),
            ("tool", Value::str(tool)),
            ("label", Value::str(label)),
        ]);
        for (k, v) in rest {
            o.set(k, v);
        }
        o
    };
    let larger = r
        .larger
        .iter()
        .map(|l| {
            let said = [("raw", n(l.raw)), ("out", n(l.out))];
            call(l.column, l.client, &l.file, &l.tool, &l.label, said)
        })
        .collect();
    let failures = r
        .failures
        .iter()
        .map(|f| {
            let said = [
                ("token", Value::str(&f.token)),
                ("reason", Value::str(&f.reason)),
            ];
            call(f.column, f.client, &f.file, &f.tool, &f.label, said)
        })
        .collect();
    let each = r
        .each
        .iter()
        .map(|c| {
            object(&[
                ("client", Value::str(c.client)),
                ("file", Value::str(&c.file)),
                ("tool", Value::str(&c.tool)),
                ("row", Value::str(c.row.name())),
                ("label", Value::str(&c.label)),
                ("raw", n(c.raw)),
                ("hook", n(c.hook)),
                ("hook_kind", Value::str(c.hook_kind.name())),
                ("routed", n(c.routed)),
                ("routed_kind", Value::str(c.routed_kind.name())),
            ])
        })
        .collect();
    let skipped = r
        .skipped
        .iter()
        .map(|(file, reason)| object(&[("file", Value::str(file)), ("reason", Value::str(reason))]))
        .collect();
    let doc = object(&[
        ("files", n(r.files)),
        ("sessions", n(r.sessions)),
        ("skipped", Value::Array(skipped)),
        ("tool_calls", n(r.calls)),
        ("compactions", n(r.compactions)),
        ("unanswered", n(r.unanswered)),
        ("without_tool_use_result", n(r.without_tool_use_result)),
        (
            "clients",
            Value::Array(r.clients.iter().map(client).collect()),
        ),
        ("tools", Value::Array(r.tools().iter().map(tool).collect())),
        ("total", tool(&r.total())),
        (
            "kinds",
            object(&[
                ("hook", kinds(&r.hook_kinds)),
                ("routed", kinds(&r.routed_kinds)),
            ]),
        ),
        (
            "larger",
            object(&[
                ("hook", count(Column::Hook)),
                ("routed", count(Column::Routed)),
                ("calls", Value::Array(larger)),
            ]),
        ),
        ("calls", Value::Array(each)),
        (
            "expanded",
            object(&[
                ("checked", n(r.checked)),
                ("failed", n(r.failures.len())),
                ("failures", Value::Array(failures)),
            ]),
        ),
    ]);
    doc.to_compact()
}
