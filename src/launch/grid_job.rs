//! The job of one launch of a grid of more than one block: a barrier per
//! block and the grid's (kept by the pool's crew between launches, or the
//! launch's own when the crew is taken), shared by every rank, and each
//! grid rank's thread (a plain launch's job is in `launch.rs`, which runs
//! a grid of one block).

use super::grid::{Grid, GridBarrier, Wide};
use super::pool::{Kept, Pool};
use super::root_cause::Outcomes;
use super::{run, run_on, Block};
use crate::block::BlockBarrier;

/// One launch of a grid of more than one block: what every rank shares,
/// in the launching thread's frame (the barriers borrowed).
struct GridJob<'k, F, R> {
    kernel: &'k F,
    barriers: &'k Barriers,
    /// Each grid rank's result or panic.
    outcomes: Outcomes<R>,
}

/// A grid's barriers: one per block, and the grid's.
pub(super) struct Barriers {
    blocks: Box<[BlockBarrier]>,
    grid: GridBarrier,
}

impl Barriers {
    /// Poisons the grid's barrier and every block's: after a panic in any
    /// block, nobody hangs in a `grid.sync()` or in any `block.sync()`.
    fn poison(&self) {
        self.grid.team.poison();
        for block in &*self.blocks {
            block.poison();
        }
    }

    /// Re-arms every barrier, every seat left (as a block's re-arm);
    /// false if any cannot be.
    pub(super) fn rearm(&self) -> bool {
        self.grid.rearm() && self.blocks.iter().all(BlockBarrier::rearm)
    }

    /// Waits until every grid rank has left (true), or the grid is
    /// poisoned (false). A rank's grid seat leaves after its block seat.
    pub(super) fn wait_retired(&self, participants: u32) -> bool {
        self.grid.team.wait_retired(participants)
    }

    /// A grid's barriers, new.
    fn new(blocks: usize, threads: usize) -> Barriers {
        Barriers {
            blocks: (0..blocks).map(|_| BlockBarrier::seated(threads)).collect(),
            grid: GridBarrier::new(blocks, threads),
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
    // On the crew, on barriers it keeps (`pool/crew/kept.rs`).
    let fits = |kept: &Kept| matches!(kept, Kept::Grid(b) if b.grid.blocks == blocks && b.grid.threads == threads);
    let make = || Kept::Grid(Barriers::new(blocks, threads));
    // SAFETY: as `Pool::run`'s below; and each rank's last access to the
    // job (its outcome) comes before its seats' leaves (`run_grid_rank`).
    let on_crew = unsafe {
        pool.run_kept(size, fits, make, |kept, runner| {
            let Kept::Grid(barriers) = kept else {
                unreachable!("`fits` took only a grid's barriers")
            };
            let job = GridJob {
                kernel,
                barriers,
                outcomes: Outcomes::new(size),
            };
            runner(std::ptr::from_ref(&job).cast(), run_grid_rank::<F, R>);
            job.outcomes
        })
    };
    let outcomes = match on_crew {
        Some(outcomes) => outcomes,
        None => run_built(pool, blocks, threads, kernel),
    };
    // SAFETY: every rank ran and ended, each recording its outcome (`run`).
    unsafe { outcomes.results_or_resume() }
}

/// Runs the grid on `pool` on barriers of its own (the crew is taken or
/// cannot have the members), and returns the outcomes, every rank ended.
#[track_caller]
fn run_built<R, F>(pool: &Pool, blocks: usize, threads: usize, kernel: &F) -> Outcomes<R>
where
    F: Fn(&Block<'_>) -> R + Sync,
    R: Send,
{
    let size = blocks * threads;
    let barriers = Barriers::new(blocks, threads);
    let job = GridJob {
        kernel,
        barriers: &barriers,
        outcomes: Outcomes::new(size),
    };
    // SAFETY: as `run_on`'s: `job` outlives `Pool::run`, `F: Sync`,
    // `R: Send`, the rest of the job is `Sync` (barriers, and one result
    // cell per grid rank written by that rank only, read here after
    // `Pool::run` returned), and `run_grid_rank` never unwinds.
    let ran = unsafe {
        pool.run_by_slots(
            size,
            std::ptr::from_ref(&job).cast(),
            run_grid_rank::<F, R>,
            &|| job.barriers.poison(),
        )
    };
    if let Err(failed) = ran {
        // SAFETY: ranks `1 .. failed.rank` ran and ended, the rest did not run.
        unsafe { job.outcomes.discard(1..failed.rank) };
        super::start_failed(format_args!("launch_grid({blocks}, {threads}, _)"), failed);
    }
    job.outcomes
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
    let threads = job.barriers.grid.threads;
    let block_rank = rank / threads;
    // The seats live past the catch (`run`).
    let block = Block {
        grid: Grid {
            rank: rank % threads,
            seat: job.barriers.blocks[block_rank].seated_seat(rank % threads),
            wide: Some(Wide {
                seat: job.barriers.grid.seat(rank),
                barrier: &job.barriers.grid,
                block_rank,
            }),
        },
    };
    // SAFETY: as above: rank `rank` runs nowhere else.
    unsafe {
        run(&block, rank, job.kernel, &job.outcomes, || {
            job.barriers.poison()
        })
    };
    // The seats leave, the grid's last: this rank's last access to the
    // launch, after every function holding a reference into the job has
    // returned (as in `run_rank`).
    drop(block);
}
