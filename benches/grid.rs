//! What a grid's barrier costs beside a `Team` of as many seats, in one run:
//!
//! - `grid BxT`: `grid.sync()` of `B` blocks of `T` threads, per episode,
//!   inside one `launch_grid` (timed by grid rank 0, after a first sync);
//! - `team N`: `Seat::arrive_and_wait` of a `Team` of `N` seats inside one
//!   `launch(N)` on the same pool: the same threads, one flat team;
//! - `launch_grid`: `launch_grid(4, 4, one grid.sync)` round trip, against
//!   `launch(16, one sync)`;
//! - `split wait`: at 4 x 4, `arrive`, about 2 µs of work, `wait`: the time
//!   of the `wait` alone, against the time of a `grid.sync()` after the
//!   same work (the fuzzy barrier's gain: the arrivals overlap the work).
//!
//! Each pass runs every row in turn (`batches` batches each, the median
//! kept) and prints its ratios; the last lines give the median of each
//! ratio over the passes.
//!
//! Run: `cargo bench --bench grid -- [--passes 5] [--batches 7] [--episodes 2000] [--quick]`.

#[path = "common/cli.rs"]
mod cli;

use std::hint::black_box;
use std::time::{Duration, Instant};
use syncthreads::{launch, launch_grid, Team};

struct Opts {
    passes: usize,
    batches: usize,
    episodes: usize,
}

const CLI: cli::Cli = cli::Cli {
    program: "grid",
    usage: || {
        "usage: cargo bench --bench grid -- [--passes 5] [--batches 7] [--episodes 2000] [--quick]\n\
         --passes: passes over every row; --batches: timed batches per row (the median kept)\n\
         --episodes: grid syncs per batch; --quick: 1 pass, 3 batches, 200 episodes"
            .to_owned()
    },
};

/// The value of `flag`, a count of at least 1, or a usage error.
fn count(parser: &mut lexopt::Parser, flag: &str) -> usize {
    match CLI.number(parser, flag) {
        0 => CLI.bad(format!("{flag}: at least 1")),
        n => n,
    }
}

fn opts() -> Opts {
    let mut o = Opts {
        passes: 5,
        batches: 7,
        episodes: 2000,
    };
    let mut parser = cli::parser();
    while let Some(arg) = CLI.next(&mut parser) {
        use lexopt::Arg::{Long, Short};
        match arg {
            Long("passes") => o.passes = count(&mut parser, "--passes"),
            Long("batches") => o.batches = count(&mut parser, "--batches"),
            Long("episodes") => o.episodes = count(&mut parser, "--episodes"),
            Long("quick") => {
                o.passes = 1;
                o.batches = 3;
                o.episodes = 200;
            }
            Short('h') | Long("help") => CLI.help(),
            other => CLI.unexpected(other),
        }
    }
    o
}

