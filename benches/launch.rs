//! What a `launch` costs on the warm pool, beside its peers, in one run:
//!
//! - `launch`: `launch(T, |b| b.sync())`, round trip (rank 0 is the caller);
//! - `results`: `launch(T, |b| { b.sync(); b.thread_rank() })`: as `launch`,
//!   with a result per rank to bring back;
//! - `empty`: `launch(T, |_| ())`: the hand-off, the block's setup and its
//!   ranks' leaving, without a sync;
//! - `pool` (built with `--features bench`): the pool's hand-off and return
//!   alone, with no block;
//! - `cold`: the same on a new `Launcher` (spawning its `T - 1` threads,
//!   joined at its drop): what a launch costs once its pool threads have
//!   left after the keep-alive;
//! - `scope`: `std::thread::scope` spawning `T` threads round a std `Barrier`
//!   (what `launch` cost before it had a pool);
//! - `rayon`: rayon's `broadcast` on a `T`-thread pool round a std `Barrier`;
//! - `omp`: libgomp's `#pragma omp parallel` with one `omp barrier`, when
//!   `--omp PATH` names the compiled `omp_parallel` peer (it is run as a child
//!   process per `T`: `PATH T ITERS`, printing `omp_parallel T NS`);
//! - `llvm`: the same source linked against LLVM's OpenMP runtime
//!   (`--omp-llvm PATH`, see benches/peers/omp_parallel.cpp);
//! - `threadteam`: a section of threadteam's reserved team (its members stay
//!   awake between sections) with one `Participant::barrier()`, inside one
//!   held team scope: the Rust peer of a launch per step;
//! - `launch loop` / `tt loop`: per sync, a launch whose kernel makes 64
//!   `block.sync()`, against a threadteam section making 64 barriers;
//! - `idle 1ms` / `idle 300ms` (largest `T` only): one `launch(T, sync)`
//!   after the pool sat idle that long, against a threadteam section after
//!   the same gap; p50 and p99 of `--idle-samples` gaps;
//! - `heat step` / `heat long`: a 5-point stencil on a 64 x 1024 grid, one
//!   launch per time step against one launch whose kernel loops the steps;
//! - `over 64`: 64-thread launches (more block threads than cores);
//! - `4 x 16`: four threads each launching 16-thread blocks at once.
//!
//! Each row is timed in batches; a row prints the median and the min-max of
//! its batches' per-operation time. The passes interleave the rows, and each
//! pass prints its ratios (launch/omp, rayon/launch, step/long).
//!
//! Run: `cargo bench --bench launch [--features bench] -- --threads 2,4,8,16 --passes 3
//! [--omp target/omp_parallel] [--omp-llvm PATH] [--batches 15] [--quick]
//! [--only launch,threadteam,loop,idle,...]`.

#[path = "common/cli.rs"]
mod cli;

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};
use syncthreads::launch;

struct Opts {
    threads: Vec<usize>,
    passes: usize,
    batches: usize,
    /// Aim of one batch's length.
    batch: Duration,
    omp: Option<String>,
    omp_llvm: Option<String>,
    /// The crew's group size (`--features bench`), if set.
    group: Option<usize>,
    /// Row groups to run; empty: all.
    only: Vec<String>,
    idle_samples: usize,
}

impl Opts {
    fn wants(&self, group: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|g| g == group)
    }
}

/// The row groups `--only` takes.
const GROUPS: &[&str] = &[
    "launch",
    "results",
    "empty",
    "pool",
    "cold",
    "scope",
    "rayon",
    "omp",
    "threadteam",
    "loop",
    "heat",
    "idle",
    "over",
];

