//! [`Lines`]: an array whose values never share a cache line, allocated
//! through the allocator's ordinary path.
//!
//! A `Box<[CachePadded<T>]>` keeps its values apart too, but its alignment
//! (128 bytes on x86-64) sends the allocation through the allocator's
//! aligned path (`posix_memalign` on Linux), which costs several times an
//! ordinary `malloc` and its free; a team builds its tree and rank table on
//! every `launch`. `Lines` gets the same separation from spacing alone:
//!
//! - each value sits at the end of a cell of [`STRIDE`] bytes (the size of a
//!   `CachePadded`, which covers the adjacent-line prefetcher's pair), so
//!   two values are a stride apart and no line or aligned pair of lines
//!   holds two of them;
//! - the cells are 16-byte aligned, which the ordinary path gives, so a
//!   value of up to 16 bytes never straddles a line;
//! - before the first value lie its cell's padding bytes, and after the
//!   last one a spare cell: no other allocation shares a value's line.

use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;
use std::ops::Deref;

/// The distance between two values: a `CachePadded`'s size on this target.
const STRIDE: usize = std::mem::align_of::<CachePadded<u8>>();

/// The padding before a value of up to 16 bytes.
const PAD: usize = STRIDE - 16;

/// One line of a [`Lines`]: padding, then the value.
#[repr(C, align(16))]
pub(crate) struct Line<T> {
    _pad: [MaybeUninit<u8>; PAD],
    value: T,
}

impl<T> Deref for Line<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

/// `len` values a stride apart, plus a spare cell (see the module docs).
pub(crate) struct Lines<T> {
    cells: Box<[Line<T>]>,
}

impl<T> Lines<T> {
    /// The values of `values`, each in its own cell, and `spare` in the
    /// cell after them (never handed out).
    pub(crate) fn new(values: impl ExactSizeIterator<Item = T>, spare: T) -> Lines<T> {
        let cells = values
            .chain(std::iter::once(spare))
            .map(|value| Line {
                _pad: [MaybeUninit::uninit(); PAD],
                value,
            })
            .collect();
        Lines { cells }
    }
}

#[cfg(test)]
impl<T> Lines<T> {
    /// The bytes allocated, the spare cell included.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.cells)
    }
}

impl<T> Deref for Lines<T> {
    type Target = [Line<T>];

    fn deref(&self) -> &[Line<T>] {
        &self.cells[..self.cells.len() - 1]
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn values_are_a_stride_apart_and_never_share_a_line_pair() {
        assert_eq!(std::mem::size_of::<Line<u64>>(), STRIDE);
        assert_eq!(std::mem::size_of::<Line<[usize; 2]>>(), STRIDE);
        let lines = Lines::new((0..9usize).map(|i| [i, i]), [0, 0]);
        assert_eq!(lines.len(), 9);
        let start = std::ptr::from_ref(&*lines.cells).cast::<u8>().addr();
        let end = start + std::mem::size_of_val(&*lines.cells);
        let mut pairs = Vec::new();
        for (i, cell) in lines.iter().enumerate() {
            assert_eq!(**cell, [i, i]);
            let at = std::ptr::from_ref(&**cell).addr();
            // Within one line, and its aligned pair of lines inside the
            // allocation, so shared with no other allocation.
            assert_eq!(at / 64, (at + 15) / 64);
            let pair = at / STRIDE * STRIDE;
            assert!(pair >= start && pair + STRIDE <= end, "cell {i}");
            pairs.push(pair);
        }
        pairs.dedup();
        assert_eq!(pairs.len(), 9, "two values in one pair of lines");
    }
}
