//! The operation vocabulary: every mutating operation with its arguments,
//! what it does to the word ([`Op::apply`], checked before anything is
//! mutated), and the misuse it can meet, with its panic message
//! (`mbarrier: <operation>: <what was wrong, with the numbers>`).

use crate::state::{self, Poison, Snapshot};
use std::fmt;

/// Prefix of every panic message caused by a poisoned barrier; `launch` uses
/// it to tell a root-cause panic from its consequences.
pub(crate) const POISONED: &str = "mbarrier: barrier poisoned";

/// A mutating operation with its arguments, for the checks and the messages.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    Arrive,
    ArriveN(usize),
    ArriveAndDrop,
    ArriveAndDropN(usize),
    ArriveTx(usize, u32),
    ExpectTx(u32),
    CompleteTx(u32),
    ArriveAndWait,
    ArriveAndWaitAsync,
}

/// What an operation found wrong with the word; nothing was changed.
#[derive(Clone, Copy)]
pub(crate) enum Misuse {
    /// An arrival of zero participants.
    Zero,
    /// The barrier is poisoned (the snapshot says why).
    Poisoned(Snapshot),
    /// Every participant dropped out and the last phase completed.
    Retired,
    /// More arrivals than the phase still owes.
    TooMany { pending: u32, expected: u32 },
    /// The transaction count would leave `-MAX_TX ..= MAX_TX`.
    TxRange { from: i32, to: i64 },
}

impl Op {
    /// (arrivals, dropped participants, change of tx).
    fn delta(self) -> (usize, usize, i64) {
        match self {
            Op::Arrive | Op::ArriveAndWait | Op::ArriveAndWaitAsync => (1, 0, 0),
            Op::ArriveN(n) => (n, 0, 0),
            Op::ArriveAndDrop => (1, 1, 0),
            Op::ArriveAndDropN(n) => (n, n, 0),
            Op::ArriveTx(n, tx) => (n, 0, i64::from(tx)),
            Op::ExpectTx(tx) => (0, 0, i64::from(tx)),
            Op::CompleteTx(tx) => (0, 0, -i64::from(tx)),
        }
    }

    fn is_tx_only(self) -> bool {
        matches!(self, Op::ExpectTx(_) | Op::CompleteTx(_))
    }

    /// The running word `s` with this operation applied, or the misuse that
    /// forbids it. `s` must not be completing (the caller waits that out).
    #[inline]
    pub(crate) fn apply(self, s: Snapshot) -> Result<Snapshot, Misuse> {
        debug_assert!(!s.is_completing());
        let (arrivals, drops, dtx) = self.delta();
        if arrivals == 0 && !self.is_tx_only() {
            return Err(Misuse::Zero);
        }
        if s.poison().is_some() {
            return Err(Misuse::Poisoned(s));
        }
        if s.is_retired() {
            return Err(Misuse::Retired);
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
        // `drops <= arrivals <= pending <= expected`, so nothing underflows.
        Ok(s.with_counts(
            (pending - arrivals) as u32,
            s.expected() - drops as u32,
            tx as i32,
        ))
    }
}

impl Misuse {
    /// The panic for this misuse by `op`.
    #[cold]
    #[track_caller]
    pub(crate) fn panic(self, op: impl fmt::Display) -> ! {
        match self {
            Misuse::Zero => panic!("mbarrier: {op}: n must be at least 1"),
            Misuse::Poisoned(s) => poisoned_panic(op, s),
            Misuse::Retired => panic!("mbarrier: {op}: the barrier is retired: every participant dropped out and its last phase completed"),
            Misuse::TooMany { pending, expected } => panic!(
                "mbarrier: {op} but only {pending} arrival{} pending in this phase (expected per phase: {expected})",
                if pending == 1 { " is" } else { "s are" },
            ),
            Misuse::TxRange { from, to } => {
                let max = state::MAX_TX;
                panic!("mbarrier: {op}: the transaction count would go from {from} to {to}, outside -{max} ..= {max}")
            }
        }
    }
}

impl fmt::Display for Op {
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
        }
    }
}

/// Whether `n` is a valid participant count, `1 ..= Barrier::MAX`.
pub(crate) const fn participants_in_range(n: usize) -> bool {
    n >= 1 && n <= state::MAX as usize
}

/// The participant count of a constructor, checked: `1 ..= Barrier::MAX`.
/// `call` names the constructor as the user wrote it, e.g. `launch(0, _)`,
/// and `what` the count, e.g. `the thread count`.
#[track_caller]
pub(crate) fn participants(call: fmt::Arguments<'_>, what: &str, n: usize) -> u32 {
    if !participants_in_range(n) {
        panic!(
            "mbarrier: {call}: {what} must be in 1 ..= {} (Barrier::MAX)",
            state::MAX
        );
    }
    n as u32
}

/// Panics for an operation on a poisoned barrier.
#[cold]
#[track_caller]
pub(crate) fn poisoned_panic(op: impl fmt::Display, s: Snapshot) -> ! {
    match s.poison() {
        Some(Poison::Completion) => {
            panic!(
                "{POISONED}: completion panicked in phase {} (seen by {op})",
                s.phase()
            )
        }
        _ => panic!("{POISONED} by poison() (seen by {op})"),
    }
}
