//! `BlockBarrier`: `__syncthreads` and its reducing variants
//! (`__syncthreads_count`, `_and`, `_or`), built on a [`Team`], and
//! `BlockSeat`, a thread's seat in it.
//!
//! Threads that know their rank sync through a [`BlockSeat`], so that the
//! block scales like a `Team` (its combining tree); the seat-less `sync*`
//! methods arrive on the team's word directly, like a plain `Barrier`. The
//! two do not mix (a seat-less arrival would bypass the tree and miscount
//! it): `mode` records which one the block was first used with, and the
//! other panics before it changes anything.
//!
//! Beside the team (no completion function, so a phase completes and the
//! next starts in one atomic step) live four counters, one per phase modulo
//! 4, each holding true predicates (`sync_count`, `sync_or`) in its low
//! half and false ones (`sync_and`) in its high half. A call of a `sync*`
//! method in phase `k`:
//!
//! 1. learns the phase, exactly `k` (modulo 4): a seat from its record of
//!    its last arrival, with no load; a seat-less sync by a `Relaxed` load;
//! 2. if its predicate counts, adds 1 to its half of `count[k]` (`Relaxed`);
//! 3. arrives and waits in phase `k` (through its seat, or on the word);
//! 4. unless it is a plain `sync()`, reads `count[k]` (`Relaxed`): the result;
//! 5. if it led the phase, clears `count[k + 2]` (a load, and a store of 0
//!    unless it holds 0 already). A leaving seat clears it too, before its
//!    arrival, since no `sync*` caller may lead that phase.
//!
//! No lock, no completion function: a plain `sync()` through a seat costs a
//! `Team` seat's `arrive_and_wait` plus the leader's load of a line that
//! stays unwritten while the block only plain-syncs.
//!
//! Why phases never mix, why the clears are safe and in time, and why every
//! thread reads the same result: [docs/design/block.md](../docs/design/block.md).
//! The argument needs every thread to make exactly one arrival per call,
//! which holds as long as only the `sync*` methods touch the team (it is
//! private). A group that breaks CUDA's rule (a thread skipping a `sync*`
//! the others make, or more than `n` threads using it) gets unspecified
//! results, but never memory unsafety.

#[cfg(doc)]
use crate::barrier::Barrier;
use crate::phase::Phase;
use crate::sync::{AtomicBool, AtomicU64, ClaimU64, Ordering};
use crate::team::Team;
use crossbeam_utils::CachePadded;
use std::cell::Cell;

mod call;
mod debug;
mod seat;

pub(crate) use call::{SyncCall, SyncOn, Votes};
pub use seat::BlockSeat;

/// `mode`: not used yet.
const UNUSED: u64 = 0;
/// `mode`: synced seat-less (`BlockBarrier::sync*`).
const SEATLESS: u64 = 1;
/// `mode`: a seat was taken.
const SEATS: u64 = 2;

/// One predicate counter per phase modulo 4, each on its own cache line: the
/// adds of phase `k + 1` start while slow threads still read phase `k`'s.
type Counts = [CachePadded<AtomicU64>; Phase::COUNT];

