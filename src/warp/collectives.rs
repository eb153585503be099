//! The votes, shuffles and matches of a `WarpBarrier`: `__ballot_sync`,
//! `__any_sync`, `__all_sync`, `__shfl*_sync`, `__match_any_sync`,
//! `__match_all_sync`, each one episode of the mask's lanes
//! (`warp/episode.rs`). What each lane gets: the case table of
//! docs/design/warp-collectives.md.

use super::lanes::{self, Shuffle};
use super::WarpBarrier;

/// The lanes of `mask`, lowest first.
pub(super) fn each(mask: u64) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            lane
        })
    })
}

impl WarpBarrier {
    /// Called by lane `lane`: syncs the lanes of `mask` as
    /// [`sync`](WarpBarrier::sync) does and returns the mask of those whose
    /// `pred` is true. `__ballot_sync(mask, pred)`.
    ///
    /// Every lane of `mask` gets the same bits; lanes outside `mask` are 0.
    ///
    /// # Panics
    ///
    /// As [`sync`](WarpBarrier::sync) for `lane` and `mask`, and if another
    /// thread is in a collective as the same lane.
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(4);
    /// let votes = syncthreads::launch(4, |block| {
    ///     let lane = block.thread_rank();
    ///     warp.ballot(lane, 0b1111, lane % 2 == 1)
    /// });
    /// assert_eq!(votes, [0b1010; 4]);
    /// ```
    #[track_caller]
    #[must_use = "use `sync` if the votes are not needed"]
    pub fn ballot(&self, lane: usize, mask: u64, pred: bool) -> u64 {
        self.ballot_as("WarpBarrier::ballot", lane, mask, pred)
    }

    #[track_caller]
    pub(crate) fn ballot_as(&self, call: &'static str, lane: usize, mask: u64, pred: bool) -> u64 {
        self.vote(call, lane, mask, pred)
    }

    /// Whether `pred` is true on any lane of `mask`: `__any_sync(mask, pred)`.
    /// One episode, as [`ballot`](WarpBarrier::ballot).
    ///
    /// # Panics
    ///
    /// As [`ballot`](WarpBarrier::ballot).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(2);
    /// let any = syncthreads::launch(2, |block| warp.any(block.thread_rank(), 0b11, block.thread_rank() == 1));
    /// assert_eq!(any, [true, true]);
    /// ```
    #[track_caller]
    #[must_use = "use `sync` if the vote is not needed"]
    pub fn any(&self, lane: usize, mask: u64, pred: bool) -> bool {
        self.ballot_as("WarpBarrier::any", lane, mask, pred) != 0
    }

    /// Whether `pred` is true on every lane of `mask`: `__all_sync(mask, pred)`.
    /// One episode, as [`ballot`](WarpBarrier::ballot).
    ///
    /// # Panics
    ///
    /// As [`ballot`](WarpBarrier::ballot).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(2);
    /// let all = syncthreads::launch(2, |block| warp.all(block.thread_rank(), 0b11, block.thread_rank() == 1));
    /// assert_eq!(all, [false, false]);
    /// ```
    #[track_caller]
    #[must_use = "use `sync` if the vote is not needed"]
    pub fn all(&self, lane: usize, mask: u64, pred: bool) -> bool {
        self.ballot_as("WarpBarrier::all", lane, mask, pred) == mask
    }

