//! `launch` and `Block`: a CUDA thread block on CPU threads.
//!
//! `launch(n, kernel)` runs `kernel` on `n` threads (the caller as rank 0,
//! and `n - 1` threads of a persistent pool) sharing one
//! [`BlockBarrier`], each syncing through its own [`BlockSeat`] (so a large
//! block gets the team's combining tree; a thread whose kernel returns early
//! leaves the block). A thread whose kernel panics poisons that barrier, so
//! the others leave their `sync*` instead of hanging; once every thread has
//! ended, `launch` re-raises the root cause: the first panic caught that is
//! not a thread's quiet leave of the poisoned block, with its payload.
//!
//! The job of one launch (its kernel and outcomes, on the caller's stack,
//! and its block: the one the crew keeps, or its own when the crew is
//! taken) is here; the public `Launcher` in `launch/launcher.rs`; how the
//! job's ranks reach pool threads and come back in `launch/pool.rs` (the
//! crew that takes most launches in `launch/pool/crew.rs`, the barriers it
//! keeps between launches in `launch/pool/crew/kept.rs`); how the ranks
//! record their results and panics, and which panic `launch` re-raises, is
//! in `launch/root_cause.rs`. A grid of blocks (`launch_grid`): its handle
//! and barrier in `launch/grid.rs`, the job of a grid of more than one
//! block in `launch/grid_job.rs` (a grid of one block is a plain launch).

use crate::block::BlockBarrier;
use crate::op;
use grid_job::run_grid_on;
use pool::{Kept, Pool, StartCause};
use root_cause::Outcomes;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

mod block;
mod grid;
mod grid_job;
mod launcher;
mod pool;
mod root_cause;

#[cfg(feature = "bench")]
pub use pool::set_crew_group;
#[cfg(loom)]
pub use pool::SlotProbe;

pub use block::Block;
pub use grid::{Grid, GridToken};
pub use launcher::Launcher;

/// Runs `kernel` on `threads` threads forming one block, and returns their
/// results in rank order: a CUDA kernel launch of one block, on CPU threads.
///
/// Each thread gets a [`Block`] with its rank and the block's shared
/// [`BlockBarrier`]. The calling thread runs rank 0; ranks `1 .. threads` run
/// on threads of a process-wide pool (see [`Launcher`] for the pool: its
/// growth, its idle threads' keep-alive, their names, and their
/// thread-locals). `launch` returns only once every rank has ended, so
/// `kernel` may borrow from the caller, as with [`std::thread::scope`]; it
/// must be `Fn + Sync` since all threads call it at once.
///
/// Launches may run at once from several threads, and a kernel may itself
/// `launch`: a launch only ever takes idle pool threads (or adds threads to
/// the pool), never waits for a busy one, so neither can deadlock.
///
/// # Panics
///
/// If `threads` is not in `1 ..= Barrier::MAX`, or if the pool must grow and
/// a thread cannot be spawned (then the ranks already started are made to
/// end, through the poisoned barrier, before `launch` panics).
///
/// If a kernel panics, the block's barrier is poisoned, so the other threads
/// unwind out of their `sync*` calls rather than hang; `launch` waits
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
    run_on(pool::default_pool(), threads, &kernel)
}

/// Runs `kernel` on a grid of `blocks` blocks of `threads` threads each,
/// and returns their results in grid rank order (block by block): CUDA's
/// cooperative launch (`cudaLaunchCooperativeKernel`), on CPU threads.
///
/// Each thread gets a [`Block`] of its own block, with the block's
/// [`block_rank`](Block::block_rank) and the [`grid`](Block::grid), whose
/// [`Grid::sync`] waits for every thread of every block. The calling
/// thread runs thread 0 of block 0; the others run on the pool of
/// [`launch`] (the [`Launcher`]'s for [`Launcher::launch_grid`]), every
/// one at once: a grid is cooperative by construction, so `grid.sync()`
/// never waits on scheduling. `launch(n, kernel)` is
/// `launch_grid(1, n, kernel)`. Launches of grids may run at once from
/// several threads, and a kernel may launch a grid, as with [`launch`].
///
/// # Panics
///
/// If `blocks` or `threads` is 0, and, before any thread starts, if the
/// grid has more than `Barrier::MAX` threads in all (CUDA's
/// `cudaErrorCooperativeLaunchTooLarge`): a grid too large to run at once
/// is refused, never left to hang.
///
/// A panic in any thread poisons every block's barrier and the grid's, so
/// no thread hangs in a `block.sync()` or a `grid.sync()`; once every
/// thread has ended, `launch_grid` re-raises the root cause, as [`launch`]
/// does, once for the whole grid.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// // Two steps of a grid-wide computation: every block adds its threads'
/// // ranks, the grid syncs, and every thread reads the grid's total.
/// let total = AtomicU64::new(0);
/// let seen = syncthreads::launch_grid(4, 8, |block| {
///     let grid = block.grid();
///     total.fetch_add(grid.thread_rank() as u64, Ordering::Relaxed);
///     grid.sync();
///     let sum = total.load(Ordering::Relaxed);
///     grid.sync(); // nobody adds again before everyone has read
///     (block.block_rank(), sum)
/// });
/// assert_eq!(seen.len(), 32);
/// assert!(seen.iter().all(|&(_, sum)| sum == 496));
/// assert_eq!(seen[8].0, 1); // thread 0 of block 1
/// ```
#[track_caller]
pub fn launch_grid<R, F>(blocks: usize, threads: usize, kernel: F) -> Vec<R>
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    check_grid(
        format_args!("launch_grid({blocks}, {threads}, _)"),
        blocks,
        threads,
        None,
    );
    run_grid_on(pool::default_pool(), blocks, threads, &kernel)
}

