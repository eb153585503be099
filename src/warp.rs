//! `WarpBarrier`: `__syncwarp(mask)` for up to 64 lanes, and the warp
//! collectives on it (`warp/collectives.rs`, `warp/reduce.rs`; their
//! protocol: docs/design/warp-collectives.md).
//!
//! # Design
//!
//! Each lane `l` has one word, `synced[l]`: in its low 60 bits how many times
//! lane `l` has called `sync` (only lane `l` adds to it, so it only grows),
//! in bits 60 and 61, `VOTES`, the predicate of its latest vote of each
//! parity of the count (a collective's, `warp/episode.rs`), in bit 62,
//! `POISONED`, whether the group is poisoned (a tile of a poisoned block),
//! and in bit 63, `PARKED`, whether some lane may be parked until it grows.
//!
//! Lane `l`'s `r`-th `sync(l, mask)` raises its count to `r`, then waits
//! until every lane `m` of `mask` has a count `>= r`. Lanes of `mask` have
//! synced equally often before (CUDA's rule), so a count `>= r` means lane
//! `m` has reached its matching call. Lanes outside `mask` are never read, so
//! disjoint masks synchronize independently and at the same time.
//!
//! # Memory ordering
//!
//! Raising the count is a `Release` RMW: lane `l`'s earlier writes travel
//! with it. A waiter reads `synced[m]` with `Acquire`; reading a count `>= r`
//! synchronizes with lane `m`'s `r`-th raise (every later change of the word
//! is an RMW, so it continues that release sequence), so lane `m`'s writes
//! before its `sync` are visible after ours.
//!
//! # Waiting without lost wake-ups
//!
//! The policy and handshake of `src/wait.rs`, per lane word: a waiter waits
//! for the lanes it is behind one at a time, spinning and yielding (once per
//! `sync`), then, for the lane `m` it waits for, it sets `PARKED` in `synced[m]` with a CAS that also checks the
//! count is still short, and parks on lane `m`'s key (the word's address),
//! where `validate` re-reads the word under the parking lot's lock and sleeps
//! only if `PARKED` is still set and the count still short. Lane `m` raises
//! its count with one RMW that returns the old word; if that had `PARKED`,
//! it clears the bit and wakes every lane parked on its key. As both sides
//! work on the same word, its modification order decides: either the raise
//! comes first, and the waiter's CAS or `validate` sees the new count, or the
//! CAS comes first, and the raise sees `PARKED` and wakes (the lock orders
//! that wake against `validate`). A woken lane re-reads every lane it still
//! waits for, and parks again if needed.

use crate::sync::{self, AtomicU64, Ordering};
use crate::wait::{wake, Stages, Word};

mod collectives;
mod debug;
mod episode;
mod lanes;
mod reduce;
mod slots;
pub(crate) mod tile;

pub use reduce::WarpInt;
pub use tile::Tile;

/// `PARKED`: bit 63 of a lane's word (module docs).
const PARKED: u64 = 1 << 63;
/// `POISONED`: bit 62 of a lane's word (module docs). Above every count, so
/// a poisoned word satisfies every wait, which then panics.
const POISONED: u64 = 1 << 62;
/// The vote bits: bit `VOTES + p` holds the predicate of the lane's latest
/// vote in a round of parity `p` (module docs).
const VOTES: u32 = 60;
/// The sync count: bits 0..=59 (at a sync per nanosecond it would take
/// three decades to overflow, and a sync takes longer).
const COUNT: u64 = (1 << VOTES) - 1;
/// What a waiter compares with a round: the count, and `POISONED`, above
/// every count, so that a poisoned word satisfies every wait.
const CAUGHT_UP: u64 = COUNT | POISONED;

/// A lane's line: its word (module docs), whose address is the key that
/// lanes waiting for it park on, and the header and word value of its
/// latest collective of each parity of the round, which ride its arrival
/// (docs/design/warp-collectives.md).
#[repr(align(64))]
struct Lane {
    synced: AtomicU64,
    /// The round that last wrote the slot of this parity (0: none).
    round: [AtomicU64; 2],
    /// The mask of that round.
    mask: [AtomicU64; 2],
    /// Its value, if of a word type.
    word: [AtomicU64; 2],
}

impl Lane {
    fn new() -> Lane {
        let zero = || AtomicU64::new(0);
        Lane {
            synced: zero(),
            round: [zero(), zero()],
            mask: [zero(), zero()],
            word: [zero(), zero()],
        }
    }
}

