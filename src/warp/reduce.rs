//! The reductions of a `WarpBarrier`: `__reduce_{add,min,max,and,or,xor}_sync`
//! over `u32`, `i32`, `u64` and `i64` (the sealed [`WarpInt`]), and
//! `reduce` with any operation, a left fold in lane order; each one episode.

use super::collectives::each;
use super::WarpBarrier;
use std::ops::{BitAnd, BitOr, BitXor};

mod sealed {
    pub trait Sealed {}
}

/// The integer types the warp reductions take: `u32`, `i32`, `u64`, `i64`.
/// Sealed; nothing to import to call the reductions (they are inherent
/// methods of [`WarpBarrier`] and [`Tile`](crate::Tile)).
///
/// # Examples
///
/// ```
/// fn warp_sum<T: syncthreads::WarpInt>(warp: &syncthreads::WarpBarrier, lane: usize, v: T) -> T {
///     warp.reduce_add(lane, warp.full_mask(), v)
/// }
/// let warp = syncthreads::WarpBarrier::new(1);
/// assert_eq!(warp_sum(&warp, 0, 5i64), 5);
/// ```
pub trait WarpInt:
    sealed::Sealed
    + Copy
    + Eq
    + Ord
    + Send
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
{
    #[doc(hidden)]
    fn wrapping(self, other: Self) -> Self;
}

macro_rules! warp_int {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpInt for $t {
            #[inline]
            fn wrapping(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}
warp_int!(u32, i32, u64, i64);

/// Declares a reduction: its public method and its crate-wide form with a
/// call name (a tile's).
macro_rules! reductions {
    ($($(#[$doc:meta])* $name:ident, $as_name:ident, $call:literal, $op:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// # Panics
        ///
        /// As [`ballot`](WarpBarrier::ballot).
        #[track_caller]
        #[must_use]
        pub fn $name<T: WarpInt>(&self, lane: usize, mask: u64, value: T) -> T {
            self.$as_name($call, lane, mask, value)
        }

        #[track_caller]
        pub(crate) fn $as_name<T: WarpInt>(&self, call: &'static str, lane: usize, mask: u64, value: T) -> T {
            self.reduce_as(call, lane, mask, value, $op)
        }
    )*};
}

impl WarpBarrier {
    reductions! {
        /// The sum of the mask's values, wrapping: `__reduce_add_sync(mask, value)`.
        /// One episode; every lane of `mask` gets the same sum.
        ///
        /// # Examples
        ///
        /// ```
        /// let warp = syncthreads::WarpBarrier::new(4);
        /// let sums = syncthreads::launch(4, |block| warp.reduce_add(block.thread_rank(), 0b1111, block.thread_rank() as u32));
        /// assert_eq!(sums, [6; 4]);
        /// ```
        reduce_add, reduce_add_as, "WarpBarrier::reduce_add", T::wrapping;
        /// The least of the mask's values: `__reduce_min_sync(mask, value)`.
        ///
        /// # Examples
        ///
        /// ```
        /// let warp = syncthreads::WarpBarrier::new(2);
        /// let least = syncthreads::launch(2, |block| warp.reduce_min(block.thread_rank(), 0b11, [-3i32, 4][block.thread_rank()]));
        /// assert_eq!(least, [-3, -3]);
        /// ```
        reduce_min, reduce_min_as, "WarpBarrier::reduce_min", std::cmp::min;
        /// The greatest of the mask's values: `__reduce_max_sync(mask, value)`.
        ///
        /// # Examples
        ///
        /// ```
        /// let warp = syncthreads::WarpBarrier::new(2);
        /// let most = syncthreads::launch(2, |block| warp.reduce_max(block.thread_rank(), 0b11, [7u64, 4][block.thread_rank()]));
        /// assert_eq!(most, [7, 7]);
        /// ```
        reduce_max, reduce_max_as, "WarpBarrier::reduce_max", std::cmp::max;
        /// The bitwise and of the mask's values: `__reduce_and_sync(mask, value)`.
        ///
        /// # Examples
        ///
        /// ```
        /// let warp = syncthreads::WarpBarrier::new(2);
        /// let and = syncthreads::launch(2, |block| warp.reduce_and(block.thread_rank(), 0b11, [0b110u32, 0b011][block.thread_rank()]));
        /// assert_eq!(and, [0b010; 2]);
        /// ```
        reduce_and, reduce_and_as, "WarpBarrier::reduce_and", BitAnd::bitand;
        /// The bitwise or of the mask's values: `__reduce_or_sync(mask, value)`.
        ///
        /// # Examples
        ///
        /// ```
        /// let warp = syncthreads::WarpBarrier::new(2);
        /// let or = syncthreads::launch(2, |block| warp.reduce_or(block.thread_rank(), 0b11, [0b100u32, 0b001][block.thread_rank()]));
        /// assert_eq!(or, [0b101; 2]);
        /// ```
        reduce_or, reduce_or_as, "WarpBarrier::reduce_or", BitOr::bitor;
        /// The bitwise exclusive or of the mask's values: `__reduce_xor_sync(mask, value)`.
        ///
        /// # Examples
        ///
        /// ```
        /// let warp = syncthreads::WarpBarrier::new(2);
        /// let xor = syncthreads::launch(2, |block| warp.reduce_xor(block.thread_rank(), 0b11, [0b110u32, 0b011][block.thread_rank()]));
        /// assert_eq!(xor, [0b101; 2]);
        /// ```
        reduce_xor, reduce_xor_as, "WarpBarrier::reduce_xor", BitXor::bitxor;
    }

    /// The left fold of the mask's values in lane order, `op(op(v0, v1),
    /// v2)…` from the lowest lane: `cg::reduce(tile, value, op)` on the lanes
    /// of `mask`. One episode; every lane gets the same result, computed in
    /// the same order (deterministic for floating point too). `op` runs on
    /// every lane; a panic in it unwinds that lane only (the others have
    /// their values).
    ///
    /// # Panics
    ///
    /// As [`shfl`](WarpBarrier::shfl) without the width, and if `op` panics.
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(3);
    /// let joined = syncthreads::launch(3, |block| {
    ///     let lane = block.thread_rank();
    ///     warp.reduce(lane, 0b111, [lane as u8; 2], |a, b| [a[0] * 10 + b[0], a[1] + b[1]])
    /// });
    /// assert_eq!(joined, [[12, 3]; 3]);
    /// ```
    #[track_caller]
    pub fn reduce<T: Copy + Send + 'static>(
        &self,
        lane: usize,
        mask: u64,
        value: T,
        op: impl Fn(T, T) -> T,
    ) -> T {
        self.reduce_as("WarpBarrier::reduce", lane, mask, value, op)
    }

    #[track_caller]
    pub(crate) fn reduce_as<T: Copy + 'static>(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        value: T,
        op: impl Fn(T, T) -> T,
    ) -> T {
        self.episode(call, lane, mask, value, None, |e, own| {
            let mut lanes = each(mask);
            // The mask names the caller, so it has a first lane.
            let first = lanes.next().map_or(own, |i| e.value_or(i, own));
            lanes.fold(first, |acc, i| op(acc, e.value_or(i, own)))
        })
    }
}
