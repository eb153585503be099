//! The operation vocabulary: every mutating operation with its arguments,
//! what it does to the word ([`Op::apply`], checked before anything is
//! mutated), and the misuse it can meet, with its panic message
//! (`syncthreads: <operation>: <what was wrong, with the numbers>`).

use crate::phase::Phase;
use crate::state::{self, Poison, Snapshot};
use crate::sync::thread_local;
use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

/// Prefix of every panic message caused by a poisoned barrier.
pub(crate) const POISONED: &str = "syncthreads: barrier poisoned";

/// Makes the payload of a quiet poisoned-barrier panic ([`PoisonedQuietly`]).
pub(crate) type QuietPayload = fn() -> Box<dyn Any + Send>;

thread_local! {
    /// While set, this thread's poisoned-barrier panics unwind with this
    /// payload instead of panicking ([`PoisonedQuietly`]).
    static QUIET: Cell<Option<QuietPayload>> = const { Cell::new(None) };
    /// The message (buffer address, length) of this thread's latest
    /// poisoned-barrier panic, for [`is_poisoned_panic`].
    static LAST_POISONED: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// Whether `payload`, caught on this thread, is a poisoned-barrier panic that
/// this crate raised on this thread: a consequence of another failure, never
/// a root cause. Decided by identity, not by the text: the payload is the
/// very `String` that [`poisoned_panic`] raised (the same heap buffer, which
/// boxing the payload does not move). A user's panic whose message merely
/// quotes a poisoned-barrier message is not one.
pub(crate) fn is_poisoned_panic(payload: &(dyn Any + Send)) -> bool {
    payload
        .downcast_ref::<String>()
        .is_some_and(|m| !m.is_empty() && LAST_POISONED.with(Cell::get) == (m.as_ptr(), m.len()))
}

/// While it lives, this thread's poisoned-barrier panics become a
/// `resume_unwind` of `payload()`, which skips the panic hook (nothing is
/// printed): for a caller that reports the root cause itself and tells these
/// consequences from it by the payload's type. Misuse panics stay ordinary
/// panics. A guard rather than a closure, so that `#[track_caller]` reaches
/// through it.
#[must_use]
pub(crate) struct PoisonedQuietly {
    previous: Option<QuietPayload>,
    /// The setting is this thread's: the guard must not leave it.
    _not_send: PhantomData<*const ()>,
}

impl PoisonedQuietly {
    pub(crate) fn new(payload: QuietPayload) -> PoisonedQuietly {
        PoisonedQuietly {
            previous: QUIET.with(|q| q.replace(Some(payload))),
            _not_send: PhantomData,
        }
    }
}

impl Drop for PoisonedQuietly {
    /// Restores the previous setting, also when unwinding.
    fn drop(&mut self) {
        QUIET.with(|q| q.set(self.previous));
    }
}

/// A mutating operation with its arguments, for the checks and the messages.
#[derive(Clone, Copy)]
pub(crate) enum Op<'a> {
    Arrive,
    ArriveN(usize),
    ArriveAndDrop,
    ArriveAndDropN(usize),
    ArriveTx(usize, u32),
    ExpectTx(u32),
    CompleteTx(u32),
    ArriveAndWait,
    ArriveAndWaitAsync,
    /// `add_participants(n)`: raises pending and expected by `n` ([`join`]
    /// through `State::join`, never [`Op::apply`] through `State::record`).
    AddParticipants(usize),
    /// `add_participants` as a handle that hands out its own places calls
    /// it (`name`, for the messages).
    Joining {
        name: &'a dyn fmt::Display,
    },
    /// The one arrival of a caller that counts its participants itself
    /// (a team's seats, a block's sync): `arrivals` participants arrive and
    /// `drops` of them leave, plus `tx`, in one step, in the phase `phase`
    /// says; `name` is the call the user made, for the messages. `quiet`:
    /// an operation that must not panic (a participant's drop) does
    /// nothing on a poisoned or retired word instead.
    Arrival {
        arrivals: u32,
        drops: u32,
        tx: u32,
        phase: PhaseOf,
        quiet: bool,
        name: &'a dyn fmt::Display,
    },
}