/// Checks a grid's shape: `blocks` and `threads` each in `1 ..=
/// Barrier::MAX`, and their product at most `Barrier::MAX` and at most
/// `limit` (a launcher's [`max_threads`](Launcher::max_threads)).
#[track_caller]
fn check_grid(call: fmt::Arguments<'_>, blocks: usize, threads: usize, limit: Option<usize>) {
    op::participants(format_args!("{call}"), "the block count", blocks);
    op::participants(format_args!("{call}"), "the thread count", threads);
    let max = crate::state::MAX as usize;
    let (limit, why) = match limit {
        Some(limit) if limit < max => (limit, "this Launcher's max_threads"),
        _ => (max, "Barrier::MAX"),
    };
    // Each factor is at most `Barrier::MAX`: a 64-bit product is exact.
    let total = blocks.saturating_mul(threads);
    if total > limit {
        panic!(
            "syncthreads: {call}: a grid of {blocks} blocks of {threads} threads is {total} threads, over the limit of {limit} ({why}): a cooperative grid runs all its threads at once, so it is refused before any starts"
        );
    }
}

/// One launch: what every rank shares, in the launching thread's frame
/// (the block borrowed from the crew, or from that frame).
struct Job<'k, F, R> {
    kernel: &'k F,
    barrier: &'k BlockBarrier,
    /// Each rank's result or panic, read by the launching thread after
    /// every rank has ended.
    outcomes: Outcomes<R>,
}

/// Runs the block on `pool` and returns the results or resumes the root
/// cause. `threads` is in range.
#[track_caller]
fn run_on<R, F>(pool: &Pool, threads: usize, kernel: &F) -> Vec<R>
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    // On the crew, on a block it keeps (`pool/crew/kept.rs`).
    let fits = |kept: &Kept| matches!(kept, Kept::Block(block) if block.threads() == threads);
    let make = || Kept::Block(BlockBarrier::seated(threads));
    // SAFETY: as `Pool::run`'s below; and each rank's last access to the
    // job (its outcome) comes before its seat's leave (`run_rank`).
    let on_crew = unsafe {
        pool.run_kept(threads, fits, make, |kept, runner| {
            let Kept::Block(barrier) = kept else {
                unreachable!("`fits` took only a block")
            };
            let job = Job {
                kernel,
                barrier,
                outcomes: Outcomes::new(threads),
            };
            runner(std::ptr::from_ref(&job).cast(), run_rank::<F, R>);
            job.outcomes
        })
    };
    let outcomes = match on_crew {
        Some(outcomes) => outcomes,
        None => run_built(pool, threads, kernel),
    };
    // SAFETY: every rank ran and ended (`Pool::run` or `Pool::run_kept`
    // returned), each recording its outcome (`run`).
    unsafe { outcomes.results_or_resume() }
}

/// Runs the block on `pool` on a block of its own (the crew is taken or
/// cannot have the members, or the launch has one thread), and returns the
/// outcomes, every rank ended.
#[track_caller]
fn run_built<R, F>(pool: &Pool, threads: usize, kernel: &F) -> Outcomes<R>
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    let barrier = BlockBarrier::seated(threads);
    let job = Job {
        kernel,
        barrier: &barrier,
        outcomes: Outcomes::new(threads),
    };
    // SAFETY: `run_rank::<F, R>` on `&job` may run on any thread, for every
    // rank at once, while `Pool::run` lasts: `job` outlives that call (this
    // frame), `F: Sync` makes `&F` usable from other threads, `R: Send` lets
    // each rank's result travel back here, and the rest of `job` is `Sync`
    // (atomics, a mutex, and one result cell per rank, written by that rank
    // only and read here only after `Pool::run` returned, which the pool
    // orders after the rank's write). `run_rank` catches the kernel's
    // panics, so it never unwinds.
    let ran = unsafe {
        pool.run_by_slots(
            threads,
            std::ptr::from_ref(&job).cast(),
            run_rank::<F, R>,
            &|| job.barrier.poison(),
        )
    };
    if let Err(failed) = ran {
        // SAFETY: ranks `1 .. failed.rank` ran and ended (`Pool::run`),
        // rank 0 and the rest did not run.
        unsafe { job.outcomes.discard(1..failed.rank) };
        start_failed(format_args!("launch({threads}, _)"), failed);
    }
    job.outcomes
}