/// A barrier for a fixed group of `n` threads that can also reduce a
/// predicate over the group: CUDA's `__syncthreads()`, `__syncthreads_count`,
/// `__syncthreads_and` and `__syncthreads_or` for CPU threads.
///
/// Every one of the `n` threads calls the same `sync*` method the same number
/// of times, as in CUDA; each call returns once all `n` have made it.
/// Everything a thread wrote before a `sync*` is visible to every thread of
/// the group after it, so the barrier orders "shared memory" exchanges.
///
/// The reducing variants give every thread of a phase the same answer, built
/// from exactly that phase's predicates. Built on a [`Team`]; the
/// reduction adds at most one `fetch_add` and two loads per call, and for
/// one thread per phase one more load and a store, and no lock; a plain
/// [`sync`](BlockBarrier::sync) through a seat costs what a `Team` seat's
/// `arrive_and_wait` does.
///
/// # Seats
///
/// Threads that know their rank should sync through their
/// [`seat`](BlockBarrier::seat), so that a large block scales like a
/// [`Team`]; [`launch`](crate::launch) does that. A block is used either
/// through seats or seat-less (the `sync*` methods on the barrier), not
/// both: the first seat-less sync after a seat was taken, or taking a seat
/// after a seat-less sync, panics and changes nothing. A seat dropped
/// normally leaves the block (later phases owe one arrival fewer, and
/// `sync_and` no longer waits for its predicate); dropped while its thread
/// unwinds, it poisons the block.
///
/// # Poisoning
///
/// [`poison`](BlockBarrier::poison) makes every thread waiting in, or later
/// entering, a `sync*` panic (with a message starting
/// `syncthreads: barrier poisoned`) instead of hanging: call it when a member of
/// the group failed. [`launch`](crate::launch) does this for you.
///
/// # Misuse
///
/// If the threads do not all make the same calls (a thread skips a `sync*`,
/// or more than `n` threads use the barrier), the results are unspecified (a
/// hang, or a wrong count), but memory safety holds. `sync()` may be mixed
/// with another variant within one phase: its callers count as false for
/// `sync_count` and `sync_or`, and are not counted by `sync_and`. With the
/// cargo feature `diagnostics`, a sync of a phase from another call site
/// or of another kind than the phase's first panics instead, naming both,
/// and poisons the block (the crate docs' "Debugging a hang").
///
/// # Examples
///
/// ```
/// use syncthreads::BlockBarrier;
///
/// let barrier = BlockBarrier::new(4);
/// let counts: Vec<usize> = std::thread::scope(|s| {
///     let handles: Vec<_> = (0..4)
///         .map(|rank| {
///             let barrier = &barrier;
///             s.spawn(move || barrier.sync_count(rank % 2 == 0))
///         })
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(counts, [2, 2, 2, 2]);
/// ```
pub struct BlockBarrier {
    team: Team,
    counts: Counts,
    threads: usize,
    /// The first sync of each phase mod 4, for the divergence check.
    sites: crate::diagnostics::sites::Sites,
    /// [`UNUSED`], [`SEATLESS`] or [`SEATS`]: set once, orders nothing.
    mode: ClaimU64,
    /// Set before the first add to a counter: until then a leaving seat
    /// has no counter to clear (docs/design/block.md, "Leaving before anything counted").
    counted: AtomicBool,
    /// The warps of the block's tiles (`Block::tiled_partition`), made on first use.
    pub(crate) tiles: crate::warp::tile::Tiles,
}

impl BlockBarrier {
    /// Creates a barrier for a group of `threads` threads.
    ///
    /// # Panics
    ///
    /// Unless `1 <= threads <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::BlockBarrier::new(1);
    /// assert_eq!(barrier.threads(), 1);
    /// assert!(barrier.sync_and(true));
    /// ```
    #[track_caller]
    #[must_use]
    pub fn new(threads: usize) -> BlockBarrier {
        crate::op::participants(
            format_args!("BlockBarrier::new({threads})"),
            "the thread count",
            threads,
        );
        BlockBarrier {
            team: Team::new(threads),
            counts: std::array::from_fn(|_| CachePadded::new(AtomicU64::new(0))),
            threads,
            sites: crate::diagnostics::sites::Sites::new(),
            mode: ClaimU64::new(UNUSED),
            counted: AtomicBool::new(false),
            tiles: crate::warp::tile::Tiles::new(),
        }
    }

    /// A block whose threads all take their seats by
    /// [`seated_seat`](Self::seated_seat), as `launch`'s: used through
    /// seats from the start (a seat-less sync panics), so taking a seat
    /// writes only the rank's own entry, not the block's mode.
    pub(crate) fn seated(threads: usize) -> BlockBarrier {
        let mut block = BlockBarrier::new(threads);
        block.mode = ClaimU64::new(SEATS);
        block
    }

    /// A [`seated`](Self::seated) block back to its state when new, in
    /// place, for a later launch of its size, once every seat has left
    /// (retired): false, changing nothing, if it is poisoned or its tiles
    /// were made (they are dropped with the block). Atomic stores only
    /// (`Team::rearm`), of only what a launch changes, so the lines its
    /// threads only read (the sizes, the tree's shape) stay in their caches.
    pub(crate) fn rearm(&self) -> bool {
        if self.team.is_poisoned() || self.tiles.made() {
            return false;
        }
        self.team.rearm();
        // Relaxed: as `Team::rearm`'s stores. A seat sets the flag before
        // its first add to a counter, so without it every counter is 0.
        if self.counted.load(Ordering::Relaxed) {
            for count in &self.counts {
                // Relaxed: as above; the load spares a clean line.
                if count.load(Ordering::Relaxed) != 0 {
                    count.store(0, Ordering::Relaxed);
                }
            }
            self.counted.store(false, Ordering::Relaxed);
        }
        if crate::diagnostics::sites::Sites::RECORDS {
            (0..Phase::COUNT).for_each(|k| self.sites.clear(k));
        }
        true
    }