const CLI: cli::Cli = cli::Cli {
    program: "launch",
    usage: || {
        "usage: cargo bench --bench launch [--features bench] -- [--threads 2,4,8,16] [--passes 3]\n\
         \x20                [--batches 15] [--omp PATH] [--omp-llvm PATH] [--only GROUPS]\n\
         \x20                [--idle-samples 40] [--group N] [--quick]\n\
         --threads: block sizes, comma-separated, each in 1..=1024\n\
         --passes: passes over every row (default 3); --batches: timed batches per row (default 15)\n\
         --omp PATH: the compiled benches/peers/omp_parallel.cpp, run beside each size\n\
         --omp-llvm PATH: the same source linked against LLVM's libomp\n\
         --only: row groups, comma-separated, of launch, results, empty, pool, cold, scope,\n\
         \x20       rayon, omp, threadteam, loop, heat, idle, over (default all)\n\
         --idle-samples: gaps per idle row (default 40)\n\
         --group N: the crew's threads per go word, 1..=16 (needs --features bench)\n\
         --quick: 5 short batches per row, 3 idle gaps"
            .to_owned()
    },
};

fn opts() -> Opts {
    let mut o = Opts {
        threads: vec![2, 4, 8, 16],
        passes: 3,
        batches: 15,
        batch: Duration::from_millis(20),
        omp: None,
        omp_llvm: None,
        group: None,
        only: Vec::new(),
        idle_samples: 40,
    };
    let mut parser = cli::parser();
    while let Some(arg) = CLI.next(&mut parser) {
        use lexopt::Arg::{Long, Short};
        match arg {
            Long("threads") => {
                let list = CLI.text(&mut parser, "--threads");
                o.threads = list
                    .split(',')
                    .map(|t| match CLI.parse::<usize>("--threads", t) {
                        n @ 1..=1024 => n,
                        n => CLI.bad(format!("--threads: {n} is not in 1..=1024")),
                    })
                    .collect();
            }
            Long("passes") => o.passes = CLI.number(&mut parser, "--passes"),
            Long("batches") => o.batches = CLI.number(&mut parser, "--batches"),
            Long("omp") => o.omp = Some(CLI.text(&mut parser, "--omp")),
            Long("omp-llvm") => o.omp_llvm = Some(CLI.text(&mut parser, "--omp-llvm")),
            Long("idle-samples") => o.idle_samples = CLI.number(&mut parser, "--idle-samples"),
            Long("group") => match CLI.number(&mut parser, "--group") {
                n @ 1..=16 => o.group = Some(n),
                n => CLI.bad(format!("--group: {n} is not in 1..=16")),
            },
            Long("only") => {
                let list = CLI.text(&mut parser, "--only");
                o.only = list.split(',').map(str::to_owned).collect();
                if let Some(bad) = o.only.iter().find(|g| !GROUPS.contains(&g.as_str())) {
                    CLI.bad(format!("--only: no row group {bad:?}"));
                }
            }
            Long("quick") => {
                o.batches = 5;
                o.batch = Duration::from_millis(5);
                o.idle_samples = 3;
            }
            Short('h') | Long("help") => CLI.help(),
            other => CLI.unexpected(other),
        }
    }
    if o.passes == 0 || o.batches == 0 || o.idle_samples == 0 {
        CLI.bad("--passes, --batches and --idle-samples: at least 1");
    }
    o
}

/// The batches' per-operation times of `op` (which runs `n` operations per
/// call and returns how long they took), in nanoseconds, sorted.
fn measure(o: &Opts, mut op: impl FnMut(u64) -> Duration) -> Vec<f64> {
    // Warm up and size a batch to about `o.batch`.
    let mut n = 1u64;
    loop {
        let t = op(n);
        if t >= o.batch / 4 || n >= 1 << 24 {
            let per = t.as_secs_f64() / n as f64;
            n = ((o.batch.as_secs_f64() / per.max(1e-9)) as u64).max(1);
            break;
        }
        n *= 4;
    }
    let mut v: Vec<f64> = (0..o.batches)
        .map(|_| op(n).as_nanos() as f64 / n as f64)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn median(v: &[f64]) -> f64 {
    v[v.len() / 2]
}

fn us(ns: f64) -> String {
    format!("{:.2}", ns / 1000.0)
}

fn row(name: &str, t: usize, v: &[f64]) -> f64 {
    let m = median(v);
    println!(
        "  {name:<12} T={t:<3} median {:>9} µs   min-max {} - {} µs",
        us(m),
        us(v[0]),
        us(v[v.len() - 1])
    );
    m
}

/// `launch(T, |b| b.sync())`, round trip.
fn launch_round_trip(o: &Opts, t: usize) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(launch(t, |b| b.sync()));
        }
        start.elapsed()
    })
}

