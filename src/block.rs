//! `BlockBarrier`: `__syncthreads` and its reducing variants
//! (`__syncthreads_count`, `_and`, `_or`), built on [`Barrier`].
//!
//! # The reduction, and why phases never mix
//!
//! Beside the barrier live two counters, one per phase parity. A thread making
//! its `k`-th call of a `sync*` method (counting from 0):
//!
//! 1. reads the barrier's phase parity, which is `k % 2` (see below);
//! 2. if its predicate holds, adds 1 to `count[k % 2]` (`Relaxed`);
//! 3. calls `arrive_and_wait` on the barrier (phase `k`);
//! 4. reads `count[k % 2]` (`Relaxed`): that is the result.
//!
//! The barrier's completion function, which runs once per phase between the
//! phase's last arrival and the release of its waiters, clears the *other*
//! counter: completing phase `q` sets `count[(q + 1) % 2] = 0`. It knows the
//! parity by toggling its own flag, since it runs exactly once per phase, in
//! phase order.
//!
//! Why step 1 reads `k % 2`: the thread's wait in phase `k - 1` returned, so
//! phase `k - 1` completed and phase `k` started (a wait returns only once the
//! phase number has moved on, which happens after the completion function
//! ran); and phase `k` cannot complete without this thread's `k`-th arrival.
//! So the phase is exactly `k` from the end of step 3 of the previous call
//! until this call's arrival.
//!
//! Why step 4 reads exactly the predicates of phase `k`: consider the writes
//! to `c = count[k % 2]` around it.
//! - The clear by the completion of phase `k - 1` happens-before every add of
//!   phase `k` (each adder was released from phase `k - 1` by a wait, an
//!   `Acquire` of the `Release` that started phase `k`, which follows the
//!   completion function). For `k = 0` the initial zero plays its part.
//! - Every add of phase `k` happens-before the read: the add is sequenced
//!   before its thread's arrival (a `Release` RMW of the word), the phase's
//!   completing RMW (`AcqRel`) reads from the release sequence holding every
//!   arrival, and the reader's wait `Acquire`s the word that started phase
//!   `k + 1` (barrier.rs and state.rs carry this argument in full).
//! - The next writes to `c` after those adds are the clear by the completion
//!   of phase `k + 1` and the adds of phase `k + 2`. Both happen-after the
//!   reader's arrival in phase `k + 1`, which is sequenced after the read.
//!
//! By coherence the read sees the last add of phase `k` (or the clear when no
//! predicate held), and never a later write; since the adds are RMWs, that
//! value is the clear's 0 plus one per true predicate of phase `k`. Every
//! thread of the phase reads the same value, and consecutive phases use
//! different counters and a phase's counter is cleared between its uses, so
//! phases never mix. No lock is taken: the hot path is one load of the word,
//! at most one `fetch_add` on the counter, the barrier's own arrive/wait, and
//! one load.
//!
//! The argument needs every thread to make exactly one arrival per call, which
//! holds as long as only the `sync*` methods touch the barrier (the inner
//! [`Barrier`] is private). A group that breaks CUDA's rule (a thread
//! skipping a `sync*` the others make, more than `n` threads using it, or
//! `sync()` mixed with `sync_count()` in one phase) gets unspecified results,
//! but never memory unsafety, and the counters heal at the next phases.

use crate::barrier::Barrier;
use crate::sync::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;
use std::fmt;
use std::sync::Arc;

/// The completion function: clears the counter of the next phase.
type Clear = Box<dyn FnMut() + Send>;

/// One predicate counter per phase parity, each on its own cache line: the
/// adds of phase `k + 1` start while slow threads still read phase `k`'s.
type Counts = [CachePadded<AtomicU64>; 2];

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
/// from exactly that phase's predicates. Built on a [`Barrier`] with a
/// completion function; the reduction adds at most one `fetch_add` and two
/// loads per call, and no lock.
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
/// more than `n` threads use the barrier, or `sync()` and `sync_count()` are
/// mixed within one phase), the results are unspecified (a hang, or a count
/// that misses some threads), but memory safety holds and the reductions
/// of later, well-formed phases are exact again.
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
    barrier: Barrier<Clear>,
    counts: Arc<Counts>,
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
    pub fn new(threads: usize) -> BlockBarrier {
        assert!(
            (1..=Barrier::MAX).contains(&threads),
            "mbarrier: BlockBarrier::new({threads}): the thread count must be in 1 ..= {} (Barrier::MAX)",
            Barrier::MAX
        );
        let counts: Arc<Counts> = Arc::new([
            CachePadded::new(AtomicU64::new(0)),
            CachePadded::new(AtomicU64::new(0)),
        ]);
        let clear = {
            let counts = Arc::clone(&counts);
            // The parity of the phase this completion belongs to: phase 0 first.
            let mut parity = false;
            Box::new(move || {
                // Relaxed: the barrier orders this store after every read of the
                // counter's previous phase and before every add of its next
                // one (module docs).
                counts[usize::from(!parity)].store(0, Ordering::Relaxed);
                parity = !parity;
            }) as Clear
        };
        BlockBarrier {
            barrier: Barrier::with_completion(threads, clear),
            counts,
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
        self.barrier.arrive_and_wait();
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
    pub fn sync_count(&self, pred: bool) -> usize {
        // Acquire (inside `phase_parity`): not needed for the parity itself,
        // which this thread's own last wait fixed (module docs).
        let count = &self.counts[usize::from(self.barrier.phase_parity())];
        if pred {
            // Relaxed: the arrival below (a Release RMW) carries the add.
            count.fetch_add(1, Ordering::Relaxed);
        }
        self.barrier.arrive_and_wait();
        // Relaxed: the wait's Acquire already ordered every add of the phase
        // before this load, and the next clear after it (module docs).
        count.load(Ordering::Relaxed) as usize
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
    pub fn sync_and(&self, pred: bool) -> bool {
        self.sync_count(pred) == self.threads
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
    pub fn sync_or(&self, pred: bool) -> bool {
        self.sync_count(pred) > 0
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
