//! Arrivals combined before they reach the word: the crate-internal entry
//! points of a handle that counts its participants' arrivals elsewhere and
//! brings them to the word in one step ([`Op::Combined`], [`Op::LeaveAfter`]),
//! with the reads and the checks such a handle makes before it acts.

use super::{Arrival, Barrier};
use crate::completion::{self, Completion};
use crate::op::{Misuse, Op};
use crate::phase::Phase;
use crate::state::Snapshot;
use crate::sync::Ordering;
use crate::token::ArrivalToken;
use std::fmt;

impl<F: Completion> Barrier<F> {
    /// One combined arrival on the word (`Op::Combined` / `Op::LeaveAfter`),
    /// through the same checks, completion and wake-up as every other
    /// arrival; a quiet op does nothing on a poisoned or retired word.
    /// Returns the token of the phase it belongs to and whether it
    /// completed it.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_combined(&self, op: Op<'_>) -> (ArrivalToken, bool) {
        match self.try_arrive_combined(op) {
            Ok(arrived) => arrived,
            Err(misuse) => misuse.panic(op),
        }
    }

    /// [`arrive_combined`](Self::arrive_combined), handing a misuse back.
    #[track_caller]
    #[inline]
    pub(crate) fn try_arrive_combined(&self, op: Op<'_>) -> Result<(ArrivalToken, bool), Misuse> {
        debug_assert!(matches!(
            op,
            Op::Combined { .. } | Op::SeatArrival { .. } | Op::LeaveAfter { .. }
        ));
        match self.try_update(op) {
            Ok(arrival) => Ok((self.token(arrival), arrival.completed)),
            Err(Misuse::Poisoned(s) | Misuse::Retired(s)) if op.quiet() => {
                Ok((self.token_for(s.phase()), false))
            }
            Err(misuse) => Err(misuse),
        }
    }

    /// A token for `phase` without an arrival on the word: for an arrival
    /// that was counted elsewhere and reaches the word combined with others.
    #[inline]
    pub(crate) fn token_for(&self, phase: Phase) -> ArrivalToken {
        self.token(Arrival {
            phase,
            completed: false,
        })
    }

    /// One load of the word.
    #[inline]
    pub(crate) fn snapshot(&self, order: Ordering) -> Snapshot {
        self.state.load(order)
    }

    /// The latest word: an RMW read (`State::latest`), which no older value
    /// can answer, for a decision that a stale load must not make.
    pub(crate) fn latest(&self) -> Snapshot {
        self.state.latest()
    }

    /// Whether this thread is running this barrier's completion function.
    pub(crate) fn in_own_completion(&self) -> bool {
        completion::running(self.key())
    }

    /// Panics if this thread runs this barrier's completion function, where
    /// `op` would deadlock.
    #[track_caller]
    pub(crate) fn check_not_in_completion(&self, op: &dyn fmt::Display) {
        completion::check_not_running(self.key(), op);
    }
}
