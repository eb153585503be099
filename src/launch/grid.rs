//! [`Grid`]: one thread's handle on the grid of blocks that
//! [`launch_grid`](super::launch_grid) runs, the CPU form of
//! `cooperative_groups::this_grid()`, and its barrier.
//!
//! A grid of more than one block syncs through a [`Team`] of
//! `blocks × threads` seats whose tree is shaped by block
//! (`Team::grid`): a block's seats combine in a subtree of their own, then
//! one arrival per block climbs the tree over the blocks to the word, and
//! every thread of the grid waits on that word. So a grid phase has every
//! semantic of a team's phase (tokens, leaving, poisoning, the ordering of
//! a `Barrier` phase), and costs what a team of as many seats costs.
//!
//! A grid of one block (every plain [`launch`](super::launch())) has no
//! grid barrier of its own: its threads are exactly the block's, so
//! `grid.sync()` is a sync of the block's barrier, through the thread's
//! block seat, and a plain launch builds nothing for its grid.

use super::root_cause;
use crate::block::{BlockSeat, SyncCall, SyncOn};
use crate::op::PoisonedQuietly;
use crate::team::{Seat, Team};
use crate::token::ArrivalToken;
use std::fmt;

/// One thread's handle on its grid, from [`Block::grid`](super::Block::grid):
/// `cooperative_groups::this_grid()`.
///
/// Every thread of every block of a [`launch_grid`](super::launch_grid)
/// runs at once (the launch gives each rank a thread of its own), so
/// [`sync`](Grid::sync) never waits on scheduling: a cooperative launch by
/// construction.
///
/// # The grid's barrier
///
/// [`sync`](Grid::sync) waits for every thread of every block; the split
/// form [`arrive`](Grid::arrive) + [`wait`](Grid::wait) is the same
/// barrier (CUDA's `barrier_arrive` / `barrier_wait`), so in one phase some
/// threads may `sync` while others `arrive` and later `wait`. A thread whose
/// kernel returns leaves its block and the grid: later phases wait for one
/// thread fewer. `block.sync()` still syncs only the thread's own block,
/// and is another barrier than the grid's (except in a grid of one block,
/// whose threads are exactly the block's: there the grid syncs on the
/// block's barrier, which CUDA programs cannot tell apart).
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// // Each block writes its slot, the grid syncs, every thread reads all.
/// let slots: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
/// let sums = syncthreads::launch_grid(3, 2, |block| {
///     let grid = block.grid();
///     if block.thread_rank() == 0 {
///         slots[grid.block_rank()].store(grid.block_rank() + 1, Ordering::Relaxed);
///     }
///     grid.sync();
///     slots.iter().map(|s| s.load(Ordering::Relaxed)).sum::<usize>()
/// });
/// assert_eq!(sums, [6; 6]);
/// ```
pub struct Grid<'a> {
    /// This thread's rank in its block.
    pub(super) rank: usize,
    /// This thread's seat in its block.
    pub(super) seat: BlockSeat<'a>,
    /// The grid's barrier, for a grid of more than one block.
    pub(super) wide: Option<Wide<'a>>,
}

/// A thread's part of a grid of more than one block.
pub(super) struct Wide<'a> {
    /// This thread's seat in the grid's team (its grid rank).
    pub(super) seat: Seat<'a>,
    pub(super) barrier: &'a GridBarrier,
    pub(super) block_rank: usize,
}

impl Drop for Wide<'_> {
    /// Before the grid seat leaves (its own drop, after this): as a
    /// leading sync does, forgets the first `grid.sync()` of the phase two
    /// ahead, since the phase this leave completes may have no leading
    /// sync to do it. Ordered as a leading sync's clear: after this seat's
    /// last arrival, which came after every sync of that earlier phase,
    /// and before its leave, which comes before every sync of the later
    /// one. Not while unwinding or on a poisoned grid, which no phase
    /// follows.
    fn drop(&mut self) {
        if crate::diagnostics::sites::Sites::RECORDS
            && !std::thread::panicking()
            && !self.barrier.team.is_poisoned()
        {
            let k = self.seat.next_phase();
            self.barrier.sites.clear(k.plus(2).index());
        }
    }
}

/// The barrier of a grid of more than one block.
pub(super) struct GridBarrier {
    pub(super) team: Team,
    pub(super) blocks: usize,
    pub(super) threads: usize,
    /// The first `grid.sync()` of each phase mod 4, for the divergence check.
    sites: crate::diagnostics::sites::Sites,
}

