//! `launch` and `Block`: a CUDA thread block on CPU threads.
//!
//! `launch(n, kernel)` runs `kernel` on `n` scoped threads sharing one
//! [`BlockBarrier`], each syncing through its own [`BlockSeat`] (so a large
//! block gets the team's combining tree; a thread whose kernel returns early
//! leaves the block). A thread whose kernel panics poisons that barrier, so
//! the others leave their `sync*` instead of hanging; once every thread has
//! ended, `launch` re-raises the root cause: the first panic caught that is
//! not a thread's quiet leave of the poisoned block, with its payload.
//!
//! Spawning is here; how the threads' panics are reported and which one
//! `launch` re-raises is in `launch/root_cause.rs`.

use crate::block::{BlockBarrier, BlockSeat};
use crate::op::{self, PoisonedQuietly};
use crate::sync::{AtomicU64, Ordering};
use root_cause::Outcome;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

mod root_cause;

/// One thread's handle on its block, handed to the kernel by [`launch`]: the
/// CPU form of `cooperative_groups::this_thread_block()`.
///
/// # Examples
///
/// ```
/// let ranks = syncthreads::launch(4, |block| {
///     assert_eq!(block.size(), 4);
///     block.sync();
///     block.thread_rank()
/// });
/// assert_eq!(ranks, [0, 1, 2, 3]);
/// ```
pub struct Block<'a> {
    rank: usize,
    /// This thread's seat: its syncs go through the block's combining tree.
    seat: BlockSeat<'a>,
}

impl Block<'_> {
    /// This thread's rank in the block, `0 .. size()`: `thread_rank()`
    /// (`threadIdx.x` for a one-dimensional block).
    ///
    /// # Examples
    ///
    /// ```
    /// let ranks = syncthreads::launch(2, |block| block.thread_rank());
    /// assert_eq!(ranks, [0, 1]);
    /// ```
    #[must_use]
    pub fn thread_rank(&self) -> usize {
        self.rank
    }

    /// The number of threads in the block: `size()` (`blockDim.x`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::launch(3, |block| block.size()), [3, 3, 3]);
    /// ```
    #[must_use]
    pub fn size(&self) -> usize {
        self.seat.block().threads()
    }

    /// Waits for every thread of the block: `__syncthreads()`,
    /// `block.sync()`. See [`BlockBarrier::sync`].
    ///
    /// # Panics
    ///
    /// If another thread of the block panicked (the barrier is poisoned),
    /// this thread unwinds out of `sync` so that it does not hang. That
    /// unwinding is not a panic of its own: nothing is printed, the panic
    /// hook is not called, and [`launch`] re-raises the other thread's panic
    /// (a `catch_unwind` around `sync` would catch an opaque payload).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let shared: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
    /// let got = syncthreads::launch(8, |block| {
    ///     let rank = block.thread_rank();
    ///     shared[rank].store(rank * rank, Ordering::Relaxed);
    ///     block.sync();
    ///     shared[(rank + 1) % 8].load(Ordering::Relaxed)
    /// });
    /// assert_eq!(got, [1, 4, 9, 16, 25, 36, 49, 0]);
    /// ```
    #[track_caller]
    #[inline]
    pub fn sync(&self) {
        let _quiet = self.leave_quietly();
        self.seat.sync();
    }

    /// `__syncthreads_count(pred)`; see [`BlockBarrier::sync_count`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Block::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let counts = syncthreads::launch(4, |block| block.sync_count(block.thread_rank() < 3));
    /// assert_eq!(counts, [3, 3, 3, 3]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the count is not needed"]
    pub fn sync_count(&self, pred: bool) -> usize {
        let _quiet = self.leave_quietly();
        self.seat.sync_count(pred)
    }

    /// `__syncthreads_and(pred)`; see [`BlockBarrier::sync_and`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Block::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let all = syncthreads::launch(4, |block| block.sync_and(block.thread_rank() < 3));
    /// assert_eq!(all, [false; 4]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_and(&self, pred: bool) -> bool {
        let _quiet = self.leave_quietly();
        self.seat.sync_and(pred)
    }

    /// `__syncthreads_or(pred)`; see [`BlockBarrier::sync_or`].
    ///
    /// # Panics
    ///
    /// As [`sync`](Block::sync).
    ///
    /// # Examples
    ///
    /// ```
    /// let any = syncthreads::launch(4, |block| block.sync_or(block.thread_rank() == 3));
    /// assert_eq!(any, [true; 4]);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use = "use `sync()` if the answer is not needed"]
    pub fn sync_or(&self, pred: bool) -> bool {
        let _quiet = self.leave_quietly();
        self.seat.sync_or(pred)
    }

    /// While the guard lives, a sync that finds the block poisoned leaves
    /// it quietly (`launch/root_cause.rs`). A guard, not a closure, so that
    /// `#[track_caller]` reaches the seat's sync.
    #[inline]
    fn leave_quietly(&self) -> PoisonedQuietly {
        PoisonedQuietly::new(root_cause::block_poisoned)
    }

    /// The block's barrier, e.g. to hand to code written against
    /// [`BlockBarrier`].
    ///
    /// # Examples
    ///
    /// ```
    /// let sizes = syncthreads::launch(2, |block| block.barrier().threads());
    /// assert_eq!(sizes, [2, 2]);
    /// ```
    #[must_use]
    pub fn barrier(&self) -> &BlockBarrier {
        self.seat.block()
    }
}

