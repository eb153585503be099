//! [`Tile`]: a thread's handle on its tile of a block
//! (`cooperative_groups::tiled_partition`), and `Tiles`, the warps of a
//! block's tiles, made once per size on first use.

use super::lanes::Shuffle;
use super::{WarpBarrier, WarpInt};
use crate::op::{PoisonedQuietly, QuietPayload};
// std's, not the model's: tiles are made and poisoned beside the models,
// never inside one (a `OnceLock` is not a model object either).
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::OnceLock;

/// The warps of a block's tiles: for each tile size `2^k` (`k` in 0..=6),
/// the block's `threads / 2^k` warps, made on first use.
pub(crate) struct Tiles {
    sizes: [OnceLock<Box<[WarpBarrier]>>; 7],
    poisoned: AtomicBool,
}

impl Tiles {
    pub(crate) fn new() -> Tiles {
        Tiles {
            sizes: Default::default(),
            poisoned: AtomicBool::new(false),
        }
    }

    /// The warps of the tiles of `n` threads (`n` a power of two up to 64
    /// dividing `threads`, checked by the caller).
    pub(crate) fn of(&self, n: usize, threads: usize) -> &[WarpBarrier] {
        let mut made = false;
        let warps = self.sizes[n.trailing_zeros() as usize].get_or_init(|| {
            made = true;
            (0..threads / n).map(|_| WarpBarrier::new(n)).collect()
        });
        if made {
            // SeqCst: against `poison`'s fence: either it sees these warps,
            // or their maker sees its flag (the store-buffering pattern).
            fence(Ordering::SeqCst);
            if self.poisoned.load(Ordering::Relaxed) {
                warps.iter().for_each(WarpBarrier::poison);
            }
        }
        warps
    }

    /// Whether any size's warps were made: a launch's lanes may leave a
    /// warp mid-phase, so a block whose tiles were made is not re-armed.
    pub(crate) fn made(&self) -> bool {
        self.sizes.iter().any(|size| size.get().is_some())
    }

    /// Poisons every tile, made or still to come: no thread hangs in a
    /// tile's sync or collective.
    pub(crate) fn poison(&self) {
        self.poisoned.store(true, Ordering::Relaxed);
        // SeqCst: see `of`.
        fence(Ordering::SeqCst);
        for warps in self.sizes.iter().filter_map(OnceLock::get) {
            warps.iter().for_each(WarpBarrier::poison);
        }
    }
}

/// One thread's handle on its tile, a group of `size()` consecutive ranks
/// of its block: `cooperative_groups::thread_block_tile`, made by
/// [`Block::tiled_partition`](crate::Block::tiled_partition).
///
/// A tile's collectives are a [`WarpBarrier`]'s with the whole tile taking
/// part: every thread of a tile calls the same ones in the same order, as
/// in CUDA. Tiles never wait for each other. If a thread of the block
/// panics, every tile is poisoned: a thread in (or later entering) a tile's
/// sync or collective unwinds instead of hanging, quietly, as in
/// [`Block::sync`](crate::Block::sync).
///
/// # Examples
///
/// ```
/// let sums = syncthreads::launch(64, |block| {
///     let tile = block.tiled_partition(32);
///     tile.reduce_add(block.thread_rank() as u32)
/// });
/// assert_eq!(sums[0], (0..32).sum());
/// assert_eq!(sums[63], (32..64).sum());
/// ```
pub struct Tile<'a> {
    warp: &'a WarpBarrier,
    rank: usize,
    mask: u64,
    meta_rank: usize,
    meta_size: usize,
    quiet: QuietPayload,
}

/// A tile call: the quiet guard, then the warp's call on the whole tile.
macro_rules! on_tile {
    ($self:ident, $method:ident, $call:literal $(, $arg:expr)*) => {{
        let _quiet = PoisonedQuietly::new($self.quiet);
        $self.warp.$method($call, $self.rank, $self.mask $(, $arg)*)
    }};
}

