//! The sync family's calls: which `__syncthreads` variant a call is, with
//! its vote (what it adds to its phase's counter, `block.rs` step 2), its
//! name for the messages, and the counter decoded for each variant.

#[cfg(doc)]
use super::BlockBarrier;
#[cfg(doc)]
use super::BlockSeat;

/// A counted true predicate (low half of a counter).
const TRUE: u64 = 1;
/// A counted false predicate of `sync_and` (high half of a counter).
const FALSE: u64 = 1 << 32;

/// Which `__syncthreads` variant a call is, with its predicate: the one
/// encoding of the reducing syncs, shared by [`BlockBarrier`], [`BlockSeat`]
/// and [`Block`](crate::Block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncCall {
    /// `sync()`: counts nothing.
    Sync,
    /// `sync_count(pred)`: counts a true predicate.
    Count(bool),
    /// `sync_and(pred)`: counts a false predicate.
    And(bool),
    /// `sync_or(pred)`: counts a true predicate.
    Or(bool),
}

impl SyncCall {
    /// What this call adds to its phase's counter (module docs, step 2).
    #[inline]
    pub(super) fn vote(self) -> u64 {
        match self {
            SyncCall::Sync => 0,
            SyncCall::Count(pred) | SyncCall::Or(pred) => {
                if pred {
                    TRUE
                } else {
                    0
                }
            }
            SyncCall::And(pred) => {
                if pred {
                    0
                } else {
                    FALSE
                }
            }
        }
    }

    /// The method's name, for the messages.
    pub(super) fn name(self) -> &'static str {
        match self {
            SyncCall::Sync => "sync()",
            SyncCall::Count(_) => "sync_count(_)",
            SyncCall::And(_) => "sync_and(_)",
            SyncCall::Or(_) => "sync_or(_)",
        }
    }

    /// The call as the user made it on `on`, for the messages of the
    /// arrival and wait it makes (a poisoned block names the sync, not the
    /// seat's or the word's arrival under it).
    pub(crate) fn called_on(self, on: SyncOn) -> &'static str {
        match (on, self) {
            (SyncOn::BlockBarrier, SyncCall::Sync) => "BlockBarrier::sync()",
            (SyncOn::BlockBarrier, SyncCall::Count(_)) => "BlockBarrier::sync_count(_)",
            (SyncOn::BlockBarrier, SyncCall::And(_)) => "BlockBarrier::sync_and(_)",
            (SyncOn::BlockBarrier, SyncCall::Or(_)) => "BlockBarrier::sync_or(_)",
            (SyncOn::BlockSeat, SyncCall::Sync) => "BlockSeat::sync()",
            (SyncOn::BlockSeat, SyncCall::Count(_)) => "BlockSeat::sync_count(_)",
            (SyncOn::BlockSeat, SyncCall::And(_)) => "BlockSeat::sync_and(_)",
            (SyncOn::BlockSeat, SyncCall::Or(_)) => "BlockSeat::sync_or(_)",
            (SyncOn::Block, SyncCall::Sync) => "Block::sync()",
            (SyncOn::Block, SyncCall::Count(_)) => "Block::sync_count(_)",
            (SyncOn::Block, SyncCall::And(_)) => "Block::sync_and(_)",
            (SyncOn::Block, SyncCall::Or(_)) => "Block::sync_or(_)",
            // A grid syncs only plainly.
            (SyncOn::Grid, _) => "Grid::sync()",
        }
    }
}

/// The handle a sync was called on, for its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncOn {
    BlockBarrier,
    BlockSeat,
    Block,
    /// A one-block grid, whose barrier is its block's.
    Grid,
}

/// A phase's counter as every caller of the phase reads it (module docs,
/// step 4), decoded for each variant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Votes(pub(super) u64);

impl Votes {
    /// `sync_count`: how many true predicates.
    #[inline]
    pub(crate) fn count(self) -> usize {
        (self.0 & (FALSE - 1)) as usize
    }

    /// `sync_and`: no false predicate.
    #[inline]
    pub(crate) fn all(self) -> bool {
        self.0 >> 32 == 0
    }

    /// `sync_or`: some true predicate.
    #[inline]
    pub(crate) fn any(self) -> bool {
        self.count() > 0
    }
}
