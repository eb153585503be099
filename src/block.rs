//! `BlockBarrier`: `__syncthreads` and its reducing variants
//! (`__syncthreads_count`, `_and`, `_or`), built on [`Barrier`].
//!
//! # The reduction, and why phases never mix
//!
//! Beside a plain `Barrier` (no completion function, so a phase completes and
//! the next starts in one atomic step) live four counters, one per phase
//! modulo 4. A thread's call of a `sync*` method in phase `k`:
//!
//! 1. reads the barrier's phase: exactly `k` (modulo 4; see below);
//! 2. if its predicate holds, adds 1 to `count[k]` (`Relaxed`);
//! 3. calls `arrive_and_wait` on the barrier (phase `k`);
//! 4. reads `count[k]` (`Relaxed`): that is the result;
//! 5. if it was the phase's leader (its arrival completed the phase), clears
//!    `count[k + 2]`, the counter of phase `k - 2` and of phase `k + 2`.
//!
//! Why step 1 reads `k`: the thread's wait in phase `k - 1` returned, so the
//! word had moved on to phase `k`, and phase `k` cannot complete without this
//! thread's arrival; its own load cannot see an older value (coherence).
//!
//! Why the clear in step 5 is safe and in time, for `c = count[k + 2]`:
//! - Every read of `c` in phase `k - 2` happens-before it: the reader's
//!   arrival in phase `k - 1` (a `Release` RMW) is sequenced after its read,
//!   and the leader's arrival that completed phase `k` is an `AcqRel` RMW
//!   later in the word's modification order, all of whose changes are RMWs
//!   (release sequences). So no read of phase `k - 2` sees the 0.
//! - It happens-before every add of phase `k + 2`: it is sequenced before the
//!   leader's arrival in phase `k + 1`, and the adders of phase `k + 2` were
//!   released from phase `k + 1` by an `Acquire` of the word that only that
//!   phase's completion (after the leader's arrival) wrote.
//!
//! Why step 4 reads exactly the predicates of phase `k`: the last write to
//! `count[k]` before phase `k`'s adds is the clear by the leader of phase
//! `k - 2` (or the initial 0), which happens-before them (above); every add
//! of phase `k` happens-before the read (the add precedes the adder's
//! `Release` arrival, the read follows the reader's `Acquire` wait); and the
//! next writes (the clear by the leader of phase `k + 2`, the adds of phase
//! `k + 4`) happen-after the reader's arrival in phase `k + 1`, which follows
//! the read. By coherence the read sees 0 plus one per true predicate of
//! phase `k`: the same value for every thread, and never a neighbour phase's.
//!
//! The cost over `Barrier::arrive_and_wait`: one `Relaxed` load of the word,
//! at most one `fetch_add` and one load of a counter on its own cache line,
//! and one store by the leader. No lock, no completion function.
//!
//! The argument needs every thread to make exactly one arrival per call, which
//! holds as long as only the `sync*` methods touch the barrier (the inner
//! [`Barrier`] is private). A group that breaks CUDA's rule (a thread
//! skipping a `sync*` the others make, or more than `n` threads using it)
//! gets unspecified results, but never memory unsafety.

use crate::barrier::Barrier;
use crate::op::Poisoned;
use crate::sync::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;
use std::fmt;

