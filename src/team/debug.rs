//! What a [`Team`] shows of itself beyond its own methods (`team.rs`):
//! its `Debug` form, its word for what is built on it, and its entry in a
//! stall report.

use super::Team;
use crate::completion::Completion;
use crate::state::Snapshot;
use crate::sync::Ordering;
use std::fmt;

/// One load of the team's word, for the queries of what is built on it.
#[inline]
pub(crate) fn word<F>(team: &Team<F>, order: Ordering) -> Snapshot {
    team.engine.word(order)
}

/// `phase_parity`, `tx` and `poisoned` of the team's word, for a stall
/// report's line of the team and of what is built on it. Not the word's
/// own pending count: the tree and the rank table hold arrivals the word
/// has not counted yet, so beside `arrived` it would contradict it.
pub(crate) fn word_fields<F>(team: &Team<F>, f: &mut fmt::DebugStruct<'_, '_>) {
    let s = team.engine.word(Ordering::Relaxed);
    f.field("phase_parity", &s.parity())
        .field("tx", &s.tx())
        .field("poisoned", &s.poison().is_some());
}

/// `team`, as a stall report describes it (`Team::subject`).
pub(super) fn subject<F: Completion>(team: &Team<F>) -> crate::diagnostics::Subject {
    crate::diagnostics::Subject {
        ptr: team as *const Team<F> as *const (),
        describe: describe::<F>,
        level: 1,
    }
}

impl<F> fmt::Debug for Team<F> {
    /// The current phase's progress (participants arrived, and expected;
    /// the tree's arrivals included), the shape and the barrier's decoded
    /// word, e.g.
    /// `Team { arrived: 3, expected: 16, capacity: 16, fan_in: 4, nodes: 5, barrier: Barrier { phase_parity: false, pending: 16, expected: 16, tx: 0, poisoned: false } }`.
    /// The word's own `pending` counts only the arrivals that have reached
    /// it (the tree and the rank table hold the others), so a stall report
    /// shows the team without it. Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Team");
        self.debug_progress(&mut d);
        d.field("capacity", &self.capacity)
            .field("fan_in", &self.fan_in)
            .field("nodes", &self.front.nodes().len())
            .field("barrier", &*self.engine)
            .finish()
    }
}

/// The team as a stall report shows it: its `Debug` with the word's
/// fields that agree with `arrived` beside it, e.g.
/// `Team { arrived: 3, expected: 4, phase_parity: false, tx: 0, poisoned: false, capacity: 4, fan_in: 4, nodes: 2 }`.
struct ReportLine<'a, F>(&'a Team<F>);

impl<F> fmt::Debug for ReportLine<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Team");
        self.0.debug_progress(&mut d);
        word_fields(self.0, &mut d);
        d.field("capacity", &self.0.capacity)
            .field("fan_in", &self.0.fan_in)
            .field("nodes", &self.0.front.nodes().len())
            .finish()
    }
}

/// A `Team<F>` for a stall report: its kind, `Debug` and missing ranks.
///
/// # Safety
///
/// `ptr` points to a live `Team<F>`.
unsafe fn describe<F: Completion>(
    ptr: *const (),
    _: u64,
    phase: u64,
) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let team = unsafe { &*(ptr as *const Team<F>) };
    crate::diagnostics::Described {
        kind: "Team",
        debug: format!("{:?}", ReportLine(team)),
        // The stall's phase, not the current one: once it completes, its
        // woken waiters are still recorded until they return.
        missing: Some(team.missing_in_phase(phase)),
        mask: None,
        block_threads: None,
    }
}