impl GridBarrier {
    /// The barrier of `blocks × threads` threads (checked by the caller).
    pub(super) fn new(blocks: usize, threads: usize) -> GridBarrier {
        GridBarrier {
            team: Team::grid(blocks, threads),
            blocks,
            threads,
            sites: crate::diagnostics::sites::Sites::new(),
        }
    }

    /// Back to its state when new, in place, every seat left: false,
    /// changing nothing, if it is poisoned (as a block's re-arm).
    pub(super) fn rearm(&self) -> bool {
        if self.team.is_poisoned() {
            return false;
        }
        self.team.rearm();
        if crate::diagnostics::sites::Sites::RECORDS {
            (0..crate::phase::Phase::COUNT).for_each(|k| self.sites.clear(k));
        }
        true
    }

    /// The seat of grid rank `rank`; each taken once, by the caller's
    /// promise.
    pub(super) fn seat(&self, rank: usize) -> Seat<'_> {
        self.team
            .try_seat(rank)
            .expect("each rank of a grid takes its seat once")
    }

    /// While the guard lives, this thread's wait is reported as a wait of
    /// grid rank `rank` on the grid (its missing threads named as
    /// (block, thread) pairs), made at the caller's call site.
    #[track_caller]
    fn describe_wait(&self, rank: usize) -> crate::diagnostics::DescribeAs {
        let subject = crate::diagnostics::Subject {
            ptr: std::ptr::from_ref(self).cast(),
            describe: describe_grid,
            level: 2,
        };
        crate::diagnostics::describe_as(
            self.team.key(),
            subject,
            std::panic::Location::caller(),
            Some(crate::diagnostics::Who::Rank(rank)),
        )
    }

    /// The divergence check of a `grid.sync()` of phase `k` by grid rank
    /// `rank`, at the caller's call site: a sync that differs from the
    /// phase's first poisons the grid and panics (unless it is poisoned
    /// already: then the arrival panics as usual).
    #[track_caller]
    fn check_sync(&self, k: usize, rank: usize) {
        use crate::diagnostics::sites::{Kind, Site};
        let site = Site {
            location: std::panic::Location::caller(),
            kind: Kind::Sync,
            rank: Some(rank),
        };
        if let Err(divergence) = self.sites.check(k, site) {
            if !self.team.is_poisoned() {
                self.team.poison();
                panic!("{divergence} (grid.sync(), grid ranks)");
            }
        }
    }
}

impl fmt::Debug for GridBarrier {
    /// The grid's shape and its current phase's progress, e.g.
    /// `Grid { blocks: 4, threads: 4, arrived: 3, expected: 16, barrier: Barrier { .. } }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Grid");
        d.field("blocks", &self.blocks)
            .field("threads", &self.threads);
        self.team.debug_progress(&mut d);
        d.field("barrier", self.team.barrier_debug()).finish()
    }
}

/// A grid's barrier for a stall report: its kind, `Debug`, and missing
/// grid ranks, shown as (block, thread) pairs.
///
/// # Safety
///
/// `ptr` points to a live `GridBarrier`.
unsafe fn describe_grid(ptr: *const (), _: u64, phase: u64) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let grid = unsafe { &*ptr.cast::<GridBarrier>() };
    crate::diagnostics::Described {
        kind: "Grid",
        debug: format!("{grid:?}"),
        missing: Some(grid.team.missing_in_phase(phase)),
        mask: None,
        block_threads: Some(grid.threads),
    }
}

/// Proof of a thread's [`Grid::arrive`], to be handed to [`Grid::wait`]:
/// the grid's [`ArrivalToken`].
///
/// # Examples
///
/// ```
/// let ranks = syncthreads::launch_grid(2, 2, |block| {
///     let grid = block.grid();
///     let token = grid.arrive();
///     let mine = grid.thread_rank(); // work not covered by the phase
///     grid.wait(token);
///     mine
/// });
/// assert_eq!(ranks, [0, 1, 2, 3]);
/// ```
#[must_use = "a grid token does nothing unless waited on; drop it explicitly if the wait is not needed"]
#[derive(Debug)]
pub struct GridToken(ArrivalToken);

