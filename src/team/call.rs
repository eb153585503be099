//! The seat operations a user calls, as the word's messages name them: a
//! seat's arrival reaches the word as the one arrival operation
//! (`Op::Arrival`), and this is its name.

use crate::op::{Arriver, Op, PhaseOf};
use crate::phase::Phase;
use std::fmt;

/// The seat operation a user called, for the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeatCall {
    Arrive,
    ArriveAndWait,
    ArriveTx(u32),
    ArriveAndDrop,
    Drop,
    ArriveAndWaitAsync,
    /// `Team::join()`: no arrival, the name of its join on the word.
    Join,
    /// An arrival and wait made for a call on a handle built on the seat
    /// (a block's sync), named as the user called it.
    Named(&'static str),
}

impl SeatCall {
    /// A combined operation on the word named after this call: `arrivals`
    /// seats arrive, `drops` of them leave, plus `tx`; `quiet` for a drop.
    pub(crate) fn combined(&self, arrivals: u32, drops: u32, tx: u32, quiet: bool) -> Op<'_> {
        Op::Arrival {
            arrivals,
            drops,
            tx,
            phase: PhaseOf::Running,
            quiet,
            name: self,
        }
    }

    /// Seat `rank` arriving in `phase`, the one after its last arrival,
    /// named after this call: a flat team's arrival on the word, or a tree
    /// seat's entry check (`Engine::enter`).
    pub(crate) fn seat_arrival(&self, phase: Phase, rank: u32) -> Op<'_> {
        let who = Arriver {
            kind: "seat",
            id: rank,
        };
        Op::Arrival {
            arrivals: 1,
            drops: 0,
            tx: 0,
            phase: PhaseOf::Exactly(phase, who),
            quiet: false,
            name: self,
        }
    }

    /// `count` seats leaving after their last arrival in `arrived_in` (a
    /// flat team's one seat, or a tree's round of leavers only).
    pub(crate) fn leave_after(&self, arrived_in: Phase, count: u32, quiet: bool) -> Op<'_> {
        Op::Arrival {
            arrivals: count,
            drops: count,
            tx: 0,
            phase: PhaseOf::After(arrived_in),
            quiet,
            name: self,
        }
    }
}

impl SeatCall {
    /// A join on the word named after this call (`add_participants` as
    /// `Team::join` makes it).
    pub(crate) fn joining(&self) -> Op<'_> {
        Op::Joining { name: self }
    }
}

impl fmt::Display for SeatCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SeatCall::Arrive => f.write_str("Seat::arrive()"),
            SeatCall::ArriveAndWait => f.write_str("Seat::arrive_and_wait()"),
            SeatCall::ArriveTx(tx) => write!(f, "Seat::arrive_tx({tx})"),
            SeatCall::ArriveAndDrop => f.write_str("Seat::arrive_and_drop()"),
            SeatCall::Drop => f.write_str("drop(Seat)"),
            SeatCall::ArriveAndWaitAsync => f.write_str("Seat::arrive_and_wait_async()"),
            SeatCall::Join => f.write_str("Team::join()"),
            SeatCall::Named(name) => f.write_str(name),
        }
    }
}
