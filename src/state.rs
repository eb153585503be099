//! The barrier's whole synchronization state: one `AtomicU64`.
//!
//! # Layout
//!
//! ```text
//!  63     62 61  60          41 40          21 20           0
//! +------+------+--------------+--------------+--------------+
//! |PARKED| phase|   expected   |   pending    |      tx      |
//! +------+------+--------------+--------------+--------------+
//!   1 bit 2 bits    20 bits        20 bits     21 bits, signed
//! ```
//!
//! | field      | range                          | meaning |
//! |------------|--------------------------------|---------|
//! | `tx`       | `-MAX_TX ..= MAX_TX`           | outstanding transaction count of the current phase, two's complement |
//! | `pending`  | `0 ..= MAX`                    | arrivals still owed in the current phase |
//! | `expected` | `0 ..= MAX`                    | arrivals owed per phase from the next phase on |
//! | `phase`    | `0 ..= 3`                      | the current phase modulo 4 |
//! | `PARKED`   | flag                           | some thread may be parked, or some task registered, on this word's address |
//!
//! A 21-bit two's complement field holds `-2^20 ..= 2^20 - 1`, one value more
//! than `tx` ever takes. That spare value, [`TX_SPECIAL`], marks the two states
//! in which `pending` and `tx` mean nothing, and `pending` then holds a code:
//!
//! | `tx` field     | `pending` field | state |
//! |----------------|-----------------|-------|
//! | not special    | any             | running: arrivals and tx ops apply |
//! | `TX_SPECIAL`   | `COMPLETING`    | the phase's pending and tx reached 0; its completion function runs |
//! | `TX_SPECIAL`   | `COMPLETING \| cause` | the same, and the barrier was poisoned meanwhile: it is poisoned already (`is_poisoned`, waits panic), and the completer ends the window poisoned instead of starting a phase |
//! | `TX_SPECIAL`   | `POISONED \| cause` | poisoned: terminal |
//!
//! The cause is why the barrier was poisoned, for the messages (`Poison`):
//! `poison()` called, a participant that panicked (its handle dropped
//! while its thread unwinds), a participant's handle dropped inside the
//! completion function, where it cannot leave, or (terminal only) a
//! completion function that panicked. It lives in the code, which only the poisoning
//! RMW writes, so it costs the arrivals nothing: they test the same
//! `TX_SPECIAL` bits as before.
//!
//! Invariants: `pending <= expected` while running (an arrival lowers pending, a
//! drop lowers both, a new phase sets pending = expected), with one exception:
//! leavers whose drops fold into the running phase (`Op::LeaveAfter`) may
//! land just before the combined arrival that carries their arrivals
//! (`Op::Combined`); until it does, `pending` exceeds `expected` by at most
//! those drops. A running word never
//! has `pending == 0 && tx == 0` except when *retired* (`expected == 0` after
//! the last phase completed), because the operation that reaches that point
//! starts the next phase or the completing state in the same RMW. The phase in
//! a completing or poisoned word is the phase that completed (or failed to).
//!
//! # Transitions
//!
//! Every change of the word is one of these methods of [`State`], each one
//! RMW (retried from the value it found) that returns the word it replaced,
//! from which the caller decides what happened:
//!
//! | transition | from | to | ordering |
//! |---|---|---|---|
//! | [`State::record`] | running | running (counted), the next phase (completed, no completion function), or completing | `Release`; `AcqRel` when it starts the next phase; `Acquire` into completing |
//! | [`State::join`] | running | running, pending and expected raised by the same count | `Acquire` |
//! | [`State::finish_completion`] | completing | the next phase, or poisoned | `Release` |
//! | [`State::poison`] | running or completing | poisoned, or completing-then-poisoned | `Relaxed` |
//! | [`State::mark_parked`] | any | the same with `PARKED` | `Relaxed` |
//! | [`State::latest`] | any | the same (an RMW only to read the latest word) | `Relaxed` |
//!
//! # Memory ordering
//!
//! The word is only ever changed by read-modify-write operations (never a plain
//! store after construction), so every change continues the release sequence
//! of every earlier change. That gives the whole ordering story:
//!
//! 1. An arrival (or `expect_tx` / `complete_tx`) is a `Release` RMW: the
//!    thread's earlier writes travel with it.
//! 2. The operation that completes the phase is an `Acquire` RMW (`AcqRel`
//!    when it also starts the next phase, for 3). Reading the value the
//!    previous RMW wrote puts it at the end of the release sequence of every
//!    earlier arrival of the phase, so the completer sees all their writes
//!    before it runs the completion function.
//! 3. The completer starts the next phase with a `Release` RMW (in the same RMW
//!    as 2 when there is no completion function).
//! 4. Every wait and `try_wait*` reads the word with `Acquire`. Reading the new
//!    phase (or anything later in the modification order, which is all RMWs)
//!    synchronizes with 3, hence with the completion function and, through 2,
//!    with every arrival of the phase.
//! 5. Setting `PARKED`, poisoning and `is_poisoned` publish nothing: `Relaxed`. The
//!    park/unpark handshake itself is ordered by the parking lot's bucket lock
//!    (for tasks, the task table's; see [`crate::wait`]).
//! 6. A join (`add_participants`, and every join built on it) is an `Acquire` RMW that
//!    publishes nothing: it reads the word that started the current phase
//!    (3) or a later RMW of its release sequence, so the joiner sees what the
//!    previous phase published, as that phase's waiters do. It needs no
//!    `Release`: its effect is the count itself, which every later RMW reads,
//!    and the joiner's writes travel with its own arrivals (1). Being an RMW,
//!    it continues the release sequences of the arrivals before it (2 holds
//!    across it).

