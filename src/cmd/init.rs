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
    report.result()
}

/// The working directory, which the project scope is.
pub(super) fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Error::usage(format!("no current directory: {e}")))
}
