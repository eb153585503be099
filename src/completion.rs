//! The completion function: the `Completion` bound, running it once per
//! phase on the completing thread, and the guard that forbids a barrier's own
//! waits and arrivals inside it.
//!
//! The completing operation moves the word into the completing state (see
//! `state.rs`); [`Barrier::run_completion`] runs the function and then leaves
//! that state with one `Release` RMW: to the next phase, or poisoned if the
//! function unwound or `poison()` came meanwhile.

use crate::barrier::Barrier;
use crate::state::Poison;
use crate::sync::{thread_local, Ordering};
use std::cell::Cell;
use std::fmt;

/// What a [`Barrier`] runs when a phase completes: nothing for `()`, the
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
        // completion function runs and unlinked by `Finish::drop` before that
        // frame ends, innermost first.
        let running = unsafe { &*node };
        if running.barrier == barrier {
            return true;
        }
        node = running.outer;
    }
    false
}

impl<F: Completion> Barrier<F> {
    /// Whether this thread is running this barrier's completion function.
    pub(crate) fn in_own_completion(&self) -> bool {
        running_completion_of(self.key())
    }

    #[track_caller]
    pub(crate) fn check_not_own_completion(&self, op: &dyn fmt::Display) {
        if running_completion_of(self.key()) {
            panic!("mbarrier: {op}: called inside this barrier's own completion function, where it would deadlock");
        }
    }

    /// Runs the completion function, then starts the next phase (or, if it
    /// unwinds or `poison()` was called meanwhile, poisons the barrier) and
    /// wakes the parked threads. Returns whether the next phase started.
    #[cold]
    pub(crate) fn run_completion(&self) -> bool {
        /// Ends the completing state, also when the completion function
        /// unwinds. Whether it did is `returned`, not `thread::panicking()`:
        /// a completion run by a `Drop` during another panic's unwinding
        /// (or, under loom, beside an unwinding model thread) can return.
        struct Finish<'a, F: Completion> {
            barrier: &'a Barrier<F>,
            running: &'a Running,
            returned: bool,
        }
        impl<F: Completion> Finish<'_, F> {
            /// Leaves the completing state; true if the next phase started.
            fn finish(&self) -> bool {
                let barrier = self.barrier;
                RUNNING.with(|head| head.set(self.running.outer));
                // Relaxed: seeds the CAS loop.
                let mut s = barrier.state.load(Ordering::Relaxed);
                let new = loop {
                    debug_assert!(s.is_completing());
                    // The first cause wins: a `poison()` that came while
                    // the function ran, then its unwinding.
                    let new = if s.poison_requested() {
                        s.poisoned(Poison::Call)
                    } else if !self.returned {
                        s.poisoned(Poison::Completion)
                    } else {
                        s.next_phase()
                    };
                    // Release: publishes the completion function's writes
                    // with the new phase (state.rs, point 3).
                    match barrier.state.cas(s, new, Ordering::Release) {
                        Ok(()) => break new,
                        Err(found) => s = found,
                    }
                };
                if s.parked() {
                    crate::park::unpark_all(barrier.park_key());
                }
                new.poison().is_none()
            }
        }
        impl<F: Completion> Drop for Finish<'_, F> {
            fn drop(&mut self) {
                // Only reached by unwinding: the normal path forgets `self`.
                self.finish();
            }
        }

        let running = Running {
            barrier: self.key(),
            outer: RUNNING.with(Cell::get),
        };
        RUNNING.with(|head| head.set(&running));
        let mut finish = Finish {
            barrier: self,
            running: &running,
            returned: false,
        };
        self.completion.with_mut(|f| {
            // SAFETY: this thread moved the word into the completing state,
            // which only `Finish` (on this thread) leaves; no other thread
            // touches the completion function until then, and the previous
            // completer's accesses happen-before ours (see `impl Sync`).
            unsafe { (*f).run() }
        });
        finish.returned = true;
        let started = finish.finish();
        std::mem::forget(finish);
        started
    }
}
