//! An async wait's record for the stall reports, kept in its future: where
//! the wait was made, what it is on, and the record while it is pending.

use super::registry::TaskWait;
use super::subject::Subject;
use std::panic::Location;

/// A future's record: where its wait was made, what it waits on, and the
/// record while it is pending.
#[derive(Debug)]
pub(crate) struct FutureWait {
    location: &'static Location<'static>,
    /// What the wait is on (a `Barrier`, a `Team`): it must own what the
    /// future borrows, so that it is alive whenever the future is polled
    /// (it is described during polls only).
    subject: Subject,
    wait: TaskWait,
}

impl FutureWait {
    /// The record of a future on `subject` made at the caller's call site.
    #[track_caller]
    pub(crate) fn here(subject: Subject) -> FutureWait {
        FutureWait {
            location: Location::caller(),
            subject,
            wait: Default::default(),
        }
    }

    /// After a poll of a wait on the word keyed `key`, for the phase
    /// `phase()`: records the wait while `pending` (once), ends the record
    /// when not.
    ///
    /// # Safety
    ///
    /// Called from a poll of the future, whose subject is alive for the
    /// call.
    pub(crate) unsafe fn polled(&self, pending: bool, key: usize, phase: impl FnOnce() -> u64) {
        // SAFETY: the caller's contract.
        unsafe {
            self.wait
                .polled(pending, key, phase, self.subject, self.location)
        }
    }
}
