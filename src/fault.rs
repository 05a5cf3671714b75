//! Panics: the process hook is installed once, by `main`, and only records the report. Code
//! that must survive a panic (one compression, one MCP request) runs inside `catch`, which
//! hands back the report as one line; the caller decides what the user sees. Nothing swaps
//! the hook afterwards, so every catch site sees the same behaviour for the life of the process.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

thread_local! {
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the recording hook. Called once, at start-up.
pub fn install_hook() {
    panic::set_hook(Box::new(|info| {
        let report = info.to_string().replace('\n', " ");
        LAST.with(|last| *last.borrow_mut() = Some(report));
    }));
}

/// Runs `f`; a panic inside it comes back as `Err` with its one-line report.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    LAST.with(|last| last.borrow_mut().take());
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        LAST.with(|last| last.borrow_mut().take())
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_caught_panic_gives_its_message() {
        let caught = super::catch(|| -> u8 { panic!("boom {}", 7) });
        assert!(caught.unwrap_err().contains("boom 7"));
        assert_eq!(super::catch(|| 3), Ok(3));
    }
}