use crate::phase::Phase;
use crate::sync::{AtomicU64, Ordering};
use crate::wait::{self, Word};
use std::fmt;

/// Largest `pending` / `expected` count: `2^20 - 1`, as in the hardware object.
pub(crate) const MAX: u32 = (1 << 20) - 1;
/// Largest transaction count magnitude: `2^20 - 1`, as in the hardware object.
pub(crate) const MAX_TX: u32 = (1 << 20) - 1;

/// `tx`: bits 0..=20, a 21-bit two's complement integer in `-MAX_TX ..= MAX_TX`.
const TX_SHIFT: u32 = 0;
const TX_BITS: u32 = 21;
const TX_MASK: u64 = ((1 << TX_BITS) - 1) << TX_SHIFT;
/// The one 21-bit value `tx` never takes (`-2^20`): marks completing/poisoned.
const TX_SPECIAL: u64 = 1 << (TX_BITS - 1);

/// `pending`: bits 21..=40, `0 ..= MAX`; a state code when `tx == TX_SPECIAL`.
const PENDING_SHIFT: u32 = TX_SHIFT + TX_BITS;
const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// `expected`: bits 41..=60, `0 ..= MAX`.
const EXPECTED_SHIFT: u32 = PENDING_SHIFT + COUNT_BITS;

/// `phase`: bits 61..=62, the phase number modulo 4.
const PHASE_SHIFT: u32 = EXPECTED_SHIFT + COUNT_BITS;
const PHASE_BITS: u32 = Phase::BITS;
const PHASE_MASK: u64 = ((1 << PHASE_BITS) - 1) << PHASE_SHIFT;

/// `PARKED`: bit 63, set by a thread about to park, cleared (with a wake-up of
/// every parked thread) by whoever starts the next phase or poisons the barrier.
const PARKED: u64 = 1 << 63;

/// State codes held in the `pending` field while `tx == TX_SPECIAL`: a
/// cause (`CAUSE_*`, the low two bits) and whether the poisoning is
/// terminal (`POISONED`); `COMPLETING` alone is the completion window of a
/// barrier that is not poisoned.
const COMPLETING: u64 = 0; // completion function running, not poisoned
const POISONED: u64 = 4; // terminal; without it, a completion window poisoned meanwhile
const CAUSE_MASK: u64 = 3;
const CAUSE_COMPLETION: u64 = 0; // a completion function panicked (terminal only)
const CAUSE_CALL: u64 = 1; // poison() was called
const CAUSE_PANIC: u64 = 2; // a participant panicked
const CAUSE_DROP_IN_COMPLETION: u64 = 3; // a participant dropped inside the completion function

static_assertions::const_assert_eq!(PHASE_SHIFT + PHASE_BITS, 63);
static_assertions::const_assert!(MAX as u64 <= COUNT_MASK);
static_assertions::const_assert!((MAX_TX as u64) < TX_SPECIAL);
static_assertions::const_assert_eq!(
    TX_MASK | (COUNT_MASK << PENDING_SHIFT) | (COUNT_MASK << EXPECTED_SHIFT) | PHASE_MASK | PARKED,
    u64::MAX
);

