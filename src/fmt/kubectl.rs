//! kubectl (and `oc`, `k`): three shapes.
//! - `kubectl get` tables (a listing): the header and every row that needs attention stay — a
//!   STATUS other than Running/Completed/Succeeded/Active/Bound/Ready, READY `n/m` with n < m,
//!   RESTARTS above 0 — and the healthy rows fold into one counted marker, when there are at
//!   least six of them. A row that does not fit the header's columns stays.
//! - `kubectl describe`: the long reference blocks (Volumes, multi-line Labels, Annotations,
//!   Tolerations, container and image ids) fold; Status, State, Last State, Reason, Exit Code,
//!   Restart Count, Conditions and Events stay, and so does every fact line.
//! - `kubectl apply`: every `created`/`configured` line is the result and stays; a run of
//!   `unchanged` lines folds when there are many.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

/// Fewest healthy rows (or unchanged objects) worth a marker.
const MIN_FOLD: usize = 6;

fn verb<'a>(label: &Label<'a>) -> Option<&'a str> {
    if !matches!(label.program, "kubectl" | "oc" | "k" | "microk8s.kubectl") {
        return None;
    }
    label
        .args
        .iter()
        .copied()
        .find(|a| matches!(*a, "get" | "describe" | "apply"))
}

pub fn matches_get(label: &Label) -> bool {
    verb(label) == Some("get")
}

pub fn matches(label: &Label) -> bool {
    matches!(verb(label), Some("describe" | "apply"))
}

/// The columns of a table header: (name, start offset in bytes).
fn columns(header: &str) -> Option<Vec<(&str, usize)>> {
    let mut cols = Vec::new();
    let mut start = None;
    for (i, c) in header.char_indices() {
        match (c == ' ', start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                cols.push((&header[s..i], s));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        cols.push((&header[s..], s));
    }
    let names: Vec<&str> = cols.iter().map(|c| c.0).collect();
    let first_ok = matches!(names.first(), Some(&"NAME") | Some(&"NAMESPACE"));
    (first_ok && names.contains(&"NAME") && names.len() >= 2).then_some(cols)
}

/// The row's cell under each column, or None when the row does not fit the header: a cell
/// must start exactly at its column (kubectl pads with spaces) and none may be empty but the
/// last ones.
fn cells<'a>(row: &'a str, cols: &[(&str, usize)]) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    for (i, &(_, start)) in cols.iter().enumerate() {
        let end = cols.get(i + 1).map_or(row.len(), |c| c.1);
        if start >= row.len()
            || !row.is_char_boundary(start)
            || !row.is_char_boundary(end.min(row.len()))
        {
            return None;
        }
        let cell = &row[start..end.min(row.len())];
        let boundary_ok = start == 0 || row.as_bytes()[start - 1] == b' ';
        if !boundary_ok || cell.starts_with(' ') || cell.trim().is_empty() {
            return None;
        }
        out.push(cell.trim_end());
    }
    Some(out)
}

fn healthy(cols: &[(&str, usize)], cells: &[&str], common_restarts: bool) -> bool {
    let get = |name: &str| cols.iter().position(|c| c.0 == name).map(|i| cells[i]);
    let status_ok = get("STATUS").is_none_or(|s| {
        matches!(
            s,
            "Running" | "Completed" | "Succeeded" | "Active" | "Bound" | "Ready" | "Available"
        )
    });
    let ready_ok = get("READY").is_none_or(|r| match r.split_once('/') {
        Some((n, m)) => matches!((n.parse::<u32>(), m.parse::<u32>()), (Ok(n), Ok(m)) if n == m),
        None => matches!(r, "True" | "true"),
    });
    // A pod that restarted stands out, unless most rows did (a node reboot restarts every pod:
    // `10 (49m ago)`); then the count is row detail, kept behind the marker.
    let restarts_ok = common_restarts || get("RESTARTS").is_none_or(|r| r == "0");
    status_ok && ready_ok && restarts_ok
}

