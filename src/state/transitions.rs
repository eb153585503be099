//! The transitions of the word: [`State`], the atomic itself, whose every
//! change is one RMW that returns the word it replaced (the layout and what
//! each field means: `state.rs`; the orderings' points: "The word" in
//! docs/design/orderings.md).
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

use super::{Poison, Snapshot};
use crate::sync::{AtomicU64, Ordering};
use crate::wait::{self, Word};

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
    crate::sync::const_unless_model! {
        pub(crate) fn new(initial: Snapshot) -> State {
            State(AtomicU64::new(initial.0))
        }
    }

    /// Stores `initial`: a launch's block re-armed between launches, when
    /// no thread arrives or waits on it (`Team::rearm`). Relaxed: what
    /// publishes it to the next launch's threads is that launch's hand-off.
    pub(crate) fn rearm(&self, initial: Snapshot) {
        self.0.store(initial.0, Ordering::Relaxed);
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
    // Always inlined: the caller's `apply` folds into its constant op (engine/update.rs, `try_update`).
    #[inline(always)]
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
                // Release: this arrival's writes → the phase's completer, points 1-2 (orderings.md).
                self.cas(s, next, Ordering::Release)
                    .map(|()| Recorded::Counted(s))
            } else if !has_completion {
                // AcqRel: every arrival → this completer; it → each waiter, points 2-4 (orderings.md).
                self.cas(s, next.next_phase(), Ordering::AcqRel)
                    .map(|()| Recorded::Completed(s))
            } else {
                // Acquire: every arrival → the completion function, point 2 (orderings.md).
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
            // Acquire: the phase's start → the joiner, point 6 (orderings.md).
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
        // Relaxed: seeds the RMW; a stale word only fails the CAS (orderings.md).
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
            // Release: the completion function and every arrival → each waiter, point 3 (orderings.md).
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
            // Relaxed: a poisoned word hands nothing over, point 5 (orderings.md).
            match self.cas(s, new, Ordering::Relaxed) {
                Ok(()) => return Some(s),
                Err(found) => s = found,
            }
        }
    }

    /// Sets `PARKED` if the word is still `s` (the parking half of the
    /// handshake in `wait.rs`); the word found otherwise.
    pub(crate) fn mark_parked(&self, s: Snapshot) -> Result<(), Snapshot> {
        // Relaxed: `PARKED` publishes nothing; the parking lot's lock orders the wake, point 5 (orderings.md).
        self.cas(s, s.with_parked(), Ordering::Relaxed)
    }

    /// The word as an RMW reads it: the latest value in its modification
    /// order, where a load may return an older one. Changes nothing.
    pub(crate) fn latest(&self) -> Snapshot {
        // Relaxed: an RMW reads the latest value under any ordering (orderings.md).
        Snapshot(self.0.fetch_or(0, Ordering::Relaxed))
    }

    /// One compare-and-swap; on failure, the value found.
    #[inline]
    fn cas(&self, current: Snapshot, new: Snapshot, success: Ordering) -> Result<(), Snapshot> {
        // Failure Relaxed: the value found only seeds the retry (orderings.md).
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
