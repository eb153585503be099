//! `BlockBarrier`: `__syncthreads` and its reducing variants
//! (`__syncthreads_count`, `_and`, `_or`), built on a [`Team`], and
//! `BlockSeat`, a thread's seat in it.
//!
//! # Seats or seat-less
//!
//! Threads that know their rank sync through a [`BlockSeat`], so that the
//! block scales like a `Team` (its combining tree); the seat-less `sync*`
//! methods arrive on the team's word directly, like a plain `Barrier`. The
//! two do not mix (a seat-less arrival would bypass the tree and miscount
//! it): `mode` records which one the block was first used with, and the
//! other panics before it changes anything.
//!
//! # The reduction, and why phases never mix
//!
//! Beside the team (no completion function, so a phase completes and the
//! next starts in one atomic step) live four counters, one per phase modulo
//! 4, each holding two counts: true predicates (`sync_count`, `sync_or`) in
//! the low half, false ones (`sync_and`) in the high half. Counting the false
//! ones makes `sync_and` independent of how many threads are left: a thread
//! that left (its seat dropped) takes no part in later phases. A thread's
//! call of a `sync*` method in phase `k`:
//!
//! 1. learns the phase, exactly `k` (modulo 4; see below): a seat from its
//!    own record of its last arrival (`Seat::next_phase`), with no load; a
//!    seat-less sync by a `Relaxed` load of the word;
//! 2. if its predicate counts, adds 1 to its half of `count[k]` (`Relaxed`);
//! 3. arrives and waits in phase `k` (through its seat, or on the word);
//! 4. unless it is a plain `sync()`, which reads nothing, reads `count[k]`
//!    (`Relaxed`): that is the result;
//! 5. if it was the phase's leader (its arrival completed the phase), clears
//!    `count[k + 2]`, the counter of phase `k - 2` and of phase `k + 2`: it
//!    loads it (`Relaxed`) and stores 0 unless it holds 0 already.
//!
//! Why step 1 finds `k`: the thread's wait in phase `k - 1` returned, so the
//! word had moved on to phase `k`, and phase `k` cannot complete without this
//! thread's arrival; a seat-less thread's own load cannot see an older value
//! (coherence), and a seat's record says that its last arrival was in phase
//! `k - 1`. (A tree's seat still loads the word, `Acquire`, in
//! `Seat::enter`: that load orders its tree node, not the counters; a flat
//! team's seat reads the word only with its arrival's RMW.) A seat
//! whose last wait did not return saw the block poisoned, for good, so its
//! arrival panics; its add, if any, goes to the counter of phase `m + 1`,
//! `m` the phase that never completes: nobody reads phase `m + 1`, and the
//! readers of phase `m - 3` read before their arrivals in phase `m - 2`,
//! which completed before this seat's arrival in phase `m`.
//!
//! An *arrival* below is a `Release` RMW that reaches the word: a seat-less
//! one is an RMW of the word; a seat's is an RMW of its tree node, carried by
//! the `AcqRel` RMWs of the climb to the root's combined arrival, an RMW of
//! the word (team.rs, points 1 and 2). Either way it happens-before that
//! phase's combined (or own) RMW of the word, which is `Release`, and a later
//! RMW of the word that is `AcqRel` (the next completions) synchronizes with
//! it, since every change of the word is an RMW (release sequences).
//!
//! Why the clear in step 5 is safe and in time, for `c = count[k + 2]`:
//! - Every read of `c` in phase `k - 2` happens-before it: the reader's
//!   arrival in phase `k - 1` is sequenced after its read and happens-before
//!   the completion of phase `k - 1`, and the leader's arrival that completed
//!   phase `k` is an `AcqRel` RMW later in the word's modification order. So
//!   no read of phase `k - 2` sees the 0.
//! - It happens-before every add of phase `k + 2`: it is sequenced before the
//!   leader's arrival in phase `k + 1`, and the adders of phase `k + 2` were
//!   released from phase `k + 1` by an `Acquire` of the word that only that
//!   phase's completion (after the leader's arrival) wrote.
//!
//! Why step 4 reads exactly the predicates of phase `k`: the last write to
//! `count[k]` before phase `k`'s adds is the clear by the leader of phase
//! `k - 2` (or the initial 0), which happens-before them (above); every add
//! of phase `k` happens-before the read (the add precedes the adder's
//! arrival, the read follows the reader's `Acquire` wait); and the next
//! writes (the clear by the leader of phase `k + 2`, the adds of phase
//! `k + 4`) happen-after the reader's arrival in phase `k + 1`, which follows
//! the read. By coherence the read sees 0 plus one per counted predicate of
//! phase `k`: the same value for every thread, and never a neighbour phase's.
//!
//! A seat that leaves (a `BlockSeat` dropped) makes an arrival without a
//! `sync*`, and if that arrival completes the phase, no `sync*` caller leads
//! it and nobody would clear `count[k + 2]`. So a leaving seat clears it
//! itself, *before* its arrival in phase `k`: that is after every read of
//! phase `k - 2` (the seat's last wait returned, so phase `k - 1` completed,
//! after every reader's arrival in it) and before every add of phase `k + 2`
//! (its arrival happens-before phase `k`'s completion, which is before phase
//! `k + 1`'s in the word's modification order). A second clear by the
//! phase's leader is harmless. A seat whose last wait did *not* return (it
//! panicked on the poisoned block, and the thread caught that, as `launch`
//! does) has no such guarantee: phase `k - 1` never completed, and a slow
//! thread may still be reading its result of phase `k - 2`. So a seat of a
//! poisoned block does not clear; a poisoned block has no later phase that
//! needs it.
//!
//! Why a clear may skip the store of a 0 (the leader's in step 5, and a leaving
//! seat's): every write to `c` before phase `k + 2`'s adds happens-before the
//! load: phase `k - 2`'s adds (each before its adder's arrival in phase
//! `k - 2`, which the completions of phases `k - 1` and `k` follow in the
//! word's modification order: the leaving seat's wait in phase `k - 1` acquired
//! the one, the leader's RMW is the other), the clear by the leader of phase
//! `k - 4` (before its arrival in phase `k - 3`), and the clears by seats
//! leaving in phase `k - 4` (before their arrivals there) and, for the leader,
//! in phase `k` (before their arrivals, which happen-before the `AcqRel` RMW
//! that completed phase `k`). Phase `k + 2`'s adds happen-after the load, as
//! after the store (above), and so does the leader's clear of phase `k` for a
//! leaving seat (after the completion its arrival is part of). Another seat
//! leaving in phase `k` may clear `c` unordered with the load, but only ever
//! writes 0. So by coherence the load reads phase `k - 2`'s sum or a clear,
//! never anything of phase `k + 2`; when it reads 0, the counter already holds
//! the value the store would write, and every later add and read sees the same
//! values without it. So a block that only plain-syncs never writes a counter,
//! and no thread misses on their lines.
//!
//! The cost over an arrival and wait: for a seat-less sync one `Relaxed`
//! load of the word (a seat knows its phase); for a reducing call at most
//! one `fetch_add` and one load of a counter on its own cache line; and for
//! the leader one load of a counter and, if it held a count, one store. So a
//! plain `sync()` through a seat costs a `Team` seat's `arrive_and_wait`
//! plus the leader's load of a line that stays unwritten while the block
//! only plain-syncs. No lock, no completion function.
//!
//! The argument needs every thread to make exactly one arrival per call, which
//! holds as long as only the `sync*` methods touch the team (it is private).
//! A group that breaks CUDA's rule (a thread skipping a `sync*` the others
//! make, or more than `n` threads using it) gets unspecified results, but
//! never memory unsafety.

