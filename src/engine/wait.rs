//! The engine's waits, a `Barrier`'s and a `Team`'s: on a token, by
//! parity, bounded in time, and the queries that never block. Every blocking wait goes through
//! [`Engine::wait_for`] and the policy of `src/wait.rs`.

use super::Engine;
use crate::completion::{self, Completion};
use crate::diagnostics::{Subject, Who};
use crate::op::poisoned_panic;
use crate::phase::Phase;
use crate::state::Snapshot;
use crate::sync::Ordering;
use crate::token::ArrivalToken;
use crate::wait::{self, Stages};
use std::fmt;
use std::time::{Duration, Instant};

/// What a wait waits for, with its description for the messages: the one
/// target of every blocking, timed and async wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The phase (mod 4) of a token: done once the word is in another phase.
    Token(Phase),
    /// The phase (mod 4) of an arrival just made, as `Token`.
    Arrival(Phase),
    /// The phase of this parity: done once the current parity differs.
    Parity(bool),
}

impl Target {
    /// Whether the word `s` is past the target phase.
    #[inline]
    pub(crate) fn reached(self, s: Snapshot) -> bool {
        match self {
            Target::Token(phase) | Target::Arrival(phase) => s.phase() != phase,
            Target::Parity(parity) => s.parity() != parity,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Target::Token(phase) => write!(f, "the phase of this token ({phase})"),
            Target::Arrival(phase) => write!(f, "the phase of this arrival ({phase})"),
            Target::Parity(parity) => write!(f, "the phase of parity {parity}"),
        }
    }
}

impl<F: Completion> Engine<F> {
    /// As `Barrier::wait`; `subject` is what the wait is on, as the stall
    /// reports name it (the waiter by the rank its token carries, if any).
    #[track_caller]
    pub(crate) fn wait(&self, token: ArrivalToken, subject: Subject) {
        self.check_token("wait", &token);
        let who = token.rank.who();
        let done = self.wait_for("wait", Target::Token(token.phase), None, subject, who);
        debug_assert!(done);
    }

    /// As `Barrier::try_wait`.
    #[track_caller]
    #[must_use]
    pub(crate) fn try_wait(&self, token: &ArrivalToken) -> bool {
        self.check_token("try_wait", token);
        // Acquire: the phase's start → a caller told `true`, word point 4 (orderings.md).
        Target::Token(token.phase).reached(self.state.load(Ordering::Acquire))
    }

    /// As `Barrier::wait_timeout`.
    #[track_caller]
    pub(crate) fn wait_timeout(
        &self,
        token: ArrivalToken,
        timeout: Duration,
        subject: Subject,
    ) -> Result<(), ArrivalToken> {
        self.check_token("wait_timeout", &token);
        let deadline = wait::deadline_after(timeout);
        self.wait_token_until("wait_timeout", token, deadline, subject)
    }

    /// As `Barrier::wait_deadline`.
    #[track_caller]
    pub(crate) fn wait_deadline(
        &self,
        token: ArrivalToken,
        deadline: Instant,
        subject: Subject,
    ) -> Result<(), ArrivalToken> {
        self.check_token("wait_deadline", &token);
        self.wait_token_until("wait_deadline", token, Some(deadline), subject)
    }

    /// As `Barrier::phase_parity`.
    #[must_use]
    pub(crate) fn phase_parity(&self) -> bool {
        // Acquire: the phase's start → a caller that acts on it, word point 4 (orderings.md).
        self.state.load(Ordering::Acquire).parity()
    }

    /// As `Barrier::try_wait_parity`.
    #[must_use]
    pub(crate) fn try_wait_parity(&self, parity: bool) -> bool {
        // Acquire: as in `try_wait`: on `true` it synchronizes with the RMW
        // that started the next phase (state.rs points 3 and 4).
        Target::Parity(parity).reached(self.state.load(Ordering::Acquire))
    }

    /// As `Barrier::wait_parity`.
    #[track_caller]
    pub(crate) fn wait_parity(&self, parity: bool, subject: Subject) {
        let done = self.wait_for("wait_parity", Target::Parity(parity), None, subject, None);
        debug_assert!(done);
    }

    /// As `Barrier::wait_parity_timeout`.
    #[track_caller]
    #[must_use = "false: the phase had not completed in time"]
    pub(crate) fn wait_parity_timeout(
        &self,
        parity: bool,
        timeout: Duration,
        subject: Subject,
    ) -> bool {
        let deadline = wait::deadline_after(timeout);
        let target = Target::Parity(parity);
        self.wait_for("wait_parity_timeout", target, deadline, subject, None)
    }

    #[track_caller]
    fn wait_token_until(
        &self,
        op: &str,
        token: ArrivalToken,
        deadline: Option<Instant>,
        subject: Subject,
    ) -> Result<(), ArrivalToken> {
        let who = token.rank.who();
        if self.wait_for(op, Target::Token(token.phase), deadline, subject, who) {
            Ok(())
        } else {
            Err(token)
        }
    }