/// `launch(T, |b| { b.sync(); b.thread_rank() })`, round trip.
fn results_round_trip(o: &Opts, t: usize) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(launch(t, |b| {
                b.sync();
                b.thread_rank()
            }));
        }
        start.elapsed()
    })
}

/// `launch(T, |_| ())`, round trip.
fn empty_round_trip(o: &Opts, t: usize) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(launch(t, |_| ()));
        }
        start.elapsed()
    })
}

/// The default pool's hand-off of `T - 1` ranks and their return, with no
/// block (the crate's bench hook).
#[cfg(feature = "bench")]
fn pool_round_trip(o: &Opts, t: usize) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            syncthreads::bench_hooks::pool_round_trip(t);
        }
        start.elapsed()
    })
}

/// A launch on a pool without threads: spawn, run, join.
fn cold_round_trip(o: &Opts, t: usize) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            let launcher = syncthreads::Launcher::new();
            black_box(launcher.launch(t, |b| b.sync()));
        }
        start.elapsed()
    })
}

/// `std::thread::scope` with `T` spawned threads round a std `Barrier`.
fn scope_round_trip(o: &Opts, t: usize) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            let barrier = Barrier::new(t);
            std::thread::scope(|s| {
                for _ in 0..t {
                    s.spawn(|| barrier.wait());
                }
            });
        }
        start.elapsed()
    })
}

/// rayon's `broadcast` on a `T`-thread pool round a std `Barrier`.
fn rayon_round_trip(o: &Opts, pool: &rayon::ThreadPool, t: usize) -> Vec<f64> {
    let barrier = Barrier::new(t);
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            pool.broadcast(|_| {
                barrier.wait();
            });
        }
        start.elapsed()
    })
}

/// An OpenMP parallel region, from the compiled peer: one median.
fn omp_round_trip(path: &str, t: usize) -> Option<f64> {
    let out = std::process::Command::new(path)
        .args([t.to_string(), "2000".to_owned()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(2)?.parse().ok()
}

/// Syncs per launch (and barriers per section) of the loop rows.
const LOOP: usize = 64;

/// `launch(T, |b| 64 x b.sync())`, per sync.
fn launch_loop(o: &Opts, t: usize) -> Vec<f64> {
    let mut v = measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            launch(t, |b| {
                for _ in 0..LOOP {
                    b.sync();
                }
            });
        }
        start.elapsed()
    });
    v.iter_mut().for_each(|x| *x /= LOOP as f64);
    v
}

/// A threadteam team of `T` (the caller and `T - 1` reserved members).
fn threadteam_team(t: usize) -> threadteam::Team {
    threadteam::Pool::builder()
        .threads(t)
        .acquire_timeout(Duration::from_secs(10))
        .build()
        .expect("a threadteam pool")
        .into_team(t)
        .expect("an idle threadteam pool")
}

