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
//! leavers whose drops fold into the running phase (`Op::Arrival`, `PhaseOf::After`) may
//! land just before the combined arrival that carries their arrivals
//! (`Op::Arrival`); until it does, `pending` exceeds `expected` by at most
//! those drops. A running word never
//! has `pending == 0 && tx == 0` except when *retired* (`expected == 0` after
//! the last phase completed), because the operation that reaches that point
//! starts the next phase or the completing state in the same RMW. The phase in
//! a completing or poisoned word is the phase that completed (or failed to).
//!
//! # Transitions
//!
//! Every change of the word is one RMW of [`State`] (`state/transitions.rs`,
//! which tabulates them) that returns the word it replaced.
//!
//! # Memory ordering
//!
//! Every change of the word is an RMW, so each continues the release
//! sequence of every earlier change: arrivals `Release`, the completing
//! RMW `Acquire` too, the next phase `Release`, waits `Acquire`, parking
//! and poisoning `Relaxed`, a join `Acquire`. The six points, argued, are
//! in [docs/design/orderings.md](../docs/design/orderings.md), "The word";
//! each site names its point.

use crate::phase::Phase;
use std::fmt;

mod transitions;

pub(crate) use transitions::{Joined, Recorded, State};

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

crate::assert::const_assert_eq!(PHASE_SHIFT + PHASE_BITS, 63);
crate::assert::const_assert!(MAX as u64 <= COUNT_MASK);
crate::assert::const_assert!((MAX_TX as u64) < TX_SPECIAL);
crate::assert::const_assert_eq!(
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

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::sync::Ordering;

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
