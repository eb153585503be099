//! The async waits of a [`Barrier`]: the methods that make the
//! futures of `future.rs`, and the one poll they all share, which takes the
//! task half of the handshake in `src/wait.rs`.

use super::future::{ArriveAndWaitFuture, ParityWaitFuture, WaitFuture};
use super::wait::{End, Target};
use super::Barrier;
use crate::completion::Completion;
use crate::op::Op;
use crate::park::TaskNode;
use crate::token::ArrivalToken;
use crate::wait::{self, Word};
use std::pin::Pin;
use std::task::{Context, Poll};

impl<F: Completion> Barrier<F> {
    /// Waits, as a future, until the phase of `token` has completed:
    /// [`wait`](Barrier::wait) for async code.
    ///
    /// The future never blocks its thread: while the phase is incomplete it
    /// registers its task's waker (in a table keyed by the barrier's address;
    /// nothing is allocated) and returns `Pending`; the operation that
    /// completes the phase wakes it, as it wakes the threads that wait on the
    /// same phase. Any executor will do: only std's `Future` and `Waker` are
    /// used.
    ///
    /// # Panics
    ///
    /// In debug builds, here, if the token came from another barrier. The
    /// future panics when polled if the barrier is poisoned or the token's
    /// phase can never complete, as [`wait`](Barrier::wait).
    ///
    /// # Examples
    ///
    /// A thread completes the phase that a task waits for:
    ///
    /// ```
    /// use syncthreads::Barrier;
    ///
    /// let barrier = Barrier::new(2);
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// std::thread::scope(|s| {
    ///     let token = barrier.arrive();
    ///     s.spawn(|| barrier.arrive_and_wait());
    ///     rt.block_on(barrier.wait_async(token));
    /// });
    /// ```
    #[track_caller]
    pub fn wait_async(&self, token: ArrivalToken) -> WaitFuture<'_, F> {
        self.check_token("wait_async", &token);
        WaitFuture::new(self, token.phase)
    }

    /// Waits, as a future, until the phase of parity `parity` has completed:
    /// [`wait_parity`](Barrier::wait_parity) for async code. It does not
    /// arrive: an observer task can follow the phases of a thread pool.
    ///
    /// # Panics
    ///
    /// The future panics when polled as [`wait_parity`](Barrier::wait_parity)
    /// does.
    ///
    /// # Examples
    ///
    /// ```
    /// use syncthreads::Barrier;
    ///
    /// let barrier = Barrier::new(1);
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.arrive_and_wait()); // completes phase 0
    ///     rt.block_on(barrier.wait_parity_async(false));
    /// });
    /// assert!(barrier.phase_parity());
    /// ```
    #[track_caller]
    pub fn wait_parity_async(&self, parity: bool) -> ParityWaitFuture<'_, F> {
        ParityWaitFuture::new(self, parity)
    }

    /// Arrives now, and returns a future that completes once the phase has:
    /// [`arrive_and_wait`](Barrier::arrive_and_wait) for async code.
    ///
    /// The arrival happens when this is called, not when the future is first
    /// polled, so dropping the future never undoes it. As for
    /// [`arrive`](Barrier::arrive), a call that comes while the previous
    /// phase's completion function runs waits for it to finish (keep
    /// completion functions short).
    ///
    /// # Panics
    ///
    /// Here, as [`arrive`](Barrier::arrive). The future panics when polled if
    /// the barrier is poisoned or the phase can never complete; the leader's
    /// future (whose arrival completed the phase) is ready at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use syncthreads::Barrier;
    /// use std::sync::Arc;
    ///
    /// let rt = tokio::runtime::Runtime::new().unwrap();
    /// let barrier = Arc::new(Barrier::new(4));
    /// let leaders: usize = rt.block_on(async {
    ///     let tasks: Vec<_> = (0..4)
    ///         .map(|_| {
    ///             let barrier = barrier.clone();
    ///             tokio::spawn(async move { barrier.arrive_and_wait_async().await.is_leader() })
    ///         })
    ///         .collect();
    ///     let mut leaders = 0;
    ///     for task in tasks {
    ///         leaders += task.await.unwrap() as usize;
    ///     }
    ///     leaders
    /// });
    /// assert_eq!(leaders, 1);
    /// ```
    #[track_caller]
    pub fn arrive_and_wait_async(&self) -> ArriveAndWaitFuture<'_, F> {
        self.arrive_then_wait_async(Op::ArriveAndWaitAsync, "arrive_and_wait_async()")
    }

    /// Records `op` (an arrival; its misuse panics here) and returns the
    /// future that waits for its phase, naming `name` in its panics.
    #[track_caller]
    pub(crate) fn arrive_then_wait_async(
        &self,
        op: Op,
        name: &'static str,
    ) -> ArriveAndWaitFuture<'_, F> {
        let arrival = self.update(op);
        ArriveAndWaitFuture::arrived(self, name, arrival.phase, arrival.completed)
    }

    /// A node of the task table for this barrier's word.
    pub(crate) fn task_node(&self) -> TaskNode {
        TaskNode::new(self.state.park_key())
    }

    /// One poll of an async wait until the word reaches `target`, a
    /// poisoned barrier or a phase that can never complete (the latter two
    /// panic, naming `op` and `target`, as the blocking waits do).
    pub(crate) fn poll_wait_async(
        &self,
        op: &str,
        node: Pin<&TaskNode>,
        cx: &mut Context<'_>,
        target: Target,
    ) -> Poll<()> {
        let s = self.begin_wait(op);
        wait::poll_wait(&self.state, s, node, cx.waker(), |s| {
            End::classify(s, target)
        })
        .map(|end| {
            end.finish(op, target);
        })
    }
}
