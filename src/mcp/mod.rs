//! MCP: the server (`sqz mcp`) with lossless, reference-backed file tools, and the proxy
//! (`sqz mcp proxy`) that compresses another server's results. Both speak newline-delimited
//! JSON-RPC 2.0 and write nothing but protocol to stdout.

mod files;
pub mod http;
pub mod pattern;
pub mod proxy;
pub mod rpc;
pub mod server;
mod tools;
pub mod workspace;

/// The store for a long-running MCP process, or `None` (with the reason on stderr) when it
/// cannot be opened: the tools then work without references.
fn open_store(env: &crate::env::Env) -> Option<crate::store::Store> {
    match crate::store::Store::open(&env.db_path) {
        Ok((store, notice)) => {
            if let Some(notice) = notice {
                eprintln!("{notice}");
            }
            Some(store)
        }
        Err(e) => {
            eprintln!(
                "sqz: cannot open {e} (set SQZ_DB_PATH to use another); serving without references"
            );
            None
        }
    }
}
