//! What a `WarpBarrier` shows of itself: its `Debug` (each lane's sync
//! count) and its waits for the stall reports.

use super::{WarpBarrier, COUNT};
use crate::sync::Ordering;
use std::fmt;

impl fmt::Debug for WarpBarrier {
    /// Shows each lane's sync count, e.g. `WarpBarrier { synced: [3, 3, 2, 3] }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Counts<'a>(&'a [super::Lane]);
        impl fmt::Debug for Counts<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // Relaxed: a diagnostic snapshot; nothing is read through it.
                f.debug_list()
                    .entries(
                        self.0
                            .iter()
                            .map(|l| l.synced.load(Ordering::Relaxed) & COUNT),
                    )
                    .finish()
            }
        }
        f.debug_struct("WarpBarrier")
            .field("synced", &Counts(&self.lanes))
            .finish()
    }
}

impl WarpBarrier {
    /// This lane's wait for the lanes of `mask` to reach sync `round`, made
    /// at the caller's call site, for the stall reports. The lanes of one
    /// mask waiting for one round share a record's key.
    #[track_caller]
    pub(super) fn wait_info(
        &self,
        mask: u64,
        others: u64,
        round: u64,
    ) -> crate::diagnostics::WaitInfo {
        crate::diagnostics::WaitInfo {
            key: (self as *const Self).addr(),
            tag: mask,
            phase: round,
            // The waiting lane: the one of the mask that is not an other.
            who: Some(crate::diagnostics::Who::Lane(
                (mask & !others).trailing_zeros() as usize,
            )),
            subject: crate::diagnostics::Subject {
                ptr: self as *const Self as *const (),
                describe: describe_warp,
                level: 0,
            },
            location: std::panic::Location::caller(),
        }
    }
}

/// A `WarpBarrier` for a stall report; `tag` is the mask waited on and
/// `phase` the round.
///
/// # Safety
///
/// `ptr` points to a live `WarpBarrier`.
unsafe fn describe_warp(ptr: *const (), mask: u64, round: u64) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let warp = unsafe { &*(ptr as *const WarpBarrier) };
    let missing = (0..warp.lanes())
        .filter(|&l| mask & (1 << l) != 0)
        // Relaxed: a diagnostic snapshot; nothing is read through it.
        .filter(|&l| warp.lanes[l].synced.load(Ordering::Relaxed) & COUNT < round)
        .collect();
    crate::diagnostics::Described {
        kind: "WarpBarrier",
        debug: format!("{warp:?}"),
        missing: Some(missing),
        mask: Some(mask),
        block_threads: None,
    }
}
