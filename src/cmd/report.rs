//! `sqz stats` and `sqz gain`: read the event rows, count them in `crate::report`, print.

use crate::cli::{Gain, Stats};
use crate::clock::now_ms;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::report::{self, text, Scope, DAY_MS};
use crate::store::{EventRow, Store};
use std::io::IsTerminal;

/// The event rows from `since` on; none when there is no store yet (nothing was recorded, and
/// a report creates no store).
fn rows_since(env: &Env, since: i64) -> Result<Vec<EventRow>> {
    if !env.db_path.is_file() {
        return Ok(Vec::new());
    }
    let store: Store = super::io::open_store_to_read(env)?;
    store
        .events_since(since)
        .map_err(|e| Error::failed(e.to_string()))
}

fn scope(env: &Env, days: u32, project: Option<String>) -> Scope {
    Scope {
        days,
        now: now_ms(),
        window_secs: env.regret_window_secs,
        project,
    }
}

pub fn stats(args: &Stats, env: &Env) -> Result<u8> {
    let project = match &args.project {
        Some(dir) => Some(
            std::fs::canonicalize(dir)
                .map_err(|e| Error::usage(format!("--project {}: {e}", dir.display())))?
                .to_string_lossy()
                .into_owned(),
        ),
        None => None,
    };
    let scope = scope(env, args.days, project);
    let rows = rows_since(env, scope.since())?;
    let r = report::build(&rows, &scope);
    let price = args.price.unwrap_or(report::DEFAULT_PRICE_PER_MTOK);
    let out = if args.json {
        text::stats_json(&r, price)
    } else {
        let view = text::StatsView {
            breakdown: args.breakdown,
            price: args.cost.then_some(price),
        };
        text::stats(&r, &view)
    };
    super::io::write_stdout(out.as_bytes());
    Ok(0)
}

pub fn gain(args: &Gain, env: &Env) -> Result<u8> {
    let scope = scope(env, args.days, None);
    let rows = rows_since(env, scope.since())?;
    let r = report::build(&rows, &scope);
    let terminal = std::io::stdout().is_terminal();
    let view = text::GainView {
        width: if terminal { env.columns } else { 80 },
        colour: terminal && !env.no_color,
    };
    super::io::write_stdout(text::gain(&r, &view).as_bytes());
    if let Some(file) = &args.html {
        std::fs::write(file, report::html::page(&r))
            .map_err(|e| Error::failed(format!("cannot write {}: {e}", file.display())))?;
        eprintln!("sqz: wrote {}", file.display());
    }
    Ok(0)
}

/// `sqz doctor`'s line on the last 24 hours, if the store can be read.
pub fn last_day_line(env: &Env) -> Option<String> {
    let now = now_ms();
    let rows = rows_since(env, now - DAY_MS).ok()?;
    Some(text::last_day_line(&text::last_day(
        &rows,
        now,
        env.regret_window_secs,
    )))
}
