//! [`Phase`]: a phase number modulo 4, what the word, a token and a tree
//! node keep of a phase, with the arithmetic on it in one place.

use std::fmt;

/// A phase number modulo 4. Two phases four apart look the same: a wait can
/// tell the current phase from the one before it (and, by parity, from the
/// one after), never more.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Phase(u8);

impl Phase {
    /// The bits a phase takes in a word.
    pub(crate) const BITS: u32 = 2;
    /// How many phases are told apart.
    pub(crate) const COUNT: usize = 1 << Self::BITS;
    /// Phase 0.
    pub(crate) const ZERO: Phase = Phase(0);
    /// "Phase -1": the one before phase 0, which counts as completed.
    pub(crate) const BEFORE_ZERO: Phase = Phase(Self::MASK);

    const MASK: u8 = (1 << Self::BITS) - 1;

    /// The phase `n` modulo 4.
    #[inline]
    pub(crate) const fn new(n: u8) -> Phase {
        Phase(n & Self::MASK)
    }

    /// The phase after this one.
    #[inline]
    pub(crate) const fn next(self) -> Phase {
        self.plus(1)
    }

    /// The phase before this one.
    #[inline]
    pub(crate) const fn prev(self) -> Phase {
        self.plus(Self::MASK)
    }

    /// The phase `k` after this one.
    #[inline]
    pub(crate) const fn plus(self, k: u8) -> Phase {
        Phase::new(self.0.wrapping_add(k))
    }

    /// `false` for even phases.
    #[inline]
    pub(crate) const fn parity(self) -> bool {
        self.0 & 1 == 1
    }

    /// `0 .. COUNT`, to index one slot per phase.
    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }

    /// The phase modulo 4 of a wide (counting, never wrapping) phase
    /// number, such as a team's per-rank table keeps.
    #[inline]
    pub(crate) const fn of_wide(wide: u64) -> Phase {
        Phase::new(wide as u8)
    }

    /// The phase as the low bits of a word.
    #[inline]
    pub(crate) const fn bits(self) -> u64 {
        self.0 as u64
    }
}

/// The number, as every message shows it.
impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_wraps_modulo_four() {
        assert_eq!(Phase::new(3).next(), Phase::ZERO);
        assert_eq!(Phase::ZERO.prev(), Phase::BEFORE_ZERO);
        assert_eq!(Phase::new(1).plus(2), Phase::new(3));
        assert_eq!(Phase::new(3).plus(2), Phase::new(1));
        assert_eq!(Phase::new(6), Phase::new(2));
        assert!(Phase::new(1).parity() && !Phase::new(2).parity());
        assert_eq!(Phase::BEFORE_ZERO.index(), Phase::COUNT - 1);
        assert_eq!(format!("{} {:?}", Phase::new(2), Phase::new(3)), "2 3");
    }
}