impl<'a> Tile<'a> {
    pub(crate) fn new(warps: &'a [WarpBarrier], rank: usize, quiet: QuietPayload) -> Tile<'a> {
        let n = warps[0].lanes();
        Tile {
            warp: &warps[rank / n],
            rank: rank % n,
            mask: warps[0].full_mask(),
            meta_rank: rank / n,
            meta_size: warps.len(),
            quiet,
        }
    }

    /// This thread's rank in its tile, `0 .. size()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let ranks = syncthreads::launch(4, |block| block.tiled_partition(2).thread_rank());
    /// assert_eq!(ranks, [0, 1, 0, 1]);
    /// ```
    #[must_use]
    pub fn thread_rank(&self) -> usize {
        self.rank
    }

    /// The number of threads in the tile.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch(4, |block| block.tiled_partition(2).size()), [2; 4]);
    /// ```
    #[must_use]
    pub fn size(&self) -> usize {
        self.warp.lanes()
    }

    /// Which tile of the block this is, `0 .. meta_group_size()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let tiles = syncthreads::launch(4, |block| block.tiled_partition(2).meta_group_rank());
    /// assert_eq!(tiles, [0, 0, 1, 1]);
    /// ```
    #[must_use]
    pub fn meta_group_rank(&self) -> usize {
        self.meta_rank
    }

    /// How many tiles the block has.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch(8, |block| block.tiled_partition(2).meta_group_size()), [4; 8]);
    /// ```
    #[must_use]
    pub fn meta_group_size(&self) -> usize {
        self.meta_size
    }

    /// Waits for every thread of the tile: `tile.sync()`.
    ///
    /// # Panics
    ///
    /// If the block is poisoned (a thread panicked), unwinding quietly; if
    /// another thread acts as this one in a tile collective.
    ///
    /// # Examples
    ///
    /// ```
    /// syncthreads::launch(8, |block| block.tiled_partition(4).sync());
    /// ```
    #[track_caller]
    pub fn sync(&self) {
        on_tile!(self, sync_as, "Tile::sync")
    }

    /// The tile's votes: bit `i` set if thread `i` passed true
    /// (`tile.ballot(pred)`). As [`WarpBarrier::ballot`] on the whole tile.
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let votes = syncthreads::launch(4, |block| block.tiled_partition(4).ballot(block.thread_rank() > 1));
    /// assert_eq!(votes, [0b1100; 4]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn ballot(&self, pred: bool) -> u64 {
        on_tile!(self, ballot_as, "Tile::ballot", pred)
    }

