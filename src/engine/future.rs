//! The futures of the async waits: [`WaitFuture`],
//! [`ParityWaitFuture`] and [`ArriveAndWaitFuture`], made by
//! [`Barrier::wait_async`], [`Barrier::wait_parity_async`] and
//! [`Barrier::arrive_and_wait_async`].
//!
//! Each holds its task's node of the task table (`park/tasks.rs`): the
//! future is `!Unpin`, the node is linked while the task waits, and dropping
//! the future unlinks it. The polling itself is `Engine::poll_wait_async`
//! (`engine/wait_async.rs`).

use super::wait::Target;
use super::Engine;
use crate::completion::Completion;
use crate::diagnostics::{FutureWait, Subject};
use crate::park::TaskNode;
use crate::phase::Phase;
use crate::token::BarrierWaitResult;
#[cfg(doc)]
use crate::Barrier;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The future of [`Barrier::wait_async`]: completes once the phase of the
/// token it was made from has completed.
///
/// Dropping it before it completes is always safe and never undoes the
/// arrival (the token's phase still counts it); it only stops waiting. To wait
/// again without the token, use [`Barrier::wait_parity_async`]. In a
/// `select!` loop, keep the future pinned and poll the same one again.
///
/// # Panics
///
/// When polled, if the barrier is poisoned or the token's phase can never
/// complete (the barrier is retired in it), as [`Barrier::wait`].
///
/// # Examples
///
/// ```
/// use syncthreads::{Barrier, WaitFuture};
///
/// struct Pending<'a> {
///     wait: WaitFuture<'a>, // a named type: it can be stored
/// }
///
/// let barrier = Barrier::new(1);
/// let pending = Pending { wait: barrier.wait_async(barrier.arrive()) };
/// tokio::runtime::Builder::new_current_thread()
///     .build()
///     .unwrap()
///     .block_on(pending.wait);
/// ```
#[must_use = "futures do nothing unless polled; the arrival already happened"]
pub struct WaitFuture<'a, F = ()> {
    engine: &'a Engine<F>,
    phase: Phase,
    node: TaskNode,
    diag: FutureWait,
}

/// The future of [`Barrier::wait_parity_async`]: completes once the phase of
/// the given parity has completed (the current phase's parity differs).
///
/// It does not arrive; dropping it only stops waiting.
///
/// # Panics
///
/// When polled, as [`Barrier::wait_parity`].
///
/// # Examples
///
/// ```
/// use syncthreads::Barrier;
///
/// let barrier = Barrier::new(1);
/// barrier.arrive_and_wait(); // phase 0 completed: now in phase 1
/// tokio::runtime::Builder::new_current_thread()
///     .build()
///     .unwrap()
///     .block_on(barrier.wait_parity_async(false)); // returns at once
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct ParityWaitFuture<'a, F = ()> {
    engine: &'a Engine<F>,
    parity: bool,
    node: TaskNode,
    diag: FutureWait,
}

/// The future of [`Barrier::arrive_and_wait_async`]: the arrival happened
/// when that method was called; this completes once its phase has completed,
/// with [`is_leader`](BarrierWaitResult::is_leader) true for the arrival that
/// completed it.
///
/// Dropping it before it completes is always safe and never undoes the
/// arrival.
///
/// # Panics
///
/// When polled, as [`Barrier::arrive_and_wait`]'s wait: if the barrier is
/// poisoned, or the phase can never complete.
///
/// # Examples
///
/// ```
/// use syncthreads::Barrier;
///
/// let barrier = Barrier::new(1);
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let result = rt.block_on(barrier.arrive_and_wait_async());
/// assert!(result.is_leader()); // the only participant completed the phase
/// ```
#[must_use = "futures do nothing unless polled; the arrival already happened"]
pub struct ArriveAndWaitFuture<'a, F = ()> {
    engine: &'a Engine<F>,
    /// The operation, for panic messages.
    op: &'static str,
    phase: Phase,
    leader: bool,
    node: TaskNode,
    diag: FutureWait,
}

