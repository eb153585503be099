//! The ledger of the churn tests: participants join and leave while phases
//! run, each publishes once per phase it takes part in, and the barrier's
//! completion function checks that every participant of the completing
//! phase published exactly once. Plain data: each test guards it with its
//! own mutex (std's, or shuttle's under `--cfg shuttle`).

use std::collections::BTreeMap;
use std::ops::DerefMut;
use syncthreads::{Completion, Seat};

#[derive(Default)]
pub struct Ledger {
    /// The number of the phase now running.
    pub phase: u64,
    /// Participants (ids or ranks) of the current phase, with the phase
    /// each joined.
    pub members: BTreeMap<usize, u64>,
    /// Participants whose leave is their arrival in the current phase.
    pub leaving: Vec<usize>,
    /// Participants that arrived and then left: their leave is their
    /// arrival in the next phase.
    pub leaving_next: Vec<usize>,
    /// What each participant published in the current phase.
    pub published: BTreeMap<usize, usize>,
    /// Phases checked so far.
    pub checked: u64,
}

impl Ledger {
    /// `id` takes part from the current phase on; false if it already did.
    pub fn join(&mut self, id: usize) -> bool {
        let phase = self.phase;
        self.members.insert(id, phase).is_none()
    }

    /// `id` published (is about to arrive) in the current phase.
    pub fn publish(&mut self, id: usize) {
        *self.published.entry(id).or_default() += 1;
    }

    /// `id` published and leaves with its arrival in the current phase.
    pub fn publish_and_leave(&mut self, id: usize) {
        self.publish(id);
        self.leaving.push(id);
    }

    /// Whether every participant left is leaving (the end of a run).
    pub fn all_leaving(&self) -> bool {
        self.members.keys().all(|id| self.leaving.contains(id))
    }

    /// The completion function's check of the phase that completes.
    pub fn complete(&mut self) {
        let expected: Vec<usize> = self.members.keys().copied().collect();
        let got: Vec<usize> = self.published.keys().copied().collect();
        assert_eq!(got, expected, "phase {}: who published", self.phase);
        for (id, times) in &self.published {
            assert_eq!(
                *times, 1,
                "phase {}: participant {id} published {times} times",
                self.phase
            );
        }
        self.published.clear();
        for id in self.leaving.drain(..) {
            self.members.remove(&id);
        }
        for id in self.leaving_next.drain(..) {
            self.published.insert(id, 1);
            self.leaving.push(id);
        }
        self.phase += 1;
        self.checked += 1;
    }
}

/// Leaves `seat` the `way % 3`-th way, recorded in the ledger `l` first:
/// `arrive_and_drop`, a drop, or an arrival and then a drop (its leave is
/// then its arrival in the next phase). The ledger is released before the
/// seat moves, since the completion function takes it.
pub fn leave<F: Completion>(seat: Seat<'_, F>, way: usize, mut l: impl DerefMut<Target = Ledger>) {
    let rank = seat.rank();
    if way % 3 == 2 {
        l.leaving_next.push(rank);
    } else {
        l.leaving.push(rank);
    }
    drop(l);
    match way % 3 {
        0 => seat.arrive_and_drop(),
        1 => drop(seat),
        _ => {
            drop(seat.arrive());
            drop(seat);
        }
    }
}
