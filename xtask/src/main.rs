//! `cargo xtask …`: the fixture report, benchmarks, tokenizer accuracy, release builds and fuzzing.
//! Heavier dependencies (tiktoken-rs, libc) live here, never in the shipped binary.

mod bench;
mod dist;
mod fuzz;
mod quality;
mod sessions;
mod tokcheck;

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <quality|sessions|bench|tokcheck|dist|fuzz>
  quality    per-fixture and per-formatter table: tokens, reduction, facts, regressions
  sessions   sqz discover --replay on the real sessions in ../shared/sessions
  bench      the performance budgets of SPEC §12 with measured medians
  tokcheck   tokenizer accuracy against exact cl100k (tiktoken-rs)
  dist       static release build into dist/ with a .sha256 beside it
  fuzz       random and mutational fuzzing of every parser (--help for its options)";

fn main() -> ExitCode {
    let root = workspace_root();
    let task = std::env::args().nth(1).unwrap_or_default();
    let result = match task.as_str() {
        "quality" => quality::run(&root),
        "sessions" => sessions::run(&root),
        "bench" => bench::run(&root),
        "tokcheck" => tokcheck::run(&root),
        "dist" => dist::run(&root),
        "fuzz" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            fuzz::run(&root, &args)
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {task}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Builds the release binary and returns its path.
pub fn release_binary(root: &Path) -> Result<PathBuf, String> {
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--bin", "sqz"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build --release failed".into());
    }
    Ok(dist::target_dir(root).join("release").join("sqz"))
}
