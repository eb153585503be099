//! A `Barrier`'s waits: blocking, timed, parity and async, each one call
//! into the phase engine.

use super::Barrier;
use crate::completion::Completion;
use crate::engine::{ArriveAndWaitFuture, ParityWaitFuture, WaitFuture};
use crate::token::ArrivalToken;
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
    /// let barrier = syncthreads::Barrier::new(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait(barrier.arrive()));
    ///     let token = barrier.arrive();
    ///     barrier.wait(token);
    /// });
    /// ```
    #[track_caller]
    pub fn wait(&self, token: ArrivalToken) {
        self.engine.wait(token)
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
    /// let barrier = syncthreads::Barrier::new(2);
    /// let token = barrier.arrive();
    /// assert!(!barrier.try_wait(&token));
    /// drop(barrier.arrive());
    /// assert!(barrier.try_wait(&token));
    /// ```
    #[track_caller]
    #[must_use]
    pub fn try_wait(&self, token: &ArrivalToken) -> bool {
        self.engine.try_wait(token)
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
    /// let barrier = syncthreads::Barrier::new(2);
    /// let token = barrier.arrive();
    /// let token = barrier.wait_timeout(token, Duration::from_millis(1)).unwrap_err();
    /// drop(barrier.arrive());
    /// assert!(barrier.wait_timeout(token, Duration::ZERO).is_ok());
    /// ```
    #[track_caller]
    pub fn wait_timeout(&self, token: ArrivalToken, timeout: Duration) -> Result<(), ArrivalToken> {
        self.engine.wait_timeout(token, timeout)
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
    /// let barrier = syncthreads::Barrier::new(2);
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
        self.engine.wait_deadline(token, deadline)
    }

    /// Parity of the current phase: `false` for phases 0, 2, 4, …
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// assert!(!barrier.phase_parity());
    /// barrier.arrive_and_wait();
    /// assert!(barrier.phase_parity());
    /// ```
    #[must_use]
    pub fn phase_parity(&self) -> bool {
        self.engine.phase_parity()
    }

    /// Whether the phase of parity `parity` has completed, i.e. the current
    /// phase's parity differs from `parity`. Never blocks; an acquire
    /// operation like [`try_wait`](Barrier::try_wait).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// let parity = barrier.phase_parity();
    /// assert!(!barrier.try_wait_parity(parity));
    /// barrier.arrive_and_wait();
    /// assert!(barrier.try_wait_parity(parity));
    /// ```
    #[must_use]
    pub fn try_wait_parity(&self, parity: bool) -> bool {
        self.engine.try_wait_parity(parity)
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
    /// let barrier = syncthreads::Barrier::new(1);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait_parity(false)); // an observer: does not arrive
    ///     drop(barrier.arrive());
    /// });
    /// ```
    #[track_caller]
    pub fn wait_parity(&self, parity: bool) {
        self.engine.wait_parity(parity)
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
    /// let barrier = syncthreads::Barrier::new(1);
    /// assert!(!barrier.wait_parity_timeout(false, Duration::from_millis(1)));
    /// assert!(barrier.wait_parity_timeout(true, Duration::ZERO)); // phase -1 "completed"
    /// ```
    #[track_caller]
    #[must_use = "false: the phase had not completed in time"]
    pub fn wait_parity_timeout(&self, parity: bool, timeout: Duration) -> bool {
        self.engine.wait_parity_timeout(parity, timeout)
    }

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
        self.engine.wait_async(token)
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
        self.engine.wait_parity_async(parity)
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
        self.engine.arrive_and_wait_async()
    }
}
