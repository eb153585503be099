//! `Barrier<F>`: the public barrier, each operation one call into the
//! phase engine (`engine.rs`), which a `Team` is built on too: construction
//! and arrivals here; the waits, tx counts and poisoning, which a `Team`
//! shares, in `barrier/shared.rs` (`engine::engine_methods!`).

use crate::completion::Completion;
use crate::engine::{ArriveAndWaitFuture, Engine, Target};
use crate::op::Op;
use crate::state;
use crate::token::{ArrivalToken, BarrierWaitResult};
use std::fmt;

mod shared;

/// A reusable barrier with split arrive/wait, phases, parity waits, a
/// completion function and transaction counts: CUDA's `cuda::barrier` (the PTX
/// `mbarrier` object) for CPU threads.
///
/// A barrier is made for `expected` participants and moves through phases 0,
/// 1, 2, …. A phase completes once its `expected` arrivals have happened *and*
/// its transaction count is back to zero; the next phase then starts at once,
/// owing `expected` arrivals again.
///
/// # Arrivals are irrevocable
///
/// [`arrive`](Barrier::arrive) records the arrival and returns an
/// [`ArrivalToken`] without blocking; [`wait`](Barrier::wait) blocks until the
/// token's phase has completed. Between the two a thread can do work that does
/// not depend on the other participants. A wait that times out, or a token
/// that is dropped, never undoes the arrival.
///
/// # Parity waits
///
/// A thread that did not arrive (or does not keep its token) can wait by
/// phase parity: [`wait_parity(p)`](Barrier::wait_parity) returns once the
/// current phase's parity differs from `p`, i.e. once the phase of parity `p`
/// has completed. Only the current phase and the one before it can be told
/// apart this way.
///
/// # Compared with `std::sync::Barrier`
///
/// `arrive_and_wait` is `std`'s `wait` (here, [`wait`](Barrier::wait) takes
/// the token of an earlier [`arrive`](Barrier::arrive)), and `is_leader()`
/// means the same. On
/// top of that: waits can be split from arrivals, bounded in time, or done by
/// parity; participants can leave ([`arrive_and_drop`](Barrier::arrive_and_drop));
/// a completion function runs once per phase before anyone is released;
/// transaction counts hold a phase open for work that is not a thread's
/// arrival; and a failed participant can [`poison`](Barrier::poison) the
/// barrier so nobody hangs. The whole state is one `AtomicU64`
/// (`size_of::<Barrier>() == 8`), and waiting spins briefly before it parks.
///
/// # Misuse
///
/// Breaking the rules (arriving more often than the phase owes, a transaction
/// count out of range, using a retired barrier, …) panics with a message that
/// names the operation and the numbers, and leaves the barrier exactly as it
/// was, so the other threads carry on.
///
/// # Examples
///
/// ```
/// use syncthreads::Barrier;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let barrier = Barrier::new(4);
/// let hits = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             hits.fetch_add(1, Ordering::Relaxed);
///             let token = barrier.arrive();
///             // ... independent work ...
///             barrier.wait(token);
///             assert_eq!(hits.load(Ordering::Relaxed), 4);
///         });
///     }
/// });
/// ```
pub struct Barrier<F = ()> {
    engine: Engine<F>,
}

#[cfg(not(any(loom, shuttle)))]
crate::assert::assert_eq_size!(Barrier, u64);
crate::assert::assert_impl_all!(Barrier: Send, Sync, std::panic::RefUnwindSafe);

impl Barrier {
    /// Largest `expected` count, and largest number of pending arrivals:
    /// `2^20 - 1`, as in the hardware object.
    ///
    /// # Examples
    ///
    /// ```
    /// use syncthreads::Barrier;
    ///
    /// assert_eq!(Barrier::MAX, (1 << 20) - 1);
    /// let largest = Barrier::new(Barrier::MAX);
    /// assert_eq!(std::mem::size_of_val(&largest), 8); // still one word
    /// ```
    pub const MAX: usize = state::MAX as usize;
    /// Largest magnitude of the transaction count: `2^20 - 1`, as in the
    /// hardware object.
    ///
    /// # Examples
    ///
    /// ```
    /// use syncthreads::Barrier;
    ///
    /// let barrier = Barrier::new(1);
    /// // The most one phase can await at once:
    /// let token = barrier.arrive_tx(1, Barrier::MAX_TX);
    /// assert!(!barrier.try_wait(&token));
    /// barrier.complete_tx(Barrier::MAX_TX);
    /// assert!(barrier.try_wait(&token));
    /// ```
    pub const MAX_TX: u32 = state::MAX_TX;

