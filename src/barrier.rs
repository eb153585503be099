//! `Barrier<F>`: construction, arrivals, tx counts, poisoning. Recording an
//! operation lives in `barrier/record.rs`, the waits in `barrier/wait.rs`,
//! the operations and their misuse in `op.rs`, the word in `state.rs` and
//! its transitions in `state/transitions.rs`, running the completion
//! function in `completion.rs`, the tokens in `token.rs`.

use crate::completion::{self, Completion};
use crate::op::{self, Op};
use crate::phase::Phase;
use crate::state::{self, Joined, Poison, Snapshot, State};
use crate::sync::{Ordering, UnsafeCell};
use crate::token::{ArrivalToken, BarrierWaitResult};
use crate::wait::wake;
use std::fmt;

pub use future::{ArriveAndWaitFuture, ParityWaitFuture, WaitFuture};
pub(crate) use wait::Target;

mod future;
mod record;
mod wait;
mod wait_async;

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
    state: State,
    completion: UnsafeCell<F>,
}

// SAFETY: the completion function is only touched by the thread that moved the
// word into the completing state, and only until it moves it out again (with
// Release; the next completer's move in is Acquire), so accesses never overlap
// and each happens-after the previous one. `F: Send` because that thread can
// be any participant.
unsafe impl<F: Send> Sync for Barrier<F> {}

// Like std's barrier, a `Barrier` is safe to use across `catch_unwind`: every
// operation checks before it mutates, and a completion function that unwinds
// poisons the barrier, so it is never run (or observed) in a broken state.
impl<F> std::panic::RefUnwindSafe for Barrier<F> {}
impl<F> std::panic::UnwindSafe for Barrier<F> {}

#[cfg(not(any(loom, shuttle)))]
static_assertions::assert_eq_size!(Barrier, u64);
static_assertions::assert_impl_all!(Barrier: Send, Sync, std::panic::RefUnwindSafe);
static_assertions::assert_impl_all!(ArrivalToken: Send, Sync, fmt::Debug);
static_assertions::assert_not_impl_any!(ArrivalToken: Clone);

/// The result of one recorded arrival or tx operation.
#[derive(Clone, Copy)]
struct Arrival {
    /// The phase the operation belongs to (modulo the 4 phases the word keeps).
    phase: Phase,
    /// Whether this operation completed that phase.
    completed: bool,
}

impl Barrier {
    /// Largest `expected` count, and largest number of pending arrivals:
    /// `2^20 - 1`, as in the hardware object.
    pub const MAX: usize = state::MAX as usize;
    /// Largest magnitude of the transaction count: `2^20 - 1`, as in the
    /// hardware object.
    pub const MAX_TX: u32 = state::MAX_TX;

    /// Creates a barrier for `expected` participants, in phase 0, with no
    /// completion function.
    ///
    /// # Panics
    ///
    /// Unless `1 <= expected <= Barrier::MAX`. Being `const`, the message
    /// names the range rather than the value.
    ///
    /// # Examples
    ///
    /// ```
    /// static BARRIER: syncthreads::Barrier = syncthreads::Barrier::new(2);
    /// assert_eq!(format!("{BARRIER:?}"),
    ///     "Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }");
    /// ```
    #[cfg(not(any(loom, shuttle)))]
    #[track_caller]
    #[must_use]
    pub const fn new(expected: usize) -> Barrier {
        Barrier {
            state: State::new(Snapshot::initial(expected_const(expected))),
            completion: UnsafeCell::new(()),
        }
    }