    /// Waits until every seat of a [`seated`](Self::seated) block has left
    /// (true: a launch's ranks have all ended, their outcomes visible), or
    /// it is poisoned (false).
    pub(crate) fn wait_retired(&self, participants: u32) -> bool {
        self.team.wait_retired(participants)
    }

    /// The seat of `rank` in a [`seated`](Self::seated) block; each rank's
    /// taken once, by the caller's promise.
    pub(crate) fn seated_seat(&self, rank: usize) -> BlockSeat<'_> {
        let seat = self
            .team
            .try_seat(rank)
            .expect("each rank of a seated block takes its seat once");
        BlockSeat::new(self, seat)
    }

    /// The number of threads in the group.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::BlockBarrier::new(32).threads(), 32);
    /// ```
    #[must_use]
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Waits until every thread of the group has called `sync` for this
    /// phase: `__syncthreads()`.
    ///
    /// # Panics
    ///
    /// If the barrier is poisoned, before or while waiting; and, changing
    /// nothing, if the block's threads took seats (a block is synced either
    /// through its [`BlockSeat`]s or seat-less, and a launched block's
    /// threads always hold seats: sync through the [`Block`](crate::Block)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let barrier = syncthreads::BlockBarrier::new(2);
    /// let shared = [AtomicUsize::new(0), AtomicUsize::new(0)];
    /// std::thread::scope(|s| {
    ///     for rank in 0..2 {
    ///         let (barrier, shared) = (&barrier, &shared);
    ///         s.spawn(move || {
    ///             shared[rank].store(rank + 10, Ordering::Relaxed);
    ///             barrier.sync();
    ///             // The neighbour's write is visible after the barrier.
    ///             assert_eq!(shared[1 - rank].load(Ordering::Relaxed), 11 - rank);
    ///         });
    ///     }
    /// });
    /// ```
    #[track_caller]
    #[inline]
    pub fn sync(&self) {
        self.sync_seatless(SyncCall::Sync);
    }

    /// Waits like [`sync`](BlockBarrier::sync) and returns for how many
    /// threads of the group `pred` was true in this phase:
    /// `__syncthreads_count(pred)`.
    ///
    /// Every thread of the phase gets the same count.
    ///
    /// # Panics
    ///
    /// As [`sync`](BlockBarrier::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::BlockBarrier::new(3);
    /// let counts: Vec<usize> = std::thread::scope(|s| {
    ///     let handles: Vec<_> = (0..3)
    ///         .map(|rank| {
    ///             let barrier = &barrier;
    ///             s.spawn(move || barrier.sync_count(rank > 0))
    ///         })
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect()
    /// });
    /// assert_eq!(counts, [2, 2, 2]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the count is not needed"]
    pub fn sync_count(&self, pred: bool) -> usize {
        self.sync_seatless(SyncCall::Count(pred)).count()
    }

    /// Takes the seat of `rank`, through which that thread syncs; each rank
    /// once. A block used through seats cannot also be synced seat-less.
    ///
    /// # Panics
    ///
    /// If `rank >= threads()`, if that rank's seat was taken before, or if
    /// the block was already synced seat-less.
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(4);
    /// let counts: Vec<usize> = std::thread::scope(|s| {
    ///     let handles: Vec<_> = (0..4)
    ///         .map(|rank| {
    ///             let seat = block.seat(rank);
    ///             s.spawn(move || seat.sync_count(seat.rank() < 3))
    ///         })
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).collect()
    /// });
    /// assert_eq!(counts, [3; 4]);
    /// ```
    #[track_caller]
    pub fn seat(&self, rank: usize) -> BlockSeat<'_> {
        assert!(
            rank < self.threads,
            "syncthreads: BlockBarrier::seat({rank}): rank out of range: the block has {} threads (ranks 0 ..= {})",
            self.threads,
            self.threads - 1
        );
        // Relaxed: the mode carries no data and is set once, by a CAS (orderings.md).
        match self
            .mode
            .compare_exchange(UNUSED, SEATS, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) | Err(SEATS) => {}
            Err(_) => panic!(
                "syncthreads: BlockBarrier::seat({rank}): the block was already synced seat-less; a BlockBarrier is used either through seats or seat-less, not both"
            ),
        }
        match self.team.try_seat(rank) {
            Some(seat) => BlockSeat::new(self, seat),
            None => panic!(
                "syncthreads: BlockBarrier::seat({rank}): the seat of rank {rank} was already taken (each rank once)"
            ),
        }
    }

    /// One seat-less sync of the group: on the team's word directly, since
    /// no seat of this block is ever handed out (`seatless`).
    #[track_caller]
    #[inline]
    fn sync_seatless(&self, call: SyncCall) -> Votes {
        self.seatless(call.name());
        // No seat records the phase: the word tells it (module docs, step 1).
        self.reduce(self.team.phase(), call, None, None, || {
            self.team
                .arrive_and_wait_seatless(call.called_on(SyncOn::BlockBarrier))
                .is_leader()
        })
    }

    /// The wait of a split arrival ([`BlockSeat::arrive_split`]).
    #[track_caller]
    pub(crate) fn wait_split(&self, token: crate::token::ArrivalToken) {
        self.team.wait(token);
    }

    /// A seat-less sync: panics (changing nothing) if seats were taken.
    #[track_caller]
    #[inline]
    fn seatless(&self, op: &str) {
        // Relaxed: the mode is set once and carries no data; the CAS decides (orderings.md).
        let mode = self.mode.load(Ordering::Relaxed);
        if mode == SEATLESS {
            return;
        }
        let taken = mode == SEATS
            || self
                .mode
                .compare_exchange(UNUSED, SEATLESS, Ordering::Relaxed, Ordering::Relaxed)
                .is_err_and(|m| m == SEATS);
        if taken {
            panic!(
                "syncthreads: BlockBarrier::{op}: seat-less sync of a block whose threads took seats; sync through the BlockSeat (a BlockBarrier is used either through seats or seat-less, not both)"
            );
        }
    }

    /// One phase: steps 1–5 of the module docs; `k` is the phase (step 1),
    /// `call` gives this thread's vote, `arrive_and_wait` is its arrival and
    /// wait (whether it led); `rank` is the seat's, if synced through one
    /// (for the diagnostics). Returns the phase's counter, or nothing for a
    /// plain `sync()`, which reads none.
    #[track_caller]
    #[inline]
    fn reduce(
        &self,
        k: Phase,
        call: SyncCall,
        rank: Option<usize>,
        marked: Option<&Cell<bool>>,
        arrive_and_wait: impl FnOnce() -> bool,
    ) -> Votes {
        let _as = self.check_sync(k.index(), call, rank);
        let add = call.vote();
        if add != 0 {
            self.mark_counted(marked);
            // Relaxed: ordered by this thread's arrival → the readers' waits, block.md step 4 (orderings.md).
            self.counts[k.index()].fetch_add(add, Ordering::Relaxed);
        }
        let leader = arrive_and_wait();
        let count = if call == SyncCall::Sync {
            // Nothing reads a plain sync's count: no load (module docs, step 4).
            0
        } else {
            // Relaxed: the wait's Acquire ordered every add before it, block.md step 4 (orderings.md).
            self.counts[k.index()].load(Ordering::Relaxed)
        };
        if leader {
            self.clear_two_ahead(k);
        }
        Votes(count)
    }

    /// Step 5 of the module docs, by the leader of phase `k` (or by a seat
    /// leaving before its arrival in phase `k`): clears `count[k + 2]`, the
    /// counter of phase `k - 2` and of phase `k + 2`. A counter that holds 0
    /// already is left unwritten, so a block that only plain-syncs never
    /// writes its counters' lines.
    #[inline]
    fn clear_two_ahead(&self, k: Phase) {
        let counter = &self.counts[k.plus(2).index()];
        // Relaxed: the barrier orders every other access to the counter, block.md step 5 (orderings.md).
        if counter.load(Ordering::Relaxed) != 0 {
            // Relaxed: the arrivals and waits order the clear, block.md step 5 (orderings.md).
            counter.store(0, Ordering::Relaxed);
        }
        self.sites.clear(k.plus(2).index());
    }

    /// Sets `counted` before this seat's first add (`marked` remembers it).
    /// A seat-less sync has no `marked` and sets nothing: a block synced
    /// seat-less has no seats, so no seat ever leaves it.
    #[inline]
    fn mark_counted(&self, marked: Option<&Cell<bool>>) {
        if let Some(marked) = marked {
            if !marked.get() {
                // Relaxed: ordered by this thread's arrival → a leaver's wait (block.md, "Leaving before anything counted").
                self.counted.store(true, Ordering::Relaxed);
                marked.set(true);
            }
        }
    }

    /// Whether a seat leaving may have a counter (or, with the
    /// `diagnostics` feature, a phase's first sync) to clear: not while
    /// no sync of the block has counted (docs/design/block.md, "Leaving before anything counted").
    #[inline]
    fn leaver_clears(&self) -> bool {
        // Relaxed: every add that a leaver must clear was made after the
        // flag was set and before an arrival that this seat's last wait
        // saw complete, so the flag is visible (block.md, "Leaving before
        // anything counted").
        crate::diagnostics::sites::Sites::RECORDS || self.counted.load(Ordering::Relaxed)
    }

    /// The divergence check of a sync of phase `k`, made at the caller's
    /// call site (diagnostics/sites.rs): a sync that differs from the
    /// phase's first poisons the block and panics, unless the block is
    /// poisoned already (then the arrival panics as usual). Returns the
    /// guard that reports this thread's wait as a wait on the block.
    #[track_caller]
    fn check_sync(
        &self,
        k: usize,
        call: SyncCall,
        rank: Option<usize>,
    ) -> crate::diagnostics::DescribeAs {
        use crate::diagnostics::sites::{Kind, Site};
        let site = Site {
            location: std::panic::Location::caller(),
            kind: match call {
                SyncCall::Sync => Kind::Sync,
                SyncCall::Count(_) => Kind::Count,
                SyncCall::And(_) => Kind::And,
                SyncCall::Or(_) => Kind::Or,
            },
            rank,
        };
        if let Err(divergence) = self.sites.check(k, site) {
            if !self.is_poisoned() {
                self.poison();
                panic!("{divergence}");
            }
        }
        let subject = crate::diagnostics::Subject {
            ptr: self as *const Self as *const (),
            describe: debug::describe_block,
            level: 2,
        };
        let who = rank.map(crate::diagnostics::Who::Rank);
        crate::diagnostics::describe_as(self.team.key(), subject, site.location, who)
    }

    /// Waits like [`sync`](BlockBarrier::sync) and returns whether `pred`
    /// was true for every thread of the group in this phase:
    /// `__syncthreads_and(pred)`.
    ///
    /// # Panics
    ///
    /// As [`sync`](BlockBarrier::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::BlockBarrier::new(1);
    /// assert!(barrier.sync_and(true));
    /// assert!(!barrier.sync_and(false));
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_and(&self, pred: bool) -> bool {
        self.sync_seatless(SyncCall::And(pred)).all()
    }

    /// Waits like [`sync`](BlockBarrier::sync) and returns whether `pred`
    /// was true for at least one thread of the group in this phase:
    /// `__syncthreads_or(pred)`.
    ///
    /// # Panics
    ///
    /// As [`sync`](BlockBarrier::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::BlockBarrier::new(2);
    /// // One call site for both threads, as in CUDA, where every thread runs
    /// // the same `__syncthreads_or` (a sync from two call sites in one
    /// // phase is a divergent sync, which the `diagnostics` feature reports).
    /// let vote = |pred| barrier.sync_or(pred);
    /// let any = std::thread::scope(|s| {
    ///     let other = s.spawn(|| vote(false));
    ///     let mine = vote(true);
    ///     assert_eq!(other.join().unwrap(), mine);
    ///     mine
    /// });
    /// assert!(any);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_or(&self, pred: bool) -> bool {
        self.sync_seatless(SyncCall::Or(pred)).any()
    }

    /// Poisons the barrier, for a member of the group that failed: every
    /// thread waiting in a `sync*`, and every later `sync*`, panics instead
    /// of hanging. Idempotent.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = syncthreads::BlockBarrier::new(2);
    /// barrier.poison();
    /// assert!(barrier.is_poisoned());
    /// assert!(std::panic::catch_unwind(|| barrier.sync()).is_err());
    /// ```
    pub fn poison(&self) {
        self.team.poison();
        self.tiles.poison();
    }

    /// Whether the barrier is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!syncthreads::BlockBarrier::new(2).is_poisoned());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.team.is_poisoned()
    }
}

#[cfg(not(any(loom, shuttle)))]
crate::assert::assert_impl_all!(BlockBarrier: Send, Sync, std::panic::RefUnwindSafe);
crate::assert::assert_impl_all!(BlockSeat<'static>: Send);
crate::assert::assert_not_impl_any!(BlockSeat<'static>: Sync);