#[cfg(doc)]
use crate::barrier::Barrier;
use crate::phase::Phase;
use crate::sync::{AtomicU64, ClaimU64, Ordering};
use crate::team::Team;
use crossbeam_utils::CachePadded;
use std::fmt;

mod seat;

pub use seat::BlockSeat;

/// `mode`: not used yet.
const UNUSED: u64 = 0;
/// `mode`: synced seat-less (`BlockBarrier::sync*`).
const SEATLESS: u64 = 1;
/// `mode`: a seat was taken.
const SEATS: u64 = 2;

/// A counted true predicate (low half of a counter).
const TRUE: u64 = 1;
/// A counted false predicate of `sync_and` (high half of a counter).
const FALSE: u64 = 1 << 32;

/// Which `__syncthreads` variant a call is, with its predicate: the one
/// encoding of the reducing syncs, shared by [`BlockBarrier`], [`BlockSeat`]
/// and [`Block`](crate::Block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncCall {
    /// `sync()`: counts nothing.
    Sync,
    /// `sync_count(pred)`: counts a true predicate.
    Count(bool),
    /// `sync_and(pred)`: counts a false predicate.
    And(bool),
    /// `sync_or(pred)`: counts a true predicate.
    Or(bool),
}

impl SyncCall {
    /// What this call adds to its phase's counter (module docs, step 2).
    #[inline]
    fn vote(self) -> u64 {
        match self {
            SyncCall::Sync => 0,
            SyncCall::Count(pred) | SyncCall::Or(pred) => {
                if pred {
                    TRUE
                } else {
                    0
                }
            }
            SyncCall::And(pred) => {
                if pred {
                    0
                } else {
                    FALSE
                }
            }
        }
    }

