//! What a [`Team`] shows of itself: who is missing in the current phase,
//! its `Debug` form and its entry in a stall report.

use super::Team;
use crate::completion::Completion;
use crate::state::Snapshot;
use crate::sync::Ordering;
use std::fmt;

impl<F> Team<F> {
    /// The team's barrier, for `Debug` output only.
    pub(crate) fn barrier_debug(&self) -> &(dyn fmt::Debug + '_) {
        &*self.engine
    }

    /// One load of the team's word, for the queries of what is built on it.
    #[inline]
    pub(crate) fn word(&self, order: Ordering) -> Snapshot {
        self.engine.word(order)
    }

    /// `arrived: N, expected: M` of the current phase, for the `Debug` of
    /// the team and of what is built on it.
    pub(crate) fn debug_progress(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        // Acquire: as in `Team::missing`; here it also keeps the largest
        // entry within what fixes the wide phase (team/ranks.rs).
        let p = self
            .ranks
            .progress_in(self.engine.word(Ordering::Acquire).phase());
        f.field("arrived", &p.arrived)
            .field("expected", &p.expected);
    }

    /// `phase_parity`, `tx` and `poisoned` of the team's word, for a stall
    /// report's line of the team and of what is built on it. Not the word's
    /// own pending count: the tree and the rank table hold arrivals the
    /// word has not counted yet, so beside `arrived` it would contradict it.
    pub(crate) fn debug_word(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        let s = self.engine.word(Ordering::Relaxed);
        f.field("phase_parity", &s.parity())
            .field("tx", &s.tx())
            .field("poisoned", &s.poison().is_some());
    }
}

impl<F: Completion> Team<F> {
    /// The key of the team's word, as its waits are recorded under.
    pub(crate) fn key(&self) -> usize {
        self.engine.key()
    }

    /// The ranks missing in `phase` (a stall's, the current phase or the one
    /// before it), ascending: a rank whose arrival in that phase returned is
    /// not missing, also once the phase has completed.
    pub(crate) fn missing_in_phase(&self, phase: u64) -> Vec<usize> {
        // Acquire: as in `Team::missing`; a later phase read here also
        // makes every arrival in `phase` visible (they preceded its end).
        let _ = self.engine.word(Ordering::Acquire);
        self.ranks.missing_in(crate::phase::Phase::new(phase as u8))
    }

    /// This team, as a stall report describes it.
    pub(crate) fn subject(&self) -> crate::diagnostics::Subject {
        crate::diagnostics::Subject {
            ptr: self as *const Self as *const (),
            describe: describe::<F>,
            level: 1,
        }
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
        self.0.debug_word(&mut d);
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
