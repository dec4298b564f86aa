//! The crate's error type: the bindings map `Io` to OSError, `Timeout` to TimeoutError, `Cancelled` to
//! InterruptedError and the rest to ValueError.

use std::fmt;
use std::io;

#[derive(Debug)]
pub enum Error {
    /// The file system failed (missing directory, permission, disk full...).
    Io(io::Error),
    /// An index file exists but its content is not a valid index.
    Corrupt(String),
    /// The caller passed an invalid argument (bad regex, duplicate path, non-empty directory...).
    Invalid(String),
    /// The call's deadline passed before it finished (see budget.rs).
    Timeout(String),
    /// The call was cancelled by its caller (see budget.rs).
    Cancelled(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::Corrupt(m) => write!(f, "corrupt trigram index: {m}"),
            Error::Invalid(m) | Error::Timeout(m) | Error::Cancelled(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

pub fn corrupt<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Corrupt(msg.into()))
}

pub fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Invalid(msg.into()))
}