// The node must stay where the table points: every future is `!Unpin`.
crate::assert::assert_not_impl_any!(WaitFuture<'static>: Unpin);
crate::assert::assert_not_impl_any!(ParityWaitFuture<'static>: Unpin);
crate::assert::assert_not_impl_any!(ArriveAndWaitFuture<'static>: Unpin);
crate::assert::assert_impl_all!(WaitFuture<'static>: Send, Sync, fmt::Debug);
crate::assert::assert_impl_all!(ParityWaitFuture<'static>: Send, Sync, fmt::Debug);
crate::assert::assert_impl_all!(ArriveAndWaitFuture<'static>: Send, Sync, fmt::Debug);

/// After a poll of `engine`'s wait (for `phase`, or its current one):
/// the future's record for the stall reports.
fn polled<F>(diag: &FutureWait, engine: &Engine<F>, phase: Option<Phase>, pending: bool) {
    // SAFETY: called from a poll of the future that borrows `engine`, and
    // the future's subject is that engine or owns it (each constructor's
    // contract): it is alive for the call.
    unsafe {
        diag.polled(pending, engine.key(), || {
            phase.unwrap_or_else(|| engine.phase()).bits()
        });
    }
}

// Each constructor takes the wait's `subject` for the stall reports: the
// engine itself, or the higher type (a `Team`) that owns it, so that it is
// alive whenever the future is polled (it is described during polls only).

impl<'a, F: Completion> WaitFuture<'a, F> {
    #[track_caller]
    pub(crate) fn new(engine: &'a Engine<F>, phase: Phase, subject: Subject) -> Self {
        WaitFuture {
            engine,
            phase,
            node: engine.task_node(),
            diag: FutureWait::here(subject),
        }
    }
}

impl<'a, F: Completion> ParityWaitFuture<'a, F> {
    #[track_caller]
    pub(crate) fn new(engine: &'a Engine<F>, parity: bool, subject: Subject) -> Self {
        ParityWaitFuture {
            engine,
            parity,
            node: engine.task_node(),
            diag: FutureWait::here(subject),
        }
    }
}

impl<'a, F: Completion> ArriveAndWaitFuture<'a, F> {
    /// The wait after an arrival already recorded by `op` (named in panic
    /// messages) in `phase`; `completed` if that arrival completed it (the
    /// future is then ready at once, and its result is the leader's).
    #[track_caller]
    pub(crate) fn arrived(
        engine: &'a Engine<F>,
        op: &'static str,
        phase: Phase,
        completed: bool,
        subject: Subject,
    ) -> Self {
        ArriveAndWaitFuture {
            engine,
            op,
            phase,
            leader: completed,
            node: engine.task_node(),
            diag: FutureWait::here(subject),
        }
    }
}

/// `&self.node`, pinned with `self`.
macro_rules! pinned_node {
    ($this:expr) => {
        // SAFETY: the node is structurally pinned: no method moves it out of
        // its future or hands out `&mut` to it, and `Drop` (the node's own)
        // runs in place.
        unsafe { $this.map_unchecked(|f| &f.node) }
    };
}

impl<F: Completion> Future for WaitFuture<'_, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.into_ref();
        let target = Target::Token(this.phase);
        let poll = this
            .engine
            .poll_wait_async("wait_async", pinned_node!(this), cx, target);
        polled(&this.diag, this.engine, Some(this.phase), poll.is_pending());
        poll
    }
}

impl<F: Completion> Future for ParityWaitFuture<'_, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.into_ref();
        let target = Target::Parity(this.parity);
        let poll = this
            .engine
            .poll_wait_async("wait_parity_async", pinned_node!(this), cx, target);
        polled(&this.diag, this.engine, None, poll.is_pending());
        poll
    }
}

impl<F: Completion> Future for ArriveAndWaitFuture<'_, F> {
    type Output = BarrierWaitResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<BarrierWaitResult> {
        let this = self.into_ref();
        if this.leader {
            return Poll::Ready(BarrierWaitResult { is_leader: true });
        }
        let target = Target::Arrival(this.phase);
        let poll = this
            .engine
            .poll_wait_async(this.op, pinned_node!(this), cx, target);
        polled(&this.diag, this.engine, Some(this.phase), poll.is_pending());
        poll.map(|()| BarrierWaitResult { is_leader: false })
    }
}

impl<F> fmt::Debug for WaitFuture<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitFuture")
            .field("phase", &self.phase)
            .field("barrier", self.engine)
            .finish_non_exhaustive()
    }
}

impl<F> fmt::Debug for ParityWaitFuture<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParityWaitFuture")
            .field("parity", &self.parity)
            .field("barrier", self.engine)
            .finish_non_exhaustive()
    }
}

impl<F> fmt::Debug for ArriveAndWaitFuture<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArriveAndWaitFuture")
            .field("phase", &self.phase)
            .field("is_leader", &self.leader)
            .field("barrier", self.engine)
            .finish_non_exhaustive()
    }
}
