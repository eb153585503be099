//! The front's entry points: the engine as a combining front (a `Team`'s
//! tree, or its flat seats) uses it. One arrival operation (`Op::Arrival`)
//! of a caller that counts its participants itself and brings their
//! arrivals to the word in one step, and the reads and checks such a
//! caller makes before it acts.

use super::{Arrival, Engine, Target};
use crate::completion::{self, Completion};
use crate::op::{poisoned_panic, Misuse, Op, PhaseOf};
use crate::phase::Phase;
use crate::sync::Ordering;
use crate::token::{ArrivalToken, BarrierWaitResult};
use std::fmt;

impl<F: Completion> Engine<F> {
    /// One combined arrival on the word (`Op::Arrival`),
    /// through the same checks, completion and wake-up as every other
    /// arrival; a quiet op does nothing on a poisoned or retired word.
    /// Returns the token of the phase it belongs to and whether it
    /// completed it.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_combined(&self, op: Op<'_>) -> (ArrivalToken, bool) {
        // The name, not the op, for the panic (`Op::arrival_name`).
        let name = op.arrival_name();
        match self.try_arrive_combined(op) {
            Ok(arrived) => arrived,
            Err(misuse) => misuse.panic(name),
        }
    }

    /// [`arrive_combined`](Self::arrive_combined), handing a misuse back.
    /// Always inlined, for the reason [`try_update`](Self::try_update) gives.
    #[track_caller]
    #[inline(always)]
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
        // The name, not the op, for the panic (`Op::arrival_name`).
        let arrival = match self.try_update(op) {
            Ok(arrival) => arrival,
            Err(misuse) => misuse.panic(name),
        };
        if !arrival.completed {
            let target = Target::Arrival(arrival.phase);
            self.wait_for(name, target, None, self.subject(), None);
        }
        BarrierWaitResult {
            is_leader: arrival.completed,
        }
    }

    /// Checks the word before an arrival of `op` (of `PhaseOf::Exactly`)
    /// that is counted elsewhere first (a combining front's node) and
    /// reaches the word later, combined with others: waits until the word
    /// is in the op's phase, out of the completion window of the phase
    /// before. Panics, changing nothing, on a double arrival (decided by
    /// [`again`](Self::again)), a poisoned word, or inside this barrier's
    /// own completion function.
    #[track_caller]
    #[inline]
    pub(crate) fn enter(&self, op: Op<'_>) {
        let Op::Arrival {
            phase: PhaseOf::Exactly(phase, who),
            ..
        } = op
        else {
            unreachable!("an entry check is for an arrival that knows its phase")
        };
        let last = phase.prev();
        // Acquire: the phase's start → the caller's node RMW, point 3 (orderings.md).
        let mut s = self.word(Ordering::Acquire);
        loop {
            if s.poison().is_some() {
                poisoned_panic(op, s);
            }
            if s.phase() != last {
                debug_assert_eq!(s.phase(), phase);
                return;
            }
            if s.is_completing() {
                self.wait_out_window(op, last);
            } else if let Err(misuse) = self.again(Misuse::Again(s, who)) {
                misuse.panic(op);
            } else {
                crate::sync::model_event("arrival-read-stale");
            }
            // Acquire: as above: the next turn may let the arrival go on,
            // so it must synchronize with the RMW that started the phase it shows.
            s = self.word(Ordering::Acquire);
        }
    }

    /// The completion window of phase `last`, met by [`enter`](Self::enter):
    /// waits for the next phase (or a poisoning).
    #[cold]
    #[track_caller]
    fn wait_out_window(&self, op: Op<'_>, last: Phase) {
        crate::sync::model_event("arrival-waits-out-completion");
        completion::check_not_running(self.key(), &op);
        self.wait_until(|s| (s.phase() != last || s.poison().is_some()).then_some(()));
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
