//! The command layer, the top of the tree: one file per subcommand, and the dispatch here. Only
//! this layer (and the MCP transports it starts) reads stdin, writes stdout and reads the
//! clock; everything below takes bytes and `now` as arguments and returns what to print.

mod compress;
mod demo;
mod discover;
mod doctor;
mod expand;
mod hook;
mod init;
mod io;
mod manage;
mod recall;
mod report;
mod resume;

use crate::cli::Command;
use crate::env::Env;
use crate::error::{Error, Result};
use io::write_stdout;

/// Runs one command: `Ok` with its exit status when it did its job (a status of 1 can still
/// mean "nothing found"), `Err` when it could not; `main` prints the error once.
pub fn run(command: Command, env: &Env) -> Result<u8> {
    match command {
        Command::Compress(args) => compress::run(&args, env),
        Command::Expand { reference } => expand::run(&reference, env),
        Command::Tokens { file } => manage::tokens(file.as_deref()),
        Command::Pin { hash, pinned } => manage::pin(&hash, pinned, env),
        Command::Forget { hash } => manage::forget(&hash, env),
        Command::Reset { all } => manage::reset(all, env),
        Command::Demo { keep } => demo::run(keep),
        Command::Stats(args) => report::stats(&args, env),
        Command::Gain(args) => report::gain(&args, env),
        Command::HttpProxy(args) => crate::proxy::run(
            crate::proxy::Options {
                port: args.port,
                upstream: args.upstream,
                max_body: args.max_body_mb.saturating_mul(1 << 20),
            },
            env,
        ),
        Command::Discover(args) => discover::run(&args, env),
        Command::Hook { client } => hook::run(&client, env),
        Command::Resume => Ok(resume::run(env)),
        Command::Recall { query } => recall::run(&query, env),
        Command::PrintOpencodePlugin => {
            // The plugin calls this very binary, or `sqz` on PATH when its path is unknown.
            let exe = std::env::current_exe().ok();
            let path = exe
                .as_deref()
                .and_then(std::path::Path::to_str)
                .unwrap_or("sqz");
            write_stdout(crate::hook::opencode::plugin(path).as_bytes());
            Ok(0)
        }
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
            if args.http {
                crate::mcp::http::serve(&options, env, args.port, args.token_file.as_deref())
            } else {
                Ok(crate::mcp::server::serve_stdio(&options, env))
            }
        }
        Command::McpProxy(proxy) => {
            let options = crate::mcp::proxy::ProxyOptions {
                lazy_tools: proxy.lazy_tools,
                no_desc: proxy.no_desc,
                no_cache: proxy.no_cache,
                command: proxy.command,
            };
            crate::mcp::proxy::run(options, env)
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