pub fn format_get(doc: &Doc) -> Option<Vec<Piece>> {
    let header_at = doc.lines.iter().position(|l| !l.trim().is_empty())?;
    let cols = columns(doc.lines[header_at])?;
    let has_health_column = cols
        .iter()
        .any(|c| matches!(c.0, "STATUS" | "READY" | "RESTARTS"));
    if !has_health_column {
        return None;
    }
    let table: Vec<(usize, Vec<&str>)> = (header_at + 1..doc.lines.len())
        .filter_map(|n| Some((n, cells(doc.lines[n], &cols)?)))
        .collect();
    let restarts_at = cols.iter().position(|c| c.0 == "RESTARTS");
    let restarted = table
        .iter()
        .filter(|(_, c)| restarts_at.is_some_and(|i| c[i] != "0"))
        .count();
    let common_restarts = cols.iter().any(|c| c.0 == "READY") && restarted * 4 >= table.len() * 3;
    let healthy_rows: Vec<usize> = table
        .iter()
        .filter(|(_, c)| healthy(&cols, c, common_restarts))
        .map(|(n, _)| *n)
        .collect();
    // Every row must fit the table; a table whose rows mostly do not is not a kubectl table.
    let rows = (header_at + 1..doc.lines.len())
        .filter(|&n| !doc.lines[n].trim().is_empty())
        .count();
    let fitting = (header_at + 1..doc.lines.len())
        .filter(|&n| cells(doc.lines[n], &cols).is_some())
        .count();
    if healthy_rows.len() < MIN_FOLD || fitting * 2 < rows {
        return None;
    }
    let mut pieces: Vec<Piece> = (0..doc.lines.len())
        .filter(|n| healthy_rows.binary_search(n).is_err())
        .map(Piece::Keep)
        .collect();
    // The rows that need attention read first, under the header; the healthy ones after,
    // folded, with every one of their names kept.
    let summaries = healthy_names(doc, &cols, &healthy_rows);
    pieces.push(Piece::Fold {
        lines: healthy_rows,
        what: "healthy row".to_string(),
    });
    pieces.extend(summaries.into_iter().map(Piece::Summary));
    Some(pieces)
}

/// The names of the healthy rows, grouped by the column values they share:
/// `READY 1/1, STATUS Running, RESTARTS 0, AGE 2h (6): a b c d e f`. A column whose values
/// mostly differ (an IP, a varied AGE) is detail and is left to the marker.
fn healthy_names(doc: &Doc, cols: &[(&str, usize)], rows: &[usize]) -> Vec<String> {
    let Some(name_at) = cols.iter().position(|c| c.0 == "NAME") else {
        return Vec::new();
    };
    let cells: Vec<Vec<&str>> = rows
        .iter()
        .filter_map(|&n| cells(doc.lines[n], cols))
        .collect();
    let shared: Vec<usize> = (0..cols.len())
        .filter(|&c| c != name_at)
        .filter(|&c| {
            let mut values: Vec<&str> = cells.iter().map(|r| r[c]).collect();
            values.sort_unstable();
            values.dedup();
            // The namespace always groups: it is half of each name. Other columns group only
            // when nearly every row agrees (`READY 1/1`, `STATUS Running`).
            cols[c].0 == "NAMESPACE" || values.len() <= (cells.len() / 8).max(2)
        })
        .collect();
    let mut groups: Vec<(Vec<&str>, Vec<&str>)> = Vec::new();
    for row in &cells {
        let key: Vec<&str> = shared.iter().map(|&c| row[c]).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(row[name_at]),
            None => groups.push((key, vec![row[name_at]])),
        }
    }
    groups
        .into_iter()
        .map(|(key, names)| {
            let values: Vec<String> = shared
                .iter()
                .zip(&key)
                .map(|(&c, v)| format!("{} {v}", cols[c].0))
                .collect();
            format!(
                "{} ({}): {}",
                values.join(", "),
                names.len(),
                names.join(" ")
            )
        })
        .collect()
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    if doc.lines.iter().any(|l| is_apply_result(l)) {
        return format_apply(doc);
    }
    format_describe(doc)
}