impl Grid<'_> {
    /// While the guard lives, a sync or wait that finds the grid (or the
    /// one block) poisoned leaves quietly, as `Block::sync` does.
    #[inline]
    fn leave_quietly() -> PoisonedQuietly {
        PoisonedQuietly::new(root_cause::block_poisoned)
    }

    /// The number of threads per block.
    fn threads(&self) -> usize {
        self.seat.block().threads()
    }

    /// This thread's rank in the grid, `0 .. size()`:
    /// `block_rank() * threads + block.thread_rank()`
    /// (`grid.thread_rank()`).
    ///
    /// # Examples
    ///
    /// ```
    /// let ranks = syncthreads::launch_grid(2, 3, |block| block.grid().thread_rank());
    /// assert_eq!(ranks, [0, 1, 2, 3, 4, 5]);
    /// ```
    #[must_use]
    pub fn thread_rank(&self) -> usize {
        self.block_rank() * self.threads() + self.rank
    }

    /// The number of threads in the grid, `num_blocks() × threads`
    /// (`grid.size()`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch_grid(2, 3, |block| block.grid().size()), [6; 6]);
    /// ```
    #[must_use]
    pub fn size(&self) -> usize {
        self.num_blocks() * self.threads()
    }

    /// The number of blocks of the grid (`gridDim.x`); 1 in a plain
    /// [`launch`](super::launch()).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch_grid(3, 1, |block| block.grid().num_blocks()), [3; 3]);
    /// assert_eq!(syncthreads::launch(2, |block| block.grid().num_blocks()), [1; 2]);
    /// ```
    #[must_use]
    pub fn num_blocks(&self) -> usize {
        self.wide.as_ref().map_or(1, |w| w.barrier.blocks)
    }

    /// The rank of this thread's block in the grid (`blockIdx.x`); 0 in a
    /// plain [`launch`](super::launch()).
    ///
    /// # Examples
    ///
    /// ```
    /// let blocks = syncthreads::launch_grid(3, 2, |block| block.grid().block_rank());
    /// assert_eq!(blocks, [0, 0, 1, 1, 2, 2]);
    /// ```
    #[must_use]
    pub fn block_rank(&self) -> usize {
        self.wide.as_ref().map_or(0, |w| w.block_rank)
    }

    /// Waits for every thread of every block of the grid: `grid.sync()`,
    /// CUDA's `this_grid().sync()`.
    ///
    /// Everything a thread of the grid did before its `sync` (or its
    /// [`arrive`](Grid::arrive)) is visible to every thread of the grid
    /// after its `sync` (or [`wait`](Grid::wait)) of that phase.
    ///
    /// # Panics
    ///
    /// If a thread of the grid panicked (the grid is poisoned), this
    /// thread unwinds out of `sync`, quietly, as out of
    /// [`Block::sync`](super::Block::sync), and
    /// [`launch_grid`](super::launch_grid) re-raises the root cause. With
    /// the `diagnostics` feature, a `sync` of a phase from another call
    /// site than the phase's first panics naming both, and poisons the grid.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// // A grid-wide sum: each thread adds its rank, the grid syncs, all read it.
    /// let total = AtomicU64::new(0);
    /// let seen = syncthreads::launch_grid(4, 4, |block| {
    ///     let grid = block.grid();
    ///     total.fetch_add(grid.thread_rank() as u64, Ordering::Relaxed);
    ///     grid.sync();
    ///     total.load(Ordering::Relaxed)
    /// });
    /// assert_eq!(seen, [120; 16]);
    /// ```
    #[track_caller]
    #[inline]
    pub fn sync(&self) {
        let _quiet = Grid::leave_quietly();
        match &self.wide {
            None => {
                self.seat.sync_as(SyncCall::Sync, SyncOn::Grid);
            }
            Some(wide) => {
                let k = wide.seat.next_phase();
                let rank = self.thread_rank();
                wide.barrier.check_sync(k.index(), rank);
                let _as = wide.barrier.describe_wait(rank);
                let led = wide.seat.arrive_and_wait_as("Grid::sync()").is_leader();
                if led {
                    wide.barrier.sites.clear(k.plus(2).index());
                }
            }
        }
    }

    /// This thread's arrival in the current grid phase, without waiting:
    /// CUDA's `grid.barrier_arrive()`. Work between `arrive` and
    /// [`wait`](Grid::wait) is not covered by the phase (the other threads
    /// need not see it); the token is waited on with `wait`, as a
    /// [`Barrier`](crate::Barrier)'s token.
    ///
    /// # Panics
    ///
    /// As [`sync`](Grid::sync) if the grid is poisoned; and if this thread
    /// arrives twice in one phase (an `arrive` whose token was not waited
    /// on before the next `arrive` or `sync`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let flags: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
    /// let got = syncthreads::launch_grid(2, 2, |block| {
    ///     let grid = block.grid();
    ///     let me = grid.thread_rank();
    ///     flags[me].store(me + 1, Ordering::Relaxed);
    ///     let token = grid.arrive();
    ///     let local = me * 10; // overlaps the other threads' arrivals
    ///     grid.wait(token);
    ///     local + flags[(me + 1) % 4].load(Ordering::Relaxed)
    /// });
    /// assert_eq!(got, [2, 13, 24, 31]);
    /// ```
    #[track_caller]
    #[inline]
    pub fn arrive(&self) -> GridToken {
        let _quiet = Grid::leave_quietly();
        GridToken(match &self.wide {
            None => self.seat.arrive_split("Grid::arrive()"),
            Some(wide) => {
                let k = wide.seat.next_phase();
                let (token, completed) = wide.seat.arrive_named("Grid::arrive()");
                if completed {
                    // As a leading sync's clear: every sync of this phase
                    // checked its site before its arrival, and the next
                    // phase's come after this thread's next arrival.
                    wide.barrier.sites.clear(k.plus(2).index());
                }
                token
            }
        })
    }

    /// Waits for the grid phase of `token` to complete: CUDA's
    /// `grid.barrier_wait(token)`.
    ///
    /// # Panics
    ///
    /// As [`sync`](Grid::sync) if the grid is poisoned; in debug builds, if
    /// `token` is from another grid.
    ///
    /// # Examples
    ///
    /// ```
    /// let done = syncthreads::launch_grid(2, 1, |block| {
    ///     let token = block.grid().arrive();
    ///     block.grid().wait(token);
    ///     true
    /// });
    /// assert_eq!(done, [true, true]);
    /// ```
    #[track_caller]
    #[inline]
    pub fn wait(&self, token: GridToken) {
        let _quiet = Grid::leave_quietly();
        match &self.wide {
            None => self.seat.block().wait_split(token.0),
            Some(wide) => {
                let _as = wide.barrier.describe_wait(self.thread_rank());
                wide.barrier.team.wait(token.0);
            }
        }
    }

    /// Poisons the grid's barrier: every thread in, or later entering, a
    /// [`sync`](Grid::sync) or [`wait`](Grid::wait) of the grid unwinds
    /// instead of hanging, and [`launch_grid`](super::launch_grid) panics
    /// once every thread has ended. A panicking kernel does this for you,
    /// and poisons every block's barrier too.
    ///
    /// # Examples
    ///
    /// ```
    /// let result = std::panic::catch_unwind(|| {
    ///     syncthreads::launch_grid(2, 2, |block| {
    ///         if block.grid().thread_rank() == 3 {
    ///             block.grid().poison();
    ///         }
    ///         block.grid().sync();
    ///     })
    /// });
    /// assert!(result.is_err());
    /// ```
    pub fn poison(&self) {
        match &self.wide {
            None => self.seat.block().poison(),
            Some(wide) => wide.barrier.team.poison(),
        }
    }

    /// Whether the grid's barrier is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch_grid(2, 1, |block| block.grid().is_poisoned()), [false; 2]);
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        match &self.wide {
            None => self.seat.block().is_poisoned(),
            Some(wide) => wide.barrier.team.is_poisoned(),
        }
    }
}

impl fmt::Debug for Grid<'_> {
    /// The thread's grid rank, the grid's shape and the progress of its
    /// current phase, e.g.
    /// `Grid { thread_rank: 5, block_rank: 1, num_blocks: 4, size: 16, arrived: 3, expected: 16 }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Grid");
        d.field("thread_rank", &self.thread_rank())
            .field("block_rank", &self.block_rank())
            .field("num_blocks", &self.num_blocks())
            .field("size", &self.size());
        match &self.wide {
            None => self.seat.block().debug_progress(&mut d),
            Some(wide) => wide.barrier.team.debug_progress(&mut d),
        }
        d.finish()
    }
}
