//! Stress on grids: random shapes (1 ..= 16 blocks of 1 ..= 16 threads,
//! oversubscribed on a small machine) running random programs of
//! `block.sync()`, `grid.sync()` and split grid waits, with threads
//! returning early and, in some trials, one thread panicking. Every phase
//! checks that exactly the threads still running took part in it; every
//! trial runs under a watchdog. `GRID_STRESS_TRIALS` sets the trial count
//! (for longer runs on a larger machine).

mod common;

use common::{mix, panic_message, scaled, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use syncthreads::launch_grid;

/// One step of a trial's program, the same for every thread (as CUDA
/// requires of the syncs a block or grid makes).
#[derive(Clone, Copy, Debug)]
enum Step {
    Block,
    Grid,
    Split,
}

/// A trial: its shape, program, early returns and maybe a panic.
struct Trial {
    blocks: usize,
    threads: usize,
    program: Vec<Step>,
    /// Thread `r` (grid rank) returns before step `exit[r]` (or never,
    /// when it is the program's length).
    exit: Vec<usize>,
    /// The grid rank and step of a panic, if any.
    panic: Option<(usize, usize)>,
}

impl Trial {
    fn new(seed: u64) -> Trial {
        let mut n = 0u64;
        let mut next = |below: usize| {
            n += 1;
            (mix(seed << 16 | n) % below as u64) as usize
        };
        let (blocks, threads) = (1 + next(16), 1 + next(16));
        let len = 4 + next(12);
        let program = (0..len)
            .map(|_| match next(3) {
                0 => Step::Block,
                1 => Step::Grid,
                _ => Step::Split,
            })
            .collect();
        let size = blocks * threads;
        let leave = next(3) > 0; // some trials keep every thread
        let exit = (0..size)
            .map(|_| {
                if leave && next(4) == 0 {
                    next(len + 1)
                } else {
                    len
                }
            })
            .collect();
        let panic = (next(4) == 0).then(|| (next(size), next(len)));
        Trial {
            blocks,
            threads,
            program,
            exit,
            panic,
        }
    }

    /// How many threads of block `b` (or of the grid, for `None`) still
    /// run at step `i`.
    fn live(&self, b: Option<usize>, i: usize) -> usize {
        (0..self.blocks * self.threads)
            .filter(|&r| b.is_none_or(|b| r / self.threads == b))
            .filter(|&r| self.exit[r] > i)
            .count()
    }

    fn describe(&self) -> String {
        format!(
            "{} x {}, program {:?}, exits {:?}, panic {:?}",
            self.blocks, self.threads, self.program, self.exit, self.panic
        )
    }

    fn run(&self) {
        let len = self.program.len();
        let size = self.blocks * self.threads;
        // Per step: arrivals counted before the step's sync, per block and
        // for the grid.
        let block_counts: Vec<AtomicUsize> = (0..len * self.blocks)
            .map(|_| AtomicUsize::new(0))
            .collect();
        let grid_counts: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
        let result = catch_unwind(AssertUnwindSafe(|| {
            launch_grid(self.blocks, self.threads, |block| {
                let grid = block.grid();
                let (me, b) = (grid.thread_rank(), block.block_rank());
                for (i, step) in self.program.iter().enumerate() {
                    if i == self.exit[me] {
                        return me;
                    }
                    if self.panic == Some((me, i)) {
                        panic!("grid rank {me} fails at step {i}");
                    }
                    match step {
                        Step::Block => {
                            // Relaxed: the block's barrier orders it.
                            block_counts[i * self.blocks + b].fetch_add(1, Ordering::Relaxed);
                            block.sync();
                            let got = block_counts[i * self.blocks + b].load(Ordering::Relaxed);
                            assert_eq!(got, self.live(Some(b), i), "block {b}, step {i}");
                        }
                        Step::Grid | Step::Split => {
                            // Relaxed: the grid's barrier orders it.
                            grid_counts[i].fetch_add(1, Ordering::Relaxed);
                            if let Step::Grid = step {
                                grid.sync();
                            } else {
                                let token = grid.arrive();
                                std::hint::black_box(me * i);
                                grid.wait(token);
                            }
                            let got = grid_counts[i].load(Ordering::Relaxed);
                            assert_eq!(got, self.live(None, i), "step {i}");
                        }
                    }
                }
                me
            })
        }));
        match (self.panic, result) {
            (None, Ok(ranks)) => assert_eq!(ranks, (0..size).collect::<Vec<_>>()),
            (Some((rank, step)), Err(payload)) if self.exit[rank] > step => assert_eq!(
                panic_message(&*payload),
                format!("grid rank {rank} fails at step {step}")
            ),
            // The panicking thread returned before its panic.
            (Some(_), Ok(ranks)) => assert_eq!(ranks, (0..size).collect::<Vec<_>>()),
            (_, Err(payload)) => panic!("unexpected panic: {}", panic_message(&*payload)),
        }
    }
}

/// Stays silent for the panics the trials provoke.
fn quiet() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let provoked = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|m| m.starts_with("grid rank"));
        if !provoked {
            default(info);
        }
    }));
}

#[test]
fn random_grids_run_random_programs_of_syncs_leaves_and_panics() {
    quiet();
    let trials = std::env::var("GRID_STRESS_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(scaled(150, 2));
    for seed in 0..trials as u64 {
        let trial = Trial::new(seed);
        watchdog(
            120,
            || format!("seed {seed}: {}", trial.describe()),
            || trial.run(),
        );
    }
}
