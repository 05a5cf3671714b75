//! `sqz init` and `sqz uninstall`: pick the scope and the clients, apply or undo their changes
//! (`crate::setup` holds the clients and the change plan), print what was done.

use crate::cli::Setup;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::setup::{self, Scope};
use std::path::PathBuf;

pub fn init(args: &Setup, env: &Env) -> Result<u8> {
    run(args, true, env)
}

pub fn uninstall(args: &Setup, env: &Env) -> Result<u8> {
    run(args, false, env)
}

fn run(args: &Setup, install: bool, env: &Env) -> Result<u8> {
    let scope = Scope::new(env, &current_dir(), args.global)?;
    // Uninstall also goes through clients whose config directory is gone.
    let clients = setup::selected(&args.only, &args.skip, &scope.home, !install)?;
    let report = setup::apply(&clients, &scope, install, args.dry_run);
    super::io::write_stdout(report.text.as_bytes());
    if install && !args.global && clients.contains(&"claude") {
        // What the user must accept in Claude Code before the project's files take effect.
        let trusted = crate::hook::claude::SettingsPlaces {
            home: Some(&scope.home),
            config_dir: scope.claude_config_dir(),
            project: Some(&scope.base),
        }
        .project_trusted(&scope.base);
        if !trusted {
            super::io::write_stdout(
                b"claude: accept Claude Code's prompt to trust this folder when it first starts here; until then it ignores the project's allow rules, and failing commands reach the agent uncompressed (successful ones are compressed either way)\n",
            );
        }
    }
    if !install && !args.dry_run {
        // Say when nothing was removed, and where sqz is still set up, so no one believes it
        // gone while the other scope's hooks still run.
        let (here, there, flag) = if args.global {
            ("the user-level files under HOME", "this project", "")
        } else {
            (
                "this project",
                "the user-level files under HOME",
                " --global",
            )
        };
        let mut note = String::new();
        if !removed_anything(&report.text) {
            note.push_str(&format!(
                "sqz uninstall: nothing of sqz to remove in {here}\n"
            ));
        }
        if let Ok(other) = Scope::new(env, &current_dir(), !args.global) {
            let clients = setup::selected(&args.only, &args.skip, &other.home, true)?;
            let would = setup::apply(&clients, &other, false, true);
            if would.text.contains(" would remove ") || would.text.contains(" would write ") {
                note.push_str(&format!(
                    "sqz uninstall: sqz is still set up in {there}: run `sqz uninstall{flag}` to remove it there\n"
                ));
            }
        }
        super::io::write_stdout(note.as_bytes());
    }
    report.result()
}

/// Whether an uninstall's report says it changed a file.
fn removed_anything(text: &str) -> bool {
    text.lines()
        .any(|l| l.contains(" removed ") || l.contains(" wrote "))
}

/// The working directory, which the project scope is.
pub(super) fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Error::usage(format!("no current directory: {e}")))
}