/// Why a barrier is poisoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Poison {
    /// `poison()` was called.
    Call,
    /// The completion function of the (stored) phase panicked.
    Completion,
    /// A participant panicked: its handle was dropped while its thread
    /// unwound.
    Panic,
    /// A participant's handle was dropped inside the completion function,
    /// where it cannot leave.
    DropInCompletion,
}

impl Poison {
    fn cause(self) -> u64 {
        match self {
            Poison::Call => CAUSE_CALL,
            Poison::Completion => CAUSE_COMPLETION,
            Poison::Panic => CAUSE_PANIC,
            Poison::DropInCompletion => CAUSE_DROP_IN_COMPLETION,
        }
    }
}

/// A decoded copy of the word. Getters are only meaningful in the states the
/// module docs give them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot(u64);

impl Snapshot {
    /// Phase 0, `pending == expected`, `tx == 0`.
    pub(crate) const fn initial(expected: u32) -> Snapshot {
        Snapshot(((expected as u64) << PENDING_SHIFT) | ((expected as u64) << EXPECTED_SHIFT))
    }

    /// Running word from its fields (`PARKED` kept from `self`).
    pub(crate) fn with_counts(self, pending: u32, expected: u32, tx: i32) -> Snapshot {
        debug_assert!(pending <= MAX && expected <= MAX && tx.unsigned_abs() <= MAX_TX);
        let tx = (tx as u64) & TX_MASK;
        Snapshot(
            (self.0 & (PHASE_MASK | PARKED))
                | tx
                | ((pending as u64) << PENDING_SHIFT)
                | ((expected as u64) << EXPECTED_SHIFT),
        )
    }

    /// The word that starts the next phase: phase + 1, pending = expected,
    /// tx = 0, `PARKED` cleared (the caller wakes the parked threads).
    pub(crate) fn next_phase(self) -> Snapshot {
        let phase = self.phase().next().bits() << PHASE_SHIFT;
        let expected = self.expected() as u64;
        Snapshot(phase | (expected << PENDING_SHIFT) | (expected << EXPECTED_SHIFT))
    }

    fn special(self, code: u64) -> Snapshot {
        Snapshot(
            (self.0 & (PHASE_MASK | PARKED | (COUNT_MASK << EXPECTED_SHIFT)))
                | TX_SPECIAL
                | (code << PENDING_SHIFT),
        )
    }

    /// The completing word: same phase and expected, `PARKED` kept.
    pub(crate) fn completing(self) -> Snapshot {
        self.special(COMPLETING)
    }

    /// A completing word poisoned meanwhile, for `why` (never a
    /// completion's own panic): it ends poisoned instead of starting a phase.
    pub(crate) fn completing_poisoned(self, why: Poison) -> Snapshot {
        debug_assert!(why != Poison::Completion);
        self.special(why.cause())
    }

    /// The terminal poisoned word: same phase and expected, `PARKED` cleared.
    pub(crate) fn poisoned(self, why: Poison) -> Snapshot {
        Snapshot(self.special(POISONED | why.cause()).0 & !PARKED)
    }

    fn with_parked(self) -> Snapshot {
        Snapshot(self.0 | PARKED)
    }

    pub(crate) fn parked(self) -> bool {
        self.0 & PARKED != 0
    }

    /// The phase number modulo 4 (the phase bits the word keeps).
    pub(crate) fn phase(self) -> Phase {
        Phase::new(((self.0 & PHASE_MASK) >> PHASE_SHIFT) as u8)
    }

    /// Parity of the current phase: `false` for even.
    pub(crate) fn parity(self) -> bool {
        self.phase().parity()
    }

    pub(crate) fn expected(self) -> u32 {
        ((self.0 >> EXPECTED_SHIFT) & COUNT_MASK) as u32
    }

    fn is_special(self) -> bool {
        self.0 & TX_MASK == TX_SPECIAL
    }

    fn code(self) -> u64 {
        (self.0 >> PENDING_SHIFT) & COUNT_MASK
    }

    /// Arrivals still owed (0 while completing or poisoned).
    pub(crate) fn pending(self) -> u32 {
        if self.is_special() {
            0
        } else {
            self.code() as u32
        }
    }

    /// Outstanding transaction count (0 while completing or poisoned).
    pub(crate) fn tx(self) -> i32 {
        if self.is_special() {
            return 0;
        }
        // Sign-extend the 21-bit field.
        (((self.0 & TX_MASK) << (64 - TX_BITS)) as i64 >> (64 - TX_BITS)) as i32
    }

