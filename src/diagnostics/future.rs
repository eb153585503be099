//! An async wait's record for the stall reports, kept in its future: where
//! the wait was made, how a higher layer describes it, and the record while
//! it is pending.

use super::registry::TaskWait;
use super::subject::Subject;
use std::panic::Location;

/// A future's record: where its wait was made, and the record while it is
/// pending.
#[derive(Debug)]
pub(crate) struct FutureWait {
    location: &'static Location<'static>,
    /// A higher layer's description of the wait (a `Team`'s), if any.
    subject: Option<Subject>,
    wait: TaskWait,
}

impl FutureWait {
    /// The record of a future made at the caller's call site.
    #[track_caller]
    pub(crate) fn here() -> FutureWait {
        FutureWait {
            location: Location::caller(),
            subject: None,
            wait: Default::default(),
        }
    }

    /// A higher layer (a `Team`) describes the wait as its own: `subject`
    /// must own what the future borrows, so that it is alive whenever the
    /// future is polled (it is described during polls only).
    pub(crate) fn describe_as(&mut self, subject: Subject) {
        self.subject = Some(subject);
    }

    /// After a poll of a wait on the word keyed `key`, for the phase
    /// `phase()`: records the wait while `pending` (once), ends the record
    /// when not. `subject` describes the word's owner unless a higher layer
    /// did.
    ///
    /// # Safety
    ///
    /// Called from a poll of the future, whose borrowed object `subject()`
    /// (and a higher layer's subject, which owns it) describes: both are
    /// alive for the call.
    pub(crate) unsafe fn polled(
        &self,
        pending: bool,
        key: usize,
        phase: impl FnOnce() -> u64,
        subject: impl FnOnce() -> Subject,
    ) {
        let subject = self.subject.unwrap_or_else(subject);
        // SAFETY: the caller's contract.
        unsafe {
            self.wait
                .polled(pending, key, phase, subject, self.location)
        }
    }
}
