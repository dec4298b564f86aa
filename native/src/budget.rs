//! A limit on one call's work: a deadline and a cancellation flag, checked inside every loop of a search.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Set from another thread (the server's, when the client cancels or goes away) to stop a call.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Budget {
    deadline: Option<Instant>,
    cancel: Option<CancelFlag>,
}

impl Budget {
    /// No deadline, no flag: the call runs to its end.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// `timeout`: from now; None for no deadline.
    pub fn new(timeout: Option<Duration>, cancel: Option<CancelFlag>) -> Budget {
        Budget {
            deadline: timeout.map(|t| Instant::now() + t),
            cancel,
        }
    }

    /// Err(Cancelled) once the flag is set, Err(Timeout) once the deadline passed; `what` says where.
    pub fn check(&self, what: &str) -> Result<()> {
        if self.cancel.as_ref().is_some_and(CancelFlag::is_cancelled) {
            return Err(Error::Cancelled(format!("cancelled while {what}")));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Error::Timeout(format!("deadline exceeded while {what}")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_and_flag_stop_the_call() {
        assert!(Budget::unlimited().check("x").is_ok());
        let past = Budget::new(Some(Duration::ZERO), None);
        assert!(matches!(past.check("x"), Err(Error::Timeout(_))));
        let flag = CancelFlag::default();
        let budget = Budget::new(Some(Duration::from_secs(60)), Some(flag.clone()));
        assert!(budget.check("x").is_ok());
        flag.cancel();
        assert!(matches!(budget.check("x"), Err(Error::Cancelled(_))));
    }
}
