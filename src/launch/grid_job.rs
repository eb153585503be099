//! The job of one launch of a grid of more than one block: a barrier per
//! block and the grid's, shared by every rank in the launching thread's
//! frame, and each grid rank's thread (a plain launch's job is in
//! `launch.rs`, which runs a grid of one block).

use super::grid::{Grid, GridBarrier, Wide};
use super::pool::Pool;
use super::root_cause::Outcomes;
use super::{run, run_on, Block};
use crate::block::BlockBarrier;

/// One launch of a grid of more than one block: what every rank shares,
/// in the launching thread's frame.
struct GridJob<'k, F, R> {
    kernel: &'k F,
    /// One barrier per block.
    blocks: Box<[BlockBarrier]>,
    grid: GridBarrier,
    /// Each grid rank's result or panic.
    outcomes: Outcomes<R>,
}

impl<F, R> GridJob<'_, F, R> {
    /// Poisons the grid's barrier and every block's: after a panic in any
    /// block, nobody hangs in a `grid.sync()` or in any `block.sync()`.
    fn poison(&self) {
        self.grid.team.poison();
        for block in &*self.blocks {
            block.poison();
        }
    }
}

/// Runs a grid on `pool` and returns the results in grid rank order or
/// resumes the root cause. The shape is checked; a grid of one block is a
/// plain launch.
#[track_caller]
pub(super) fn run_grid_on<R, F>(pool: &Pool, blocks: usize, threads: usize, kernel: &F) -> Vec<R>
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    if blocks == 1 {
        return run_on(pool, threads, kernel);
    }
    let size = blocks * threads;
    let job = GridJob {
        kernel,
        blocks: (0..blocks).map(|_| BlockBarrier::seated(threads)).collect(),
        grid: GridBarrier::new(blocks, threads),
        outcomes: Outcomes::new(size),
    };
    // SAFETY: as `run_on`'s: `job` outlives `Pool::run`, `F: Sync`,
    // `R: Send`, the rest of the job is `Sync` (barriers, and one result
    // cell per grid rank written by that rank only, read here after
    // `Pool::run` returned), and `run_grid_rank` never unwinds.
    let ran = unsafe {
        pool.run(
            size,
            std::ptr::from_ref(&job).cast(),
            run_grid_rank::<F, R>,
            &|| job.poison(),
        )
    };
    if let Err(failed) = ran {
        // SAFETY: ranks `1 .. failed.rank` ran and ended, the rest did not run.
        unsafe { job.outcomes.discard(1..failed.rank) };
        super::start_failed(format_args!("launch_grid({blocks}, {threads}, _)"), failed);
    }
    // SAFETY: every rank ran and ended, each recording its outcome (`run`).
    unsafe { job.outcomes.results_or_resume() }
}

/// Grid rank `rank` of the grid job at `job`: thread `rank % threads` of
/// block `rank / threads`.
///
/// # Safety
///
/// `job` points to a live `GridJob<'_, F, R>` whose rank `rank` runs
/// nowhere else, and outlives this call.
unsafe fn run_grid_rank<F, R>(job: *const (), rank: usize)
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    // SAFETY: the caller's promise.
    let job = unsafe { &*job.cast::<GridJob<'_, F, R>>() };
    let threads = job.grid.threads;
    let block_rank = rank / threads;
    // The seats live past the catch (`run`).
    let block = Block {
        grid: Grid {
            rank: rank % threads,
            seat: job.blocks[block_rank].seated_seat(rank % threads),
            wide: Some(Wide {
                seat: job.grid.seat(rank),
                barrier: &job.grid,
                block_rank,
            }),
        },
    };
    // SAFETY: as above: rank `rank` runs nowhere else.
    unsafe { run(block, rank, job.kernel, &job.outcomes, || job.poison()) };
}