    /// Creates a barrier for `expected` participants (model-checker build).
    #[cfg(any(loom, shuttle))]
    #[track_caller]
    #[must_use]
    pub fn new(expected: usize) -> Barrier {
        Barrier {
            state: State::new(Snapshot::initial(expected_const(expected))),
            completion: UnsafeCell::new(()),
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
        let expected = op::participants(
            format_args!("with_completion({expected}, _)"),
            "expected",
            expected,
        );
        Barrier {
            state: State::new(Snapshot::initial(expected)),
            completion: UnsafeCell::new(f),
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
        self.token(self.update(Op::Arrive))
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
        self.token(self.update(Op::ArriveN(n)))
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
        let arrival = self.update(Op::ArriveAndWait);
        if !arrival.completed {
            self.wait_for("arrive_and_wait()", Target::Arrival(arrival.phase), None);
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
        self.update(Op::ArriveAndDrop);
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
        self.update(Op::ArriveAndDropN(n));
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
        let _joined = self.join(Op::AddParticipants(n), n);
    }

    /// `add_participants(n)` as `op` names it in its messages: returns the
    /// phase the participants joined (`None` for `n == 0`, which changes
    /// nothing and never blocks).
    #[track_caller]
    pub(crate) fn join(&self, op: Op<'_>, n: usize) -> Option<Phase> {
        completion::check_not_running(self.key(), &op);
        // Relaxed: seeds the join's Acquire RMW; a stale word only fails its CAS (orderings.md).
        let mut s = self.state.load(Ordering::Relaxed);
        if n == 0 {
            if let Err(misuse) = op::check_join(s, 0) {
                misuse.panic(op);
            }
            return None;
        }
        loop {
            match self.state.join(s, |s| op::join(s, n)) {
                Ok(Joined::Added(prior)) => return Some(prior.phase()),
                Ok(Joined::Busy) => s = self.wait_for_next_phase(op),
                Err(misuse) => misuse.panic(op),
            }
        }
    }

    /// Adds `tx` to the current phase's transaction count: the phase will not
    /// complete until as much has been completed with
    /// [`complete_tx`](Barrier::complete_tx).
    ///
    /// If the count was negative (completions came first) and this brings it
    /// back to zero with no arrivals pending, this completes the phase.
    ///
    /// # Panics
    ///
    /// If the count would leave `-MAX_TX ..= MAX_TX`, if the barrier is
    /// retired or poisoned, or inside this barrier's completion function.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// barrier.expect_tx(64);
    /// let token = barrier.arrive();
    /// assert!(!barrier.try_wait(&token)); // the 64 bytes are still owed
    /// barrier.complete_tx(64);
    /// assert!(barrier.try_wait(&token));
    /// ```
    #[track_caller]
    pub fn expect_tx(&self, tx: u32) {
        self.update(Op::ExpectTx(tx));
    }

    /// Subtracts `tx` from the current phase's transaction count; this
    /// completes the phase if it brings the count to zero with no arrivals
    /// pending.
    ///
    /// # Panics
    ///
    /// As [`expect_tx`](Barrier::expect_tx).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// barrier.complete_tx(100); // before the matching expect_tx: tx = -100
    /// drop(barrier.arrive());
    /// assert!(!barrier.phase_parity());
    /// barrier.expect_tx(100); // back to 0: phase 0 completes here
    /// assert!(barrier.phase_parity());
    /// ```
    #[track_caller]
    pub fn complete_tx(&self, tx: u32) {
        self.update(Op::CompleteTx(tx));
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
        self.token(self.update(Op::ArriveTx(n, tx)))
    }

    /// Poisons the barrier, for a participant that failed: every thread
    /// waiting on it, and every later arrive, tx operation or wait, panics
    /// instead of hanging. The queries keep working. Idempotent.
    ///
    /// Called while a completion function runs (in it, or on another
    /// thread), it takes effect at once: `is_poisoned` is true, `Debug`
    /// says so, waits and joins panic. The function runs to its end, and
    /// the phase then does not complete: the barrier stays poisoned in it.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(2);
    /// barrier.poison();
    /// assert!(barrier.is_poisoned());
    /// let result = std::panic::catch_unwind(|| barrier.arrive_and_wait());
    /// assert!(result.is_err());
    /// ```
    pub fn poison(&self) {
        self.poison_because(Poison::Call);
    }

    /// Poisons the barrier for `why`, which its panic messages name; the
    /// first cause stays.
    pub(crate) fn poison_because(&self, why: Poison) {
        if let Some(prior) = self.state.poison(why) {
            // Also in a completion window: its waiters panic now (the word
            // says poisoned); the threads that wait the window out to arrive
            // park again until the completer ends it, and it wakes them.
            wake(&self.state, prior);
        }
    }

    /// Whether the barrier is poisoned (by [`poison`](Barrier::poison), a
    /// panicking completion function, or, for a [`Team`](crate::Team), a
    /// participant whose thread panicked). True as soon as `poison()` returned,
    /// also while a completion function still runs.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::Barrier::new(1);
    /// assert!(!barrier.is_poisoned());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        // Relaxed: poisoning hands nothing over, word point 5 (orderings.md).
        self.state.load(Ordering::Relaxed).poison().is_some()
    }
}

// `Barrier::new`'s message cannot format `Barrier::MAX`: hence the pin.
static_assertions::const_assert_eq!(state::MAX, 1_048_575);

/// `Barrier::new`'s check, usable in a `const fn` (whose panic message
/// cannot carry the value).
#[track_caller]
const fn expected_const(expected: usize) -> u32 {
    assert!(
        op::participants_in_range(expected),
        "syncthreads: new: expected must be in 1 ..= 1048575 (Barrier::MAX)"
    );
    expected as u32
}

impl<F> Barrier<F> {
    /// The barrier's identity: its address.
    #[inline]
    pub(crate) fn key(&self) -> usize {
        (self as *const Self).addr()
    }

    /// One load of the word, for the queries of what is built on the
    /// barrier (whatever its completion function).
    #[inline]
    pub(crate) fn word(&self, order: Ordering) -> Snapshot {
        self.state.load(order)
    }

    /// The current phase modulo 4 (`Relaxed`: for a participant between its
    /// wait and its next arrival the phase cannot change; see block.rs), or
    /// the phase a diagnostic record names.
    #[inline]
    pub(crate) fn phase(&self) -> Phase {
        // Relaxed: coherence after the caller's own Acquire wait; nothing read through it (orderings.md).
        self.state.load(Ordering::Relaxed).phase()
    }
}

impl<F> fmt::Debug for Barrier<F> {
    /// Decodes the word, e.g.
    /// `Barrier { phase_parity: false, pending: 3, expected: 4, tx: 0, poisoned: false }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a diagnostic snapshot; no decision and no read of data
        // rests on it, so it needs to synchronize with nothing.
        self.state.load(Ordering::Relaxed).fmt(f)
    }
}