fn is_apply_result(line: &str) -> bool {
    let Some((object, outcome)) = line.split_once(' ') else {
        return false;
    };
    object.contains('/')
        && !object.starts_with('/')
        && matches!(
            outcome
                .trim_end_matches(" (dry run)")
                .trim_end_matches(" (server dry run)"),
            "created" | "configured" | "unchanged" | "serverside-applied" | "pruned"
        )
}

fn format_apply(doc: &Doc) -> Option<Vec<Piece>> {
    let unchanged = |l: &str| {
        is_apply_result(l)
            && l.split_once(' ')
                .is_some_and(|(_, o)| o.starts_with("unchanged"))
            && !is_fact(l)
    };
    let count = doc.lines.iter().filter(|l| unchanged(l)).count();
    if count < MIN_FOLD {
        return None;
    }
    let pieces = super::fold::fold_consecutive(doc, |l| unchanged(l).then_some("unchanged object"));
    let folded = pieces
        .iter()
        .any(|p| matches!(p, Piece::Fold { lines, .. } if lines.len() >= 2));
    folded.then_some(pieces)
}

/// Indentation in spaces.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `Key:   value` → Key (the text before the first `:` followed by a space or the end).
fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let i = t.find(':')?;
    let after = &t[i + 1..];
    (after.is_empty() || after.starts_with(' ') || after.starts_with('\t')).then_some(&t[..i])
}