/// Runs `body` with a held scope of `team`: its sections are what is timed.
fn in_team<R>(
    team: &threadteam::Team,
    t: usize,
    body: impl FnOnce(&mut threadteam::TeamExec<'_>) -> R,
) -> R {
    let mut exec = team.exec(t);
    exec.team(|mut scope| body(&mut scope))
        .expect("the team's members")
}

/// A threadteam section with `barriers` barriers, per section, on a team
/// of its own (dropped after, so that its members spin beside no other row).
fn threadteam_sections(o: &Opts, t: usize, barriers: usize) -> Vec<f64> {
    let team = threadteam_team(t);
    in_team(&team, t, |scope| {
        assert_eq!(scope.size().get(), t, "threadteam clamped the team");
        measure(o, |n| {
            let start = Instant::now();
            for _ in 0..n {
                scope.reborrow().run_with(|p| {
                    for _ in 0..barriers {
                        p.barrier().expect("no participant panics");
                    }
                });
            }
            start.elapsed()
        })
    })
}

/// One launch (or one threadteam section) after each of `samples` idle
/// gaps of `gap`: sorted times in ns.
fn after_idle(samples: usize, gap: Duration, mut op: impl FnMut()) -> Vec<f64> {
    op();
    let mut v: Vec<f64> = (0..samples)
        .map(|_| {
            std::thread::sleep(gap);
            let start = Instant::now();
            op();
            start.elapsed().as_nanos() as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn idle_row(name: &str, t: usize, v: &[f64]) -> (f64, f64) {
    let p50 = v[v.len() / 2];
    let p99 = v[(v.len() * 99 / 100).min(v.len() - 1)];
    println!(
        "  {name:<12} T={t:<3} p50 {:>9} µs   p99 {:>9} µs   max {} µs",
        us(p50),
        us(p99),
        us(v[v.len() - 1])
    );
    (p50, p99)
}

const ROWS: usize = 64;
const COLS: usize = 1024;
const STEPS: usize = 20;

/// The stencil's grids: two buffers of `f32` bits, read and written by
/// rows split among the ranks (Relaxed: the block's sync orders them).
struct Grid {
    cells: [Vec<AtomicU32>; 2],
}

impl Grid {
    fn new() -> Grid {
        let make = || {
            (0..ROWS * COLS)
                .map(|i| AtomicU32::new(((i % 7) as f32).to_bits()))
                .collect()
        };
        Grid {
            cells: [make(), make()],
        }
    }

    /// One step of rank `rank` of `size`: its rows of `cells[step % 2]`
    /// into `cells[(step + 1) % 2]`.
    fn step(&self, step: usize, rank: usize, size: usize) {
        let (src, dst) = (&self.cells[step % 2], &self.cells[(step + 1) % 2]);
        let get = |r: usize, c: usize| f32::from_bits(src[r * COLS + c].load(Ordering::Relaxed));
        let rows = ROWS.div_ceil(size);
        for r in (rank * rows).max(1)..((rank + 1) * rows).min(ROWS - 1) {
            for c in 1..COLS - 1 {
                let v = 0.2
                    * (get(r, c) + get(r - 1, c) + get(r + 1, c) + get(r, c - 1) + get(r, c + 1));
                dst[r * COLS + c].store(v.to_bits(), Ordering::Relaxed);
            }
        }
    }
}

/// `STEPS` steps of the stencil, one launch per step; per step.
fn heat_per_step(o: &Opts, t: usize, grid: &Grid) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            for step in 0..STEPS {
                launch(t, |b| grid.step(step, b.thread_rank(), b.size()));
            }
        }
        start.elapsed() / STEPS as u32
    })
}

/// The same steps in one launch whose kernel loops them; per step.
fn heat_long(o: &Opts, t: usize, grid: &Grid) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        for _ in 0..n {
            launch(t, |b| {
                for step in 0..STEPS {
                    grid.step(step, b.thread_rank(), b.size());
                    b.sync();
                }
            });
        }
        start.elapsed() / STEPS as u32
    })
}

/// Four threads each launching 16-thread blocks at once: wall time per
/// launch of one caller.
fn concurrent_4x16(o: &Opts) -> Vec<f64> {
    measure(o, |n| {
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..n {
                        black_box(launch(16, |b| b.sync()));
                    }
                });
            }
        });
        start.elapsed()
    })
}