    /// The completion function of the current phase is running (the
    /// barrier may have been poisoned meanwhile).
    pub(crate) fn is_completing(self) -> bool {
        self.is_special() && self.code() & POISONED == 0
    }

    /// Poisoned while the completion function ran: why, for the completer,
    /// which ends the window poisoned.
    pub(crate) fn poison_requested(self) -> Option<Poison> {
        if self.is_completing() {
            self.poison()
        } else {
            None
        }
    }

    /// Why the barrier is poisoned, if it is: for good, or while its
    /// completion function still runs (a `poison()` takes effect at the
    /// call, not when that function returns).
    pub(crate) fn poison(self) -> Option<Poison> {
        if !self.is_special() || self.code() == COMPLETING {
            return None;
        }
        Some(match self.code() & CAUSE_MASK {
            CAUSE_CALL => Poison::Call,
            CAUSE_PANIC => Poison::Panic,
            CAUSE_DROP_IN_COMPLETION => Poison::DropInCompletion,
            _ => Poison::Completion,
        })
    }

    /// Every participant dropped and the last phase completed: the current
    /// phase can never complete.
    pub(crate) fn is_retired(self) -> bool {
        self.0 & !(PHASE_MASK | PARKED) == 0
    }

    /// The word as stored, for tests.
    #[cfg(test)]
    pub(crate) fn bits(self) -> u64 {
        self.0
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("phase_parity", &self.parity())
            .field("pending", &self.pending())
            .field("expected", &self.expected())
            .field("tx", &self.tx())
            .field("poisoned", &self.poison().is_some())
            .finish()
    }
}

/// What [`State::join`] did.
#[derive(Clone, Copy)]
pub(crate) enum Joined {
    /// Applied to the running word it replaced (held).
    Added(Snapshot),
    /// Nothing applied: a completion function is running. The caller waits
    /// for the next phase and joins that one.
    Busy,
}

/// What [`State::record`] did with an operation.
#[derive(Clone, Copy)]
pub(crate) enum Recorded {
    /// Applied; the phase goes on. Holds the word it replaced.
    Counted(Snapshot),
    /// Applied, completed the phase and started the next one in the same RMW
    /// (a barrier without a completion function). Holds the word it replaced.
    Completed(Snapshot),
    /// Applied and completed the phase; the word is now completing. The
    /// caller runs the completion function, then [`State::finish_completion`].
    Completing(Snapshot),
    /// Nothing applied: another phase's completion function is running.
    /// The caller waits for the next phase and records again.
    Busy,
}

/// The atomic word. Every transition is one RMW (retried from the value it
/// found), returns the word it replaced, and carries its ordering with the
/// reason beside it; nothing outside this module changes the word.
pub(crate) struct State(AtomicU64);

impl State {
    #[cfg(not(any(loom, shuttle)))]
    pub(crate) const fn new(initial: Snapshot) -> State {
        State(AtomicU64::new(initial.0))
    }

    #[cfg(any(loom, shuttle))]
    pub(crate) fn new(initial: Snapshot) -> State {
        State(AtomicU64::new(initial.0))
    }

    #[inline]
    pub(crate) fn load(&self, order: Ordering) -> Snapshot {
        Snapshot(self.0.load(order))
    }