    /// Lane `src % width` of the caller's section of `width` lanes' `value`:
    /// `__shfl_sync(mask, value, src, width)`. The lanes of `mask` sync as
    /// in [`sync`](WarpBarrier::sync), in one episode.
    ///
    /// If the source lane is not in `mask` (CUDA leaves the result
    /// undefined), the caller gets its own `value`. `T` is any `Copy`
    /// value: the integer types, `f32`, `f64`, `bool` and `char` ride the
    /// sync word's line; others a slot per lane, which holds up to 64 bytes
    /// inline and keeps a buffer for larger types once one came (no
    /// allocation per call). `'static`, since every lane names its own `T`.
    ///
    /// # Panics
    ///
    /// As [`ballot`](WarpBarrier::ballot), and unless `width` is a power of
    /// two in `1 ..= self.lanes()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(8);
    /// // Broadcast lane 2's value within each half (width 4).
    /// let got = syncthreads::launch(8, |block| {
    ///     let lane = block.thread_rank();
    ///     warp.shfl(lane, 0xff, lane as f32 * 10.0, 2, 4)
    /// });
    /// assert_eq!(got, [20.0, 20.0, 20.0, 20.0, 60.0, 60.0, 60.0, 60.0]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl<T: Copy + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
        src: usize,
        width: usize,
    ) -> T {
        self.shuffle_as(
            "WarpBarrier::shfl",
            lane,
            mask,
            value,
            Shuffle::Idx(src),
            width,
        )
    }

    /// Lane `lane - delta`'s `value` if that lane is in the caller's section
    /// of `width` lanes, else the caller's own: `__shfl_up_sync(mask, value,
    /// delta, width)`. `delta` keeps its low 5 bits in a group of up to 32
    /// lanes, its low 6 above, as on the hardware. One episode.
    ///
    /// # Panics
    ///
    /// As [`shfl`](WarpBarrier::shfl).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(4);
    /// let got = syncthreads::launch(4, |block| {
    ///     let lane = block.thread_rank();
    ///     warp.shfl_up(lane, 0b1111, lane + 1, 1, 4)
    /// });
    /// assert_eq!(got, [1, 1, 2, 3]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl_up<T: Copy + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
        delta: usize,
        width: usize,
    ) -> T {
        self.shuffle_as(
            "WarpBarrier::shfl_up",
            lane,
            mask,
            value,
            Shuffle::Up(delta),
            width,
        )
    }

    /// Lane `lane + delta`'s `value` if that lane is in the caller's section
    /// of `width` lanes, else the caller's own: `__shfl_down_sync(mask,
    /// value, delta, width)`, the step of a warp reduction. `delta` as in
    /// [`shfl_up`](WarpBarrier::shfl_up). One episode.
    ///
    /// # Panics
    ///
    /// As [`shfl`](WarpBarrier::shfl).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(4);
    /// let sums = syncthreads::launch(4, |block| {
    ///     let lane = block.thread_rank();
    ///     let mut sum = lane + 1;
    ///     for delta in [2, 1] {
    ///         sum += warp.shfl_down(lane, 0b1111, sum, delta, 4);
    ///     }
    ///     sum
    /// });
    /// assert_eq!(sums[0], 10);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl_down<T: Copy + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
        delta: usize,
        width: usize,
    ) -> T {
        self.shuffle_as(
            "WarpBarrier::shfl_down",
            lane,
            mask,
            value,
            Shuffle::Down(delta),
            width,
        )
    }

    /// Lane `lane ^ lane_mask`'s `value`, or the caller's own if that lane
    /// lies in a later section of `width` lanes: `__shfl_xor_sync(mask,
    /// value, lane_mask, width)`, the butterfly step. `lane_mask` keeps its
    /// low bits as `delta` does in [`shfl_up`](WarpBarrier::shfl_up). One
    /// episode.
    ///
    /// # Panics
    ///
    /// As [`shfl`](WarpBarrier::shfl).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(4);
    /// let sums = syncthreads::launch(4, |block| {
    ///     let lane = block.thread_rank();
    ///     let mut sum = lane + 1;
    ///     for bit in [1, 2] {
    ///         sum += warp.shfl_xor(lane, 0b1111, sum, bit, 4);
    ///     }
    ///     sum
    /// });
    /// assert_eq!(sums, [10; 4]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn shfl_xor<T: Copy + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
        lane_mask: usize,
        width: usize,
    ) -> T {
        self.shuffle_as(
            "WarpBarrier::shfl_xor",
            lane,
            mask,
            value,
            Shuffle::Xor(lane_mask),
            width,
        )
    }

    #[track_caller]
    pub(crate) fn shuffle_as<T: Copy + 'static>(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        value: T,
        shuffle: Shuffle,
        width: usize,
    ) -> T {
        self.check(call, lane, mask);
        lanes::check_width(call, lane, mask, width, self.lanes());
        let src = lanes::source(lane, self.lanes(), width, shuffle);
        self.episode(call, lane, mask, value, src, |e, own| match src {
            Some(src) => e.value_or(src, own),
            None => own,
        })
    }

    /// The lanes of `mask` whose `value` equals the caller's (the caller
    /// included): `__match_any_sync(mask, value)`. One episode.
    ///
    /// # Panics
    ///
    /// As [`ballot`](WarpBarrier::ballot).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(4);
    /// let groups = syncthreads::launch(4, |block| {
    ///     let lane = block.thread_rank();
    ///     warp.match_any(lane, 0b1111, ["a", "b", "a", "c"][lane])
    /// });
    /// assert_eq!(groups, [0b0101, 0b0010, 0b0101, 0b1000]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn match_any<T: Copy + Eq + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
    ) -> u64 {
        self.match_any_as("WarpBarrier::match_any", lane, mask, value)
    }

    #[track_caller]
    pub(crate) fn match_any_as<T: Copy + Eq + 'static>(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        value: T,
    ) -> u64 {
        self.episode(call, lane, mask, value, None, |e, own| {
            each(mask).fold(0, |bits, i| {
                bits | ((e.value_or(i, own) == own) as u64) << i
            })
        })
    }

    /// `Some(mask)` if every lane of `mask` holds an equal `value`, else
    /// `None`: `__match_all_sync(mask, value, &pred)`, with CUDA's `pred`
    /// as the `Option`. One episode.
    ///
    /// # Panics
    ///
    /// As [`ballot`](WarpBarrier::ballot).
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(2);
    /// let same = syncthreads::launch(2, |block| warp.match_all(block.thread_rank(), 0b11, 7u32));
    /// assert_eq!(same, [Some(0b11); 2]);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn match_all<T: Copy + Eq + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
    ) -> Option<u64> {
        self.match_all_as("WarpBarrier::match_all", lane, mask, value)
    }

    #[track_caller]
    pub(crate) fn match_all_as<T: Copy + Eq + 'static>(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        value: T,
    ) -> Option<u64> {
        let same = self.match_any_as(call, lane, mask, value);
        (same == mask).then_some(mask)
    }
}