/// One predicate counter per phase modulo 4, each on its own cache line: the
/// adds of phase `k + 1` start while slow threads still read phase `k`'s.
type Counts = [CachePadded<AtomicU64>; 4];

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
/// from exactly that phase's predicates. Built on a [`Barrier`]; the
/// reduction adds at most one `fetch_add`, two loads and (for one thread
/// per phase) one store per call, and no lock.
///
/// # Poisoning
///
/// [`poison`](BlockBarrier::poison) makes every thread waiting in, or later
/// entering, a `sync*` panic (with a message starting
/// `mbarrier: barrier poisoned`) instead of hanging: call it when a member of
/// the group failed. [`launch`](crate::launch) does this for you.
///
/// # Misuse
///
/// If the threads do not all make the same calls (a thread skips a `sync*`,
/// or more than `n` threads use the barrier), the results are unspecified (a
/// hang, or a wrong count), but memory safety holds. `sync()` and
/// `sync_count()` may be mixed within one phase: those calling `sync()` count
/// as false.
///
/// # Examples
///
/// ```
/// use mbarrier::BlockBarrier;
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
    barrier: Barrier,
    counts: Counts,
    threads: usize,
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
    /// let barrier = mbarrier::BlockBarrier::new(1);
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
            barrier: Barrier::new(threads),
            counts: std::array::from_fn(|_| CachePadded::new(AtomicU64::new(0))),
            threads,
        }
    }

    /// The number of threads in the group.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mbarrier::BlockBarrier::new(32).threads(), 32);
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
    /// let barrier = mbarrier::BlockBarrier::new(2);
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
        self.reduce(false);
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
    /// let barrier = mbarrier::BlockBarrier::new(3);
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
        self.reduce(pred) as usize
    }

    /// One phase: steps 1–5 of the module docs. Returns the phase's count.
    #[track_caller]
    #[inline]
    fn reduce(&self, pred: bool) -> u64 {
        match self.reduce_with(pred, false) {
            Ok(count) => count,
            Err(Poisoned) => unreachable!("only the quiet path returns Poisoned"),
        }
    }

    /// The phase of a [`launch`](crate::launch)ed block's `sync*`: as
    /// [`reduce`](Self::reduce), but a poisoned barrier returns
    /// `Err(Poisoned)` instead of panicking, so that `launch` can unwind the
    /// thread without a second panic report (SPEC §4: one report per root
    /// cause).
    #[track_caller]
    #[inline]
    pub(crate) fn reduce_unless_poisoned(&self, pred: bool) -> Result<u64, Poisoned> {
        self.reduce_with(pred, true)
    }

    #[track_caller]
    #[inline]
    fn reduce_with(&self, pred: bool, quiet: bool) -> Result<u64, Poisoned> {
        let k = usize::from(self.barrier.phase());
        if pred {
            // Relaxed: the arrival below (a Release RMW) carries the add.
            self.counts[k].fetch_add(1, Ordering::Relaxed);
        }
        let leader = if quiet {
            self.barrier.arrive_and_wait_unless_poisoned()?.is_leader()
        } else {
            self.barrier.arrive_and_wait().is_leader()
        };
        // Relaxed: the wait's Acquire ordered every add of the phase before
        // this load, and the next clear comes after our next arrival.
        let count = self.counts[k].load(Ordering::Relaxed);
        if leader {
            // Relaxed: the barrier orders the clear after every read of phase
            // k - 2 and before every add of phase k + 2 (module docs).
            self.counts[(k + 2) % 4].store(0, Ordering::Relaxed);
        }
        Ok(count)
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
    /// let barrier = mbarrier::BlockBarrier::new(1);
    /// assert!(barrier.sync_and(true));
    /// assert!(!barrier.sync_and(false));
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_and(&self, pred: bool) -> bool {
        self.reduce(pred) == self.threads as u64
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
    /// let barrier = mbarrier::BlockBarrier::new(2);
    /// let any = std::thread::scope(|s| {
    ///     let other = s.spawn(|| barrier.sync_or(false));
    ///     let mine = barrier.sync_or(true);
    ///     assert_eq!(other.join().unwrap(), mine);
    ///     mine
    /// });
    /// assert!(any);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_or(&self, pred: bool) -> bool {
        self.reduce(pred) > 0
    }

    /// Poisons the barrier, for a member of the group that failed: every
    /// thread waiting in a `sync*`, and every later `sync*`, panics instead
    /// of hanging. Idempotent.
    ///
    /// # Examples
    ///
    /// ```
    /// let barrier = mbarrier::BlockBarrier::new(2);
    /// barrier.poison();
    /// assert!(barrier.is_poisoned());
    /// assert!(std::panic::catch_unwind(|| barrier.sync()).is_err());
    /// ```
    pub fn poison(&self) {
        self.barrier.poison();
    }

    /// Whether the barrier is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!mbarrier::BlockBarrier::new(2).is_poisoned());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.barrier.is_poisoned()
    }
}

impl fmt::Debug for BlockBarrier {
    /// Shows the group size and the inner barrier's decoded word, e.g.
    /// `BlockBarrier { threads: 4, barrier: Barrier { phase_parity: false, .. } }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockBarrier")
            .field("threads", &self.threads)
            .field("barrier", &self.barrier)
            .finish()
    }
}

#[cfg(not(any(loom, shuttle)))]
static_assertions::assert_impl_all!(BlockBarrier: Send, Sync, std::panic::RefUnwindSafe);