/// Which phase an [`Op::Arrival`] belongs to, as its caller knows it.
#[derive(Clone, Copy)]
pub(crate) enum PhaseOf {
    /// The running one, whichever it is.
    Running,
    /// Exactly this one: the phase after the last arrival of `who`, a
    /// participant that counts its own arrivals. A word still in the phase
    /// before (that arrival's, not completed) is a double arrival
    /// ([`Misuse::Again`]): refused on the word the RMW reads, so that its
    /// own read is the check, and confirmed on the latest word by the
    /// engine (`Engine::again`), the one place that decides it.
    Exactly(Phase, Arriver),
    /// Participants leaving (`arrivals == drops`), all of which last
    /// arrived in this phase (their arrivals are in, or on their way
    /// combined with others): while it still runs, drops without an
    /// arrival; once it completed, arrivals and drops in the next phase.
    /// Decided by the word the RMW reads, so a leave never waits for a
    /// phase to end.
    After(Phase),
}

/// How a message names the participant behind an arrival: its kind (a
/// "seat") and its number.
#[derive(Clone, Copy)]
pub(crate) struct Arriver {
    pub(crate) kind: &'static str,
    pub(crate) id: u32,
}

/// What an operation found wrong with the word; nothing was changed.
#[derive(Clone, Copy)]
pub(crate) enum Misuse {
    /// An arrival of zero participants.
    Zero,
    /// The barrier is poisoned (the snapshot says why).
    Poisoned(Snapshot),
    /// Every participant dropped out and the last phase completed (the word).
    Retired(Snapshot),
    /// More arrivals than the phase still owes.
    TooMany { pending: u32, expected: u32 },
    /// The transaction count would leave `-MAX_TX ..= MAX_TX`.
    TxRange { from: i32, to: i64 },
    /// A join would raise the expected count above `MAX`.
    TooManyParticipants { expected: u32, adding: usize },
    /// An arrival of [`PhaseOf::Exactly`] found the word (`.0`) still in the
    /// phase of `who`'s last arrival: a double arrival once the latest word
    /// confirms it.
    Again(Snapshot, Arriver),
}

impl<'a> Op<'a> {
    /// What the messages call an [`Op::Arrival`] (its `Display`): its
    /// `name`. A caller that may panic after the RMW keeps this, two words,
    /// rather than the op: an op kept for the panic stays in memory, copied
    /// field by field on the stack just before the word's load.
    #[inline(always)]
    pub(crate) fn arrival_name(self) -> &'a dyn fmt::Display {
        match self {
            Op::Arrival { name, .. } => name,
            _ => unreachable!("only an arrival has a name of its own"),
        }
    }
}

