//! The command layer: one file per subcommand. Only this layer (and `main`) touches stdin,
//! stdout, stderr, the environment and the clock.

pub mod compress;
mod demo;
mod doctor;
pub mod expand;
mod init;
mod manage;
pub mod recall;
mod resume;

use crate::cli::Command;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::store::Store;
use std::io::Write;

/// Runs one command: `Ok` with its exit status when it did its job (a status of 1 can still
/// mean "nothing found"), `Err` when it could not; `main` prints the error once.
pub fn run(command: Command, env: &Env) -> Result<u8> {
    // Commands not yet returning `Result` hand back a bare status.
    let done = |status: i32| Ok(status as u8);
    match command {
        Command::Compress(args) => done(compress::run(&args, env)),
        Command::Expand { reference } => expand::run(&reference, env),
        Command::Tokens { file } => manage::tokens(file.as_deref()),
        Command::Pin { hash, pinned } => manage::pin(&hash, pinned, env),
        Command::Forget { hash } => manage::forget(&hash, env),
        Command::Reset { all } => manage::reset(all, env),
        Command::Demo => done(demo::run()),
        Command::Hook { client } => done(match client.as_str() {
            "precompact" => crate::hook::precompact(env),
            "claude" => crate::hook::claude::pre(env),
            "claude-post" => crate::hook::claude::post(env),
            "gemini" => crate::hook::gemini::run(env),
            "copilot" => crate::hook::copilot::run(env),
            "opencode" => crate::hook::opencode::run(env),
            other => {
                eprintln!("sqz: unknown hook client '{other}' (supported: claude, claude-post, precompact, gemini, copilot, opencode)");
                write_stdout(b"{}\n");
                0
            }
        }),
        Command::Resume => done(resume::run(env)),
        Command::Recall { query } => recall::run(&query, env),
        Command::PrintOpencodePlugin => done(crate::hook::opencode::print_plugin()),
        Command::Init(setup) => init::init(&setup, env),
        Command::Uninstall(setup) => init::uninstall(&setup, env),
        Command::Doctor { global, fix } => doctor::run(global, fix, env),
        Command::Mcp(args) => {
            if let Some(missing) = args
                .allow
                .iter()
                .find(|p| std::fs::canonicalize(p).is_err())
            {
                return Err(Error::usage(format!(
                    "--allow {}: no such file or directory",
                    missing.display()
                )));
            }
            let options = crate::mcp::server::Options { allow: args.allow };
            done(if args.http {
                crate::mcp::http::serve(&options, env, args.port)
            } else {
                crate::mcp::server::serve_stdio(&options, env)
            })
        }
        Command::McpProxy(proxy) => {
            let options = crate::mcp::proxy::ProxyOptions {
                lazy_tools: proxy.lazy_tools,
                no_desc: proxy.no_desc,
                no_cache: proxy.no_cache,
                command: proxy.command,
            };
            done(crate::mcp::proxy::run(options, env))
        }
        Command::Help { topic } => {
            write_stdout(crate::cli::help(topic).as_bytes());
            Ok(0)
        }
        Command::Version => {
            write_stdout(format!("sqz {}\n", env!("CARGO_PKG_VERSION")).as_bytes());
            Ok(0)
        }
    }
}

/// Writes to stdout; a closed pipe is not an error.
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

/// Opens the store for a command, printing the one-line reason on failure (the MCP server
/// and proxy then serve without references).
pub(crate) fn open_store(env: &Env) -> Result<Store> {
    match Store::open(&env.db_path) {
        Ok((store, notice)) => {
            if let Some(notice) = notice {
                eprintln!("{notice}");
            }
            Ok(store)
        }
        Err(e) => Err(crate::error::Error::store(format!(
            "cannot open {e} (set SQZ_DB_PATH to use another)"
        ))),
    }
}

/// A hash prefix as typed by a user: `§ref:…§`, `ref:…` and surrounding space allowed.
fn normalize_hash(input: &str) -> Option<String> {
    let t = input.trim().trim_start_matches('§').trim_end_matches('§');
    let t = t.strip_prefix("ref:").unwrap_or(t);
    let t = t.to_ascii_lowercase();
    (!t.is_empty() && t.len() <= 64 && t.bytes().all(|b| b.is_ascii_hexdigit())).then_some(t)
}
