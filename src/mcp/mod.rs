//! MCP: the server (`sqz mcp`) with lossless, reference-backed file tools, and the proxy
//! (`sqz mcp proxy`) that compresses another server's results. Both speak newline-delimited
//! JSON-RPC 2.0 and write nothing but protocol to stdout.

mod context;
mod files;
pub mod http;
pub mod pattern;
pub mod proxy;
pub mod rpc;
pub mod server;
mod tools;
pub mod workspace;
