//! `Barrier<F>`: construction, arrivals, tx counts, waits, poisoning.
//! The completion function lives in `completion.rs`, the misuse checks and
//! messages in `misuse.rs`, the tokens in `token.rs`.

use crate::completion::Completion;
use crate::misuse::{check, check_expected_const, poisoned_panic, Op};
use crate::state::{self, Poison, Snapshot, State};
use crate::sync::{Ordering, UnsafeCell};
use crate::token::{ArrivalToken, BarrierWaitResult};
use crate::wait;
use std::fmt;
use std::time::{Duration, Instant};

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
/// `arrive_and_wait` is `std`'s `wait`, and `is_leader()` means the same. On
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
/// use mbarrier::Barrier;
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
    pub(crate) state: State,
    pub(crate) completion: UnsafeCell<F>,
}

// SAFETY: the completion function is only touched by the thread that moved the
// word into the completing state, and only until it moves it out again (with
// Release; the next completer's move in is AcqRel), so accesses never overlap
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
    phase: u8,
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
    /// static BARRIER: mbarrier::Barrier = mbarrier::Barrier::new(2);
    /// assert_eq!(format!("{BARRIER:?}"),
    ///     "Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }");
    /// ```
    #[cfg(not(any(loom, shuttle)))]
    pub const fn new(expected: usize) -> Barrier {
        Barrier {
            state: State::new(Snapshot::initial(check_expected_const(expected))),
            completion: UnsafeCell::new(()),
        }
    }

    /// Creates a barrier for `expected` participants (model-checker build).
    #[cfg(any(loom, shuttle))]
    pub fn new(expected: usize) -> Barrier {
        Barrier {
            state: State::new(Snapshot::initial(check_expected_const(expected))),
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
    /// use mbarrier::Barrier;
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
    pub fn with_completion(expected: usize, f: F) -> Barrier<F> {
        assert!(
            (1..=Barrier::MAX).contains(&expected),
            "mbarrier: with_completion({expected}, _): expected must be in 1 ..= {}",
            Barrier::MAX
        );
        Barrier {
            state: State::new(Snapshot::initial(expected as u32)),
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
    /// let barrier = mbarrier::Barrier::new(2);
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
    /// let barrier = mbarrier::Barrier::new(3);
    /// let token = barrier.arrive_n(3);
    /// assert!(barrier.try_wait(&token));
    /// ```
    #[track_caller]
    #[inline]
    pub fn arrive_n(&self, n: usize) -> ArrivalToken {
        self.token(self.update(Op::ArriveN(n)))
    }

    /// Blocks until the phase of `token` has completed.
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
    /// let barrier = mbarrier::Barrier::new(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait(barrier.arrive()));
    ///     let token = barrier.arrive();
    ///     barrier.wait(token);
    /// });
    /// ```
    #[track_caller]
    pub fn wait(&self, token: ArrivalToken) {
        self.check_token("wait", &token);
        let done = self.wait_phase("wait", token.phase, None);
        debug_assert!(done);
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
    /// let barrier = mbarrier::Barrier::new(2);
    /// let token = barrier.arrive();
    /// assert!(!barrier.try_wait(&token));
    /// drop(barrier.arrive());
    /// assert!(barrier.try_wait(&token));
    /// ```
    #[track_caller]
    #[must_use]
    pub fn try_wait(&self, token: &ArrivalToken) -> bool {
        self.check_token("try_wait", token);
        // Acquire: a `true` answer must make the phase's writes visible (state.rs, point 4).
        self.state.load(Ordering::Acquire).phase() != token.phase
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
    /// let barrier = mbarrier::Barrier::new(2);
    /// let token = barrier.arrive();
    /// let token = barrier.wait_timeout(token, Duration::from_millis(1)).unwrap_err();
    /// drop(barrier.arrive());
    /// assert!(barrier.wait_timeout(token, Duration::ZERO).is_ok());
    /// ```
    #[track_caller]
    pub fn wait_timeout(&self, token: ArrivalToken, timeout: Duration) -> Result<(), ArrivalToken> {
        self.check_token("wait_timeout", &token);
        self.wait_token_until("wait_timeout", token, wait::deadline_after(timeout))
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
    /// let barrier = mbarrier::Barrier::new(2);
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
        self.check_token("wait_deadline", &token);
        self.wait_token_until("wait_deadline", token, Some(deadline))
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
    /// let barrier = mbarrier::Barrier::new(3);
    /// let leaders: usize = std::thread::scope(|s| {
    ///     let handles: Vec<_> =
    ///         (0..3).map(|_| s.spawn(|| barrier.arrive_and_wait().is_leader())).collect();
    ///     handles.into_iter().map(|h| h.join().unwrap() as usize).sum()
    /// });
    /// assert_eq!(leaders, 1);
    /// ```
    #[track_caller]
    #[inline]
    pub fn arrive_and_wait(&self) -> BarrierWaitResult {
        let arrival = self.update(Op::ArriveAndWait);
        if !arrival.completed {
            self.wait_phase("arrive_and_wait()", arrival.phase, None);
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
    /// let barrier = mbarrier::Barrier::new(2);
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
    /// let barrier = mbarrier::Barrier::new(4);
    /// barrier.arrive_and_drop_n(3);
    /// assert_eq!(format!("{barrier:?}"),
    ///     "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }");
    /// ```
    #[track_caller]
    pub fn arrive_and_drop_n(&self, n: usize) {
        self.update(Op::ArriveAndDropN(n));
    }

    /// Parity of the current phase: `false` for phases 0, 2, 4, …
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(1);
    /// assert!(!barrier.phase_parity());
    /// barrier.arrive_and_wait();
    /// assert!(barrier.phase_parity());
    /// ```
    #[must_use]
    pub fn phase_parity(&self) -> bool {
        // Acquire: a caller may act on the phase having moved on (state.rs, point 4).
        self.state.load(Ordering::Acquire).parity()
    }

    /// Whether the phase of parity `parity` has completed, i.e. the current
    /// phase's parity differs from `parity`. Never blocks; an acquire
    /// operation like [`try_wait`](Barrier::try_wait).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(1);
    /// let parity = barrier.phase_parity();
    /// assert!(!barrier.try_wait_parity(parity));
    /// barrier.arrive_and_wait();
    /// assert!(barrier.try_wait_parity(parity));
    /// ```
    #[must_use]
    pub fn try_wait_parity(&self, parity: bool) -> bool {
        // Acquire: as in `try_wait`.
        self.state.load(Ordering::Acquire).parity() != parity
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
    /// let barrier = mbarrier::Barrier::new(1);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| barrier.wait_parity(false)); // an observer: does not arrive
    ///     drop(barrier.arrive());
    /// });
    /// ```
    #[track_caller]
    pub fn wait_parity(&self, parity: bool) {
        let done = self.wait_parity_until("wait_parity", parity, None);
        debug_assert!(done);
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
    /// let barrier = mbarrier::Barrier::new(1);
    /// assert!(!barrier.wait_parity_timeout(false, Duration::from_millis(1)));
    /// assert!(barrier.wait_parity_timeout(true, Duration::ZERO)); // phase -1 "completed"
    /// ```
    #[track_caller]
    pub fn wait_parity_timeout(&self, parity: bool, timeout: Duration) -> bool {
        self.wait_parity_until("wait_parity_timeout", parity, wait::deadline_after(timeout))
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
    /// let barrier = mbarrier::Barrier::new(1);
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
    /// let barrier = mbarrier::Barrier::new(1);
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
    /// let barrier = mbarrier::Barrier::new(1);
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
    /// Called while a completion function runs, it takes effect when that
    /// function returns (the phase then does not complete).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(2);
    /// barrier.poison();
    /// assert!(barrier.is_poisoned());
    /// let result = std::panic::catch_unwind(|| barrier.arrive_and_wait());
    /// assert!(result.is_err());
    /// ```
    pub fn poison(&self) {
        // Relaxed: the initial read only seeds the CAS loop.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s.poison().is_some() || s.poison_requested() {
                return;
            }
            let new = if s.is_completing() {
                s.completing_poisoned()
            } else {
                s.poisoned(Poison::Call)
            };
            // Relaxed: the threads this wakes only panic; nothing is handed over.
            match self.state.cas(s, new, Ordering::Relaxed) {
                Ok(()) => {
                    if s.parked() && !s.is_completing() {
                        crate::park::unpark_all(self.park_key());
                    }
                    return;
                }
                Err(found) => s = found,
            }
        }
    }

    /// Whether the barrier is poisoned (by [`poison`](Barrier::poison) or a
    /// panicking completion function).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::Barrier::new(1);
    /// assert!(!barrier.is_poisoned());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        // Acquire: as in `try_wait`.
        self.state.load(Ordering::Acquire).poison().is_some()
    }

    // ---- internals -------------------------------------------------------

    /// The current phase modulo 4 (`Relaxed`: for a participant between its
    /// wait and its next arrival the phase cannot change; see block.rs).
    #[inline]
    pub(crate) fn phase(&self) -> u8 {
        self.state.load(Ordering::Relaxed).phase()
    }

    /// The barrier's identity: its address.
    #[inline]
    pub(crate) fn key(&self) -> usize {
        self as *const Self as *const () as usize
    }

    /// The parking key: an address inside the word, so no other user of the
    /// parking lot (say, one keyed by a struct that starts with this barrier)
    /// can share it.
    #[inline]
    pub(crate) fn park_key(&self) -> usize {
        self.key() + 1
    }

    #[inline]
    fn token(&self, arrival: Arrival) -> ArrivalToken {
        ArrivalToken {
            phase: arrival.phase,
            #[cfg(debug_assertions)]
            barrier: self.key(),
        }
    }

    #[track_caller]
    #[inline]
    fn check_token(&self, op: &str, token: &ArrivalToken) {
        #[cfg(debug_assertions)]
        assert!(
            token.barrier == self.key(),
            "mbarrier: {op}: the token comes from the barrier at {:#x}, not from this one at {:#x}",
            token.barrier,
            self.key()
        );
        let _ = (op, token);
    }

    /// Records one arrival or tx operation: checks it against the word,
    /// applies it in one CAS, and, if it completed the phase, runs the
    /// completion function and starts the next phase.
    #[track_caller]
    #[inline]
    fn update(&self, op: Op) -> Arrival {
        let (arrivals, drops, dtx) = op.delta();
        if arrivals == 0 && op.needs_arrival() {
            panic!("mbarrier: {op}: n must be at least 1");
        }
        // Relaxed: seeds the CAS loop; the CAS itself carries the ordering.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s.is_completing() {
                self.wait_for_next_phase(op);
                s = self.state.load(Ordering::Relaxed);
                continue;
            }
            if op.quiet() && (s.poison().is_some() || s.is_retired()) {
                // A seat's drop never panics (team.rs).
                return Arrival {
                    phase: s.phase(),
                    completed: false,
                };
            }
            let (arrivals, drops) = op.counts_at(s, arrivals, drops);
            let next = check(op, s, arrivals, drops, dtx);
            let completes = next.pending() == 0 && next.tx() == 0;
            let result = if !completes {
                // Release: our earlier writes travel with the arrival (state.rs, point 1).
                self.state.cas(s, next, Ordering::Release)
            } else if F::IS_NONE {
                // AcqRel: Acquire sees every arrival's writes (point 2); Release
                // publishes them and the new phase to the waiters (point 3).
                self.state.cas(s, next.next_phase(), Ordering::AcqRel)
            } else {
                // AcqRel: Acquire so the completion function sees every
                // arrival's writes (point 2); Release for our own arrival.
                self.state.cas(s, next.completing(), Ordering::AcqRel)
            };
            match result {
                Ok(()) => {
                    let completed = match (completes, F::IS_NONE) {
                        (false, _) => false,
                        (true, true) => {
                            if s.parked() {
                                crate::park::unpark_all(self.park_key());
                            }
                            true
                        }
                        // A `poison()` during the completion function ends the
                        // phase poisoned instead: then it did not complete.
                        (true, false) => self.run_completion(),
                    };
                    return Arrival {
                        phase: s.phase(),
                        completed,
                    };
                }
                Err(found) => s = found,
            }
        }
    }

    /// The root of a `Team`'s tree (team.rs): one combined arrival of its
    /// seats on the word (`Op::Seat` / `Op::SeatLeave`), through the same
    /// checks, completion and wake-up as every other arrival. Returns the
    /// token of the phase it belongs to and whether it completed it.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_combined(&self, op: Op) -> (ArrivalToken, bool) {
        debug_assert!(matches!(op, Op::Seat { .. } | Op::SeatLeave { .. }));
        let arrival = self.update(op);
        (self.token(arrival), arrival.completed)
    }

    /// A token for `phase` without an arrival on the word: a seat whose
    /// arrival stayed in the team's tree (team.rs).
    #[inline]
    pub(crate) fn token_for(&self, phase: u8) -> ArrivalToken {
        self.token(Arrival {
            phase,
            completed: false,
        })
    }

    /// The word as an RMW reads it: the latest value in its modification
    /// order, where a load may return an older one. A CAS that writes back
    /// what it read.
    pub(crate) fn latest(&self) -> Snapshot {
        // Relaxed: seeds the CAS loop.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            // Relaxed: only tells a double arrival from a stale load; a
            // caller that goes on re-reads the word with Acquire (team.rs).
            match self.state.cas(s, s, Ordering::Relaxed) {
                Ok(()) => return s,
                Err(found) => s = found,
            }
        }
    }

    /// An operation that found the completion function running waits for the
    /// next phase to start, and belongs to it.
    #[cold]
    #[track_caller]
    fn wait_for_next_phase(&self, op: Op) {
        self.check_not_own_completion(&op);
        wait::wait_until(&self.state, self.park_key(), None, |s| {
            (!s.is_completing()).then_some(())
        });
    }

    #[track_caller]
    fn wait_token_until(
        &self,
        op: &str,
        token: ArrivalToken,
        deadline: Option<Instant>,
    ) -> Result<(), ArrivalToken> {
        if self.wait_phase(op, token.phase, deadline) {
            Ok(())
        } else {
            Err(token)
        }
    }

    /// Waits until the current phase is no longer `phase`; false on timeout.
    #[track_caller]
    fn wait_phase(&self, op: &str, phase: u8, deadline: Option<Instant>) -> bool {
        self.wait_for(
            op,
            deadline,
            |s| s.phase() != phase,
            || format!("the phase of this token ({phase})"),
        )
    }

    #[track_caller]
    fn wait_parity_until(&self, op: &str, parity: bool, deadline: Option<Instant>) -> bool {
        self.wait_for(
            op,
            deadline,
            |s| s.parity() != parity,
            || format!("the phase of parity {parity}"),
        )
    }

    /// The common wait: until `completed(word)`, a poisoned barrier or a
    /// phase that can never complete (retired), or the deadline.
    #[track_caller]
    fn wait_for(
        &self,
        op: &str,
        deadline: Option<Instant>,
        completed: impl Fn(Snapshot) -> bool,
        what: impl FnOnce() -> String,
    ) -> bool {
        #[derive(Clone, Copy)]
        enum End {
            Completed,
            Poisoned(Snapshot),
            Retired(Snapshot),
        }
        let classify = |s: Snapshot| {
            if s.poison().is_some() {
                Some(End::Poisoned(s))
            } else if completed(s) {
                Some(End::Completed)
            } else if s.is_retired() {
                Some(End::Retired(s))
            } else {
                None
            }
        };
        // Acquire: pairs with the Release that ended the phase (state.rs, point 4).
        let s = self.state.load(Ordering::Acquire);
        if s.is_completing() {
            self.check_not_own_completion(&op);
        }
        let end = match classify(s) {
            Some(end) => Some(end),
            None => wait::wait_until(&self.state, self.park_key(), deadline, classify),
        };
        match end {
            None => false,
            Some(End::Completed) => true,
            Some(End::Poisoned(s)) => poisoned_panic(op, s),
            Some(End::Retired(s)) => panic!(
                "mbarrier: {op}: {} can never complete: every participant dropped out and the barrier is retired in phase {}",
                what(),
                s.phase()
            ),
        }
    }
}

impl<F> fmt::Debug for Barrier<F> {
    /// Decodes the word, e.g.
    /// `Barrier { phase_parity: false, pending: 3, expected: 4, tx: 0, poisoned: false }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a diagnostic snapshot; nothing is read through it.
        self.state.load(Ordering::Relaxed).fmt(f)
    }
}