    /// Records an arrival or tx operation, starting from `s` (a recent load):
    /// `apply` checks it against a running word and returns the word with it
    /// applied (or the misuse, which leaves the word as it was: `op.rs`);
    /// one RMW stores that, and also starts the next phase
    /// (`has_completion == false`) or the completing state when the
    /// operation completes the phase.
    #[inline]
    pub(crate) fn record<E>(
        &self,
        mut s: Snapshot,
        has_completion: bool,
        apply: impl Fn(Snapshot) -> Result<Snapshot, E>,
    ) -> Result<Recorded, E> {
        loop {
            if s.is_completing() {
                return Ok(Recorded::Busy);
            }
            let next = apply(s)?;
            let completes = next.pending() == 0 && next.tx() == 0;
            let result = if !completes {
                // Release: the phase's completer reads this RMW's value, or a
                // later RMW of its release sequence, with its Acquire (point
                // 2), and so synchronizes with it: our writes before the
                // arrival happen-before the completion function and, through
                // point 3, every waiter's return (point 1). With Relaxed they
                // could read our writes stale. No Acquire: an arrival that
                // does not complete reads nothing of the others; its wait
                // does (point 4).
                self.cas(s, next, Ordering::Release)
                    .map(|()| Recorded::Counted(s))
            } else if !has_completion {
                // AcqRel: Acquire, because the completer goes on past the
                // phase without another load (`arrive_and_wait` skips its
                // wait): this RMW reads the end of every earlier arrival's
                // release sequence and so synchronizes with each (point 2);
                // with Relaxed the completer could read their writes stale.
                // Release, so each waiter's Acquire load of the new phase
                // synchronizes with this RMW too (points 3 and 4); with
                // Relaxed the waiters would still get the other arrivals'
                // writes (this RMW continues their release sequences) but
                // not the completer's own.
                self.cas(s, next.next_phase(), Ordering::AcqRel)
                    .map(|()| Recorded::Completed(s))
            } else {
                // Acquire: the completion function sees every arrival's
                // writes (point 2). No Release: nobody learns anything from
                // the completing word; our own earlier writes are published
                // by `finish_completion`'s Release, and this RMW continues the
                // release sequences of the arrivals before it either way.
                // With Relaxed the completion function could read the
                // arrivals' writes stale.
                self.cas(s, next.completing(), Ordering::Acquire)
                    .map(|()| Recorded::Completing(s))
            };
            match result {
                Ok(recorded) => return Ok(recorded),
                Err(found) => s = found,
            }
        }
    }

    /// Adds participants to the current phase and every later one, starting
    /// from `s` (a recent load): `apply` checks the running word and returns
    /// it with pending and expected raised (or the misuse, which leaves the
    /// word as it was: `op.rs`); one RMW stores that. Raising pending never
    /// completes a phase. A completing word is left alone (`Busy`).
    pub(crate) fn join<E>(
        &self,
        mut s: Snapshot,
        apply: impl Fn(Snapshot) -> Result<Snapshot, E>,
    ) -> Result<Joined, E> {
        loop {
            if s.is_completing() {
                return Ok(Joined::Busy);
            }
            let next = apply(s)?;
            debug_assert!(next.pending() > s.pending() && next.expected() > s.expected());
            // Acquire: reads the Release RMW that started this phase (point
            // 3), or a later RMW in its release sequence, so the joiner
            // happens-after the previous phase's arrivals and completion
            // function (point 6). No Release: nothing the joiner did before
            // is owed to anyone; its arrivals carry its writes (point 1).
            // With Relaxed the joiner could go on to read the previous
            // phase's data stale, which that phase's waiters may not.
            match self.cas(s, next, Ordering::Acquire) {
                Ok(()) => return Ok(Joined::Added(s)),
                Err(found) => s = found,
            }
        }
    }

    /// Leaves the completing state: starts the next phase if the completion
    /// function `returned`, else poisons the barrier; a `poison()` that came
    /// while it ran wins (the first cause). Returns the word it replaced and
    /// the word it wrote.
    pub(crate) fn finish_completion(&self, returned: bool) -> (Snapshot, Snapshot) {
        // Relaxed: seeds the RMW, which carries the ordering; a stale word
        // only fails the CAS, which hands back the word found. Even a stale
        // load sees a completing word (coherence: our own RMW into that
        // state came first, and only we leave it).
        let mut s = self.load(Ordering::Relaxed);
        loop {
            debug_assert!(s.is_completing());
            let new = if let Some(why) = s.poison_requested() {
                s.poisoned(why)
            } else if !returned {
                s.poisoned(Poison::Completion)
            } else {
                s.next_phase()
            };
            // Release: each waiter's Acquire load of the new phase (point 4)
            // synchronizes with this RMW, so the completion function's writes
            // and, through our Acquire entry (point 2), every arrival's
            // happen-before its return (point 3); with Relaxed a waiter could
            // see the new phase and stale data. It also orders our use of the
            // completion function before the next completer's Acquire entry
            // (the `Sync` argument in barrier.rs).
            match self.cas(s, new, Ordering::Release) {
                Ok(()) => return (s, new),
                Err(found) => s = found,
            }
        }
    }

