//! Client hooks (`sqz hook CLIENT`). A hook never blocks the agent: on bad input it answers so
//! the client goes on unchanged, and says why on stderr.

pub mod answer;
pub mod claude;
pub mod copilot;
pub mod gemini;
pub mod opencode;
pub mod rewrite;

use crate::clock::now_ms;
use crate::env::Env;
use crate::store::Store;
use std::io::Read;

/// `sqz hook precompact`: the agent is about to compact its context, so nothing served before
/// now may be referenced again. Answers `{}` whatever happens.
pub fn precompact(env: &Env) -> i32 {
    // The payload says which session compacts; the marker is global, so it is only drained.
    let mut payload = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(1 << 20)
        .read_to_end(&mut payload);
    match Store::open(&env.db_path).and_then(|(mut store, _)| store.set_compaction_marker(now_ms()))
    {
        Ok(()) => {
            if !env.quiet {
                eprintln!("[sqz] precompact: earlier output will be sent in full again");
            }
        }
        Err(e) => eprintln!("sqz: precompact: {e}"),
    }
    crate::cmd::write_stdout(b"{}\n");
    0
}