impl Op<'_> {
    /// (arrivals, dropped participants, change of tx) as they apply to the
    /// running word `s`.
    // Always inlined, with `apply`: a constant op folds (engine/update.rs, `try_update`).
    #[inline(always)]
    fn delta(self, s: Snapshot) -> (usize, usize, i64) {
        match self {
            Op::Arrive | Op::ArriveAndWait | Op::ArriveAndWaitAsync => (1, 0, 0),
            Op::ArriveN(n) => (n, 0, 0),
            Op::ArriveAndDrop => (1, 1, 0),
            Op::ArriveAndDropN(n) => (n, n, 0),
            Op::ArriveTx(n, tx) => (n, 0, i64::from(tx)),
            Op::ExpectTx(tx) => (0, 0, i64::from(tx)),
            Op::CompleteTx(tx) => (0, 0, -i64::from(tx)),
            // Not an arrival: applied by `join`.
            Op::AddParticipants(_) | Op::Joining { .. } => (0, 0, 0),
            // Participants leaving in the phase they already arrived in owe
            // no arrival there.
            Op::Arrival {
                phase: PhaseOf::After(arrived_in),
                drops,
                tx,
                ..
            } if s.phase() == arrived_in => (0, drops as usize, i64::from(tx)),
            Op::Arrival {
                arrivals,
                drops,
                tx,
                ..
            } => (arrivals as usize, drops as usize, i64::from(tx)),
        }
    }

    /// Whether `n must be at least 1` applies (the combined operations
    /// compute their counts themselves; an `arrive_tx`'s `expect_tx` has none).
    fn needs_arrival(self) -> bool {
        !matches!(
            self,
            Op::ExpectTx(_)
                | Op::CompleteTx(_)
                | Op::AddParticipants(_)
                | Op::Joining { .. }
                | Op::Arrival { .. }
        )
    }

    /// An operation that does nothing on a poisoned or retired word.
    pub(crate) fn quiet(self) -> bool {
        matches!(self, Op::Arrival { quiet: true, .. })
    }

    /// The running word `s` with this operation applied, or the misuse that
    /// forbids it. `s` must not be completing (the caller waits that out).
    // Always inlined, with `delta`: a constant op folds (engine/update.rs, `try_update`).
    #[inline(always)]
    pub(crate) fn apply(self, s: Snapshot) -> Result<Snapshot, Misuse> {
        debug_assert!(!s.is_completing());
        debug_assert!(!matches!(self, Op::AddParticipants(_) | Op::Joining { .. }));
        let (arrivals, drops, dtx) = self.delta(s);
        if arrivals == 0 && self.needs_arrival() {
            return Err(Misuse::Zero);
        }
        if s.poison().is_some() {
            return Err(Misuse::Poisoned(s));
        }
        if s.is_retired() {
            return Err(Misuse::Retired(s));
        }
        if let Op::Arrival {
            phase: PhaseOf::Exactly(phase, who),
            ..
        } = self
        {
            if s.phase() != phase {
                return Err(Misuse::Again(s, who));
            }
        }
        let pending = s.pending() as usize;
        if arrivals > pending {
            return Err(Misuse::TooMany {
                pending: s.pending(),
                expected: s.expected(),
            });
        }
        let tx = i64::from(s.tx()) + dtx;
        let max = i64::from(state::MAX_TX);
        if !(-max..=max).contains(&tx) {
            return Err(Misuse::TxRange {
                from: s.tx(),
                to: tx,
            });
        }
        // `drops <= arrivals <= pending <= expected`, so nothing underflows;
        // a leave in the phase its participants arrived in (`PhaseOf::After`:
        // 0 arrivals, `drops` drops) has `drops <= expected`: they are members
        // of that phase, not yet dropped. (Combined arrivals may bring their
        // arrivals after the leave: `pending` exceeds `expected` until they
        // do; state.rs, invariants.)
        Ok(s.with_counts(
            (pending - arrivals) as u32,
            s.expected() - drops as u32,
            tx as i32,
        ))
    }
}

/// The running word `s` with `n` participants added from its current phase
/// on (pending and expected both raised), or the misuse that forbids it: a
/// poisoned or retired word, or an expected count above `MAX`.
/// `pending <= expected`, so checking expected covers both.
pub(crate) fn join(s: Snapshot, n: usize) -> Result<Snapshot, Misuse> {
    if s.poison().is_some() {
        return Err(Misuse::Poisoned(s));
    }
    if s.is_retired() {
        return Err(Misuse::Retired(s));
    }
    if n > (state::MAX - s.expected()) as usize {
        return Err(Misuse::TooManyParticipants {
            expected: s.expected(),
            adding: n,
        });
    }
    let n = n as u32;
    Ok(s.with_counts(s.pending() + n, s.expected() + n, s.tx()))
}

/// Checks that `n` participants could join the word `s` now (`n == 0`
/// included, which changes nothing): the misuse of [`join`] if not.
pub(crate) fn check_join(s: Snapshot, n: usize) -> Result<(), Misuse> {
    join(s, n).map(drop)
}

impl Misuse {
    /// The panic for this misuse by `op`.
    #[cold]
    #[track_caller]
    pub(crate) fn panic(self, op: impl fmt::Display) -> ! {
        match self {
            Misuse::Zero => panic!("syncthreads: {op}: n must be at least 1"),
            Misuse::Poisoned(s) => poisoned_panic(op, s),
            Misuse::Retired(_) => panic!("syncthreads: {op}: the barrier is retired: every participant dropped out and its last phase completed"),
            Misuse::TooMany { pending, expected } => panic!(
                "syncthreads: {op} but only {pending} arrival{} pending in this phase (expected per phase: {expected})",
                if pending == 1 { " is" } else { "s are" },
            ),
            Misuse::TxRange { from, to } => {
                let max = state::MAX_TX;
                panic!("syncthreads: {op}: the transaction count would go from {from} to {to}, outside -{max} ..= {max}")
            }
            Misuse::TooManyParticipants { expected, adding } => {
                let max = state::MAX;
                let total = expected as u128 + adding as u128;
                panic!("syncthreads: {op}: {expected} participants per phase plus {adding} would be {total}, above Barrier::MAX ({max})")
            }
            Misuse::Again(s, Arriver { kind, id }) => panic!(
                "syncthreads: {op}: {kind} {id} already arrived in phase {} (mod 4), which has not completed: a {kind} arrives once per phase",
                s.phase()
            ),
        }
    }
}

