//! sqz compresses the tool output that AI coding agents read: repeats become references,
//! noise folds into counted markers, and the original is always one `sqz expand` away.

pub mod cli;
pub mod clock;
pub mod cmd;
pub mod discover;
pub mod doc;
pub mod engine;
pub mod env;
pub mod error;
pub mod fault;
pub mod fmt;
pub mod hook;
pub mod http;
pub mod json;
pub mod mcp;
pub mod proxy;
pub mod report;
pub mod serve;
pub mod setup;
pub mod store;
pub mod text;
pub mod tokens;
