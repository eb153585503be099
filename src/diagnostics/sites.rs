//! The divergent-`__syncthreads` check of a `BlockBarrier`: per phase
//! modulo 4, the call site and kind of the phase's first sync, and its rank.
//!
//! # The words
//!
//! `first[k]` holds the first sync of phase `k` (mod 4) as a pointer to
//! its `&'static Location` with the kind in the two low bits of its address
//! (a `Location` is aligned to at least 4), null while no sync of the phase
//! has come. It stays a pointer throughout (the bits are set and cleared
//! with `map_addr`), so the location read back carries the provenance of
//! the reference it was made from: no integer becomes a pointer. `rank[k]`
//! holds that sync's rank + 1, 0 while not known. A sync of phase `k`:
//!
//! 1. loads `first[k]`: its own site and kind, nothing more to do;
//! 2. null: claims it with a CAS; if another sync claimed it first, as 3;
//! 3. another pointer: the same call site (compared by value: one call site can
//!    have several `Location`s, a copy per inlined instance of the code) and
//!    kind pass; anything else is a divergent sync (the caller poisons the
//!    block and panics with [`Divergence`]'s message).
//!
//! The words live beside the block's predicate counters and are cleared
//! where those are (the leader of phase `k` clears slot `k + 2`, and so does
//! a leaving seat before its arrival), so the argument of `block.rs` holds
//! for them word for word: a check of phase `k` sits where a predicate add
//! does (after the thread's wait of phase `k - 1`, before its arrival in
//! phase `k`), so the clear of slot `k` happens-before it and every check of
//! phase `k - 4` happens-before that clear. So a load of phase `k` reads the
//! clear or a claim of phase `k`, never an older phase's, and two claims of
//! one phase are ordered by the word's modification order (a CAS reads the
//! latest value). Everything is `Relaxed`: the claim publishes only itself
//! (a `'static` location), and the barrier orders the clears.

use crate::sync::{AtomicPtr, AtomicU64, Ordering};
use std::fmt;
use std::panic::Location;

/// Which sync of the family was called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Sync = 0,
    Count = 1,
    And = 2,
    Or = 3,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Sync => "sync",
            Kind::Count => "sync_count",
            Kind::And => "sync_and",
            Kind::Or => "sync_or",
        }
    }

    fn from_bits(bits: usize) -> Kind {
        match bits & 3 {
            0 => Kind::Sync,
            1 => Kind::Count,
            2 => Kind::And,
            _ => Kind::Or,
        }
    }
}

// The kind lives in the two low bits of a `&'static Location`'s address.
crate::assert::const_assert!(std::mem::align_of::<Location<'static>>() >= 4);

/// One sync: where, which, and by which rank (if known).
#[derive(Clone, Copy)]
pub(crate) struct Site {
    pub(crate) location: &'static Location<'static>,
    pub(crate) kind: Kind,
    pub(crate) rank: Option<usize>,
}

impl Site {
    /// The claim of this sync: its location, the kind in the low bits.
    /// (`*mut` only because that is what an `AtomicPtr` holds: nothing is
    /// ever written through it.)
    fn word(&self) -> *mut Location<'static> {
        let kind = self.kind as usize;
        std::ptr::from_ref(self.location)
            .cast_mut()
            .map_addr(|a| a | kind)
    }
}

/// The first sync of each phase mod 4 (module docs).
pub(crate) struct Sites {
    first: [AtomicPtr<Location<'static>>; 4],
    rank: [AtomicU64; 4],
}

/// A sync that differs from its phase's first: the message of its panic.
pub(crate) struct Divergence {
    phase: usize,
    this: Site,
    first: Site,
}

impl Sites {
    /// Whether phases' first syncs are recorded (and must be cleared).
    pub(crate) const RECORDS: bool = true;

    pub(crate) fn new() -> Sites {
        Sites {
            first: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            rank: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Checks `this`, a sync of phase `k`, against the phase's first sync
    /// (steps 1-3 of the module docs). Changes nothing but the claim.
    #[inline]
    pub(crate) fn check(&self, k: usize, this: Site) -> Result<(), Divergence> {
        let mine = this.word();
        // Relaxed: module docs (the barrier orders the clears).
        let seen = self.first[k].load(Ordering::Relaxed);
        if seen == mine {
            return Ok(());
        }
        let other = if seen.is_null() {
            // Relaxed: the CAS reads the latest claim of the phase.
            match self.first[k].compare_exchange(
                std::ptr::null_mut(),
                mine,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    let rank = this.rank.map_or(0, |r| r as u64 + 1);
                    // Relaxed: read only for a message (see `rank_of`).
                    self.rank[k].store(rank, Ordering::Relaxed);
                    return Ok(());
                }
                Err(w) => w,
            }
        } else {
            seen
        };
        // SAFETY: `other` is not null (a claim: the load saw one, or the CAS
        // failed against null), so `word` made it from a `&'static
        // Location` by setting the two low bits of its address, which the
        // alignment asserted above leaves zero. Clearing them gives back
        // that pointer with its provenance: aligned, valid for ever, and
        // only ever read.
        let location = unsafe { &*other.map_addr(|a| a & !3) };
        let kind = Kind::from_bits(other.addr());
        // One call site can have several `Location`s (a copy per inlined
        // instance of the code): compared by value.
        if kind == this.kind && *location == *this.location {
            return Ok(());
        }
        Err(Divergence {
            phase: k,
            this,
            first: Site {
                location,
                kind,
                rank: this.rank.and_then(|_| self.rank_of(k)),
            },
        })
    }

    /// The rank of phase `k`'s first sync. Its claimer stores it right
    /// after its claim, so a divergent sync that saw the claim looks a few
    /// times; a block used through seats always knows ranks.
    #[cold]
    fn rank_of(&self, k: usize) -> Option<usize> {
        for _ in 0..1000 {
            // Relaxed: a message's number; the claim it belongs to was seen.
            let r = self.rank[k].load(Ordering::Relaxed);
            if r != 0 {
                return Some(r as usize - 1);
            }
            crate::sync::spin_hint();
        }
        None
    }

    /// Forgets the first sync of phase `k` (mod 4), where the block clears
    /// that phase's predicate counter (module docs).
    #[inline]
    pub(crate) fn clear(&self, k: usize) {
        // Relaxed: ordered by the barrier, as the counter's clear.
        self.first[k].store(std::ptr::null_mut(), Ordering::Relaxed);
        self.rank[k].store(0, Ordering::Relaxed);
    }
}

impl fmt::Display for Divergence {
    /// `syncthreads: divergent __syncthreads in phase 2: rank 3 synced at
    /// src/kernel.rs:40:9 (sync), rank 0 at src/kernel.rs:52:9 (sync_count)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (this, first) = (&self.this, &self.first);
        write!(
            f,
            "syncthreads: divergent __syncthreads in phase {}: ",
            self.phase
        )?;
        match this.rank {
            Some(r) => write!(f, "rank {r}")?,
            None => f.write_str("a thread")?,
        }
        write!(f, " synced at {} ({}), ", this.location, this.kind.name())?;
        match first.rank {
            Some(r) => write!(f, "rank {r}")?,
            None if this.rank.is_some() => f.write_str("another rank")?,
            None => f.write_str("another thread")?,
        }
        write!(f, " at {} ({})", first.location, first.kind.name())
    }
}