impl fmt::Display for Op<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Op::Arrive => f.write_str("arrive()"),
            Op::ArriveN(n) => write!(f, "arrive_n({n})"),
            Op::ArriveAndDrop => f.write_str("arrive_and_drop()"),
            Op::ArriveAndDropN(n) => write!(f, "arrive_and_drop_n({n})"),
            Op::ArriveTx(n, tx) => write!(f, "arrive_tx({n}, {tx})"),
            Op::ExpectTx(tx) => write!(f, "expect_tx({tx})"),
            Op::CompleteTx(tx) => write!(f, "complete_tx({tx})"),
            Op::ArriveAndWait => f.write_str("arrive_and_wait()"),
            Op::ArriveAndWaitAsync => f.write_str("arrive_and_wait_async()"),
            Op::AddParticipants(n) => write!(f, "add_participants({n})"),
            Op::Joining { name } | Op::Arrival { name, .. } => name.fmt(f),
        }
    }
}

/// Whether `n` is a valid participant count, `1 ..= Barrier::MAX`.
pub(crate) const fn participants_in_range(n: usize) -> bool {
    n >= 1 && n <= state::MAX as usize
}

/// The participant count of a constructor, checked: `1 ..= Barrier::MAX`.
/// `call` names the constructor as the user wrote it, e.g. `with_completion(0, _)`,
/// and `what` the count, e.g. `the thread count`.
#[track_caller]
pub(crate) fn participants(call: fmt::Arguments<'_>, what: &str, n: usize) -> u32 {
    if !participants_in_range(n) {
        panic!(
            "syncthreads: {call}: {what} must be in 1 ..= {} (Barrier::MAX)",
            state::MAX
        );
    }
    n as u32
}

/// Panics for an operation on a poisoned barrier.
#[cold]
#[track_caller]
pub(crate) fn poisoned_panic(op: impl fmt::Display, s: Snapshot) -> ! {
    if let Some(payload) = QUIET.with(Cell::get) {
        std::panic::resume_unwind(payload());
    }
    let phase = s.phase();
    let message = match s.poison() {
        Some(Poison::Completion) => {
            format!("{POISONED}: completion panicked in phase {phase} (seen by {op})")
        }
        Some(Poison::Panic) => {
            format!("{POISONED}: a participant panicked in phase {phase} (seen by {op})")
        }
        Some(Poison::DropInCompletion) => format!(
            "{POISONED}: a participant was dropped inside the completion function of phase {phase}, where it cannot leave (seen by {op})"
        ),
        Some(Poison::Call) | None => format!("{POISONED} by poison() (seen by {op})"),
    };
    LAST_POISONED.with(|last| last.set((message.as_ptr(), message.len())));
    // A `String` payload, as `panic!` makes: the hook prints it as usual.
    std::panic::panic_any(message)
}

/// Panics for a wait on a group that its block's poisoning poisoned (a
/// tile), which has no word of its own to decode: quietly under
/// [`PoisonedQuietly`], like [`poisoned_panic`].
#[cold]
#[track_caller]
pub(crate) fn group_poisoned_panic(op: impl fmt::Display) -> ! {
    if let Some(payload) = QUIET.with(Cell::get) {
        std::panic::resume_unwind(payload());
    }
    let message = format!("{POISONED}: the block was poisoned (seen by {op})");
    LAST_POISONED.with(|last| last.set((message.as_ptr(), message.len())));
    std::panic::panic_any(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_panic_is_known_by_identity_not_by_its_text() {
        let s = Snapshot::initial(2).poisoned(Poison::Call);
        let payload = std::panic::catch_unwind(|| poisoned_panic("wait()", s)).unwrap_err();
        assert!(is_poisoned_panic(&*payload));
        let text = payload.downcast_ref::<String>().unwrap().clone();
        assert!(text.starts_with(POISONED), "{text}");
        assert!(
            !is_poisoned_panic(&text),
            "a copy of the text is not the panic"
        );
        let other = std::thread::spawn(move || is_poisoned_panic(&*payload))
            .join()
            .unwrap();
        assert!(!other, "only the raising thread knows its panic");
    }
}