/// A group of up to 64 lanes that synchronize in subsets given by a bit mask:
/// CUDA's `__syncwarp(mask)` for CPU threads.
///
/// Lane `l` calls [`sync(l, mask)`](WarpBarrier::sync); the call returns once
/// every lane named in `mask` has reached its matching `sync` with that mask.
/// Lanes outside `mask` are not waited for, so disjoint masks (say the low and
/// the high half of the lanes) synchronize independently and at the same
/// time. Writes made before `sync` are visible to the mask's lanes after it.
///
/// # The CUDA rule
///
/// Lanes that sync together must have synced equally often before: each lane
/// named in a mask runs the matching `sync` with that same mask. A program
/// that breaks this rule gets unspecified behaviour (a `sync` may return early
/// or wait for a later `sync` of another lane), though never memory
/// unsafety.
///
/// # Collectives
///
/// CUDA's warp-level primitives are methods of the same lanes, each one
/// `sync` of its mask that carries a value: [`ballot`](WarpBarrier::ballot),
/// [`any`](WarpBarrier::any), [`all`](WarpBarrier::all), the shuffles
/// ([`shfl`](WarpBarrier::shfl) and its `_up`, `_down`, `_xor` forms, with
/// CUDA's sections of `width` lanes), [`match_any`](WarpBarrier::match_any),
/// [`match_all`](WarpBarrier::match_all), and the reductions
/// ([`reduce_add`](WarpBarrier::reduce_add) … over [`WarpInt`](crate::WarpInt),
/// [`reduce`](WarpBarrier::reduce) with any operation). They count as syncs
/// (a lane may mix them with `sync` as CUDA's rule allows), allocate nothing
/// per call, and give the caller its own value where CUDA leaves a result
/// undefined (a shuffle whose source lane is not in the mask). One thread
/// per lane: a second thread inside a collective as the same lane panics.
///
/// Unlike [`BlockBarrier`](crate::BlockBarrier), a `WarpBarrier` has no
/// poisoning: a lane that dies before its `sync` leaves the lanes of its mask
/// waiting, as a lane that exits early does on the GPU if it is named.
///
/// # Examples
///
/// ```
/// use syncthreads::WarpBarrier;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// let warp = WarpBarrier::new(4);
/// let slots: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
/// std::thread::scope(|s| {
///     for lane in 0..4 {
///         let (warp, slots) = (&warp, &slots);
///         s.spawn(move || {
///             slots[lane].store(lane as u64 * 10, Ordering::Relaxed);
///             // Lanes 0, 1 and lanes 2, 3 sync in pairs, independently.
///             let pair = 0b11 << (lane & !1);
///             warp.sync(lane, pair);
///             let partner = lane ^ 1;
///             assert_eq!(slots[partner].load(Ordering::Relaxed), partner as u64 * 10);
///         });
///     }
/// });
/// ```
pub struct WarpBarrier {
    lanes: Box<[Lane]>,
    /// Each lane's claim, record and value slots (`warp/slots.rs`).
    own: Box<[slots::Own]>,
}

impl WarpBarrier {
    /// The most lanes a `WarpBarrier` can have: one per bit of the mask.
    ///
    /// # Examples
    ///
    /// ```
    /// use syncthreads::WarpBarrier;
    /// let warp = WarpBarrier::new(WarpBarrier::MAX_LANES);
    /// assert_eq!(warp.full_mask(), u64::MAX);
    /// ```
    pub const MAX_LANES: usize = 64;

