//! The one error type of the crate: an exit status and one line of reason. `main` prints it
//! once, as `sqz: MESSAGE`, and exits with the status; nothing below it prints errors. The hook
//! paths never return one: they fail open with an answer that lets the agent go on.

use std::fmt;

/// A command that could not do its job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The exit status: 1 nothing found or the work failed, 2 usage, 3 store.
    pub code: u8,
    /// One line, without the `sqz:` prefix.
    pub message: String,
}

impl Error {
    pub fn new(code: u8, message: impl Into<String>) -> Error {
        let message = message.into();
        // One line, whatever the cause said.
        let message = match message.split_once('\n') {
            Some((first, _)) => first.to_string(),
            None => message,
        };
        Error { code, message }
    }

    /// The work itself failed, or found nothing (exit 1).
    pub fn failed(message: impl Into<String>) -> Error {
        Error::new(1, message)
    }

    /// A malformed command line or argument (exit 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error::new(2, message)
    }

    /// The store could not be opened or read (exit 3).
    pub fn store(message: impl Into<String>) -> Error {
        Error::new(3, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn messages_are_one_line() {
        let e = Error::failed("first\nsecond");
        assert_eq!(e.to_string(), "first");
        assert_eq!((Error::usage("x").code, Error::store("x").code), (2, 3));
    }
}
