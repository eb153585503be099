//! Where a lane's values live: the word types in its lane line beside its
//! sync count, any other `Copy` type in its value slots, a buffer per
//! parity of the round (docs/design/warp-collectives.md, "Where the value
//! lives").

use crate::sync::{AtomicBool, AtomicU64, UnsafeCell};
use std::any::{Any, TypeId};
use std::mem::{self, MaybeUninit};

/// What a lane's collective needs that only it touches while it holds
/// `busy`, and `done`, which other lanes read: one line for the words,
/// then the value slots.
#[repr(align(64))]
pub(super) struct Own {
    /// Set while a thread is inside a collective as this lane (the claim).
    pub(super) busy: AtomicBool,
    /// The round whose reads this lane has finished (after them, `Release`).
    pub(super) done: AtomicU64,
    /// The round of this lane's latest collective wait ...
    pub(super) last_round: AtomicU64,
    /// ... and the lanes it waited for there (the fast reuse check).
    pub(super) last_mask: AtomicU64,
    /// The value slots of the two parities of the round, for the types
    /// that are not word types.
    pub(super) values: [UnsafeCell<Values>; 2],
}

// SAFETY: the value slots are written only by the thread holding `busy`,
// after every reader of what they held has finished (the reuse check), and
// read only after the reader acquired the header the writer released
// (docs/design/warp-collectives.md, "The readers' rule"); the values in them
// are `Send`.
unsafe impl Sync for Own {}
// SAFETY: as for `Sync`; the slots hold plain copies of `Send` values.
unsafe impl Send for Own {}
// A slot holds plain bytes: a panic leaves nothing half-updated that a
// later reader could see (it reads only a completed round's value).
impl std::panic::RefUnwindSafe for Own {}

impl Own {
    pub(super) fn new() -> Own {
        Own {
            busy: AtomicBool::new(false),
            done: AtomicU64::new(0),
            last_round: AtomicU64::new(0),
            last_mask: AtomicU64::new(0),
            values: [
                UnsafeCell::new(Values::new()),
                UnsafeCell::new(Values::new()),
            ],
        }
    }
}

/// A 64-byte, 64-aligned piece of a value slot.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Chunk([MaybeUninit<u8>; 64]);

const EMPTY: Chunk = Chunk([MaybeUninit::uninit(); 64]);

/// One value slot: the type of the value it holds and the value's bytes,
/// inline up to 64 bytes and 64-byte alignment, else in a buffer that the
/// lane allocates on first use and keeps (grown when a larger type comes).
pub(super) struct Values {
    inline: Chunk,
    held: Option<TypeId>,
    heap: Vec<Chunk>,
}

impl Values {
    fn new() -> Values {
        Values {
            inline: EMPTY,
            held: None,
            heap: Vec::new(),
        }
    }

    fn inline<T>() -> bool {
        mem::size_of::<T>() <= mem::size_of::<Chunk>()
            && mem::align_of::<T>() <= mem::align_of::<Chunk>()
    }

    /// How far into `base` a `T` starts: the first address aligned for it.
    fn offset<T>(base: *const u8) -> usize {
        let align = mem::align_of::<T>();
        (align - base.addr() % align) % align
    }

    /// Stores `value`, growing the buffer if it does not fit.
    pub(super) fn put<T: Copy + 'static>(&mut self, value: T) {
        let at: *mut u8 = if Self::inline::<T>() {
            self.inline.0.as_mut_ptr().cast()
        } else {
            let slack = mem::align_of::<T>().saturating_sub(mem::align_of::<Chunk>());
            let chunks = (mem::size_of::<T>() + slack).div_ceil(mem::size_of::<Chunk>());
            if self.heap.len() < chunks {
                self.heap.resize(chunks, EMPTY);
            }
            let base: *mut u8 = self.heap.as_mut_ptr().cast();
            base.wrapping_add(Self::offset::<T>(base))
        };
        // SAFETY: `at` is aligned for `T` and has `size_of::<T>()` bytes of
        // this slot behind it (inline: `T` fits a chunk; heap: the buffer
        // holds the size plus the alignment's slack); `&mut self` is the
        // only access.
        unsafe { at.cast::<T>().write(value) };
        self.held = Some(TypeId::of::<T>());
    }

    /// The value, if the slot holds a `T`.
    pub(super) fn get<T: Copy + 'static>(&self) -> Option<T> {
        if self.held != Some(TypeId::of::<T>()) {
            return None;
        }
        let at: *const u8 = if Self::inline::<T>() {
            self.inline.0.as_ptr().cast()
        } else {
            let base: *const u8 = self.heap.as_ptr().cast();
            base.wrapping_add(Self::offset::<T>(base))
        };
        // SAFETY: the slot holds a `T` (`held`), written by `put` at this
        // very address (the same computation over the same buffer, which
        // only `put` changes).
        Some(unsafe { at.cast::<T>().read() })
    }
}

