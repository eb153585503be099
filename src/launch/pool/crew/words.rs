//! A crew group's two words (`crew.rs`): the go word with the post beside
//! it, which a launch writes and the group's members wait on, and the done
//! word, which the members count their ranks on and the launch waits on.

use crate::sync::{AtomicU64, Ordering, UnsafeCell};
use crate::wait::{self, Word};
use crossbeam_utils::CachePadded;
use std::ptr;

/// The waiter's bit of a done word.
pub(super) const PARKED: u64 = 1;
/// A go word's parked bits, one per place in the group.
const PARKED_BITS: u64 = (1 << TAKING_SHIFT) - 1;
/// Where a go word's count of members taking part begins.
const TAKING_SHIFT: u32 = 16;
/// Where a go word's generation begins.
const GEN_SHIFT: u32 = 24;
/// One more than the largest group: a parked bit for each member.
#[cfg(feature = "bench")]
pub(super) const MAX_GROUP: u64 = TAKING_SHIFT as u64 + 1;

/// A group's go word and the post a launch leaves beside it.
pub(super) struct Go {
    pub(super) word: AtomicU64,
    /// Written by the launch holding the crew before its CAS of `word`;
    /// read by the members taking part after their load of it.
    pub(super) post: UnsafeCell<Post>,
}

/// What a member taking part in a launch needs.
#[derive(Clone, Copy)]
pub(super) struct Post {
    pub(super) job: *const (),
    pub(super) run: unsafe fn(*const (), usize),
    /// The launch's threads (for the members' next idle wait).
    pub(super) threads: usize,
    pub(super) crowded: bool,
}

/// A group's count of the ranks its members ran.
pub(super) struct Done {
    pub(super) word: AtomicU64,
}

/// One group's words, each alone on its cache line.
pub(super) struct Group {
    pub(super) go: CachePadded<Go>,
    pub(super) done: CachePadded<Done>,
}

// SAFETY: `post` is written only by the launch that holds the crew's lock,
// after its join, or the retirement of its kept barriers, saw every read of
// the previous post (module docs), and read only by members between the go
// word's `Acquire` load and their rank; the rest are atomics.
unsafe impl Sync for Group {}
// SAFETY: as above; the post's job pointer is only an address to the
// thread that writes it.
unsafe impl Send for Group {}

impl Group {
    pub(super) fn new() -> Group {
        fn nop(_: *const (), _: usize) {}
        Group {
            go: CachePadded::new(Go {
                word: AtomicU64::new(0),
                post: UnsafeCell::new(Post {
                    job: ptr::null(),
                    run: nop,
                    threads: 1,
                    crowded: false,
                }),
            }),
            done: CachePadded::new(Done {
                word: AtomicU64::new(0),
            }),
        }
    }
}

pub(super) fn generation(word: u64) -> u64 {
    word >> GEN_SHIFT
}

pub(super) fn taking(word: u64) -> u64 {
    (word >> TAKING_SHIFT) & ((1 << (GEN_SHIFT - TAKING_SHIFT)) - 1)
}

/// The parked bits of places `0 .. n`.
pub(super) fn places(n: u64) -> u64 {
    (1 << n) - 1
}

impl Go {
    /// The parking key of the member at `place`: an address inside this
    /// line, its own (`place` is below the line's size).
    fn key(&self, place: u64) -> usize {
        ptr::from_ref(&self.word).addr() + 1 + place as usize
    }

    /// Replaces the word with generation `generation`, taking the first
    /// `taking` places, and wakes those of `woken` that slept; a sleeper
    /// not in `woken` keeps its bit and sleeps on. `order` is the CAS's
    /// (the caller says why).
    pub(super) fn publish(&self, generation: u64, taking: u64, woken: u64, order: Ordering) -> u64 {
        let word = generation << GEN_SHIFT | taking << TAKING_SHIFT;
        // Relaxed: only seeds the CAS, whose own ordering carries the argument.
        let mut prior = self.word.load(Ordering::Relaxed);
        loop {
            let keep = prior & PARKED_BITS & !woken;
            // Relaxed on failure: the value found only seeds the retry.
            match self
                .word
                .compare_exchange_weak(prior, word | keep, order, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => prior = now,
            }
        }
        let mut sleepers = prior & woken;
        while sleepers != 0 {
            let place = u64::from(sleepers.trailing_zeros());
            wait::wake(&Place { go: self, place }, (prior, place));
            sleepers &= sleepers - 1;
        }
        prior
    }
}

/// A group's go word as the member at `place` waits on it: its own parked
/// bit and parking key.
pub(super) struct Place<'a> {
    pub(super) go: &'a Go,
    pub(super) place: u64,
}

impl Word for Place<'_> {
    /// The word, and the place it is seen from.
    type Snapshot = (u64, u64);

    fn load(&self, order: Ordering) -> (u64, u64) {
        (self.go.word.load(order), self.place)
    }

    fn parked((word, place): (u64, u64)) -> bool {
        word & 1 << place != 0
    }

    fn mark_parked(&self, (word, place): (u64, u64)) -> Result<(), (u64, u64)> {
        // Relaxed (both): the bit publishes nothing; the waiter re-reads.
        self.go
            .word
            .compare_exchange(
                word,
                word | 1 << place,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .map(drop)
            .map_err(|now| (now, place))
    }

    fn park_key(&self) -> usize {
        self.go.key(self.place)
    }
}

impl Word for Done {
    type Snapshot = u64;

    fn load(&self, order: Ordering) -> u64 {
        self.word.load(order)
    }

    fn parked(s: u64) -> bool {
        s & PARKED != 0
    }

    fn mark_parked(&self, s: u64) -> Result<(), u64> {
        // Relaxed (both): as `Go`'s.
        self.word
            .compare_exchange(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
            .map(drop)
    }

    fn park_key(&self) -> usize {
        ptr::from_ref(&self.word).addr()
    }
}
