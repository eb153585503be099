//! [`Block`]: one thread's handle on its block, the syncs a kernel makes
//! and what it asks of the block.

use super::grid::Grid;
use super::root_cause;
use crate::block::{BlockBarrier, BlockSeat, SyncCall, SyncOn};
use crate::op::PoisonedQuietly;
use std::fmt;

/// One thread's handle on its block, handed to the kernel by [`launch`](super::launch()): the
/// CPU form of `cooperative_groups::this_thread_block()`.
///
/// # Examples
///
/// ```
/// let ranks = syncthreads::launch(4, |block| {
///     assert_eq!(block.size(), 4);
///     block.sync();
///     block.thread_rank()
/// });
/// assert_eq!(ranks, [0, 1, 2, 3]);
/// ```
pub struct Block<'a> {
    /// This thread's rank and seat in the block (its syncs go through the
    /// block's combining tree), and its part of the grid.
    pub(super) grid: Grid<'a>,
}

impl<'a> Block<'a> {
    /// This thread's seat in the block.
    #[inline]
    fn seat(&self) -> &BlockSeat<'a> {
        &self.grid.seat
    }

    /// This thread's rank in the block, `0 .. size()`: `thread_rank()`
    /// (`threadIdx.x` for a one-dimensional block).
    ///
    /// # Examples
    ///
    /// ```
    /// let ranks = syncthreads::launch(2, |block| block.thread_rank());
    /// assert_eq!(ranks, [0, 1]);
    /// ```
    #[must_use]
    pub fn thread_rank(&self) -> usize {
        self.grid.rank
    }

    /// The number of threads in the block: `size()` (`blockDim.x`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch(3, |block| block.size()), [3, 3, 3]);
    /// ```
    #[must_use]
    pub fn size(&self) -> usize {
        self.seat().block().threads()
    }

    /// The rank of this thread's block in its grid, `0 .. num_blocks()`
    /// (`blockIdx.x`); 0 in a plain [`launch`](super::launch()).
    ///
    /// # Examples
    ///
    /// ```
    /// let blocks = syncthreads::launch_grid(2, 2, |block| block.block_rank());
    /// assert_eq!(blocks, [0, 0, 1, 1]);
    /// ```
    #[must_use]
    pub fn block_rank(&self) -> usize {
        self.grid.block_rank()
    }

    /// The number of blocks in the grid (`gridDim.x`); 1 in a plain
    /// [`launch`](super::launch()).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch_grid(3, 1, |block| block.num_blocks()), [3; 3]);
    /// assert_eq!(syncthreads::launch(2, |block| block.num_blocks()), [1; 2]);
    /// ```
    #[must_use]
    pub fn num_blocks(&self) -> usize {
        self.grid.num_blocks()
    }

    /// The grid this block belongs to: `this_grid()`, for
    /// [`Grid::sync`] and the grid's ranks.
    ///
    /// # Examples
    ///
    /// ```
    /// let ranks = syncthreads::launch_grid(2, 2, |block| {
    ///     block.grid().sync();
    ///     block.grid().thread_rank()
    /// });
    /// assert_eq!(ranks, [0, 1, 2, 3]);
    /// ```
    #[must_use]
    pub fn grid(&self) -> &Grid<'a> {
        &self.grid
    }

    /// Waits for every thread of the block: `__syncthreads()`,
    /// `block.sync()`. See [`BlockBarrier::sync`].
    ///
    /// # Panics
    ///
    /// If another thread of the block panicked (the barrier is poisoned),
    /// this thread unwinds out of `sync` so that it does not hang. That
    /// unwinding is not a panic of its own: nothing is printed, the panic
    /// hook is not called, and [`launch`](super::launch()) re-raises the other thread's panic
    /// (a `catch_unwind` around `sync` would catch an opaque payload).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let shared: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
    /// let got = syncthreads::launch(8, |block| {
    ///     let rank = block.thread_rank();
    ///     shared[rank].store(rank * rank, Ordering::Relaxed);
    ///     block.sync();
    ///     shared[(rank + 1) % 8].load(Ordering::Relaxed)
    /// });
    /// assert_eq!(got, [1, 4, 9, 16, 25, 36, 49, 0]);
    /// ```
    #[track_caller]
    #[inline]
    pub fn sync(&self) {
        let _quiet = self.leave_quietly();
        self.seat().sync_as(SyncCall::Sync, SyncOn::Block);
    }

    /// `__syncthreads_count(pred)`; see [`BlockBarrier::sync_count`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Block::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let counts = syncthreads::launch(4, |block| block.sync_count(block.thread_rank() < 3));
    /// assert_eq!(counts, [3, 3, 3, 3]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the count is not needed"]
    pub fn sync_count(&self, pred: bool) -> usize {
        let _quiet = self.leave_quietly();
        self.seat()
            .sync_as(SyncCall::Count(pred), SyncOn::Block)
            .count()
    }

    /// `__syncthreads_and(pred)`; see [`BlockBarrier::sync_and`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Block::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let all = syncthreads::launch(4, |block| block.sync_and(block.thread_rank() < 3));
    /// assert_eq!(all, [false; 4]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_and(&self, pred: bool) -> bool {
        let _quiet = self.leave_quietly();
        self.seat()
            .sync_as(SyncCall::And(pred), SyncOn::Block)
            .all()
    }

    /// `__syncthreads_or(pred)`; see [`BlockBarrier::sync_or`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Block::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let any = syncthreads::launch(4, |block| block.sync_or(block.thread_rank() == 3));
    /// assert_eq!(any, [true; 4]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_or(&self, pred: bool) -> bool {
        let _quiet = self.leave_quietly();
        self.seat().sync_as(SyncCall::Or(pred), SyncOn::Block).any()
    }

    /// While the guard lives, a sync that finds the block poisoned leaves
    /// it quietly (`launch/root_cause.rs`). A guard, not a closure, so that
    /// `#[track_caller]` reaches the seat's sync.
    #[inline]
    fn leave_quietly(&self) -> PoisonedQuietly {
        PoisonedQuietly::new(root_cause::block_poisoned)
    }

    /// Splits the block into tiles of `n` consecutive ranks and returns this
    /// thread's: `cooperative_groups::tiled_partition(block, n)`. Every
    /// thread of a tile shares its warp of collectives; tiles never wait
    /// for each other. Call it as often as you like: a size's tiles are
    /// made once per block, on first use.
    ///
    /// # Panics
    ///
    /// Unless `n` is a power of two in `1 ..= 64` that divides
    /// [`size()`](Block::size).
    ///
    /// # Examples
    ///
    /// ```
    /// let tiles = syncthreads::launch(8, |block| {
    ///     let tile = block.tiled_partition(4);
    ///     (tile.meta_group_rank(), tile.thread_rank(), tile.reduce_add(1u32))
    /// });
    /// assert_eq!(tiles[5], (1, 1, 4));
    /// ```
    #[track_caller]
    #[must_use]
    pub fn tiled_partition(&self, n: usize) -> crate::Tile<'_> {
        let size = self.size();
        if !n.is_power_of_two() || n > 64 || size % n != 0 {
            panic!(
                "syncthreads: Block::tiled_partition({n}): the tile size must be a power of two in 1 ..= 64 that divides the block's {size} threads"
            );
        }
        let warps = self.barrier().tiles.of(n, size);
        crate::Tile::new(warps, self.thread_rank(), root_cause::block_poisoned)
    }

    /// The block's barrier, for its queries ([`threads`](BlockBarrier::threads),
    /// `Debug`) and [`poison`](BlockBarrier::poison). Its threads sync
    /// through their seats, so the barrier's own seat-less
    /// [`sync`](BlockBarrier::sync) and its [`seat`](BlockBarrier::seat)
    /// panic: sync through the `Block`.
    ///
    /// # Examples
    ///
    /// ```
    /// let sizes = syncthreads::launch(2, |block| block.barrier().threads());
    /// assert_eq!(sizes, [2, 2]);
    /// ```
    #[must_use]
    pub fn barrier(&self) -> &BlockBarrier {
        self.seat().block()
    }
}

impl Drop for Block<'_> {
    /// A thread that unwinds poisons the block's tiles (its seat poisons
    /// the block's barrier), so that no thread hangs in a tile.
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.barrier().tiles.poison();
        }
    }
}

impl fmt::Debug for Block<'_> {
    /// The thread's rank, the block's progress in the current phase and
    /// its size, e.g. `Block { thread_rank: 3, arrived: 5, expected: 16, size: 16 }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Block");
        d.field("thread_rank", &self.grid.rank);
        self.seat().block().debug_progress(&mut d);
        d.field("size", &self.size()).finish()
    }
}
