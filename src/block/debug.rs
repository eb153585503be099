//! What a `BlockBarrier` shows of itself: its missing ranks, its `Debug`
//! form and its entry in a stall report.

use super::{BlockBarrier, SEATS};
use crate::sync::Ordering;
use std::fmt;

impl BlockBarrier {
    /// The ranks that take part in the current phase and have not synced in
    /// it, ascending, for a block used through seats (as
    /// [`Team::missing`](crate::Team::missing): a snapshot, exact while
    /// nobody syncs; a rank whose seat was not taken yet counts as missing,
    /// one whose seat left does not take part); `None` for a block used
    /// seat-less or not used yet, which knows no ranks.
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(3);
    /// assert_eq!(block.missing(), None);
    /// let seat = block.seat(1);
    /// assert_eq!(block.missing(), Some(vec![0, 1, 2]));
    /// # drop(seat);
    /// ```
    #[must_use]
    pub fn missing(&self) -> Option<Vec<usize>> {
        // Relaxed: as in `seat`.
        (self.mode.load(Ordering::Relaxed) == SEATS).then(|| self.team.missing())
    }

    /// `arrived: N, expected: M` of the current phase: the team's table for
    /// a block used through seats, else the word's counts.
    pub(crate) fn debug_progress(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        // Relaxed: as in `seat`.
        if self.mode.load(Ordering::Relaxed) == SEATS {
            self.team.debug_progress(d);
        } else {
            // Seat-less syncs arrive on the word and never leave.
            // Relaxed: a diagnostic snapshot.
            let s = crate::team::debug::word(&self.team, Ordering::Relaxed);
            let expected = s.expected() as usize;
            d.field(
                "arrived",
                &(expected - (s.pending() as usize).min(expected)),
            )
            .field("expected", &expected);
        }
    }
}

impl fmt::Debug for BlockBarrier {
    /// Shows the current phase's progress, the group size and the inner
    /// barrier's decoded word, e.g.
    /// `BlockBarrier { arrived: 1, expected: 4, threads: 4, barrier: Barrier { phase_parity: false, .. } }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BlockBarrier");
        self.debug_progress(&mut d);
        d.field("threads", &self.threads)
            .field("barrier", self.team.barrier_debug())
            .finish()
    }
}

/// A `BlockBarrier` for a stall report: its kind, `Debug` and missing ranks.
///
/// # Safety
///
/// `ptr` points to a live `BlockBarrier`.
pub(super) unsafe fn describe_block(
    ptr: *const (),
    _: u64,
    phase: u64,
) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let block = unsafe { &*(ptr as *const BlockBarrier) };
    crate::diagnostics::Described {
        kind: "BlockBarrier",
        // As its `Debug`, without the inner word's pending count, which
        // beside `arrived` would contradict it (as `team/debug.rs`'s `ReportLine`).
        debug: {
            struct ReportLine<'a>(&'a BlockBarrier);
            impl fmt::Debug for ReportLine<'_> {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    let mut d = f.debug_struct("BlockBarrier");
                    self.0.debug_progress(&mut d);
                    d.field("threads", &self.0.threads);
                    crate::team::debug::word_fields(&self.0.team, &mut d);
                    d.finish()
                }
            }
            format!("{:?}", ReportLine(block))
        },
        // Relaxed: as in `seat`. The stall's phase, as for a `Team`.
        missing: (block.mode.load(Ordering::Relaxed) == SEATS)
            .then(|| block.team.missing_in_phase(phase)),
        mask: None,
        block_threads: None,
    }
}