    crate::sync::const_unless_model! {
        /// Creates a barrier for `expected` participants, in phase 0, with no
        /// completion function.
        ///
        /// # Panics
        ///
        /// Unless `1 <= expected <= Barrier::MAX`, with a message naming the
        /// value and the range, e.g. `syncthreads: Barrier::new(0): expected
        /// must be in 1 ..= 1048575 (Barrier::MAX)`; in a `const` or `static`,
        /// the same message fails the build.
        ///
        /// # Examples
        ///
        /// ```
        /// static BARRIER: syncthreads::Barrier = syncthreads::Barrier::new(2);
        /// assert_eq!(format!("{BARRIER:?}"),
        ///     "Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }");
        /// ```
        #[track_caller]
        #[must_use]
        pub fn new(expected: usize) -> Barrier {
            Barrier {
                engine: Engine::new(expected),
            }
        }
    }
}

impl<F: FnMut() + Send> Barrier<F> {
    /// Creates a barrier for `expected` participants whose completion function
    /// `f` runs once per phase, on the thread whose operation completed the
    /// phase, after every arrival of the phase and before any wait for it
    /// returns.
    ///
    /// Everything a participant did before its arrival happens-before `f`;
    /// `f` happens-before every wait of the phase returning. Arrivals for the
    /// next phase that come while `f` runs wait until the next phase has
    /// started (keep `f` short). Inside `f`, this barrier's waits and
    /// mutating operations panic, since they would deadlock; its queries
    /// report the phase as still incomplete. If `f` panics, the barrier is
    /// poisoned and the panic goes on in the completing thread.
    ///
    /// # Panics
    ///
    /// Unless `1 <= expected <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use syncthreads::Barrier;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let phases = AtomicUsize::new(0);
    /// let barrier = Barrier::with_completion(3, || {
    ///     phases.fetch_add(1, Ordering::Relaxed);
    /// });
    /// std::thread::scope(|s| {
    ///     for _ in 0..3 {
    ///         s.spawn(|| {
    ///             for phase in 1..=10 {
    ///                 barrier.arrive_and_wait();
    ///                 assert!(phases.load(Ordering::Relaxed) >= phase);
    ///             }
    ///         });
    ///     }
    /// });
    /// assert_eq!(phases.load(Ordering::Relaxed), 10);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_completion(expected: usize, f: F) -> Barrier<F> {
        Barrier {
            engine: Engine::with_completion(expected, f),
        }
    }
}

impl<F: Completion> Barrier<F> {
    /// Arrives once in the current phase, without blocking (unless the
    /// completion function of the previous phase is still running), and
    /// returns a token for [`wait`](Barrier::wait).
    ///
    /// Same as `arrive_n(1)`.
    ///
    /// # Panics
    ///
    /// If no arrival is pending in this phase, if the barrier is retired or
    /// poisoned, or inside this barrier's completion function.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(2);
    /// let token = barrier.arrive();
    /// assert!(!barrier.try_wait(&token)); // one arrival still owed
    /// drop(barrier.arrive());
    /// barrier.wait(token); // returns at once: the phase completed
    /// ```
    #[track_caller]
    #[inline]
    pub fn arrive(&self) -> ArrivalToken {
        self.engine.token(self.engine.update(Op::Arrive))
    }

    /// Arrives `n` times at once in the current phase.
    ///
    /// # Panics
    ///
    /// If `n == 0`, if fewer than `n` arrivals are pending in this phase, if
    /// the barrier is retired or poisoned, or inside this barrier's
    /// completion function.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(3);
    /// let token = barrier.arrive_n(3);
    /// assert!(barrier.try_wait(&token));
    /// ```
    #[track_caller]
    #[inline]
    pub fn arrive_n(&self, n: usize) -> ArrivalToken {
        self.engine.token(self.engine.update(Op::ArriveN(n)))
    }

    /// Arrives and waits for the phase to complete: `std::sync::Barrier::wait`.
    ///
    /// # Panics
    ///
    /// As [`arrive`](Barrier::arrive) and [`wait`](Barrier::wait).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(3);
    /// let leaders: usize = std::thread::scope(|s| {
    ///     let handles: Vec<_> =
    ///         (0..3).map(|_| s.spawn(|| barrier.arrive_and_wait().is_leader())).collect();
    ///     handles.into_iter().map(|h| h.join().unwrap() as usize).sum()
    /// });
    /// assert_eq!(leaders, 1);
    /// ```
    #[doc(alias = "wait")]
    #[track_caller]
    #[inline]
    pub fn arrive_and_wait(&self) -> BarrierWaitResult {
        let arrival = self.engine.update(Op::ArriveAndWait);
        if !arrival.completed {
            let target = Target::Arrival(arrival.phase);
            let subject = self.subject();
            self.engine
                .wait_for("arrive_and_wait()", target, None, subject, None);
        }
        BarrierWaitResult {
            is_leader: arrival.completed,
        }
    }

