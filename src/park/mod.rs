//! Park and unpark threads keyed by an address, validated against the word.
//!
//! The contract, shared by every backend:
//! - [`park`] calls `validate` with the backend's lock held and sleeps only if
//!   it returns `true`; the sleep ends at the next [`unpark_all`] for `key`,
//!   at `deadline`, or spuriously. Callers re-check the word in a loop.
//! - [`unpark_all`] takes the same lock, so an `unpark_all` that follows a
//!   change of the word either finds the parker queued or makes its `validate`
//!   see the change: no wakeup is lost.
//! - `key` is only an identity: waking an address nobody parks on is harmless,
//!   even after the barrier is gone.
//!
//! The real backend is `parking_lot_core` (a global hash table of queues, so a
//! barrier costs no memory for parking; `parking_lot.rs`); under `--cfg loom`
//! a lock and queue of loom atomics and `thread::park` (`model_loom.rs`), and
//! under `--cfg shuttle` a shuttle `Mutex` + `Condvar` (`model_shuttle.rs`),
//! and under Miri a std `Mutex` + `Condvar` (`miri.rs`, which says why),
//! stand in for it.
//!
//! Tasks (async waits) wait in [`tasks`], a table with the same contract keyed
//! by the same address; [`crate::wait::wake`] wakes both.

#[cfg(not(any(loom, shuttle, miri)))]
mod parking_lot;
#[cfg(not(any(loom, shuttle, miri)))]
pub(crate) use self::parking_lot::{park, unpark_all};

#[cfg(all(miri, not(any(loom, shuttle))))]
mod miri;
#[cfg(all(miri, not(any(loom, shuttle))))]
pub(crate) use self::miri::{park, unpark_all};

#[cfg(loom)]
mod model_loom;
#[cfg(loom)]
pub(crate) use self::model_loom::{park, unpark_all};

#[cfg(shuttle)]
mod model_shuttle;
#[cfg(shuttle)]
pub(crate) use self::model_shuttle::{park, unpark_all};

mod tasks;
pub(crate) use self::tasks::{wake_all as wake_tasks, TaskNode};

/// How a [`park`] call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parked {
    /// `validate` returned false: the word had already changed.
    Invalid,
    /// Woken by `unpark_all` (or spuriously).
    Woken,
    /// The deadline passed.
    TimedOut,
}
