//! The std ↔ loom ↔ shuttle switch.
//!
//! Every primitive that the threads of a barrier share (atomics,
//! `UnsafeCell`, `Mutex`, spin hints, `yield_now`, thread-locals) goes
//! through this module, so that `--cfg loom` (model checking, see
//! `loom-tests/`) and `--cfg shuttle` (randomized schedules) swap them all
//! at once. What stays on std is process-wide state that no model explores
//! (the wait policy's tuning hints and bench counters, the launch pool's
//! count of running threads, the diagnostics' records), each saying so
//! where it is.
//!
//! The parking backend follows the same switch in [`crate::park`] (whose
//! Miri backend is std's `Mutex` and `Condvar`).

// The model checkers are optional dependencies (out of every user's
// lockfile): a model build names the feature along with the cfg.
#[cfg(all(loom, not(feature = "loom")))]
compile_error!(
    "syncthreads: built with `--cfg loom` but without the feature `loom`: add \
     `--features syncthreads/loom` (or `features = [\"loom\"]` on the dependency)"
);
#[cfg(all(shuttle, not(feature = "shuttle")))]
compile_error!(
    "syncthreads: built with `--cfg shuttle` but without the feature `shuttle`: add \
     `--features syncthreads/shuttle` (or `features = [\"shuttle\"]` on the dependency)"
);

#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::sync::atomic::AtomicPtr;
#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::{
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    sync::{Mutex, MutexGuard},
    thread_local,
};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicPtr;
#[cfg(loom)]
pub(crate) use loom::{
    cell::UnsafeCell,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    sync::Mutex,
};

/// loom's `thread_local!` does not accept std's `const { ... }` initializer;
/// this one strips it and forwards each declaration to loom's.
#[cfg(loom)]
macro_rules! loom_thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $($init:tt)* }; $($rest:tt)*) => {
        loom::thread_local!($(#[$attr])* $vis static $name: $t = { $($init)* };);
        $crate::sync::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $($init:tt)* }) => {
        loom::thread_local!($(#[$attr])* $vis static $name: $t = { $($init)* };);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        loom::thread_local!($(#[$attr])* $vis static $name: $t = $init;);
        $crate::sync::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        loom::thread_local!($(#[$attr])* $vis static $name: $t = $init;);
    };
}
#[cfg(loom)]
pub(crate) use loom_thread_local as thread_local;

#[cfg(shuttle)]
pub(crate) use shuttle::sync::atomic::AtomicPtr;
#[cfg(shuttle)]
pub(crate) use shuttle::{
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    sync::{Mutex, MutexGuard},
    thread_local,
};

/// Whether this is a model checker's build (`--cfg loom` or `--cfg shuttle`).
/// There the wait policy's stages are bounded in steps instead of time (one
/// load of the spin stage, one yield), so that the models take every path a
/// real wait takes without multiplying the schedules to explore.
pub(crate) const MODEL: bool = cfg!(any(loom, shuttle));

/// One iteration of a spin-wait.
///
/// Under loom, nothing: the stage's load is the scheduling point. A loom
/// `yield_now` would make loom run the other threads first, every time,
/// so a waiter would never reach its park before the thread that wakes it
/// had acted, and a wake that wakes nobody would go unseen. The stages are
/// one step each there, so no spinning needs bounding.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(any(loom, shuttle)))]
    std::hint::spin_loop();
    #[cfg(shuttle)]
    shuttle::thread::yield_now();
}

/// A process-wide tuning hint of the wait policy (whether yielding pays),
/// kept in a plain std atomic. It is no part of any barrier's
/// synchronization, and the models never reach it (their yield stage is one
/// step that reads no clock), so it is not a model object.
pub(crate) type HintU64 = std::sync::atomic::AtomicU64;

/// A flag word that is set once (a `BlockBarrier`'s seats-or-seatless
/// mode). It orders no data, but which use wins a race between a seat and a
/// seat-less sync is a decision, so it is a model atomic under the model
/// checkers like every other shared word.
pub(crate) type ClaimU64 = AtomicU64;

/// Records that a model execution came through an internal path a model
/// exists for (the join that leaves again after a straddled look, say), so
/// that the model can fail when no execution reaches it. Nothing outside
/// `--cfg loom`.
#[inline(always)]
pub(crate) fn model_event(_name: &'static str) {
    #[cfg(loom)]
    MODEL_EVENTS.with(|events| events.borrow_mut().insert(_name));
}

// A std thread-local, outside the model: loom runs every model thread of an
// execution on the thread that called `loom::model`.
#[cfg(loom)]
std::thread_local! {
    static MODEL_EVENTS: std::cell::RefCell<std::collections::BTreeSet<&'static str>> =
        const { std::cell::RefCell::new(std::collections::BTreeSet::new()) };
}

/// The internal paths ([`model_event`]) the models run on this thread came
/// through since the last call, which clears them.
#[cfg(loom)]
#[doc(hidden)]
pub fn take_model_events() -> std::collections::BTreeSet<&'static str> {
    MODEL_EVENTS.with(|events| std::mem::take(&mut *events.borrow_mut()))
}

/// Gives the core to another runnable thread. Under loom, nothing, as in
/// [`spin_hint`]: the yield stage is its one load.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(any(loom, shuttle)))]
    std::thread::yield_now();
    #[cfg(shuttle)]
    shuttle::thread::yield_now();
}

/// Gives the core away in a loop that ends only once another thread lets
/// go of something it holds for a moment (the diagnostics' waiter record):
/// a real yield in every build, since a model checker must run the holder
/// for the loop to end.
#[cfg(feature = "diagnostics")]
#[inline]
pub(crate) fn yield_to_holder() {
    #[cfg(not(any(loom, shuttle)))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(shuttle)]
    shuttle::thread::yield_now();
}

/// `UnsafeCell` with loom's closure-based access, for the std and shuttle builds.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    #[inline]
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a mutable pointer to the contents (loom's signature).
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a shared pointer to the contents (loom's signature).
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }
}

/// The clock used by timed waits.
///
/// Under loom, real time would make executions non-deterministic, so the model
/// clock advances by one millisecond per reading instead: a timed wait of `d`
/// gives up after about `d / 1 ms` checks, and each check is a point where loom
/// explores a completion racing the timeout.
#[cfg(not(loom))]
#[inline]
pub(crate) fn now() -> std::time::Instant {
    std::time::Instant::now()
}

#[cfg(loom)]
pub(crate) fn now() -> std::time::Instant {
    use std::{cell::Cell, sync::OnceLock};
    static BASE: OnceLock<std::time::Instant> = OnceLock::new();
    // Per OS thread, not global: loom runs all threads of one model on the
    // thread that called `loom::model`, so the ticks a model sees depend only
    // on its own schedule, not on models running beside it in other tests.
    std::thread_local!(static TICKS: Cell<u64> = const { Cell::new(0) });
    let ticks = TICKS.with(|t| t.replace(t.get() + 1));
    *BASE.get_or_init(std::time::Instant::now) + std::time::Duration::from_millis(ticks)
}

/// Writes a constructor once: a `const fn` in a real build, a plain `fn`
/// under the model checkers, whose atomics have no `const` constructor.
macro_rules! const_unless_model {
    ($(#[$attr:meta])* $vis:vis fn $($rest:tt)*) => {
        #[cfg(not(any(loom, shuttle)))]
        $(#[$attr])* $vis const fn $($rest)*
        #[cfg(any(loom, shuttle))]
        $(#[$attr])* $vis fn $($rest)*
    };
}
pub(crate) use const_unless_model;