/// The median of `batches` runs of `f` (nanoseconds each).
fn median_of(o: &Opts, mut f: impl FnMut() -> f64) -> f64 {
    let mut v: Vec<f64> = (0..o.batches).map(|_| f()).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Nanoseconds per `grid.sync()` of a `blocks` x `threads` grid.
fn grid_sync(o: &Opts, blocks: usize, threads: usize) -> f64 {
    let episodes = o.episodes;
    median_of(o, || {
        launch_grid(blocks, threads, |block| {
            let grid = block.grid();
            grid.sync();
            let start = Instant::now();
            for _ in 0..episodes {
                grid.sync();
            }
            start.elapsed().as_nanos() as f64 / episodes as f64
        })[0]
    })
}

/// Nanoseconds per episode of a `Team` of `seats` seats, on a launch's threads.
fn team_sync(o: &Opts, seats: usize) -> f64 {
    let episodes = o.episodes;
    median_of(o, || {
        let team = Team::new(seats);
        launch(seats, |block| {
            let seat = team.seat(block.thread_rank());
            seat.arrive_and_wait();
            let start = Instant::now();
            for _ in 0..episodes {
                seat.arrive_and_wait();
            }
            start.elapsed().as_nanos() as f64 / episodes as f64
        })[0]
    })
}

/// Nanoseconds per round trip of `launch`.
fn round_trip(o: &Opts, mut launch_once: impl FnMut()) -> f64 {
    let episodes = o.episodes;
    median_of(o, || {
        let start = Instant::now();
        for _ in 0..episodes {
            launch_once();
        }
        start.elapsed().as_nanos() as f64 / episodes as f64
    })
}

/// Spins for about `d` (the work between an arrival and its wait).
fn work(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// At 4 x 4, after about 2 µs of work: nanoseconds of the `wait` of a
/// split `arrive` / `wait` (the work between them), and of a `grid.sync()`
/// (the work before it), as grid rank 0 sees them.
fn split_and_sync(o: &Opts) -> (f64, f64) {
    let episodes = o.episodes;
    let per = |split: bool| {
        median_of(o, || {
            launch_grid(4, 4, |block| {
                let grid = block.grid();
                grid.sync();
                let mut waited = Duration::ZERO;
                for _ in 0..episodes {
                    if split {
                        let token = grid.arrive();
                        work(Duration::from_micros(2));
                        let start = Instant::now();
                        grid.wait(token);
                        waited += start.elapsed();
                    } else {
                        work(Duration::from_micros(2));
                        let start = Instant::now();
                        grid.sync();
                        waited += start.elapsed();
                    }
                }
                waited.as_nanos() as f64 / episodes as f64
            })[0]
        })
    };
    (per(true), per(false))
}

fn main() {
    let o = opts();
    println!(
        "grid bench: {} passes, {} batches of {} episodes (medians in µs; ratios < 1 favour the first)",
        o.passes, o.batches, o.episodes
    );
    let names = [
        "grid 4x4 / team 16",
        "grid 2x8 / team 16",
        "grid 16x1 / team 16",
        "grid 8x8 / team 64",
        "launch_grid(4,4) / launch(16)",
        "split wait / grid.sync (4x4, 2 µs work)",
    ];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for pass in 1..=o.passes {
        let team16 = team_sync(&o, 16);
        let g44 = grid_sync(&o, 4, 4);
        let g28 = grid_sync(&o, 2, 8);
        let g161 = grid_sync(&o, 16, 1);
        let team64 = team_sync(&o, 64);
        let g88 = grid_sync(&o, 8, 8);
        let lg = round_trip(&o, || {
            black_box(launch_grid(4, 4, |b| b.grid().sync()));
        });
        let l = round_trip(&o, || {
            black_box(launch(16, |b| b.sync()));
        });
        let (split, sync) = split_and_sync(&o);
        println!(
            "pass {pass}: team 16 {:.3}, grid 4x4 {:.3}, 2x8 {:.3}, 16x1 {:.3}; team 64 {:.3}, grid 8x8 {:.3}; \
             launch_grid(4,4) {:.3}, launch(16) {:.3}; split wait {:.3}, grid.sync {:.3}",
            team16 / 1e3,
            g44 / 1e3,
            g28 / 1e3,
            g161 / 1e3,
            team64 / 1e3,
            g88 / 1e3,
            lg / 1e3,
            l / 1e3,
            split / 1e3,
            sync / 1e3
        );
        let pass_ratios = [
            g44 / team16,
            g28 / team16,
            g161 / team16,
            g88 / team64,
            lg / l,
            split / sync,
        ];
        for (i, r) in pass_ratios.iter().enumerate() {
            ratios[i].push(*r);
        }
        let shown: Vec<String> = names
            .iter()
            .zip(pass_ratios)
            .map(|(n, r)| format!("{n} {r:.2}x"))
            .collect();
        println!("  ratios: {}", shown.join(", "));
    }
    println!("median ratio over {} passes:", o.passes);
    for (name, mut r) in names.iter().zip(ratios) {
        r.sort_by(f64::total_cmp);
        println!("  {name:<42} {:.2}x", r[r.len() / 2]);
    }
}