    /// Arrives once and leaves: the current phase gets its arrival, and every
    /// later phase expects one arrival fewer.
    ///
    /// When the last participant leaves, the barrier is *retired* once that
    /// phase completes: further arrivals and tx operations panic.
    ///
    /// # Panics
    ///
    /// As [`arrive`](Barrier::arrive).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(2);
    /// barrier.arrive_and_drop(); // one participant leaves
    /// barrier.arrive_and_wait(); // phase 0 completes
    /// barrier.arrive_and_wait(); // phase 1 needs only one arrival
    /// assert!(!barrier.phase_parity()); // now in phase 2
    /// ```
    #[track_caller]
    pub fn arrive_and_drop(&self) {
        self.engine.update(Op::ArriveAndDrop);
    }

    /// Arrives `n` times and lowers the expected count of later phases by `n`.
    ///
    /// # Panics
    ///
    /// If `n == 0`, and as [`arrive_n`](Barrier::arrive_n).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(4);
    /// barrier.arrive_and_drop_n(3);
    /// assert_eq!(format!("{barrier:?}"),
    ///     "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }");
    /// ```
    #[track_caller]
    pub fn arrive_and_drop_n(&self, n: usize) {
        self.engine.update(Op::ArriveAndDropN(n));
    }

    /// Adds `n` participants, from the current phase on: the current phase
    /// and every later one owe `n` arrivals more (Java's
    /// `Phaser::bulkRegister`, .NET's `Barrier.AddParticipants`).
    ///
    /// Pending and expected grow by `n` in one atomic step, so the current
    /// phase cannot complete before the new participants' arrivals, and a
    /// joiner's first [`arrive`](Barrier::arrive) belongs to the phase it
    /// joined: `add_participants` followed by `arrive` needs no further
    /// synchronization. Called while the completion function of a phase runs
    /// (the *completion window*), it blocks until the next phase has started
    /// and joins that one, as an `arrive` does. `n == 0` changes nothing and
    /// never blocks.
    ///
    /// Joining is an acquire operation: everything the phase before the
    /// joined one published (its arrivals and its completion function) is
    /// visible after it returns, as after a wait for that phase.
    ///
    /// # Panics
    ///
    /// If the expected count would exceed [`Barrier::MAX`], if the barrier
    /// is poisoned or retired (a retired barrier never comes back, as a
    /// terminated `Phaser`), or inside this barrier's completion function
    /// (also for `n == 0`). The barrier is left as it was.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// let token = barrier.arrive(); // phase 0 completes: one participant
    /// barrier.wait(token);
    /// std::thread::scope(|s| {
    ///     barrier.add_participants(1); // phase 1 now waits for two
    ///     s.spawn(|| barrier.arrive_and_wait());
    ///     let token = barrier.arrive();
    ///     barrier.wait(token); // returns once the joiner arrived too
    /// });
    /// assert!(!barrier.phase_parity()); // in phase 2
    /// ```
    #[track_caller]
    pub fn add_participants(&self, n: usize) {
        let _joined = self.engine.join(Op::AddParticipants(n), n);
    }

    /// Adds `tx` to the transaction count and arrives `n` times, in one
    /// atomic step.
    ///
    /// # Panics
    ///
    /// If `n == 0`, and as [`arrive_n`](Barrier::arrive_n) and
    /// [`expect_tx`](Barrier::expect_tx).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// let token = barrier.arrive_tx(1, 4096);
    /// assert!(!barrier.try_wait(&token));
    /// barrier.complete_tx(4096);
    /// barrier.wait(token);
    /// ```
    #[track_caller]
    pub fn arrive_tx(&self, n: usize, tx: u32) -> ArrivalToken {
        self.engine.token(self.engine.update(Op::ArriveTx(n, tx)))
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
        let name = "arrive_and_wait_async()";
        let arrival = self.engine.update(Op::ArriveAndWaitAsync);
        let subject = self.subject();
        ArriveAndWaitFuture::arrived(
            &self.engine,
            name,
            arrival.phase,
            arrival.completed,
            subject,
        )
    }

    /// The barrier as the stall reports name its waits: its engine.
    fn subject(&self) -> crate::diagnostics::Subject {
        self.engine.subject()
    }
}

impl<F> fmt::Debug for Barrier<F> {
    /// Decodes the word, e.g.
    /// `Barrier { phase_parity: false, pending: 3, expected: 4, tx: 0, poisoned: false }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.engine.fmt(f)
    }
}

// The methods shared with a `Team` (the waits, tx, poisoning), after the
// barrier's own (barrier/shared.rs).
shared::shared_methods!();
