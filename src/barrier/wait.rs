//! The waits of a [`Barrier`]: on a token, by parity, bounded in time, and
//! the queries that never block. Every blocking wait goes through
//! [`Barrier::wait_for`] and the policy of `src/wait.rs`.

use super::Barrier;
use crate::completion::{self, Completion};
use crate::op::poisoned_panic;
use crate::state::Snapshot;
use crate::sync::Ordering;
use crate::token::ArrivalToken;
use crate::wait::{self, Waiter};
use std::time::{Duration, Instant};

impl<F: Completion> Barrier<F> {
    /// Blocks until the phase of `token` has completed.
    ///
    /// Not `std::sync::Barrier::wait`: that one is
    /// [`arrive_and_wait`](Barrier::arrive_and_wait); this one waits for the
    /// phase of an earlier [`arrive`](Barrier::arrive).
    ///
    /// Returns at once if it already has (the token is from the previous
    /// phase).
    ///
    /// # Panics
    ///
    /// If the barrier is poisoned (even when the phase completed before), if
    /// the token's phase can never complete, inside this barrier's completion
    /// function, and in debug builds if the token came from another barrier.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait(barrier.arrive()));
    ///     let token = barrier.arrive();
    ///     barrier.wait(token);
    /// });
    /// ```
    #[track_caller]
    pub fn wait(&self, token: ArrivalToken) {
        self.check_token("wait", &token);
        let done = self.wait_phase("wait", token.phase, None);
        debug_assert!(done);
    }

    /// Whether the phase of `token` has completed. Never blocks.
    ///
    /// Like every `try_wait*`, this is an acquire operation: when it returns
    /// true, everything done before the phase's arrivals and its completion
    /// function is visible. On a poisoned barrier it keeps answering from the
    /// phase the barrier is stuck in.
    ///
    /// # Panics
    ///
    /// In debug builds, if the token came from another barrier.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(2);
    /// let token = barrier.arrive();
    /// assert!(!barrier.try_wait(&token));
    /// drop(barrier.arrive());
    /// assert!(barrier.try_wait(&token));
    /// ```
    #[track_caller]
    #[must_use]
    pub fn try_wait(&self, token: &ArrivalToken) -> bool {
        self.check_token("try_wait", token);
        // Acquire: a `true` answer must make the phase's writes visible (state.rs, point 4).
        self.state.load(Ordering::Acquire).phase() != token.phase
    }

    /// Waits at most `timeout` for the phase of `token` to complete.
    ///
    /// Returns `Ok(())` as soon as it has, and `Err(token)` once `timeout`
    /// has really elapsed, handing the token back so the caller can wait
    /// again (the arrival stands either way). A zero timeout checks once; a
    /// timeout too large for `Instant` (such as `Duration::MAX`) means none.
    ///
    /// # Panics
    ///
    /// As [`wait`](Barrier::wait).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let barrier = mbarrier::Barrier::new(2);
    /// let token = barrier.arrive();
    /// let token = barrier.wait_timeout(token, Duration::from_millis(1)).unwrap_err();
    /// drop(barrier.arrive());
    /// assert!(barrier.wait_timeout(token, Duration::ZERO).is_ok());
    /// ```
    #[track_caller]
    pub fn wait_timeout(&self, token: ArrivalToken, timeout: Duration) -> Result<(), ArrivalToken> {
        self.check_token("wait_timeout", &token);
        self.wait_token_until("wait_timeout", token, wait::deadline_after(timeout))
    }

    /// Waits until `deadline` at the latest for the phase of `token` to
    /// complete; `Err` hands the token back.
    ///
    /// # Panics
    ///
    /// As [`wait`](Barrier::wait).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let barrier = mbarrier::Barrier::new(2);
    /// let token = barrier.arrive();
    /// let at = Instant::now() + Duration::from_millis(1);
    /// assert!(barrier.wait_deadline(token, at).is_err());
    /// ```
    #[track_caller]
    pub fn wait_deadline(
        &self,
        token: ArrivalToken,
        deadline: Instant,
    ) -> Result<(), ArrivalToken> {
        self.check_token("wait_deadline", &token);
        self.wait_token_until("wait_deadline", token, Some(deadline))
    }

    /// Parity of the current phase: `false` for phases 0, 2, 4, …
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(1);
    /// assert!(!barrier.phase_parity());
    /// barrier.arrive_and_wait();
    /// assert!(barrier.phase_parity());
    /// ```
    #[must_use]
    pub fn phase_parity(&self) -> bool {
        // Acquire: a caller may act on the phase having moved on (state.rs, point 4).
        self.state.load(Ordering::Acquire).parity()
    }

