//! A cooperative kernel: a Jacobi solver whose every step ends in
//! `grid.sync()` (CUDA's `this_grid().sync()` in a kernel launched with
//! `cudaLaunchCooperativeKernel`), against the same program with one launch
//! per step (the kernel boundary as the grid-wide barrier, as CUDA code
//! without cooperative launch does it).
//!
//! The problem: a rod of `cells` cells between a hot end (1.0) and a cold
//! one (0.0); each step replaces every cell by the mean of its two
//! neighbours. Thread `r` of the grid (`blocks` blocks of `threads`)
//! owns a contiguous run of cells. Both forms compute the same values,
//! bit for bit, as a sequential loop: the example checks that, and prints
//! the time of each form.
//!
//! ```text
//! cargo run --release --example grid_jacobi -- [blocks] [threads] [cells] [steps]
//! ```

mod args;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use syncthreads::{launch_grid, Block};

const CLI: args::Cli<4> = args::Cli {
    program: "grid_jacobi",
    counts: [
        args::count("blocks", 4, 1..=64),
        args::count("threads", 4, 1..=64),
        args::count("cells", 4096, 1..=1 << 20),
        args::count("steps", 200, 1..=100_000),
    ],
    note: "blocks * threads <= cells; cells * steps at most 2^28 (a few seconds)",
};

/// The two buffers of the rod, with its two fixed ends: step `s` reads
/// buffer `s % 2` and writes the other. Plain values in atomics (Relaxed):
/// only the grid's barrier (or the launch's end) orders them.
struct Rod {
    cells: usize,
    buf: [Vec<AtomicU64>; 2],
}

impl Rod {
    fn new(cells: usize) -> Rod {
        let make = || -> Vec<AtomicU64> {
            (0..cells + 2)
                .map(|i| AtomicU64::new(if i == 0 { 1.0f64.to_bits() } else { 0 }))
                .collect()
        };
        Rod {
            cells,
            buf: [make(), make()],
        }
    }

    /// Interior cells `cells`, from buffer `step % 2` into the other.
    fn step(&self, step: usize, cells: Range<usize>) {
        let (from, to) = (&self.buf[step % 2], &self.buf[1 - step % 2]);
        let at = |i: usize| f64::from_bits(from[i].load(Ordering::Relaxed));
        for i in cells {
            to[i].store(((at(i - 1) + at(i + 1)) * 0.5).to_bits(), Ordering::Relaxed);
        }
    }

    /// The cells of the thread of grid rank `rank` of `size`.
    fn owned(&self, rank: usize, size: usize) -> Range<usize> {
        1 + rank * self.cells / size..1 + (rank + 1) * self.cells / size
    }

    /// The interior after `steps` steps.
    fn result(&self, steps: usize) -> Vec<f64> {
        self.buf[steps % 2][1..=self.cells]
            .iter()
            .map(|v| f64::from_bits(v.load(Ordering::Relaxed)))
            .collect()
    }
}

/// The cooperative kernel: every step, then `grid.sync()`.
fn persistent(rod: &Rod, block: &Block<'_>, steps: usize) {
    let grid = block.grid();
    let mine = rod.owned(grid.thread_rank(), grid.size());
    for step in 0..steps {
        rod.step(step, mine.clone());
        grid.sync();
    }
}

fn main() {
    let [blocks, threads, cells, steps] = CLI.parse();
    if blocks * threads > cells {
        CLI.bad(&format!(
            "blocks * threads must be at most cells ({cells}), not {}",
            blocks * threads
        ));
    }
    CLI.at_most("cells * steps", cells * steps, 1 << 28, "a few seconds");

    // The sequential reference.
    let reference = Rod::new(cells);
    for step in 0..steps {
        reference.step(step, 1..cells + 1);
    }
    let want = reference.result(steps);

    // One cooperative launch, the grid syncing every step.
    let rod = Rod::new(cells);
    let start = Instant::now();
    launch_grid(blocks, threads, |block| persistent(&rod, block, steps));
    let cooperative = start.elapsed();
    let got = rod.result(steps);

    // One launch per step: the launch's end is the grid-wide barrier.
    let per_step = Rod::new(cells);
    let start = Instant::now();
    for step in 0..steps {
        launch_grid(blocks, threads, |block| {
            let grid = block.grid();
            per_step.step(step, per_step.owned(grid.thread_rank(), grid.size()));
        });
    }
    let relaunched = start.elapsed();
    let got_per_step = per_step.result(steps);

    for (form, got) in [("grid.sync()", &got), ("launch per step", &got_per_step)] {
        if let Some(i) = (0..cells).find(|&i| got[i].to_bits() != want[i].to_bits()) {
            eprintln!(
                "grid_jacobi: {form}: cell {} is {} after {steps} steps, the sequential loop has {}",
                i + 1,
                got[i],
                want[i]
            );
            std::process::exit(1);
        }
    }
    let step_us = |d: std::time::Duration| d.as_secs_f64() * 1e6 / steps as f64;
    println!(
        "grid_jacobi: {} x {} over {cells} cells, {}: both forms match the sequential loop \
         (heat in the rod {:.6})",
        args::counted(blocks, "block"),
        args::counted(threads, "thread"),
        args::counted(steps, "step"),
        want.iter().sum::<f64>(),
    );
    println!(
        "  one launch, grid.sync() per step: {:.2} us/step; one launch per step: {:.2} us/step",
        step_us(cooperative),
        step_us(relaunched)
    );
}
