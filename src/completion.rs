//! The completion function: the `Completion` bound, running it on the
//! completing thread and reporting whether it returned or unwound, and the
//! guard that forbids a barrier's own waits and arrivals inside it.
//!
//! This module knows nothing of the word: the barrier moves it into the
//! completing state, calls [`run`], and leaves that state in the `finish`
//! callback (`state/transitions.rs`, `State::finish_completion`).

use crate::sync::thread_local;
use std::cell::Cell;
use std::fmt;

/// What a [`Barrier`](crate::Barrier) runs when a phase completes: nothing for `()`, the
/// closure for any `FnMut() + Send`.
///
/// This trait is sealed; it exists so that `Barrier::new` can return a
/// `Barrier<()>` whose completing arrival starts the next phase in the same
/// atomic operation.
pub trait Completion: sealed::Sealed + Send {
    #[doc(hidden)]
    const IS_NONE: bool;
    #[doc(hidden)]
    fn run(&mut self);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for () {}
    impl<F: FnMut() + Send> Sealed for F {}
}

impl Completion for () {
    const IS_NONE: bool = true;
    fn run(&mut self) {}
}

impl<F: FnMut() + Send> Completion for F {
    const IS_NONE: bool = false;
    fn run(&mut self) {
        self()
    }
}

/// One barrier whose completion function this thread is running; the nodes
/// live in the frames of `run_completion` and are chained innermost first.
struct Running {
    barrier: usize,
    outer: *const Running,
}

thread_local! {
    /// The innermost completion this thread is running, so that a barrier's
    /// own waits and arrivals inside its completion panic instead of
    /// deadlocking. A plain `Cell` of a pointer has no destructor, so it stays
    /// usable from thread-local destructors (which may arrive, too).
    static RUNNING: Cell<*const Running> = const { Cell::new(std::ptr::null()) };
}

/// Whether this thread is running the completion function of `barrier`.
fn running_completion_of(barrier: usize) -> bool {
    let mut node = RUNNING.with(Cell::get);
    while !node.is_null() {
        // SAFETY: every node in the chain lives in a `run_completion` frame
        // that is still active on this thread: it is linked in before the
        // completion function runs and unlinked by `run`'s guard before that
        // frame ends, innermost first.
        let running = unsafe { &*node };
        if running.barrier == barrier {
            return true;
        }
        node = running.outer;
    }
    false
}

/// Whether this thread is running the completion function of the barrier `key`.
pub(crate) fn running(key: usize) -> bool {
    running_completion_of(key)
}

/// Panics if this thread is running the completion function of the barrier
/// `key`, where `op` would deadlock.
#[track_caller]
pub(crate) fn check_not_running(key: usize, op: &dyn fmt::Display) {
    if running_completion_of(key) {
        panic!("syncthreads: {op}: called inside this barrier's own completion function, where it would deadlock");
    }
}

/// Runs `completion` (the completion function of the barrier `key`) with
/// this thread marked as running it, then `finish(returned)`: also when the
/// function unwinds (`returned == false`), after which the unwinding goes on.
///
/// Whether it unwound is tracked, not read from `thread::panicking()`: a
/// completion run by a `Drop` during another panic's unwinding (or, under
/// loom, beside an unwinding model thread) can return.
#[cold]
pub(crate) fn run<R>(key: usize, completion: impl FnOnce(), finish: impl FnOnce(bool) -> R) -> R {
    /// Unlinks the running node and finishes, also when unwinding.
    struct Guard<'a, G: FnOnce(bool) -> R, R> {
        running: &'a Running,
        finish: Option<G>,
    }
    impl<G: FnOnce(bool) -> R, R> Guard<'_, G, R> {
        fn end(&mut self, returned: bool) -> R {
            RUNNING.with(|head| head.set(self.running.outer));
            let finish = self.finish.take().expect("finished once");
            finish(returned)
        }
    }
    impl<G: FnOnce(bool) -> R, R> Drop for Guard<'_, G, R> {
        fn drop(&mut self) {
            if self.finish.is_some() {
                // Only reached by unwinding: the normal path ends first.
                self.end(false);
            }
        }
    }

    let running = Running {
        barrier: key,
        outer: RUNNING.with(Cell::get),
    };
    RUNNING.with(|head| head.set(&running));
    let mut guard = Guard {
        running: &running,
        finish: Some(finish),
    };
    completion();
    guard.end(true)
}
