//! The crate-internal entry points of a [`Team`](crate::Team)'s seats
//! (team.rs): the combined arrival of the tree's root on the word, tokens
//! for arrivals that stayed in the tree, and the reads and waits a seat makes.

use super::{Arrival, Barrier};
use crate::completion::{self, Completion};
use crate::op::{Misuse, Op};
use crate::state::Snapshot;
use crate::sync::Ordering;
use crate::token::ArrivalToken;
use crate::wait::Waiter;
use std::fmt;

impl<F: Completion> Barrier<F> {
    /// The root of a `Team`'s tree (team.rs): one combined arrival of its
    /// seats on the word (`Op::Seat` / `Op::SeatLeave`), through the same
    /// checks, completion and wake-up as every other arrival; a quiet op
    /// (a seat's drop) does nothing on a poisoned or retired word. Returns
    /// the token of the phase it belongs to and whether it completed it.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_combined(&self, op: Op) -> (ArrivalToken, bool) {
        match self.try_arrive_combined(op) {
            Ok(arrived) => arrived,
            Err(misuse) => misuse.panic(op),
        }
    }

    /// [`arrive_combined`](Self::arrive_combined), handing a misuse back.
    #[track_caller]
    #[inline]
    pub(crate) fn try_arrive_combined(&self, op: Op) -> Result<(ArrivalToken, bool), Misuse> {
        debug_assert!(matches!(op, Op::Seat { .. } | Op::SeatLeave { .. }));
        match self.try_update(op) {
            Ok(arrival) => Ok((self.token(arrival), arrival.completed)),
            Err(Misuse::Poisoned(s) | Misuse::Retired(s)) if op.quiet() => {
                Ok((self.token_for(s.phase()), false))
            }
            Err(misuse) => Err(misuse),
        }
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

    /// One load of the word, for a `Team`'s seats (team.rs).
    #[inline]
    pub(crate) fn snapshot(&self, order: Ordering) -> Snapshot {
        self.state.load(order)
    }

    /// The latest word (an RMW read: `State::latest`).
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

    /// Waits (no deadline) until `check` accepts the word, through the
    /// common policy; returns its answer. For a seat's decisions only (when
    /// to arrive): it publishes nothing to its caller.
    pub(crate) fn wait_until<T>(&self, check: impl Fn(Snapshot) -> Option<T>) -> T {
        // Relaxed: the seats only decide here when to arrive (the
        // completion window of `Seat::enter`), and `enter` re-reads the word
        // with Acquire before it acts; the Acquire -> Relaxed mutant survived
        // every model (mutants.sh).
        let s = self.state.load(Ordering::Relaxed);
        if let Some(done) = check(s) {
            return done;
        }
        match Waiter::new(s.expected(), None).wait(&self.state, s, check) {
            Ok(done) => done,
            Err(_) => unreachable!("a wait without a deadline ends only when satisfied"),
        }
    }
}
