//! `sqz doctor`: the per-client table `crate::setup::doctor` computes, whether `sqz` resolves
//! on PATH, and when the store last saw a compression. It reads only; `--fix` hands the broken
//! clients to init.

use crate::env::Env;
use crate::error::Result;
use crate::setup;

pub fn run(global: bool, fix: bool, env: &Env) -> Result<u8> {
    let doctor = setup::doctor(env, &super::init::current_dir(), global)?;
    let mut out = format!(
        "{:<9} {:<5} {:<11} {:<16} notes\n",
        "client", "found", "tier", "configured"
    );
    for row in &doctor.rows {
        out.push_str(&format!(
            "{:<9} {:<5} {:<11} {:<16} {}\n",
            row.client,
            if row.found { "yes" } else { "no" },
            row.tier,
            row.state,
            row.notes.first().map(String::as_str).unwrap_or("")
        ));
        for note in row.notes.iter().skip(1) {
            out.push_str(&format!("{:<44} {note}\n", ""));
        }
    }
    match setup::sqz_on_path(env) {
        Some(p) => out.push_str(&format!("sqz on PATH: {}\n", p.display())),
        None => out.push_str("sqz on PATH: not found — the hooks call `sqz`; install it on PATH\n"),
    }
    out.push_str(&match last_compression(env) {
        Some(at) => format!("last compression: {}\n", ago(at)),
        None => "last compression: none recorded\n".into(),
    });
    if let Some(line) = super::report::last_day_line(env) {
        out.push_str(&line);
        out.push('\n');
    }
    super::io::write_stdout(out.as_bytes());
    let broken = doctor.rows.iter().any(|r| !r.fix.is_empty());
    if !fix || !broken {
        return Ok(u8::from(broken));
    }
    // Every scope gets its fix even when one fails; the failures come back together.
    let (mut status, mut errors) = (0, Vec::new());
    for (i, scope) in doctor.scopes.iter().enumerate() {
        let clients: Vec<&str> = doctor
            .rows
            .iter()
            .filter(|r| r.fix.contains(&i))
            .map(|r| r.client)
            .collect();
        if !clients.is_empty() {
            let report = setup::apply(&clients, scope, true, false);
            super::io::write_stdout(report.text.as_bytes());
            status = status.max(report.status);
            errors.extend(report.errors);
        }
    }
    setup::Report {
        text: String::new(),
        errors,
        status,
    }
    .result()
}

fn last_compression(env: &Env) -> Option<i64> {
    if !env.db_path.is_file() {
        return None;
    }
    let (store, _) = crate::store::Store::open(&env.db_path, crate::clock::now_ms()).ok()?;
    store.last_event_at().ok().flatten()
}

fn ago(at_ms: i64) -> String {
    let secs = (crate::clock::now_ms() - at_ms).max(0) / 1000;
    match secs {
        s if s < 120 => format!("{s} s ago"),
        s if s < 7200 => format!("{} min ago", s / 60),
        s if s < 172_800 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86_400),
    }
}
