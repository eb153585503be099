//! Recording an operation on the word: the one RMW of the fast path, and
//! the slow path's misuse, completion function and completion window; the
//! tokens it hands out. And the entry points of the one arrival operation
//! (`Op::Arrival`) of a caller that counts its participants itself and
//! brings their arrivals to the word in one step, with the reads and the
//! checks such a caller makes before it acts; among them the one decision
//! of a double arrival (`Engine::again`).

use super::{Arrival, Engine, Target};
use crate::completion::{self, Completion};
use crate::op::{poisoned_panic, Misuse, Op, PhaseOf};
use crate::phase::Phase;
use crate::state::{Recorded, Snapshot};
use crate::sync::Ordering;
use crate::token::{ArrivalToken, BarrierWaitResult};
use crate::wait::wake;
use std::fmt;

impl<F: Completion> Engine<F> {
    #[inline]
    pub(super) fn token(&self, arrival: Arrival) -> ArrivalToken {
        ArrivalToken {
            phase: arrival.phase,
            rank: crate::diagnostics::TokenRank::NONE,
            #[cfg(debug_assertions)]
            barrier: self.key(),
        }
    }

    #[track_caller]
    #[inline]
    pub(super) fn check_token(&self, op: &str, token: &ArrivalToken) {
        #[cfg(debug_assertions)]
        assert!(
            token.barrier == self.key(),
            "syncthreads: {op}: the token comes from the barrier at {:#x}, not from this one at {:#x}",
            token.barrier,
            self.key()
        );
        let _ = (op, token);
    }

    /// Records one arrival or tx operation, checked against the word; a
    /// misuse panics (and changes nothing).
    #[track_caller]
    #[inline]
    pub(super) fn update(&self, op: Op<'_>) -> Arrival {
        match self.try_update(op) {
            Ok(arrival) => arrival,
            Err(misuse) => misuse.panic(op),
        }
    }

    /// [`update`](Self::update), handing a misuse back instead. The fast
    /// path is the one RMW that counts the operation (and, with no
    /// completion function, may start the next phase).
    ///
    /// Always inlined, as are the fast path's callees (`State::record`, the
    /// closure it gets, `Op::apply`) and
    /// [`try_arrive_combined`](Self::try_arrive_combined): each caller's
    /// `op` is then a constant, and its checks fold into a few compares
    /// between the word's load and its CAS, a window in which another
    /// arrival's CAS makes this one fail and retry. Left to the inliner, the
    /// closure stayed out of line, a call that matched the op at run time
    /// inside that window on every arrival (benches/RESULTS.md, "The
    /// arrival inlined").
    #[track_caller]
    #[inline(always)]
    pub(super) fn try_update(&self, op: Op<'_>) -> Result<Arrival, Misuse> {
        // Relaxed: seeds the RMW, which carries the ordering; a stale word fails the CAS (orderings.md).
        let s = self.state.load(Ordering::Relaxed);
        match self.state.record(
            s,
            !F::IS_NONE,
            #[inline(always)]
            |s| op.apply(s),
        ) {
            Ok(Recorded::Counted(prior)) => Ok(Arrival {
                phase: prior.phase(),
                completed: false,
            }),
            Ok(Recorded::Completed(prior)) => {
                wake(&self.state, prior);
                Ok(Arrival {
                    phase: prior.phase(),
                    completed: true,
                })
            }
            recorded => self.update_slow(op, recorded),
        }
    }

    /// The rest of [`try_update`](Self::try_update): a misuse, a completion
    /// function to run, or a completion window to wait out before recording
    /// again.
    #[cold]
    #[track_caller]
    pub(super) fn update_slow(
        &self,
        op: Op<'_>,
        mut recorded: Result<Recorded, Misuse>,
    ) -> Result<Arrival, Misuse> {
        loop {
            let recorded_now = match recorded {
                Err(misuse @ Misuse::Again(..)) => {
                    // Refused on the word the RMW read, which may be stale.
                    let latest = self.again(misuse)?;
                    crate::sync::model_event("arrival-refused-stale");
                    recorded = self.state.record(latest, !F::IS_NONE, |s| op.apply(s));
                    continue;
                }
                recorded => recorded?,
            };
            let (prior, completed) = match recorded_now {
                Recorded::Counted(prior) => (prior, false),
                Recorded::Completed(prior) => {
                    wake(&self.state, prior);
                    (prior, true)
                }
                // A `poison()` during the completion function ends the
                // phase poisoned instead: then it did not complete.
                Recorded::Completing(prior) => (prior, self.run_completion()),
                Recorded::Busy => {
                    let s = self.wait_for_next_phase(op);
                    recorded = self.state.record(s, !F::IS_NONE, |s| op.apply(s));
                    continue;
                }
            };
            return Ok(Arrival {
                phase: prior.phase(),
                completed,
            });
        }
    }

    /// Decides a double arrival, for every arrival that knows its phase
    /// (`PhaseOf::Exactly`): `misuse` is [`Misuse::Again`] on the word a
    /// read found, which may be stale (a load, or an RMW's seed, may return
    /// the caller's own last arrival after another thread completed that
    /// phase). Only the latest word (an RMW's read) decides: still in that
    /// phase, running and not poisoned, the arrival is a double one (the
    /// misuse); otherwise the latest word, to go on from.
    #[cold]
    pub(super) fn again(&self, misuse: Misuse) -> Result<Snapshot, Misuse> {
        let Misuse::Again(s, _) = misuse else {
            return Err(misuse);
        };
        let latest = self.state.latest();
        if latest.phase() == s.phase() && !latest.is_completing() && latest.poison().is_none() {
            Err(misuse)
        } else {
            Ok(latest)
        }
    }

    /// An operation that found the completion function running waits for
    /// the next phase to start, and belongs to it; returns the word the wait
    /// ended on (where the operation is recorded again).
    #[cold]
    #[track_caller]
    pub(super) fn wait_for_next_phase(&self, op: Op<'_>) -> Snapshot {
        crate::sync::model_event("op-waits-out-completion");
        completion::check_not_running(self.key(), &op);
        self.wait_until(|s| (!s.is_completing()).then_some(s))
    }

    /// Runs the completion function, then starts the next phase (or, if it
    /// unwinds or `poison()` was called meanwhile, poisons the barrier) and
    /// wakes the parked threads. Returns whether the next phase started.
    #[cold]
    pub(super) fn run_completion(&self) -> bool {
        let completion = || {
            self.completion.with_mut(|f| {
                // SAFETY: this thread moved the word into the completing
                // state, which only the `finish` below (on this thread)
                // leaves; no other thread touches the completion function
                // until then, and the previous completer's accesses
                // happen-before ours (see `impl Sync`).
                unsafe { (*f).run() }
            })
        };
        let finish = |returned| {
            let (prior, new) = self.state.finish_completion(returned);
            wake(&self.state, prior);
            new.poison().is_none()
        };
        completion::run(self.key(), completion, finish)
    }
}

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
            self.wait_for(name, Target::Arrival(arrival.phase), None);
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