    /// Whether any thread of the tile passed true (`tile.any(pred)`).
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let any = syncthreads::launch(4, |block| block.tiled_partition(2).any(block.thread_rank() == 3));
    /// assert_eq!(any, [false, false, true, true]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn any(&self, pred: bool) -> bool {
        on_tile!(self, ballot_as, "Tile::any", pred) != 0
    }

    /// Whether every thread of the tile passed true (`tile.all(pred)`).
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let all = syncthreads::launch(4, |block| block.tiled_partition(2).all(block.thread_rank() < 2));
    /// assert_eq!(all, [true, true, false, false]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn all(&self, pred: bool) -> bool {
        on_tile!(self, ballot_as, "Tile::all", pred) == self.mask
    }

    /// Thread `src % size()`'s `value` (`tile.shfl(value, src)`): as
    /// [`WarpBarrier::shfl`] with the tile's size as the width.
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(2).shfl(block.thread_rank(), 1));
    /// assert_eq!(got, [1, 1, 3, 3]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl<T: Copy + Send + 'static>(&self, value: T, src: usize) -> T {
        on_tile!(
            self,
            shuffle_as,
            "Tile::shfl",
            value,
            Shuffle::Idx(src),
            self.size()
        )
    }

    /// Thread `thread_rank() - delta`'s `value`, or the own one if there is
    /// none (`tile.shfl_up(value, delta)`): as [`WarpBarrier::shfl_up`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(4).shfl_up(block.thread_rank(), 1));
    /// assert_eq!(got, [0, 0, 1, 2]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl_up<T: Copy + Send + 'static>(&self, value: T, delta: usize) -> T {
        on_tile!(
            self,
            shuffle_as,
            "Tile::shfl_up",
            value,
            Shuffle::Up(delta),
            self.size()
        )
    }

    /// Thread `thread_rank() + delta`'s `value`, or the own one if there is
    /// none (`tile.shfl_down(value, delta)`): as [`WarpBarrier::shfl_down`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(4).shfl_down(block.thread_rank(), 2));
    /// assert_eq!(got, [2, 3, 2, 3]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl_down<T: Copy + Send + 'static>(&self, value: T, delta: usize) -> T {
        on_tile!(
            self,
            shuffle_as,
            "Tile::shfl_down",
            value,
            Shuffle::Down(delta),
            self.size()
        )
    }

    /// Thread `thread_rank() ^ lane_mask`'s `value`
    /// (`tile.shfl_xor(value, lane_mask)`): as [`WarpBarrier::shfl_xor`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(4).shfl_xor(block.thread_rank(), 3));
    /// assert_eq!(got, [3, 2, 1, 0]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl_xor<T: Copy + Send + 'static>(&self, value: T, lane_mask: usize) -> T {
        on_tile!(
            self,
            shuffle_as,
            "Tile::shfl_xor",
            value,
            Shuffle::Xor(lane_mask),
            self.size()
        )
    }

    /// The threads of the tile whose `value` equals this one's
    /// (`tile.match_any(value)`): as [`WarpBarrier::match_any`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(4).match_any(block.thread_rank() / 3));
    /// assert_eq!(got, [0b0111, 0b0111, 0b0111, 0b1000]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn match_any<T: Copy + Eq + Send + 'static>(&self, value: T) -> u64 {
        on_tile!(self, match_any_as, "Tile::match_any", value)
    }

    /// `Some(mask of the tile)` if every thread of the tile holds an equal
    /// `value`, else `None` (`tile.match_all(value, pred)`).
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(2).match_all(block.thread_rank() / 2));
    /// assert_eq!(got, [Some(0b11); 4]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn match_all<T: Copy + Eq + Send + 'static>(&self, value: T) -> Option<u64> {
        on_tile!(self, match_all_as, "Tile::match_all", value)
    }

    /// The left fold of the tile's values in rank order, `op(op(v0, v1),
    /// v2)…`: `cg::reduce(tile, value, op)`, the same result on every thread.
    /// See [`WarpBarrier::reduce`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Tile::sync), and if `op` panics.
    ///
    /// # Examples
    ///
    /// ```
    /// let got = syncthreads::launch(4, |block| block.tiled_partition(4).reduce(block.thread_rank() as f64, |a, b| a + b));
    /// assert_eq!(got, [6.0; 4]);
    /// ```
    #[track_caller]
    pub fn reduce<T: Copy + Send + 'static>(&self, value: T, op: impl Fn(T, T) -> T) -> T {
        on_tile!(self, reduce_as, "Tile::reduce", value, op)
    }
}

/// Declares the tile's integer reductions.
macro_rules! tile_reductions {
    ($($name:ident, $as_name:ident, $call:literal, $cuda:literal;)*) => {
        impl Tile<'_> {$(
            #[doc = concat!("The tile's `", $cuda, "` (`cg::reduce` with `cg::", $cuda, "`): as [`WarpBarrier::", stringify!($name), "`] on the whole tile.")]
            ///
            /// # Panics
            ///
            /// As [`sync`](Tile::sync).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let got = syncthreads::launch(4, |block| block.tiled_partition(4).", stringify!($name), "(block.thread_rank() as u32 + 1));")]
            /// assert!(got.iter().all(|&v| v == got[0]));
            /// ```
            #[track_caller]
            #[must_use]
            pub fn $name<T: WarpInt>(&self, value: T) -> T {
                on_tile!(self, $as_name, $call, value)
            }
        )*}
    };
}

tile_reductions! {
    reduce_add, reduce_add_as, "Tile::reduce_add", "plus";
    reduce_min, reduce_min_as, "Tile::reduce_min", "less";
    reduce_max, reduce_max_as, "Tile::reduce_max", "greater";
    reduce_and, reduce_and_as, "Tile::reduce_and", "bit_and";
    reduce_or, reduce_or_as, "Tile::reduce_or", "bit_or";
    reduce_xor, reduce_xor_as, "Tile::reduce_xor", "bit_xor";
}
