//! What the barrier hands out: `ArrivalToken` and `BarrierWaitResult`.

use crate::diagnostics::TokenRank;
use crate::phase::Phase;
use std::fmt;

#[cfg(doc)]
use crate::Barrier;

/// Proof of an arrival: the phase it belongs to, to be handed to
/// [`Barrier::wait`] (or inspected with [`Barrier::try_wait`]).
///
/// A token may be waited on in its own phase or in the next one; waiting on an
/// older token is a misuse the barrier does not detect. In debug builds the
/// token also remembers its barrier (by address), and waiting on another
/// barrier panics; so does moving the barrier itself between arrive and wait,
/// which only a single-threaded program can do.
///
/// # Examples
///
/// ```
/// let barrier = syncthreads::Barrier::new(1);
/// let token = barrier.arrive(); // the only arrival: phase 0 completes
/// assert!(barrier.try_wait(&token));
/// barrier.wait(token);
/// ```
#[must_use = "an arrival token does nothing unless waited on; drop it explicitly if the wait is not needed"]
pub struct ArrivalToken {
    /// The phase of the arrival, modulo the 4 phases the word keeps.
    pub(crate) phase: Phase,
    /// The seat that arrived, for the report of the wait it is handed to.
    pub(crate) rank: TokenRank,
    /// The barrier's address (debug builds only).
    #[cfg(debug_assertions)]
    pub(crate) barrier: usize,
}

impl fmt::Debug for ArrivalToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrivalToken")
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

/// Returned by [`Barrier::arrive_and_wait`]: whether this thread completed the
/// phase, like `std::sync::BarrierWaitResult`.
///
/// Not `#[must_use]`, as in `std`: calling `arrive_and_wait` only to
/// synchronize is the common case.
///
/// # Examples
///
/// ```
/// let barrier = syncthreads::Barrier::new(1);
/// assert!(barrier.arrive_and_wait().is_leader());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult {
    pub(crate) is_leader: bool,
}

impl BarrierWaitResult {
    /// True for the one thread whose arrival completed the phase.
    ///
    /// When every participant uses `arrive_and_wait`, exactly one of them is
    /// the leader of each phase. If a `complete_tx` completed it, none is.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(2);
    /// let leaders = std::thread::scope(|s| {
    ///     let other = s.spawn(|| barrier.arrive_and_wait().is_leader());
    ///     barrier.arrive_and_wait().is_leader() as u32 + other.join().unwrap() as u32
    /// });
    /// assert_eq!(leaders, 1);
    /// ```
    #[must_use]
    pub fn is_leader(&self) -> bool {
        self.is_leader
    }
}