fn main() {
    let o = opts();
    if let Some(group) = o.group {
        #[cfg(feature = "bench")]
        syncthreads::bench_hooks::set_crew_group(group);
        #[cfg(not(feature = "bench"))]
        CLI.bad(format!("--group {group}: build with --features bench"));
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "launch bench: {cores} cores, threads {:?}, {} passes, {} batches per row",
        o.threads, o.passes, o.batches
    );
    let pools: Vec<rayon::ThreadPool> = o
        .threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .expect("a rayon pool")
        })
        .collect();
    let grid = Grid::new();
    let ratio = |name: &str, a: Option<f64>, b: Option<f64>| {
        if let (Some(a), Some(b)) = (a, b) {
            print!("  {name} {:.3}", a / b);
        }
    };
    for pass in 1..=o.passes {
        println!("pass {pass}");
        for (&t, pool) in o.threads.iter().zip(&pools) {
            let l = o
                .wants("launch")
                .then(|| row("launch", t, &launch_round_trip(&o, t)));
            if o.wants("results") {
                row("results", t, &results_round_trip(&o, t));
            }
            if o.wants("empty") {
                row("empty", t, &empty_round_trip(&o, t));
            }
            #[cfg(feature = "bench")]
            if o.wants("pool") {
                row("pool", t, &pool_round_trip(&o, t));
            }
            if o.wants("cold") {
                row("cold", t, &cold_round_trip(&o, t));
            }
            let s = o
                .wants("scope")
                .then(|| row("scope", t, &scope_round_trip(&o, t)));
            let r = o
                .wants("rayon")
                .then(|| row("rayon", t, &rayon_round_trip(&o, pool, t)));
            let omp_row = |name: &str, path: &Option<String>| {
                let v = path
                    .as_deref()
                    .filter(|_| o.wants("omp"))
                    .and_then(|p| omp_round_trip(p, t));
                if let Some(v) = v {
                    println!("  {name:<12} T={t:<3} median {:>9} µs", us(v));
                }
                v
            };
            let omp = omp_row("omp", &o.omp);
            let llvm = omp_row("llvm", &o.omp_llvm);
            let tt = o
                .wants("threadteam")
                .then(|| row("threadteam", t, &threadteam_sections(&o, t, 1)));
            let (ll, tl) = if o.wants("loop") {
                let ll = row("launch loop", t, &launch_loop(&o, t));
                let mut v = threadteam_sections(&o, t, LOOP);
                v.iter_mut().for_each(|x| *x /= LOOP as f64);
                (Some(ll), Some(row("tt loop", t, &v)))
            } else {
                (None, None)
            };
            let (hs, hl) = if o.wants("heat") {
                (
                    Some(row("heat step", t, &heat_per_step(&o, t, &grid))),
                    Some(row("heat long", t, &heat_long(&o, t, &grid))),
                )
            } else {
                (None, None)
            };
            print!("  ratios T={t}:");
            ratio("launch/scope", l, s);
            ratio("rayon/launch", r, l);
            ratio("launch/omp", l, omp);
            ratio("launch/llvm", l, llvm);
            ratio("launch/threadteam", l, tt);
            ratio("loop launch/tt", ll, tl);
            ratio("heat step/long", hs, hl);
            println!();
        }
        if o.wants("idle") {
            let t = *o.threads.iter().max().expect("a size");
            for (name, gap) in [
                ("1ms", Duration::from_millis(1)),
                ("300ms", Duration::from_millis(300)),
            ] {
                let samples = if gap > Duration::from_millis(10) {
                    o.idle_samples
                } else {
                    o.idle_samples * 5
                };
                let (lp50, lp99) = idle_row(
                    &format!("idle {name}"),
                    t,
                    &after_idle(samples, gap, || {
                        black_box(launch(t, |b| b.sync()));
                    }),
                );
                let team = threadteam_team(t);
                let (tp50, tp99) = in_team(&team, t, |scope| {
                    idle_row(
                        &format!("tt idle {name}"),
                        t,
                        &after_idle(samples, gap, || {
                            scope.reborrow().run_with(|p| {
                                p.barrier().expect("no participant panics");
                            })
                        }),
                    )
                });
                println!(
                    "  ratios idle {name} T={t}: launch p99/p50 {:.2}  launch/tt p50 {:.3} p99 {:.3}",
                    lp99 / lp50,
                    lp50 / tp50,
                    lp99 / tp99
                );
            }
        }
        if o.wants("over") {
            row("over 64", 64, &launch_round_trip(&o, 64));
            row("4 x 16", 16, &concurrent_4x16(&o));
        }
    }
}