    /// The common wait: until the word reaches `target`, a poisoned barrier
    /// or a phase that can never complete (retired; both panic, naming `op`
    /// and `target`), or the deadline (false). The stall reports name it a
    /// wait on `subject` by `who` (else by thread) at the caller's call site.
    #[track_caller]
    pub(crate) fn wait_for(
        &self,
        op: &str,
        target: Target,
        deadline: Option<Instant>,
        subject: Subject,
        who: Option<Who>,
    ) -> bool {
        let classify = |s| End::classify(s, target);
        let s = self.begin_wait(op);
        let end = match classify(s) {
            Some(end) => Some(end),
            None => {
                let waiter = Stages::new(s.expected(), deadline);
                let waiter = waiter.recorded(self.wait_info(s.phase(), subject, who));
                { waiter }.wait(&self.state, s, classify).ok()
            }
        };
        // A `match`, not a closure: `finish` panics at the caller's location.
        match end {
            None => false,
            Some(end) => end.finish(op, target),
        }
    }

    /// The opening of every wait, blocking or async: the word it starts
    /// from, after the check that this thread is not running this barrier's
    /// completion function (where waiting would deadlock).
    #[track_caller]
    #[inline]
    pub(super) fn begin_wait(&self, op: &str) -> Snapshot {
        // Acquire: the phase's start → a wait that returns at once, word point 4 (orderings.md).
        let s = self.state.load(Ordering::Acquire);
        if s.is_completing() {
            completion::check_not_running(self.key(), &op);
        }
        s
    }

    /// Waits (no deadline) until every participant has dropped out and the
    /// last phase completed (true), or the barrier is poisoned (false): a
    /// launch's end, seen on its block. `participants` as for
    /// [`Stages::new`]. Acquire: the droppers' arrivals (`Release`) → what
    /// each wrote before its drop (a launch's outcomes).
    pub(crate) fn wait_retired(&self, participants: u32) -> bool {
        let ended = |s: Snapshot| (s.is_retired() || s.poison().is_some()).then_some(s);
        // Acquire: as above (the wait's own loads are Acquire too).
        let first = self.state.load(Ordering::Acquire);
        let s = match ended(first) {
            Some(s) => s,
            None => {
                let mut waiter = Stages::new(participants, None);
                let s = waiter
                    .wait(&self.state, first, ended)
                    .unwrap_or_else(|_| unreachable!("a wait without a deadline"));
                if waiter.was_woken() {
                    crate::sync::model_event("launch-end-slept");
                }
                s
            }
        };
        s.poison().is_none()
    }

    /// Waits (no deadline) until `check` accepts the word, through the
    /// common policy; returns its answer. For decisions of when to act
    /// (arrive, record again): it publishes nothing to its caller.
    pub(crate) fn wait_until<T>(&self, check: impl Fn(Snapshot) -> Option<T>) -> T {
        // Relaxed: no caller reads data through it; each re-reads with Acquire or a CAS (orderings.md).
        let s = self.state.load(Ordering::Relaxed);
        match check(s) {
            Some(done) => done,
            None => wait::until(&self.state, s, s.expected(), check),
        }
    }
}

/// How a wait for a phase ends (besides a deadline).
#[derive(Clone, Copy)]
pub(super) enum End {
    Completed,
    Poisoned(Snapshot),
    Retired(Snapshot),
}

impl End {
    /// How the word `s` ends a wait for `target`, if it does. Pure: it
    /// also runs under the parking lot's lock.
    pub(super) fn classify(s: Snapshot, target: Target) -> Option<End> {
        if s.poison().is_some() {
            Some(End::Poisoned(s))
        } else if target.reached(s) {
            Some(End::Completed)
        } else if s.is_retired() {
            Some(End::Retired(s))
        } else {
            None
        }
    }

    /// `true` for a completed wait; panics for the others (`op` and
    /// `target` name the wait and its phase in the message).
    #[track_caller]
    pub(super) fn finish(self, op: &str, target: Target) -> bool {
        match self {
            End::Completed => true,
            End::Poisoned(s) => poisoned_panic(op, s),
            End::Retired(s) => panic!(
                "syncthreads: {op}: {target} can never complete: every participant dropped out and the barrier is retired in phase {}",
                s.phase()
            ),
        }
    }
}

impl<F> Engine<F> {
    /// A blocking wait of this thread for `phase` on `subject` by `who`,
    /// made at the caller's call site, for the stall reports (unless a
    /// higher layer described the wait on this word first).
    #[track_caller]
    #[inline]
    fn wait_info(
        &self,
        phase: Phase,
        subject: Subject,
        who: Option<Who>,
    ) -> crate::diagnostics::WaitInfo {
        crate::diagnostics::WaitInfo {
            key: self.key(),
            tag: 0,
            phase: phase.bits(),
            who,
            subject,
            location: std::panic::Location::caller(),
        }
    }

    /// This barrier, as a stall report describes it.
    pub(crate) fn subject(&self) -> Subject {
        Subject {
            ptr: self as *const Self as *const (),
            describe: describe::<F>,
            level: 0,
        }
    }
}

/// An engine for a stall report, as the `Barrier` it is: its kind and
/// `Debug`; it knows no ranks.
///
/// # Safety
///
/// `ptr` points to a live `Engine<F>`.
unsafe fn describe<F>(ptr: *const (), _: u64, _: u64) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let barrier = unsafe { &*(ptr as *const Engine<F>) };
    crate::diagnostics::Described {
        kind: "Barrier",
        debug: format!("{barrier:?}"),
        missing: None,
        mask: None,
        block_threads: None,
    }
}
