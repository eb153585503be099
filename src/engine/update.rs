//! The update path: recording an operation on the word, the one RMW of
//! the fast path, and the slow path's misuse, completion function and
//! completion window; the tokens it hands out. Among them the one decision
//! of a double arrival ([`Engine::again`]).

use super::{Arrival, Engine};
use crate::completion::{self, Completion};
use crate::op::{Misuse, Op};
use crate::state::{Recorded, Snapshot};
use crate::sync::Ordering;
use crate::token::ArrivalToken;
use crate::wait::wake;

impl<F: Completion> Engine<F> {
    /// The token of `arrival`'s phase.
    #[inline]
    pub(crate) fn token(&self, arrival: Arrival) -> ArrivalToken {
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
    pub(crate) fn update(&self, op: Op<'_>) -> Arrival {
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
    fn update_slow(
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
    pub(crate) fn wait_for_next_phase(&self, op: Op<'_>) -> Snapshot {
        crate::sync::model_event("op-waits-out-completion");
        completion::check_not_running(self.key(), &op);
        self.wait_until(|s| (!s.is_completing()).then_some(s))
    }

    /// Runs the completion function, then starts the next phase (or, if it
    /// unwinds or `poison()` was called meanwhile, poisons the barrier) and
    /// wakes the parked threads. Returns whether the next phase started.
    #[cold]
    fn run_completion(&self) -> bool {
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
