//! [`BlockSeat`]: one thread's seat in a [`BlockBarrier`], syncing through
//! the block's [`Team`] (the reduction: `block.rs`; its proof:
//! docs/design/block.md).

use super::{BlockBarrier, SyncCall, SyncOn, Votes};
use crate::team::Seat;
#[cfg(doc)]
use crate::team::Team;
use std::cell::Cell;
use std::fmt;

/// One thread's seat in a [`BlockBarrier`] ([`BlockBarrier::seat`]): it
/// syncs through the block's combining tree, like a [`Seat`] of a [`Team`].
///
/// `Send`, not `Sync`. Dropped normally, it leaves the block (later phases
/// owe one arrival fewer); dropped while its thread unwinds, it poisons the
/// block.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let block = syncthreads::BlockBarrier::new(8);
/// let shared: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
/// std::thread::scope(|s| {
///     for rank in 0..8 {
///         let (seat, shared) = (block.seat(rank), &shared);
///         s.spawn(move || {
///             shared[rank].store(rank + 1, Ordering::Relaxed);
///             seat.sync();
///             assert_eq!(shared[(rank + 1) % 8].load(Ordering::Relaxed), (rank + 1) % 8 + 1);
///         });
///     }
/// });
/// ```
pub struct BlockSeat<'a> {
    block: &'a BlockBarrier,
    seat: Seat<'a>,
    /// Whether this seat has set the block's `counted` flag.
    counted: Cell<bool>,
}

impl<'a> BlockSeat<'a> {
    pub(super) fn new(block: &'a BlockBarrier, seat: Seat<'a>) -> BlockSeat<'a> {
        BlockSeat {
            block,
            seat,
            counted: Cell::new(false),
        }
    }

    /// This seat's rank.
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(2);
    /// assert_eq!(block.seat(1).rank(), 1);
    /// ```
    #[must_use]
    pub fn rank(&self) -> usize {
        self.seat.rank()
    }

    /// The block this seat belongs to.
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(3);
    /// assert_eq!(block.seat(0).block().threads(), 3);
    /// ```
    #[must_use]
    pub fn block(&self) -> &'a BlockBarrier {
        self.block
    }

    /// One sync through this seat: the variant and predicate in `call`,
    /// called on `on` (for the messages).
    #[track_caller]
    #[inline]
    pub(crate) fn sync_as(&self, call: SyncCall, on: SyncOn) -> Votes {
        // The phase of this seat's next arrival, from its own record: no
        // load of the word (module docs, step 1); the arrival makes the one
        // read of it that the sync needs (a tree seat's `enter`; a flat
        // seat's RMW, whose own read it is).
        self.block.reduce(
            self.seat.next_phase(),
            call,
            Some(self.rank()),
            Some(&self.counted),
            || self.seat.arrive_and_wait_as(call.called_on(on)).is_leader(),
        )
    }

    /// One arrival of this seat without its wait (a one-block grid's
    /// split arrive, whose panics name `name`): a plain sync's arrival.
    /// The wait comes later, by [`BlockBarrier::wait_split`]. If it
    /// completed the phase it clears what the phase's leader clears (step 5
    /// of `block.rs`'s module docs): as for a leader, every read of that
    /// counter came before an arrival of this phase, and every add to it
    /// comes after this seat's next arrival.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_split(&self, name: &'static str) -> crate::token::ArrivalToken {
        let k = self.seat.next_phase();
        let (token, completed) = self.seat.arrive_named(name);
        if completed {
            self.block.clear_two_ahead(k);
        }
        token
    }

    /// `__syncthreads()` through this seat; see [`BlockBarrier::sync`].
    ///
    /// # Panics
    ///
    /// If the block is poisoned, before or while waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(1);
    /// block.seat(0).sync();
    /// ```
    #[track_caller]
    #[inline]
    pub fn sync(&self) {
        self.sync_as(SyncCall::Sync, SyncOn::BlockSeat);
    }

    /// `__syncthreads_count(pred)` through this seat; see
    /// [`BlockBarrier::sync_count`].
    ///
    /// # Panics
    ///
    /// As [`sync`](BlockSeat::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(1);
    /// assert_eq!(block.seat(0).sync_count(true), 1);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the count is not needed"]
    pub fn sync_count(&self, pred: bool) -> usize {
        self.sync_as(SyncCall::Count(pred), SyncOn::BlockSeat)
            .count()
    }

    /// `__syncthreads_and(pred)` through this seat; see
    /// [`BlockBarrier::sync_and`]. Seats that left are not counted.
    ///
    /// # Panics
    ///
    /// As [`sync`](BlockSeat::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(1);
    /// let seat = block.seat(0);
    /// assert!(seat.sync_and(true));
    /// assert!(!seat.sync_and(false));
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_and(&self, pred: bool) -> bool {
        self.sync_as(SyncCall::And(pred), SyncOn::BlockSeat).all()
    }

    /// `__syncthreads_or(pred)` through this seat; see
    /// [`BlockBarrier::sync_or`].
    ///
    /// # Panics
    ///
    /// As [`sync`](BlockSeat::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(1);
    /// assert!(block.seat(0).sync_or(true));
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_or(&self, pred: bool) -> bool {
        self.sync_as(SyncCall::Or(pred), SyncOn::BlockSeat).any()
    }
}

// Like its `Seat`, safe to use across `catch_unwind`: its `Cell` is set
// only after the block's flag it remembers was stored, so an unwind leaves
// it at worst unset, and the next counting sync stores the flag again.
impl std::panic::RefUnwindSafe for BlockSeat<'_> {}
impl std::panic::UnwindSafe for BlockSeat<'_> {}
crate::assert::assert_impl_all!(BlockSeat<'static>: Send, std::panic::RefUnwindSafe);

impl Drop for BlockSeat<'_> {
    /// Leaves the block (the seat's own drop: poisons if unwinding), after
    /// clearing the counter its leave could leave uncleared (docs/design/block.md),
    /// unless the block is poisoned or no sync of it ever counted.
    fn drop(&mut self) {
        if std::thread::panicking() || !self.block.leaver_clears() {
            return;
        }
        // The clear is safe only after this seat's last wait returned, the
        // phase before `k` completed (docs/design/block.md). A seat whose last sync
        // ended by the block's poisoning (a `catch_unwind` around it, as
        // `launch`'s) saw the poisoned word there, and since poisoning is
        // terminal this load sees it again (coherence): such a seat must not
        // clear, since a slow thread of phase `k - 2` may still read that
        // counter, and no later phase will need it cleared.
        // Relaxed: the decision rests on coherence alone, as just said: the
        // store it must see is the poisoning RMW this seat's own last wait
        // read, and a later load of the same thread cannot read an earlier
        // value (Acquire would add nothing). A poisoning it has not seen
        // comes after a last wait that returned, which leaves the clear safe.
        if self.block.team.is_poisoned() {
            return;
        }
        // Ordered by this seat's last wait (after every read of phase k - 2)
        // and by its leave's arrival, sequenced after the clear (before every
        // add of phase k + 2), as the leader's clear is (docs/design/block.md).
        self.block.clear_two_ahead(self.seat.next_phase());
    }
}

impl fmt::Debug for BlockSeat<'_> {
    /// The rank, the block's progress in the current phase and its size,
    /// e.g. `BlockSeat { rank: 3, arrived: 5, expected: 16, threads: 16 }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BlockSeat");
        d.field("rank", &self.rank());
        self.block.debug_progress(&mut d);
        d.field("threads", &self.block.threads).finish()
    }
}