impl fmt::Debug for Block<'_> {
    /// The thread's rank, the block's progress in the current phase and
    /// its size, e.g. `Block { thread_rank: 3, arrived: 5, expected: 16, size: 16 }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Block");
        d.field("thread_rank", &self.rank);
        self.seat.block().debug_progress(&mut d);
        d.field("size", &self.size()).finish()
    }
}

/// Runs `kernel` on `threads` threads forming one block, and returns their
/// results in rank order: a CUDA kernel launch of one block, on CPU threads.
///
/// Each thread gets a [`Block`] with its rank and the block's shared
/// [`BlockBarrier`]. The threads are scoped, so `kernel` may borrow from the
/// caller; it must be `Fn + Sync` since all threads call it at once.
///
/// # Panics
///
/// If `threads` is not in `1 ..= Barrier::MAX`, or if a thread cannot be
/// spawned. If a kernel panics, the block's barrier is poisoned, so the other
/// threads unwind out of their `sync*` calls rather than hang; `launch` waits
/// for every thread to end and then resumes the root cause: the first panic
/// that is not itself a poisoned-barrier panic, with its original payload
/// (a poisoned-barrier panic of the user's own barrier inside the kernel is
/// re-raised only if no thread panicked of its own). The root cause is printed once,
/// by the panic hook when it happens; the other threads' unwinding out of a
/// poisoned `sync*` is not printed and does not reach the hook. If the only
/// cause is a `block.barrier().poison()`, `launch` panics saying so.
///
/// # Examples
///
/// ```
/// // A block-wide sum in shared memory, CUDA style: a tree reduction.
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// let shared: Vec<AtomicU64> = (0..16).map(|i| AtomicU64::new(i)).collect();
/// let sums = syncthreads::launch(16, |block| {
///     let rank = block.thread_rank();
///     let mut stride = block.size() / 2;
///     while stride > 0 {
///         if rank < stride {
///             let other = shared[rank + stride].load(Ordering::Relaxed);
///             shared[rank].fetch_add(other, Ordering::Relaxed);
///         }
///         block.sync();
///         stride /= 2;
///     }
///     shared[0].load(Ordering::Relaxed)
/// });
/// assert_eq!(sums, [120; 16]);
/// ```
///
/// A panic in one thread is re-raised once the whole block has ended:
///
/// ```
/// let result = std::panic::catch_unwind(|| {
///     syncthreads::launch(4, |block| {
///         if block.thread_rank() == 2 {
///             panic!("thread 2 failed");
///         }
///         block.sync(); // the others panic here: the barrier is poisoned
///     })
/// });
/// let payload = result.unwrap_err();
/// assert_eq!(payload.downcast_ref::<&str>(), Some(&"thread 2 failed"));
/// ```
#[track_caller]
pub fn launch<R, F>(threads: usize, kernel: F) -> Vec<R>
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    op::participants(
        format_args!("launch({threads}, _)"),
        "the thread count",
        threads,
    );
    let barrier = BlockBarrier::new(threads);
    let caught = AtomicU64::new(0);
    let (outcomes, spawn_error) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        let mut spawn_error = None;
        for rank in 0..threads {
            let block = Block {
                rank,
                seat: barrier.seat(rank),
            };
            let (kernel, caught) = (&kernel, &caught);
            let spawned = std::thread::Builder::new()
                .name(format!("syncthreads-block-{rank}"))
                .spawn_scoped(s, move || run(&block, kernel, caught));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(error) => {
                    // The threads already running would wait forever for
                    // this one in their next sync: let them panic out.
                    barrier.poison();
                    spawn_error = Some((rank, error));
                    break;
                }
            }
        }
        let outcomes: Vec<Outcome<R>> = handles
            .into_iter()
            // `run` catches the kernel's panic, so a thread itself never panics.
            .map(|handle| handle.join().unwrap_or_else(|e| panic::resume_unwind(e)))
            .collect();
        (outcomes, spawn_error)
    });
    if let Some((rank, error)) = spawn_error {
        panic!("syncthreads: launch({threads}, _): could not spawn thread {rank}: {error}");
    }
    root_cause::results_or_resume(outcomes)
}

/// One thread of the block: runs the kernel, and on a panic poisons the
/// barrier and hands the payload back.
fn run<R>(block: &Block<'_>, kernel: &impl Fn(&Block<'_>) -> R, caught: &AtomicU64) -> Outcome<R> {
    match panic::catch_unwind(AssertUnwindSafe(|| kernel(block))) {
        Ok(r) => Outcome::Returned(r),
        Err(payload) => {
            // Relaxed: an RMW, so the panics get distinct numbers under any
            // ordering; no data rides on the number (the payload travels
            // through the thread's join, which orders it).
            let order = caught.fetch_add(1, Ordering::Relaxed);
            let poisoned = op::is_poisoned_panic(&*payload);
            block.barrier().poison();
            Outcome::Panicked(order, poisoned, payload)
        }
    }
}