fn format_describe(doc: &Doc) -> Option<Vec<Piece>> {
    let lines = &doc.lines;
    // Recognise a describe: a `Name:` line first, and Events or Status/Conditions keys.
    let first = lines.iter().position(|l| !l.trim().is_empty())?;
    let name_first = key_of(lines[first]) == Some("Name");
    let known = lines
        .iter()
        .filter(|l| indent(l) == 0)
        .filter_map(|l| key_of(l))
        .filter(|k| {
            matches!(
                *k,
                "Namespace" | "Status" | "Events" | "Conditions" | "Labels"
            )
        })
        .count();
    if !name_first || known < 2 {
        return None;
    }
    let mut fold: Vec<(usize, &'static str)> = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let line = lines[n];
        let key = key_of(line);
        let top = indent(line) == 0;
        if top && key == Some("Volumes") {
            // The whole Volumes block: every indented line after the key.
            let mut m = n + 1;
            while m < lines.len() && indent(lines[m]) > 0 && !lines[m].trim().is_empty() {
                fold.push((m, "volume detail"));
                m += 1;
            }
            n = m;
            continue;
        }
        if top && matches!(key, Some("Labels" | "Annotations" | "Tolerations")) {
            // Continuation lines: indented, no key of their own at a lower indent.
            let mut m = n + 1;
            while m < lines.len()
                && indent(lines[m]) > 0
                && key_of(lines[m]).is_none_or(|_| indent(lines[m]) >= 10)
                && !lines[m].trim().is_empty()
            {
                m += 1;
            }
            // Worth a marker only from three continuation lines on.
            if m - (n + 1) >= 3 {
                for k in n + 1..m {
                    fold.push((k, "label/annotation/toleration"));
                }
            }
            n = m;
            continue;
        }
        if matches!(key, Some("Container ID" | "Image ID")) {
            fold.push((n, "container/image id"));
        }
        n += 1;
    }
    fold.retain(|&(n, _)| !is_fact(lines[n]));
    if fold.len() < 3 {
        return None;
    }
    // One marker per kind, at the place of its first line, so the rest reads in input order.
    let mut pieces = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (n, _) in lines.iter().enumerate() {
        match fold.iter().find(|f| f.0 == n) {
            Some(&(_, what)) => {
                if !seen.contains(&what) {
                    seen.push(what);
                    pieces.push(Piece::Fold {
                        lines: fold.iter().filter(|f| f.1 == what).map(|f| f.0).collect(),
                        what: what.to_string(),
                    });
                }
            }
            None => pieces.push(Piece::Keep(n)),
        }
    }
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIXED: &str = include_str!("../../fixtures/kubectl-get-pods-crashloop-mixed/input.txt");
    const COREDNS: &str =
        include_str!("../../fixtures/kubectl-get-pods-coredns-crashloop/input.txt");
    const PENDING: &str = include_str!("../../fixtures/kubectl-get-pods-pending/input.txt");
    const DESCRIBE: &str = include_str!("../../fixtures/kubectl-describe-pod-running/input.txt");
    const APPLY: &str = include_str!("../../fixtures/kubectl-apply-created/input.txt");

    fn get(text: &str) -> Option<String> {
        let doc = Doc::new("kubectl get pods", text);
        let pieces = format_get(&doc)?;
        Some(crate::fmt::render_checked(&doc, &pieces, "h"))
    }

    fn describe(text: &str) -> Option<String> {
        let doc = Doc::new("kubectl describe pod x", text);
        let pieces = format(&doc)?;
        Some(crate::fmt::render_checked(&doc, &pieces, "h"))
    }

    #[test]
    fn labels() {
        assert!(matches_get(&Label::parse(
            "kubectl -n kube-system get pods -o wide"
        )));
        assert!(matches(&Label::parse("kubectl describe pod web-1")));
        assert!(matches(&Label::parse("kubectl apply -f k8s/")));
        assert!(!matches(&Label::parse("kubectl logs web-1")));
        assert!(!matches_get(&Label::parse("git get")));
    }

    #[test]
    fn get_keeps_every_unhealthy_row_and_folds_healthy_ones() {
        let out = get(MIXED).unwrap();
        for row in [
            "calico-node-ls4nf                          1/2       CrashLoopBackOff    12         44m",
            "calico-node-t9r8z                          2/2       Running             1          1h",
            "calico-node-x7nkw                          1/2       Running             13         44m",
            "kube-proxy-gfvf8                           0/1       ImagePullBackOff    0          44m",
            "kube-proxy-gn99x                           0/1       ImagePullBackOff    0          44m",
            "kubernetes-dashboard-7d5dcdb6d9-nlvxs      0/1       ContainerCreating   0          40m",
        ] {
            assert!(out.contains(row), "{row}");
        }
        assert!(out.starts_with("NAME "));
        // The healthy rows fold, but every name stays, grouped by what the rows share.
        assert!(!out.contains("etcd-k8s-node1                             1/1"));
        assert!(
            out.contains("[… 8 healthy row lines · sqz expand h]\nREADY 1/1, STATUS Running, RESTARTS 0, AGE 1h (2): calico-etcd-spwts calico-kube-controllers-685755779f-8qvg9\n"),
            "{out}"
        );
        assert!(
            out.contains("(5): etcd-k8s-node1 kube-apiserver-k8s-node1"),
            "{out}"
        );
        let out = get(COREDNS).unwrap();
        assert!(out.contains("coredns-5c98db65d4-qx4mq"));
        assert!(out.contains("coredns-5c98db65d4-v5mg8"));
        assert!(out.contains("6 healthy row lines"), "{out}");
    }

    #[test]
    fn get_declines_when_few_rows_are_healthy() {
        assert!(get(PENDING).is_none());
        assert!(get("No resources found in default namespace.\n").is_none());
    }

    #[test]
    fn get_bad_input() {
        // Truncated mid-row: the cut row does not fit the columns and stays.
        let cut = &MIXED[..MIXED.find("kube-scheduler").unwrap() + 9];
        let out = get(cut).unwrap();
        assert!(
            out.ends_with("kube-sche\n") || out.contains("kube-sche\n"),
            "{out}"
        );
        // An unknown line (a newer kubectl's warning, or interleaved stderr) stays.
        let odd = MIXED.replacen(
            "kube-proxy-s9kjw",
            "Warning: v1 ComponentStatus is deprecated in v1.19+\nkube-proxy-s9kjw",
            1,
        );
        let out = get(&odd).unwrap();
        assert!(out.contains("Warning: v1 ComponentStatus is deprecated in v1.19+\n"));
        // Two tables interleaved (watch output of two commands): foreign rows stay.
        let mixed = format!("{MIXED}{}", "deployment.apps/web   3/3   3   3   2d\n");
        assert!(get(&mixed).unwrap().contains("deployment.apps/web"));
        // Another locale: kubectl does not translate table headers, but a translated header
        // is not recognised and the table is refused.
        let de = MIXED.replacen("STATUS", "ZUSTAND", 1);
        let de = de
            .replacen("READY", "BEREIT", 1)
            .replacen("RESTARTS", "NEUSTARTS", 1);
        assert!(get(&de).is_none());
    }

    #[test]
    fn describe_folds_reference_blocks_and_keeps_state_and_events() {
        let out = describe(DESCRIBE).unwrap();
        for kept in [
            "Status:       Running",
            "    State:          Running",
            "    Restart Count:  0",
            "Conditions:",
            "  Ready             True ",
            "Events:",
            "  Normal  Started    30s   kubelet            Started container nginx",
            "Volumes:",
            "Labels:       app=nginx",
        ] {
            assert!(out.contains(kept), "{kept}");
        }
        assert!(!out.contains("TokenExpirationSeconds"));
        assert!(!out.contains("containerd://5403af"));
        assert!(out.contains("6 volume detail lines"), "{out}");
    }

    #[test]
    fn describe_bad_input() {
        // Truncated mid-line: the cut line stays.
        let cut = &DESCRIBE[..DESCRIBE.find("Successfully pulled").unwrap() + 12];
        let out = describe(cut).unwrap();
        assert!(out.trim_end().ends_with("Successfully"), "{out}");
        // A newer kubectl's unknown key stays, even inside a folded block's neighbourhood.
        let odd = DESCRIBE.replacen(
            "QoS Class:",
            "Resize Policy:  RestartContainer\nQoS Class:",
            1,
        );
        assert!(describe(&odd)
            .unwrap()
            .contains("Resize Policy:  RestartContainer\n"));
        // A failing container's state, reason and exit code stay (facts or not).
        let failing = DESCRIBE.replacen(
            "    State:          Running\n",
            "    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n",
            1,
        );
        let out = describe(&failing).unwrap();
        assert!(out.contains("      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n"));
        // Another locale / unknown shape: refused.
        assert!(describe("Nom :  web-1\nEspace de noms :  default\n").is_none());
        assert!(describe("error: the server doesn't have a resource type \"pdo\"\n").is_none());
    }

    #[test]
    fn apply_folds_many_unchanged_and_keeps_changes() {
        assert!(describe(APPLY).is_none());
        let mut text = String::from("namespace/shop created\n");
        for i in 0..8 {
            text.push_str(&format!("configmap/cfg-{i} unchanged\n"));
        }
        text.push_str("deployment.apps/web configured\nError from server (Forbidden): secrets \"x\" is forbidden\n");
        let out = describe(&text).unwrap();
        assert!(out.contains("namespace/shop created\n"));
        assert!(out.contains("deployment.apps/web configured\n"));
        assert!(out.contains("Error from server (Forbidden)"));
        assert!(out.contains("8 unchanged object lines"), "{out}");
        // Truncated after a few lines: too few to fold.
        assert!(describe("configmap/a unchanged\nconfigmap/b unch").is_none());
    }
}