    /// `poison()` (or the poisoning for `why`): poisons a running word, or
    /// marks a completing one to end poisoned. Returns the word it
    /// replaced, or `None` if the barrier was already poisoned (or marked),
    /// which it leaves alone: the first cause stays.
    pub(crate) fn poison(&self, why: Poison) -> Option<Snapshot> {
        // Relaxed: seeds the RMW; a stale word only fails the CAS, which
        // hands back the word found.
        let mut s = self.load(Ordering::Relaxed);
        loop {
            if s.poison().is_some() {
                return None;
            }
            let new = if s.is_completing() {
                s.completing_poisoned(why)
            } else {
                s.poisoned(why)
            };
            // Relaxed: a poisoned word hands nothing over: the threads it
            // wakes or stops only panic, reading nothing the poisoner wrote
            // (point 5). Being an RMW it continues the release sequences of
            // the arrivals before it, so a completion under way still
            // synchronizes with them (point 2), and a poisoned completion
            // window ends with `finish_completion`'s Release all the same.
            match self.cas(s, new, Ordering::Relaxed) {
                Ok(()) => return Some(s),
                Err(found) => s = found,
            }
        }
    }

    /// Sets `PARKED` if the word is still `s` (the parking half of the
    /// handshake in `wait.rs`); the word found otherwise.
    pub(crate) fn mark_parked(&self, s: Snapshot) -> Result<(), Snapshot> {
        // Relaxed: PARKED publishes nothing; it only tells the waker to wake,
        // and the parking lot's lock orders that against our validate (point 5).
        // The parker reads no data on the strength of this CAS: it decides
        // again from an Acquire load, or from `validate` under the lock.
        // Being an RMW it continues every release sequence (point 2 holds
        // across it), so a waiter that reads the marked word with Acquire
        // still synchronizes with what came before.
        self.cas(s, s.with_parked(), Ordering::Relaxed)
    }

    /// The word as an RMW reads it: the latest value in its modification
    /// order, where a load may return an older one. Changes nothing.
    pub(crate) fn latest(&self) -> Snapshot {
        // Relaxed: a caller uses it only to tell a stale load from the
        // latest word before it panics (an RMW reads the latest value under
        // any ordering; the panic reads no data); one that goes on re-reads
        // the word with the ordering it needs.
        Snapshot(self.0.fetch_or(0, Ordering::Relaxed))
    }

    /// One compare-and-swap; on failure, the value found.
    #[inline]
    fn cas(&self, current: Snapshot, new: Snapshot, success: Ordering) -> Result<(), Snapshot> {
        // Failure is `Relaxed`: the value found only seeds the retry, whose
        // success ordering carries the argument, or a `Busy` answer, after
        // which the caller waits (its own orderings) and records again;
        // nothing is read on the strength of a failed CAS.
        self.0
            .compare_exchange_weak(current.0, new.0, success, Ordering::Relaxed)
            .map(drop)
            .map_err(Snapshot)
    }
}

/// The barrier's word.
impl Word for State {
    type Snapshot = Snapshot;

    #[inline]
    fn load(&self, order: Ordering) -> Snapshot {
        State::load(self, order)
    }

    fn parked(s: Snapshot) -> bool {
        s.parked()
    }

    fn mark_parked(&self, s: Snapshot) -> Result<(), Snapshot> {
        State::mark_parked(self, s)
    }

    /// An address inside the word (its address + 1).
    fn park_key(&self) -> usize {
        (self as *const State).addr() + 1
    }