    /// The method's name, for the messages.
    fn name(self) -> &'static str {
        match self {
            SyncCall::Sync => "sync()",
            SyncCall::Count(_) => "sync_count(_)",
            SyncCall::And(_) => "sync_and(_)",
            SyncCall::Or(_) => "sync_or(_)",
        }
    }
}

/// A phase's counter as every caller of the phase reads it (module docs,
/// step 4), decoded for each variant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Votes(u64);

impl Votes {
    /// `sync_count`: how many true predicates.
    #[inline]
    pub(crate) fn count(self) -> usize {
        (self.0 & (FALSE - 1)) as usize
    }

    /// `sync_and`: no false predicate.
    #[inline]
    pub(crate) fn all(self) -> bool {
        self.0 >> 32 == 0
    }

    /// `sync_or`: some true predicate.
    #[inline]
    pub(crate) fn any(self) -> bool {
        self.count() > 0
    }
}

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
    #[cfg(feature = "diagnostics")]
    sites: crate::diagnostics::sites::Sites,
    /// [`UNUSED`], [`SEATLESS`] or [`SEATS`]: set once, orders nothing.
    mode: ClaimU64,
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
            #[cfg(feature = "diagnostics")]
            sites: crate::diagnostics::sites::Sites::new(),
            mode: ClaimU64::new(UNUSED),
        }
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
    /// If the barrier is poisoned, before or while waiting.
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
        // Relaxed: the mode only tells the two uses apart; no data rides on
        // it (the seats' and the syncs' data go through the team). The
        // decision needs no ordering either: the mode leaves `UNUSED` once,
        // by a CAS, and never changes again, so a failed CAS finds the one
        // value it can have.
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
            Some(seat) => BlockSeat { block: self, seat },
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
        self.reduce(self.team.phase(), call, None, || {
            self.team.arrive_and_wait_seatless().is_leader()
        })
    }

    /// A seat-less sync: panics (changing nothing) if seats were taken.
    #[track_caller]
    #[inline]
    fn seatless(&self, op: &str) {
        // Relaxed: as in `seat`: a set mode never changes again, so a load
        // that sees one sees the answer; a stale `UNUSED` goes to the CAS,
        // which decides.
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
        arrive_and_wait: impl FnOnce() -> bool,
    ) -> Votes {
        #[cfg(feature = "diagnostics")]
        let _as = self.check_sync(k.index(), call, rank);
        #[cfg(not(feature = "diagnostics"))]
        let _ = rank;
        let add = call.vote();
        if add != 0 {
            // Relaxed: the add is sequenced before this thread's arrival
            // below, which happens-before the phase's completion and so every
            // reader's Acquire wait (module docs, arrivals and step 4); being
            // an RMW, no concurrent add of the phase is lost.
            self.counts[k.index()].fetch_add(add, Ordering::Relaxed);
        }
        let leader = arrive_and_wait();
        let count = if call == SyncCall::Sync {
            // Nothing reads a plain sync's count: no load (module docs, step 4).
            0
        } else {
            // Relaxed: the wait's Acquire ordered every add of the phase
            // before this load, and the next clear comes after our next
            // arrival (module docs, step 4): coherence alone makes it read
            // the phase's sum, so Acquire would add nothing.
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
        // Relaxed: the barrier orders every other write to the counter
        // before phase k + 2's adds before this load, and those adds after
        // it (module docs, step 5): it reads phase k - 2's sum or a clear,
        // and on a 0 the store would change nothing anybody reads.
        if counter.load(Ordering::Relaxed) != 0 {
            // Relaxed: the barrier orders the clear after every read of phase
            // k - 2 and before every add of phase k + 2 (module docs, step
            // 5): those happens-before edges come from the arrivals and
            // waits, not from this store, which publishes nothing.
            counter.store(0, Ordering::Relaxed);
        }
        #[cfg(feature = "diagnostics")]
        self.sites.clear(k.plus(2).index());
    }

    /// The divergence check of a sync of phase `k`, made at the caller's
    /// call site (diagnostics/sites.rs): a sync that differs from the
    /// phase's first poisons the block and panics, unless the block is
    /// poisoned already (then the arrival panics as usual). Returns the
    /// guard that reports this thread's wait as a wait on the block.
    #[cfg(feature = "diagnostics")]
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
            describe: describe_block,
            level: 2,
        };
        crate::diagnostics::describe_as(self.team.key(), subject, site.location)
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

