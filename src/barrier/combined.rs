//! Arrivals combined before they reach the word: the crate-internal entry
//! points of a handle that counts its participants' arrivals elsewhere and
//! brings them to the word in one step ([`Op::Arrival`]),
//! with the reads and the checks such a handle makes before it acts.

use super::{Arrival, Barrier, Target};
use crate::completion::{self, Completion};
use crate::op::{Misuse, Op, PhaseOf};
use crate::phase::Phase;
use crate::state::Snapshot;
use crate::token::{ArrivalToken, BarrierWaitResult};
use std::fmt;

impl<F: Completion> Barrier<F> {
    /// One combined arrival on the word (`Op::Arrival`),
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
        debug_assert!(matches!(op, Op::Arrival { .. }));
        match self.try_update(op) {
            Ok(arrival) => Ok((self.token(arrival), arrival.completed)),
            Err(Misuse::Poisoned(s) | Misuse::Retired(s)) if op.quiet() => {
                Ok((self.token_for(s.phase()), false))
            }
            Err(misuse) => Err(misuse),
        }
    }

    /// `arrive_and_wait` for a caller that names itself in the messages
    /// (`name`, the call the user made): one arrival as `Op::Arrival`, the
    /// same RMW as `arrive_and_wait`'s, and the same wait.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_and_wait_as(&self, name: &'static str) -> BarrierWaitResult {
        let op = Op::Arrival {
            arrivals: 1,
            drops: 0,
            tx: 0,
            phase: PhaseOf::Running,
            quiet: false,
            name: &name,
        };
        let arrival = self.update(op);
        if !arrival.completed {
            self.wait_for(name, Target::Arrival(arrival.phase), None);
        }
        BarrierWaitResult {
            is_leader: arrival.completed,
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