    /// Pause longer the more arrivals are still owed
    /// ([`PAUSES_PER_PENDING`](wait::PAUSES_PER_PENDING) each beyond the first), to make room for
    /// the arrivals landing on this word; but not before any arrival of
    /// the phase has landed (`pending == expected`): then the arrivals are
    /// being combined before they reach the word, and the one combined
    /// arrival usually completes the phase, so pausing would only delay the
    /// waiter. (A waiter that arrived on the word itself always sees
    /// `pending < expected`.)
    fn spin_pauses(s: Snapshot) -> u32 {
        if s.pending() >= s.expected() {
            return 0;
        }
        s.pending()
            .saturating_sub(1)
            .saturating_mul(wait::PAUSES_PER_PENDING)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_their_limits() {
        for &(pending, expected, tx) in &[
            (0, 0, 0),
            (MAX, MAX, MAX_TX as i32),
            (0, MAX, -(MAX_TX as i32)),
            (1, 2, -1),
            (MAX, MAX, 0),
        ] {
            let s = Snapshot::initial(1).with_counts(pending, expected, tx);
            assert_eq!((s.pending(), s.expected(), s.tx()), (pending, expected, tx));
            assert!(!s.is_completing() && s.poison().is_none() && !s.parked());
        }
    }

    #[test]
    fn phase_wraps_after_four_phases_and_keeps_expected() {
        let mut s = Snapshot::initial(MAX).with_parked();
        for i in 1..=9u8 {
            s = s.next_phase();
            assert_eq!(s.phase(), Phase::new(i));
            assert_eq!(s.parity(), i % 2 == 1);
            assert_eq!((s.pending(), s.expected(), s.tx()), (MAX, MAX, 0));
            assert!(!s.parked(), "next_phase clears PARKED");
        }
    }

    #[test]
    fn most_negative_tx_does_not_look_special() {
        let s = Snapshot::initial(1).with_counts(0, 1, -(MAX_TX as i32));
        assert!(!s.is_completing() && s.poison().is_none());
        assert_eq!(s.tx(), -(MAX_TX as i32));
    }

    #[test]
    fn special_states_keep_phase_expected_and_parked() {
        let s = Snapshot::initial(5)
            .next_phase()
            .with_counts(0, 3, 0)
            .with_parked();
        let c = s.completing();
        assert!(c.is_completing() && c.poison_requested().is_none() && c.parked());
        assert_eq!(c.poison(), None);
        assert_eq!(
            (c.phase().index(), c.expected(), c.pending(), c.tx()),
            (1, 3, 0, 0)
        );
        for why in [Poison::Call, Poison::Panic, Poison::DropInCompletion] {
            let marked = c.completing_poisoned(why);
            assert!(marked.is_completing() && marked.parked());
            // Poisoned at once, for every query, while the window lasts.
            assert_eq!(
                (marked.poison_requested(), marked.poison()),
                (Some(why), Some(why))
            );
            let ended = marked.poisoned(why);
            assert!(!ended.is_completing() && ended.poison_requested().is_none());
            assert_eq!((ended.poison(), ended.phase()), (Some(why), c.phase()));
        }
        let p = c.poisoned(Poison::Completion);
        assert_eq!(p.poison(), Some(Poison::Completion));
        assert!(!p.is_completing() && !p.parked() && !p.is_retired());
        assert_eq!((p.phase().index(), p.expected()), (1, 3));
        assert_eq!(s.poisoned(Poison::Call).poison(), Some(Poison::Call));
    }

    #[test]
    fn retired_means_nothing_owed_and_not_special() {
        assert!(Snapshot::initial(1).with_counts(0, 0, 0).is_retired());
        assert!(Snapshot::initial(1)
            .with_counts(0, 0, 0)
            .with_parked()
            .is_retired());
        assert!(!Snapshot::initial(1).with_counts(0, 0, 5).is_retired());
        assert!(!Snapshot::initial(1)
            .with_counts(0, 0, 0)
            .completing()
            .is_retired());
        assert_eq!(
            Snapshot::initial(1)
                .with_counts(0, 0, 0)
                .next_phase()
                .bits()
                & !PHASE_MASK,
            0
        );
    }

    #[test]
    fn join_raises_pending_and_expected_or_waits_out_the_window() {
        let add = |n: u32| {
            move |s: Snapshot| -> Result<Snapshot, ()> {
                Ok(s.with_counts(s.pending() + n, s.expected() + n, s.tx()))
            }
        };
        let state = State::new(Snapshot::initial(3).with_counts(1, 3, -2));
        let prior = match state.join(state.load(Ordering::Relaxed), add(MAX - 3)) {
            Ok(Joined::Added(prior)) => prior,
            _ => panic!("a running word takes the join"),
        };
        assert_eq!((prior.pending(), prior.expected()), (1, 3));
        let s = state.load(Ordering::Relaxed);
        assert_eq!(
            (s.phase(), s.pending(), s.expected(), s.tx()),
            (Phase::ZERO, MAX - 2, MAX, -2)
        );
        let completing = State::new(Snapshot::initial(2).completing());
        let before = completing.load(Ordering::Relaxed);
        assert!(matches!(completing.join(before, add(1)), Ok(Joined::Busy)));
        assert!(
            completing.load(Ordering::Relaxed) == before,
            "a busy join changes nothing"
        );
    }

    #[test]
    fn debug_decodes_the_word() {
        let s = Snapshot::initial(4).with_counts(3, 4, -7);
        assert_eq!(
            format!("{s:?}"),
            "Barrier { phase_parity: false, pending: 3, expected: 4, tx: -7, poisoned: false }"
        );
    }
}
