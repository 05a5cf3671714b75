//! What every command shares: writing stdout and opening the store it cannot work without.

use crate::env::Env;
use crate::error::Result;
use crate::store::Store;
use std::io::Write;

/// Writes to stdout; a closed pipe is not an error.
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

/// Opens the store for a command that cannot work without it.
pub(super) fn open_store(env: &Env) -> Result<Store> {
    let (store, notice) = crate::serve::open_store(env, crate::clock::now_ms())?;
    if let Some(notice) = notice {
        eprintln!("{notice}");
    }
    Ok(store)
}

/// `open_store` for a command that only reads: a store that cannot be opened for writing (a
/// read-only mount, a file the user may only read) is opened read-only instead, and what the
/// command would have recorded is left out.
pub(super) fn open_store_to_read(env: &Env) -> Result<Store> {
    match open_store(env) {
        Ok(store) => Ok(store),
        Err(e) => Store::open_read_only(&env.db_path).map_err(|_| e),
    }
}
