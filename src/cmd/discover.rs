//! `sqz discover --replay [PATH…] [--json]`: finds the transcripts, replays them in a throwaway
//! directory (removed after) and prints the report; each skipped file gets one stderr line.

use super::io::write_stdout;
use crate::cli::Discover;
use crate::clock::now_ms;
use crate::discover::{self, report};
use crate::env::Env;
use crate::error::{Error, Result};
use std::path::PathBuf;

pub fn run(args: &Discover, env: &Env) -> Result<u8> {
    if !args.replay {
        return Err(Error::usage(
            "discover: --replay is required (usage: sqz discover --replay [--json] [PATH…])",
        ));
    }
    let paths = if args.paths.is_empty() {
        let home = env
            .home
            .as_ref()
            .ok_or_else(|| Error::failed("discover: HOME is not set; name a PATH"))?;
        vec![home.join(".claude").join("projects")]
    } else {
        args.paths.clone()
    };
    let files = discover::transcripts(&paths);
    if files.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::failed(format!(
            "discover: no transcripts under {}",
            names.join(" ")
        )));
    }
    let scratch: PathBuf =
        std::env::temp_dir().join(format!("sqz-discover-{}-{}", std::process::id(), now_ms()));
    let replayed = discover::replay(&files, env, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let report = replayed?;
    for (file, reason) in &report.skipped {
        eprintln!("[sqz] discover: skipped {file}: {reason}");
    }
    let out = if args.json {
        format!("{}\n", report::json(&report))
    } else {
        report::text(&report)
    };
    write_stdout(out.as_bytes());
    Ok(0)
}