    /// Whether the phase of parity `parity` has completed, i.e. the current
    /// phase's parity differs from `parity`. Never blocks; an acquire
    /// operation like [`try_wait`](Barrier::try_wait).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(1);
    /// let parity = barrier.phase_parity();
    /// assert!(!barrier.try_wait_parity(parity));
    /// barrier.arrive_and_wait();
    /// assert!(barrier.try_wait_parity(parity));
    /// ```
    #[must_use]
    pub fn try_wait_parity(&self, parity: bool) -> bool {
        // Acquire: as in `try_wait`.
        self.state.load(Ordering::Acquire).parity() != parity
    }

    /// Blocks until [`try_wait_parity(parity)`](Barrier::try_wait_parity)
    /// holds.
    ///
    /// # Panics
    ///
    /// If the barrier is poisoned, if the phase of that parity is the current
    /// phase of a retired barrier (it can never complete), or inside this
    /// barrier's completion function.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(1);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait_parity(false)); // an observer: does not arrive
    ///     drop(barrier.arrive());
    /// });
    /// ```
    #[track_caller]
    pub fn wait_parity(&self, parity: bool) {
        let done = self.wait_parity_until("wait_parity", parity, None);
        debug_assert!(done);
    }

    /// Waits at most `timeout` for the phase of parity `parity` to complete;
    /// returns whether it did.
    ///
    /// # Panics
    ///
    /// As [`wait_parity`](Barrier::wait_parity).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let barrier = mbarrier::Barrier::new(1);
    /// assert!(!barrier.wait_parity_timeout(false, Duration::from_millis(1)));
    /// assert!(barrier.wait_parity_timeout(true, Duration::ZERO)); // phase -1 "completed"
    /// ```
    #[track_caller]
    #[must_use = "false: the phase had not completed in time"]
    pub fn wait_parity_timeout(&self, parity: bool, timeout: Duration) -> bool {
        self.wait_parity_until("wait_parity_timeout", parity, wait::deadline_after(timeout))
    }

    #[track_caller]
    fn wait_token_until(
        &self,
        op: &str,
        token: ArrivalToken,
        deadline: Option<Instant>,
    ) -> Result<(), ArrivalToken> {
        if self.wait_phase(op, token.phase, deadline) {
            Ok(())
        } else {
            Err(token)
        }
    }

    /// Waits until the current phase is no longer `phase`; false on timeout.
    #[track_caller]
    pub(crate) fn wait_phase(&self, op: &str, phase: u8, deadline: Option<Instant>) -> bool {
        self.wait_for(
            op,
            deadline,
            |s| s.phase() != phase,
            || format!("the phase of this token ({phase})"),
        )
    }

    #[track_caller]
    fn wait_parity_until(&self, op: &str, parity: bool, deadline: Option<Instant>) -> bool {
        self.wait_for(
            op,
            deadline,
            |s| s.parity() != parity,
            || format!("the phase of parity {parity}"),
        )
    }

    /// The common wait: until `completed(word)`, a poisoned barrier or a
    /// phase that can never complete (retired), or the deadline.
    #[track_caller]
    fn wait_for(
        &self,
        op: &str,
        deadline: Option<Instant>,
        completed: impl Fn(Snapshot) -> bool,
        what: impl FnOnce() -> String,
    ) -> bool {
        let classify = |s| End::classify(s, &completed);
        // Acquire: pairs with the Release that ended the phase (state.rs, point 4).
        let s = self.state.load(Ordering::Acquire);
        if s.is_completing() {
            completion::check_not_running(self.key(), &op);
        }
        let end = match classify(s) {
            Some(end) => Some(end),
            None => Waiter::new(s.expected(), deadline)
                .wait(&self.state, s, classify)
                .ok(),
        };
        // A `match`, not a closure: `finish` panics at the caller's location.
        match end {
            None => false,
            Some(end) => end.finish(op, what),
        }
    }
}

/// How a wait for a phase ends (besides a deadline).
#[derive(Clone, Copy)]
pub(super) enum End {
    Completed,
    Poisoned(Snapshot),
    Retired(Snapshot),
}

impl End {
    /// How the word `s` ends a wait for `completed`, if it does. Pure: it
    /// also runs under the parking lot's lock.
    pub(super) fn classify(s: Snapshot, completed: impl Fn(Snapshot) -> bool) -> Option<End> {
        if s.poison().is_some() {
            Some(End::Poisoned(s))
        } else if completed(s) {
            Some(End::Completed)
        } else if s.is_retired() {
            Some(End::Retired(s))
        } else {
            None
        }
    }

    /// `true` for a completed wait; panics for the others (`op` and `what`
    /// name the wait and its phase in the message).
    #[track_caller]
    pub(super) fn finish(self, op: &str, what: impl FnOnce() -> String) -> bool {
        match self {
            End::Completed => true,
            End::Poisoned(s) => poisoned_panic(op, s),
            End::Retired(s) => panic!(
                "mbarrier: {op}: {} can never complete: every participant dropped out and the barrier is retired in phase {}",
                what(),
                s.phase()
            ),
        }
    }
}
