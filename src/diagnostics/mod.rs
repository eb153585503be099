//! Finding hangs: who waits where, and who is missing (feature
//! `diagnostics`).
//!
//! With the feature on, every blocking wait of a thread and every pending
//! async wait on a [`Barrier`](crate::Barrier), [`Team`](crate::Team),
//! [`BlockBarrier`](crate::BlockBarrier) or
//! [`WarpBarrier`](crate::WarpBarrier) is recorded while it lasts: the
//! thread's name (or `task`), the call site of the wait (the waits and the
//! sync family are `#[track_caller]`) and when it began. [`stalls`] reads
//! those records, groups them by phase and describes each phase that has
//! waited too long as a [`Stall`], whose `Display` is a report to print.
//! The environment variable `SYNCTHREADS_STALL_REPORT=<seconds>` prints those
//! reports by itself. And a `BlockBarrier` checks that every sync of a
//! phase comes from the same call site and is of the same kind (a divergent
//! `__syncthreads`); the first that differs panics with both call sites.
//!
//! The crate docs' "Debugging a hang" says how to use it, shows a real
//! report, and lists what it cannot see; this module's items are below.
//!
//! # Examples
//!
//! ```
//! # // (The module is private, and this example not built, without the feature.)
//! # #[cfg(feature = "diagnostics")] {
//! use std::time::Duration;
//!
//! // Healthy barriers: nothing is stalled.
//! let barrier = syncthreads::Barrier::new(1);
//! barrier.arrive_and_wait();
//! assert!(syncthreads::diagnostics::stalls(Duration::from_secs(1)).is_empty());
//! # }
//! ```

// Built with or without the feature: the plain data a waiter describes
// itself with, and (without it) the same names doing nothing (`off.rs`).
mod subject;
#[cfg(feature = "diagnostics")]
pub(crate) use subject::TokenRank;
pub(crate) use subject::{Described, Subject, WaitInfo, Who};

#[cfg(not(feature = "diagnostics"))]
mod off;
#[cfg(not(feature = "diagnostics"))]
pub(crate) use off::{describe_as, parking, sites, DescribeAs, FutureWait, Record, TokenRank};

#[cfg(feature = "diagnostics")]
mod future;
#[cfg(feature = "diagnostics")]
pub(crate) mod monitor;
#[cfg(feature = "diagnostics")]
mod registry;
#[cfg(feature = "diagnostics")]
pub(crate) mod sites;
#[cfg(feature = "diagnostics")]
pub(crate) mod slot;
#[cfg(feature = "diagnostics")]
mod slots;
#[cfg(feature = "diagnostics")]
mod stall;

#[cfg(feature = "diagnostics")]
#[cfg_attr(docsrs, doc(cfg(feature = "diagnostics")))]
pub use stall::{Stall, Waiter};

#[cfg(feature = "diagnostics")]
pub(crate) use future::FutureWait;
#[cfg(feature = "diagnostics")]
pub(crate) use registry::{describe_as, DescribeAs, Record};

/// The loom model of the waiter record (not an API: `--cfg loom` only).
#[cfg(all(loom, feature = "diagnostics"))]
#[doc(hidden)]
pub use slot::model_a_reader_never_outlives_the_wait;

/// A thread is about to park. With the feature, nothing: the stall-report
/// monitor starts with the first recorded wait.
#[cfg(feature = "diagnostics")]
#[inline(always)]
pub(crate) fn parking() {}

#[cfg(feature = "diagnostics")]
use std::time::Duration;

/// Every phase, of every `Barrier`, `Team`, `BlockBarrier` and
/// `WarpBarrier` of the process, on which some thread or task has been
/// waiting longer than `older_than`; the longest-stalled first.
///
/// A phase qualifies when one of its waiters has waited longer than
/// `older_than`; its [`Stall`] then lists all of its waiters. For a
/// `WarpBarrier` a stall is one mask being waited on. The barriers' `Debug`
/// (and a `WarpBarrier`'s missing lanes) are taken now, while the waiters still wait (a waiter
/// whose phase completes meanwhile returns a moment later than it would
/// have: the call holds each record it reads until it is done); for a
/// phase on which only tasks wait, they are those taken when the latest
/// task began waiting ([`Stall::barrier`] says why).
///
/// Never blocks on a barrier; it takes a lock of its own for a few
/// microseconds per waiter.
///
/// # Examples
///
/// ```
/// use syncthreads::Team;
/// use std::time::Duration;
///
/// let team = Team::new(3);
/// let seats: Vec<_> = team.seats().collect();
/// std::thread::scope(|s| {
///     let mut seats = seats.into_iter();
///     let (a, b, late) = (seats.next().unwrap(), seats.next().unwrap(), seats.next().unwrap());
///     s.spawn(move || a.arrive_and_wait());
///     s.spawn(move || b.arrive_and_wait());
///     // Rank 2 is late: ranks 0 and 1 wait for it.
///     let stall = loop {
///         let found = syncthreads::diagnostics::stalls(Duration::from_millis(20));
///         match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
///             Some(stall) if stall.waiting().len() == 2 => break stall,
///             _ => std::thread::sleep(Duration::from_millis(10)),
///         }
///     };
///     assert_eq!(stall.phase(), 0);
///     eprintln!("{stall}");
///     late.arrive_and_wait();
/// });
/// ```
#[cfg(feature = "diagnostics")]
#[cfg_attr(docsrs, doc(cfg(feature = "diagnostics")))]
#[must_use]
pub fn stalls(older_than: Duration) -> Vec<Stall> {
    stall::collect(older_than)
        .stalls
        .into_iter()
        .map(|(_, _, stall)| stall)
        .collect()
}