/// Declares the word types: their conversions to and from a `u64`.
macro_rules! word_types {
    ($($t:ty: |$x:ident| $to:expr, |$w:ident| $from:expr;)*) => {
        /// Whether `T` is a word type (its values ride the lane line).
        #[inline(always)]
        pub(super) fn is_word<T: 'static>() -> bool {
            $(TypeId::of::<T>() == TypeId::of::<$t>() ||)* false
        }

        /// `value` as a `u64`, if `T` is a word type.
        #[inline(always)]
        pub(super) fn to_word<T: 'static>(value: &T) -> Option<u64> {
            let any = value as &dyn Any;
            $(if let Some(&$x) = any.downcast_ref::<$t>() {
                return Some($to);
            })*
            None
        }

        /// The `T` that `word` holds, if `T` is a word type and `word` a
        /// valid `T` (always, unless the writer stored another type).
        #[inline(always)]
        pub(super) fn from_word<T: Copy + 'static>(word: u64) -> Option<T> {
            $(if TypeId::of::<T>() == TypeId::of::<$t>() {
                let $w = word;
                let value: Option<$t> = $from;
                return value.and_then(|v| (&v as &dyn Any).downcast_ref::<T>().copied());
            })*
            None
        }
    };
}

word_types! {
    bool: |x| x as u64, |w| Some(w != 0);
    u8: |x| x as u64, |w| Some(w as u8);
    u16: |x| x as u64, |w| Some(w as u16);
    u32: |x| x as u64, |w| Some(w as u32);
    u64: |x| x, |w| Some(w);
    usize: |x| x as u64, |w| Some(w as usize);
    i8: |x| x as u64, |w| Some(w as i8);
    i16: |x| x as u64, |w| Some(w as i16);
    i32: |x| x as u64, |w| Some(w as i32);
    i64: |x| x as u64, |w| Some(w as i64);
    isize: |x| x as u64, |w| Some(w as isize);
    f32: |x| x.to_bits() as u64, |w| Some(f32::from_bits(w as u32));
    f64: |x| x.to_bits(), |w| Some(f64::from_bits(w));
    char: |x| x as u64, |w| char::from_u32(w as u32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_types_round_trip_and_others_are_not_words() {
        assert_eq!(from_word::<i32>(to_word(&-5i32).unwrap()), Some(-5));
        assert_eq!(from_word::<f32>(to_word(&1.5f32).unwrap()), Some(1.5));
        assert_eq!(from_word::<char>(to_word(&'x').unwrap()), Some('x'));
        assert_eq!(from_word::<char>(0xd800), None);
        assert!(is_word::<bool>() && !is_word::<(u8, u32)>());
        assert_eq!(to_word(&(1u8, 2u32)), None);
    }

    #[test]
    fn a_slot_holds_small_large_and_overaligned_values() {
        #[derive(Clone, Copy, PartialEq, Debug)]
        #[repr(align(128))]
        struct Wide(u8);
        let mut slot = Values::new();
        slot.put((1u8, 2u32));
        assert_eq!(slot.get::<(u8, u32)>(), Some((1, 2)));
        assert_eq!(slot.get::<u64>(), None);
        slot.put([7u64; 40]);
        assert_eq!(slot.get::<[u64; 40]>(), Some([7; 40]));
        slot.put(Wide(9));
        assert_eq!(slot.get::<Wide>(), Some(Wide(9)));
        slot.put(());
        assert_eq!(slot.get::<()>(), Some(()));
    }
}
