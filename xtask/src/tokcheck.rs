// `cargo xtask tokcheck`: measures sqz's approximate token counter against the exact cl100k
// counts of every fixture and fails when it misses the accuracy targets of SPEC §6. It only
// reads fixtures; it never rewrites them.

use std::path::{Path, PathBuf};

/// Mean absolute error per document must stay under this (percent).
const MAX_MEAN_ABS_ERROR: f64 = 7.0;
/// Error on the corpus total must stay under this (percent, either sign).
const MAX_TOTAL_ERROR: f64 = 2.0;
/// How many of the worst documents to list.
const WORST_SHOWN: usize = 5;

struct Row {
    name: String,
    exact: usize,
    approx: usize,
}

impl Row {
    /// Signed error in percent of the exact count.
    fn error(&self) -> f64 {
        percent_error(self.approx, self.exact)
    }
}

fn percent_error(approx: usize, exact: usize) -> f64 {
    if exact == 0 {
        return if approx == 0 { 0.0 } else { 100.0 };
    }
    (approx as f64 - exact as f64) / exact as f64 * 100.0
}

/// Runs the check over `root/fixtures/*/input.txt`, printing a table and a summary.
pub fn run(root: &Path) -> Result<(), String> {
    let inputs = fixture_inputs(&root.join("fixtures"))?;
    if inputs.is_empty() {
        return Err(format!(
            "tokcheck: no fixtures/*/input.txt under {}",
            root.display()
        ));
    }
    let bpe = tiktoken_rs::cl100k_base()
        .map_err(|e| format!("tokcheck: cannot load cl100k_base: {e}"))?;

    let mut rows = Vec::with_capacity(inputs.len());
    for (name, path) in inputs {
        let bytes = std::fs::read(&path)
            .map_err(|e| format!("tokcheck: cannot read {}: {e}", path.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        rows.push(Row {
            name,
            exact: bpe.encode_ordinary(&text).len(),
            approx: sqz::tokens::count(&text),
        });
    }

    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(7);
    println!(
        "{:width$}  {:>9}  {:>9}  {:>8}",
        "fixture", "exact", "approx", "error"
    );
    for row in &rows {
        println!(
            "{:width$}  {:>9}  {:>9}  {:>+7.2}%",
            row.name,
            row.exact,
            row.approx,
            row.error()
        );
    }

    let mean_abs = rows.iter().map(|r| r.error().abs()).sum::<f64>() / rows.len() as f64;
    let exact_total: usize = rows.iter().map(|r| r.exact).sum();
    let approx_total: usize = rows.iter().map(|r| r.approx).sum();
    let total_error = percent_error(approx_total, exact_total);
    let mean_ok = mean_abs < MAX_MEAN_ABS_ERROR;
    let total_ok = total_error.abs() < MAX_TOTAL_ERROR;

    println!();
    println!(
        "{} documents, {exact_total} exact tokens, {approx_total} approximate",
        rows.len()
    );
    println!(
        "mean absolute error per document: {mean_abs:.2}% (target < {MAX_MEAN_ABS_ERROR}%) {}",
        verdict(mean_ok)
    );
    println!(
        "error on the total:               {total_error:+.2}% (target < {MAX_TOTAL_ERROR}%) {}",
        verdict(total_ok)
    );

    let mut worst: Vec<&Row> = rows.iter().collect();
    worst.sort_by(|a, b| b.error().abs().total_cmp(&a.error().abs()));
    println!();
    println!("worst {}:", WORST_SHOWN.min(worst.len()));
    for row in worst.iter().take(WORST_SHOWN) {
        println!(
            "  {:width$}  {:>+7.2}%  (exact {}, approx {})",
            row.name,
            row.error(),
            row.exact,
            row.approx
        );
    }

    match (mean_ok, total_ok) {
        (true, true) => Ok(()),
        _ => Err(format!(
            "tokcheck: token counter misses its target (mean {mean_abs:.2}%, total {total_error:+.2}%)"
        )),
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}

/// The `input.txt` of every fixture directory, by fixture name, sorted.
fn fixture_inputs(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("tokcheck: cannot list {}: {e}", dir.display()))?;
    let mut inputs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("tokcheck: cannot list {}: {e}", dir.display()))?;
        let input = entry.path().join("input.txt");
        if input.is_file() {
            inputs.push((entry.file_name().to_string_lossy().into_owned(), input));
        }
    }
    inputs.sort();
    Ok(inputs)
}
