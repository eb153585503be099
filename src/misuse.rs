//! Misuse: every check of an operation against the word, made before
//! anything is mutated, and the panic messages
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
    /// An arrival of a `Team`'s seats on the word (team.rs): `arrivals`
    /// seats arrive and `drops` of them leave, plus `tx`; the seat operation
    /// the user called names it in messages. `quiet`: a seat's drop, which
    /// never panics, does nothing on a poisoned or retired word instead.
    Seat {
        call: SeatCall,
        arrivals: u32,
        drops: u32,
        tx: u32,
        quiet: bool,
    },
    /// A flat team's seat leaving (team.rs): in the phase it last arrived in
    /// (`arrived_in`, still running) that is a drop without an arrival; in
    /// the next phase an arrival and a drop. Quiet, as a seat's drop.
    SeatLeave {
        call: SeatCall,
        arrived_in: u8,
    },
}

/// The seat operation a user called, for the messages of [`Op::Seat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeatCall {
    Arrive,
    ArriveAndWait,
    ArriveTx(u32),
    ArriveAndDrop,
    Drop,
}

impl fmt::Display for SeatCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SeatCall::Arrive => f.write_str("Seat::arrive()"),
            SeatCall::ArriveAndWait => f.write_str("Seat::arrive_and_wait()"),
            SeatCall::ArriveTx(tx) => write!(f, "Seat::arrive_tx({tx})"),
            SeatCall::ArriveAndDrop => f.write_str("Seat::arrive_and_drop()"),
            SeatCall::Drop => f.write_str("drop(Seat)"),
        }
    }
}

impl Op {
    /// (arrivals, dropped participants, change of tx).
    pub(crate) fn delta(self) -> (usize, usize, i64) {
        match self {
            Op::Arrive | Op::ArriveAndWait => (1, 0, 0),
            Op::ArriveN(n) => (n, 0, 0),
            Op::ArriveAndDrop => (1, 1, 0),
            Op::ArriveAndDropN(n) => (n, n, 0),
            Op::ArriveTx(n, tx) => (n, 0, i64::from(tx)),
            Op::ExpectTx(tx) => (0, 0, i64::from(tx)),
            Op::CompleteTx(tx) => (0, 0, -i64::from(tx)),
            Op::Seat {
                arrivals,
                drops,
                tx,
                ..
            } => (arrivals as usize, drops as usize, i64::from(tx)),
            Op::SeatLeave { .. } => (1, 1, 0),
        }
    }

    /// Whether `n must be at least 1` applies (the seat operations compute
    /// their counts themselves; an `arrive_tx`'s `expect_tx` has none).
    pub(crate) fn needs_arrival(self) -> bool {
        !matches!(
            self,
            Op::ExpectTx(_) | Op::CompleteTx(_) | Op::Seat { .. } | Op::SeatLeave { .. }
        )
    }

    /// A seat's drop: does nothing on a poisoned or retired word.
    pub(crate) fn quiet(self) -> bool {
        matches!(self, Op::Seat { quiet: true, .. } | Op::SeatLeave { .. })
    }

    /// (arrivals, drops) as they apply to the word `s`: a flat seat leaving
    /// in the phase it already arrived in owes no arrival there.
    pub(crate) fn counts_at(self, s: Snapshot, arrivals: usize, drops: usize) -> (usize, usize) {
        match self {
            Op::SeatLeave { arrived_in, .. } if s.phase() == arrived_in => (0, 1),
            _ => (arrivals, drops),
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
            Op::Seat { call, .. } | Op::SeatLeave { call, .. } => call.fmt(f),
        }
    }
}

pub(crate) const fn check_expected_const(expected: usize) -> u32 {
    assert!(
        expected >= 1 && expected <= state::MAX as usize,
        "mbarrier: new: expected must be in 1 ..= 1048575 (Barrier::MAX)"
    );
    expected as u32
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

/// The misuse checks of one operation against the word, before anything is
/// mutated; returns the word with the operation applied.
#[track_caller]
pub(crate) fn check(op: Op, s: Snapshot, arrivals: usize, drops: usize, dtx: i64) -> Snapshot {
    if s.poison().is_some() {
        poisoned_panic(op, s);
    }
    if s.is_retired() {
        panic!("mbarrier: {op}: the barrier is retired: every participant dropped out and its last phase completed");
    }
    let pending = s.pending() as usize;
    if arrivals > pending {
        panic!(
            "mbarrier: {op} but only {pending} arrival{} pending in this phase (expected per phase: {})",
            if pending == 1 { " is" } else { "s are" },
            s.expected()
        );
    }
    let tx = i64::from(s.tx()) + dtx;
    let max = i64::from(state::MAX_TX);
    if !(-max..=max).contains(&tx) {
        panic!(
            "mbarrier: {op}: the transaction count would go from {} to {tx}, outside -{max} ..= {max}",
            s.tx()
        );
    }
    // `drops <= arrivals <= pending <= expected`, so nothing underflows; a
    // flat seat's `SeatLeave` in the phase it arrived in (0 arrivals, 1 drop)
    // has `pending < expected`, since its arrival is in already (team.rs).
    s.with_counts(
        (pending - arrivals) as u32,
        s.expected() - drops as u32,
        tx as i32,
    )
}