    /// Creates a group of `lanes` lanes, none of which has synced yet.
    ///
    /// # Panics
    ///
    /// Unless `1 <= lanes <= 64`.
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(32);
    /// assert_eq!(warp.lanes(), 32);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn new(lanes: usize) -> WarpBarrier {
        assert!(
            (1..=Self::MAX_LANES).contains(&lanes),
            "syncthreads: WarpBarrier::new({lanes}): lanes must be in 1 ..= 64"
        );
        WarpBarrier {
            lanes: (0..lanes).map(|_| Lane::new()).collect(),
            own: (0..lanes).map(|_| slots::Own::new()).collect(),
        }
    }

    /// The number of lanes.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::WarpBarrier::new(8).lanes(), 8);
    /// ```
    #[must_use]
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// The mask naming every lane, CUDA's `0xffffffff` for a full warp.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::WarpBarrier::new(8).full_mask(), 0xff);
    /// assert_eq!(syncthreads::WarpBarrier::new(64).full_mask(), u64::MAX);
    /// ```
    #[must_use]
    pub fn full_mask(&self) -> u64 {
        u64::MAX >> (64 - self.lanes.len())
    }

    /// Called by lane `lane`: returns once every lane named in `mask` has
    /// reached its matching `sync(_, mask)`. `__syncwarp(mask)`.
    ///
    /// Everything the mask's lanes wrote before their `sync` is visible to
    /// this lane after it returns. A mask naming only `lane` returns at once;
    /// like every `sync`, it counts, so the lane stays in step with lanes that
    /// sync once per round with other masks (CUDA's rule).
    ///
    /// # Panics
    ///
    /// If `lane >= self.lanes()`, if `mask` names a lane `>= self.lanes()`,
    /// or if `lane` is not in `mask`; the message names the lane and the
    /// mask, e.g. `syncthreads: WarpBarrier::sync(lane 3, mask 0x5): lane 3 is
    /// not in its own mask`. Nothing is changed before the check.
    ///
    /// # Examples
    ///
    /// ```
    /// let warp = syncthreads::WarpBarrier::new(2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| warp.sync(1, 0b11));
    ///     warp.sync(0, 0b11);
    ///     warp.sync(0, 0b01); // lane 0 alone: returns at once
    /// });
    /// ```
    #[track_caller]
    pub fn sync(&self, lane: usize, mask: u64) {
        self.sync_as("WarpBarrier::sync", lane, mask);
    }

    /// [`sync`](WarpBarrier::sync), named `call` in its panics (a tile's).
    #[track_caller]
    pub(crate) fn sync_as(&self, call: &'static str, lane: usize, mask: u64) {
        self.check(call, lane, mask);
        // A lone sync counts too (then `wait` has nothing to wait for):
        // lanes are matched by how often each has synced (module docs).
        let others = mask & !(1 << lane);
        let me = &self.lanes[lane];
        // Release: this lane's writes → a lane that reads the raised count (orderings.md).
        let old = me.synced.fetch_add(1, Ordering::Release);
        if Lane::parked(old) {
            self.wake_waiters_of(lane, old);
        }
        let _votes = self.wait(call, mask, others, (old & COUNT) + 1, |_, _| {});
    }

    /// Checks `lane` and `mask` for `call`: the lane in range and in its
    /// mask, the mask within the lanes.
    #[track_caller]
    fn check(&self, call: &str, lane: usize, mask: u64) {
        let lanes = self.lanes.len();
        if lane >= lanes {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): lane {lane} is out of range: this WarpBarrier has {lanes} lane{}",
                if lanes == 1 { "" } else { "s" }
            );
        }
        let beyond = mask & !self.full_mask();
        if beyond != 0 {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): the mask names lanes ({beyond:#x}) beyond the {lanes} lane{} of this WarpBarrier",
                if lanes == 1 { "" } else { "s" }
            );
        }
        if mask & (1 << lane) == 0 {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): lane {lane} is not in its own mask"
            );
        }
    }

    /// Wakes every lane parked until `lane`'s count grows; `prior`, the
    /// word that lane's raise replaced, had `PARKED`.
    #[cold]
    fn wake_waiters_of(&self, lane: usize, prior: u64) {
        let word = &self.lanes[lane];
        // Relaxed: clearing `PARKED` publishes nothing; the RMW keeps the raise's release sequence (orderings.md).
        word.synced.fetch_and(!PARKED, Ordering::Relaxed);
        wake(word, prior);
    }

    /// The lanes of `lanes` whose sync count is still below `round`; a
    /// poisoned word counts as caught up, and sets `POISONED` in `seen`.
    /// Each lane caught up adds its vote bit of `round`'s parity to `votes`
    /// (at the lane's bit) and is handed to `take` with its line.
    fn behind(
        &self,
        lanes: u64,
        round: u64,
        seen: &mut u64,
        votes: &mut u64,
        take: &mut impl FnMut(usize, &Lane),
    ) -> u64 {
        let mut behind = 0;
        let mut rest = lanes;
        while rest != 0 {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let line = &self.lanes[lane];
            // Acquire: that lane's raise → our return (orderings.md).
            let s = line.synced.load(Ordering::Acquire);
            *seen |= s;
            if s & CAUGHT_UP < round {
                behind |= 1 << lane;
            } else {
                *votes |= vote_of(s, round) << lane;
                take(lane, line);
                sync::model_event("warp-took-a-lane-found-caught-up");
            }
        }
        behind
    }

    /// Poisons the group (a tile of a poisoned block): every wait, now or
    /// later, panics instead of waiting, and so does a collective's reuse
    /// check; lanes parked on a word are woken.
    pub(crate) fn poison(&self) {
        for lane in self.lanes.iter() {
            // Relaxed: publishes nothing (a waiter that sees the bit only
            // panics); once a load sees it, every later load sees it too
            // (coherence: every later change of the word is an RMW that keeps it).
            let old = lane.synced.fetch_or(POISONED, Ordering::Relaxed);
            if Lane::parked(old) {
                // Relaxed: as in `wake_waiters_of`.
                lane.synced.fetch_and(!PARKED, Ordering::Relaxed);
                wake(lane, old);
            }
        }
    }

    /// Panics for `call` on a poisoned group.
    #[cold]
    #[track_caller]
    fn poisoned(call: &str) -> ! {
        crate::op::group_poisoned_panic(call)
    }

    /// Waits until every lane of `others` has synced `round` times, lane by
    /// lane through the common wait policy (`src/wait.rs`): it spins only
    /// when every lane of the mask can run at once, since otherwise the lane
    /// we wait for is likely not running and spinning would take its core.
    /// Counts only grow, so a lane found caught up is not read again.
    /// (`mask` is the whole mask, for the stall reports.) Returns the vote
    /// bits of `round`'s parity of the lanes of `others` (at their bits),
    /// each from the word that showed the lane caught up: their votes of
    /// `round`, if they voted in it (`warp/episode.rs`). Each lane of
    /// `others` is handed to `take` with its line once, right after the
    /// load that showed it caught up, while that line is in our cache: a
    /// collective reads the lane's word value there (`warp/episode.rs`).
    #[track_caller]
    fn wait(
        &self,
        call: &str,
        mask: u64,
        others: u64,
        round: u64,
        mut take: impl FnMut(usize, &Lane),
    ) -> u64 {
        let (mut seen, mut votes) = (0, 0);
        let mut behind = self.behind(others, round, &mut seen, &mut votes, &mut take);
        let waiter = Stages::new(others.count_ones() + 1, None);
        let waiter = waiter.recorded(self.wait_info(mask, others, round));
        let mut waiter = waiter;
        let caught_up = |s: u64| (s & CAUGHT_UP >= round).then_some(s);
        while behind != 0 {
            let target = behind.trailing_zeros() as usize;
            let lane = &self.lanes[target];
            // Acquire: as in `behind`.
            let mut s = lane.synced.load(Ordering::Acquire);
            if caught_up(s).is_none() {
                match waiter.wait(lane, s, caught_up) {
                    Ok(now) => s = now,
                    Err(_) => unreachable!("a wait without a deadline ends caught up"),
                }
            }
            seen |= s;
            votes |= vote_of(s, round) << target;
            take(target, lane);
            sync::model_event("warp-took-a-lane-it-waited-for");
            behind = self.behind(
                behind & !(1 << target),
                round,
                &mut seen,
                &mut votes,
                &mut take,
            );
        }
        if seen & POISONED != 0 {
            Self::poisoned(call);
        }
        votes
    }
}

/// The vote bit of `round`'s parity in lane word `s`, as 0 or 1.
#[inline]
fn vote_of(s: u64, round: u64) -> u64 {
    (s >> (VOTES + (round % 2) as u32)) & 1
}

/// A lane's word, waited on through the common policy.
impl Word for Lane {
    type Snapshot = u64;

    fn load(&self, order: Ordering) -> u64 {
        self.synced.load(order)
    }

    fn parked(s: u64) -> bool {
        s & PARKED != 0
    }

    fn mark_parked(&self, s: u64) -> Result<(), u64> {
        // Relaxed (both): `PARKED` publishes nothing; the parker decides again later (orderings.md).
        self.synced
            .compare_exchange(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
            .map(drop)
    }

    /// An address inside the lane's word, which no other object can have,
    /// so no other user of the parking lot shares the key.
    fn park_key(&self) -> usize {
        (&self.synced as *const AtomicU64).addr() + 1
    }
}

#[cfg(not(any(loom, shuttle)))]
crate::assert::assert_impl_all!(WarpBarrier: Send, Sync, std::panic::RefUnwindSafe);