impl BlockBarrier {
    /// The ranks that take part in the current phase and have not synced in
    /// it, ascending, for a block used through seats (as
    /// [`Team::missing`]: a snapshot, exact while nobody syncs; a rank whose
    /// seat was not taken yet counts as missing, one whose seat left does
    /// not take part); `None` for a block used seat-less or not used yet,
    /// which knows no ranks.
    ///
    /// # Examples
    ///
    /// ```
    /// let block = syncthreads::BlockBarrier::new(3);
    /// assert_eq!(block.missing(), None);
    /// let seat = block.seat(1);
    /// assert_eq!(block.missing(), Some(vec![0, 1, 2]));
    /// # drop(seat);
    /// ```
    #[must_use]
    pub fn missing(&self) -> Option<Vec<usize>> {
        // Relaxed: as in `seat`.
        (self.mode.load(Ordering::Relaxed) == SEATS).then(|| self.team.missing())
    }

    /// `arrived: N, expected: M` of the current phase: the team's table for
    /// a block used through seats, else the word's counts.
    pub(crate) fn debug_progress(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        // Relaxed: as in `seat`.
        if self.mode.load(Ordering::Relaxed) == SEATS {
            self.team.debug_progress(d);
        } else {
            // Seat-less syncs arrive on the word and never leave.
            // Relaxed: a diagnostic snapshot.
            let s = self.team.word(Ordering::Relaxed);
            let expected = s.expected() as usize;
            d.field(
                "arrived",
                &(expected - (s.pending() as usize).min(expected)),
            )
            .field("expected", &expected);
        }
    }
}

impl fmt::Debug for BlockBarrier {
    /// Shows the current phase's progress, the group size and the inner
    /// barrier's decoded word, e.g.
    /// `BlockBarrier { arrived: 1, expected: 4, threads: 4, barrier: Barrier { phase_parity: false, .. } }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BlockBarrier");
        self.debug_progress(&mut d);
        d.field("threads", &self.threads)
            .field("barrier", self.team.barrier_debug())
            .finish()
    }
}

/// A `BlockBarrier` for a stall report: its kind, `Debug` and missing ranks.
///
/// # Safety
///
/// `ptr` points to a live `BlockBarrier`.
#[cfg(feature = "diagnostics")]
unsafe fn describe_block(ptr: *const (), _: u64, _: u64) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let block = unsafe { &*(ptr as *const BlockBarrier) };
    crate::diagnostics::Described {
        kind: "BlockBarrier",
        debug: format!("{block:?}"),
        missing: block.missing(),
        mask: None,
    }
}

#[cfg(not(any(loom, shuttle)))]
static_assertions::assert_impl_all!(BlockBarrier: Send, Sync, std::panic::RefUnwindSafe);
static_assertions::assert_impl_all!(BlockSeat<'static>: Send);
static_assertions::assert_not_impl_any!(BlockSeat<'static>: Sync);