/// The panic of a launch that could not start rank `failed.rank`: the
/// spawn's error, or the message of a panic while the ranks were handed out.
#[track_caller]
fn start_failed(call: fmt::Arguments<'_>, failed: pool::StartFailed) -> ! {
    let rank = failed.rank;
    match failed.cause {
        StartCause::Spawn(error) => {
            panic!("syncthreads: {call}: could not spawn thread {rank}: {error}")
        }
        StartCause::Panic(payload) => panic!(
            "syncthreads: {call}: could not start thread {rank}: {}",
            pool::panic_text(&*payload)
        ),
    }
}

/// Rank `rank` of the job at `job`: runs the kernel and records its outcome.
///
/// # Safety
///
/// `job` points to a live `Job<'_, F, R>` whose rank `rank` runs nowhere
/// else, and outlives this call.
unsafe fn run_rank<F, R>(job: *const (), rank: usize)
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    // SAFETY: the caller's promise.
    let job = unsafe { &*job.cast::<Job<'_, F, R>>() };
    // The seat lives past the catch (`run`).
    let block = Block {
        grid: Grid {
            rank,
            seat: job.barrier.seated_seat(rank),
            wide: None,
        },
    };
    // SAFETY: as above: rank `rank` runs nowhere else.
    unsafe {
        run(&block, rank, job.kernel, &job.outcomes, || {
            job.barrier.poison()
        })
    };
    // The seat leaves, this rank's last access to the launch: once it
    // retires the block, the launch may return (`pool/crew/kept.rs`), so
    // no function that holds a reference into the job is still running.
    drop(block);
}

/// One thread of the grid, rank `rank` of the launch: runs the kernel and
/// records its result, or on a panic records the payload and poisons
/// (`poison`) what its peers may wait on. The caller then drops `block`:
/// its seats leave their barriers if the kernel returned, and change
/// nothing on a poisoned one.
///
/// # Safety
///
/// Rank `rank` runs nowhere else.
unsafe fn run<R>(
    block: &Block<'_>,
    rank: usize,
    kernel: &impl Fn(&Block<'_>) -> R,
    outcomes: &Outcomes<R>,
    poison: impl FnOnce(),
) {
    // The seats live past the catch: a panicking kernel's seats are
    // dropped after the barriers are poisoned, so they do not leave as if
    // the kernel had returned.
    match panic::catch_unwind(AssertUnwindSafe(|| kernel(block))) {
        // SAFETY: this thread runs rank `rank` (the caller's promise), and
        // its kernel returned.
        Ok(r) => unsafe { outcomes.returned(rank, r) },
        Err(payload) => {
            outcomes.panicked(rank, payload);
            poison();
        }
    }
}

/// One hand-off to the default pool and back, with no block: what the pool
/// alone costs a launch (for the launch bench).
#[cfg(feature = "bench")]
pub fn pool_round_trip(threads: usize) {
    unsafe fn nop(_: *const (), _: usize) {}
    // SAFETY: `Pool::run`'s contract: `nop` touches nothing (not the null
    // job pointer), so it is sound on any thread for every rank at once,
    // and it cannot unwind.
    let ran = unsafe { pool::default_pool().run(threads, std::ptr::null(), nop, &|| ()) };
    assert!(ran.is_ok());
}

#[cfg(all(test, not(any(loom, shuttle, miri))))]
mod tests {
    use super::pool::Config;
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The ranks that returned before a spawn failed have their results
    /// dropped, once each, by the failed launch (on the path that hands
    /// ranks out one by one: a launch whose crew is taken or disabled).
    #[test]
    fn a_failed_launch_drops_the_results_of_the_ranks_that_ran() {
        #[derive(Debug)]
        struct Counted<'a>(&'a AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut pool = Pool::new(Config {
            crew: false,
            ..Config::default()
        });
        assert_eq!(
            run_on(&pool, 3, &|b: &Block<'_>| b.sync_count(true)),
            [3; 3]
        );
        // Two idle threads; then no new thread can start.
        pool.config_mut().stack_size = Some(usize::MAX / 4);
        let drops = AtomicUsize::new(0);
        let payload = panic::catch_unwind(AssertUnwindSafe(|| {
            run_on(&pool, 4, &|_: &Block<'_>| Counted(&drops))
        }))
        .expect_err("the spawn of thread 3 fails");
        let message = pool::panic_text(&*payload);
        assert!(
            message.starts_with("syncthreads: launch(4, _): could not spawn thread 3: "),
            "{message}"
        );
        // Ranks 1 and 2 ran on the idle threads and returned; rank 0 never ran.
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        pool.shut_down();
    }
}
