//! One slot word driven by hand, for the loom model of a wait that reads a
//! later launch's ticket in a reused slot (loom-tests/tests/launch.rs):
//! the whole pool reaches that read only past the preemption bound its
//! models can afford. Built under `--cfg loom` only.

use super::slot::{exited, idle, Slot, Ticket};
use crate::sync::Ordering;
use std::cell::Cell;
use std::ptr;

/// A slot that holds the first of two tickets, as a launch that claimed
/// its worker leaves it, and the worker's, the reusing launch's and the
/// first launch's steps on it, each the pool's own code.
#[doc(hidden)]
pub struct SlotProbe {
    slot: Slot,
    first: Box<Ticket>,
    second: Box<Ticket>,
}

// SAFETY: the tickets are never run (their job is null and never read);
// their addresses are what travels through the slot word, as in the pool.
unsafe impl Sync for SlotProbe {}
// SAFETY: as above.
unsafe impl Send for SlotProbe {}

impl SlotProbe {
    /// A slot whose worker was handed the first ticket.
    #[allow(clippy::new_without_default)]
    pub fn new() -> SlotProbe {
        unsafe fn never(_: *const (), _: usize) {}
        let ticket = |rank| {
            Box::new(Ticket {
                job: ptr::null(),
                run: never,
                rank,
                crowded: false,
                enlists: false,
                slot: Cell::new(ptr::null()),
            })
        };
        let first = ticket(1);
        SlotProbe {
            slot: Slot::new(ptr::from_ref(&*first).cast_mut()),
            first,
            second: ticket(2),
        }
    }

    /// The worker hands the first ticket back (`Slot::hand_back`).
    pub fn hand_back(&self) {
        self.slot.hand_back(ptr::from_ref(&*self.first).cast_mut());
    }

    /// The idle worker's keep-alive passes: it leaves (`Slot::leave`);
    /// false if the word no longer read `IDLE`.
    pub fn leave(&self) -> bool {
        self.slot.leave(idle())
    }

    /// A later launch reuses the slot if its worker has left
    /// (`Slot::reuse`, as `Pool::claim_or_spawn` does); whether it did.
    pub fn reuse_if_left(&self) -> bool {
        // Relaxed: as in `claim_or_spawn`: no data is read.
        let left = self.slot.load(Ordering::Relaxed) == exited();
        if left {
            self.slot.reuse(ptr::from_ref(&*self.second).cast_mut());
        }
        left
    }

    /// The first launch waits for its ticket back (`wait_done`).
    pub fn wait_for_the_first(&self) {
        super::wait_done(&self.slot, ptr::from_ref(&*self.first).cast_mut(), false);
    }
}
