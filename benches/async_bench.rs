//! Async barrier bench: `Barrier::arrive_and_wait_async` against
//! `tokio::sync::Barrier` and async-lock's `Barrier`, on a tokio
//! multi-thread runtime with 4 workers.
//!
//! 1. **Episodes per second** for 4, 16 and 64 tasks: every task runs the
//!    same number of episodes (one barrier wait each); a run is timed from
//!    spawning the tasks to the last one finishing. The three barriers take
//!    turns within each round (interleaved), so drift of the machine hits
//!    them alike; the table gives the median over the rounds and the spread
//!    (min–max).
//! 2. **Wake-up latency**: a waiter task is pending on a 2-party barrier; a
//!    completer on a thread outside the runtime (20 µs after the waiter said
//!    it is about to wait) reads the clock and makes the completing arrival;
//!    the waiter reads the clock when it resumes. p50 and p99 of
//!    the difference over every sample of every round (a sample in which
//!    the waiter's own arrival completed the phase, so it was never pending,
//!    is dropped; the table counts the samples kept).
//!
//! ```text
//! cargo bench --bench async_bench -- [--rounds N] [--quick]
//! ```
//!
//! Prints markdown tables (for benches/RESULTS.md).

#[path = "common/cli.rs"]
mod cli;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: async_bench [--rounds N (1..=100, default 7)] [--quick]";
const WORKERS: usize = 4;
const TASKS: [usize; 3] = [4, 16, 64];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Syncthreads,
    Tokio,
    AsyncLock,
}

const KINDS: [Kind; 3] = [Kind::Syncthreads, Kind::Tokio, Kind::AsyncLock];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Syncthreads => "Barrier `arrive_and_wait_async`",
            Kind::Tokio => "`tokio::sync::Barrier`",
            Kind::AsyncLock => "`async_lock::Barrier`",
        }
    }
}

/// One barrier of any of the three kinds.
enum AnyBarrier {
    Syncthreads(syncthreads::Barrier),
    Tokio(tokio::sync::Barrier),
    AsyncLock(async_lock::Barrier),
}

impl AnyBarrier {
    fn new(kind: Kind, n: usize) -> Arc<AnyBarrier> {
        Arc::new(match kind {
            Kind::Syncthreads => AnyBarrier::Syncthreads(syncthreads::Barrier::new(n)),
            Kind::Tokio => AnyBarrier::Tokio(tokio::sync::Barrier::new(n)),
            Kind::AsyncLock => AnyBarrier::AsyncLock(async_lock::Barrier::new(n)),
        })
    }

    /// Arrive and wait; whether this was the completing arrival.
    async fn wait(&self) -> bool {
        match self {
            AnyBarrier::Syncthreads(b) => b.arrive_and_wait_async().await.is_leader(),
            AnyBarrier::Tokio(b) => b.wait().await.is_leader(),
            AnyBarrier::AsyncLock(b) => b.wait().await.is_leader(),
        }
    }
}

struct Options {
    rounds: usize,
    quick: bool,
}

const CLI: cli::Cli = cli::Cli {
    program: "async_bench",
    usage: || USAGE.to_owned(),
};

fn parse_args() -> Options {
    let mut options = Options {
        rounds: 7,
        quick: false,
    };
    let mut parser = cli::parser();
    while let Some(arg) = CLI.next(&mut parser) {
        use lexopt::Arg::{Long, Short};
        match arg {
            Long("quick") => options.quick = true,
            Long("rounds") => {
                options.rounds = match CLI.number(&mut parser, "--rounds") {
                    n @ 1..=100 => n,
                    n => CLI.bad(format!("--rounds must be in 1..=100, got {n}")),
                };
            }
            Short('h') | Long("help") => CLI.help(),
            other => CLI.unexpected(other),
        }
    }
    if options.quick {
        options.rounds = options.rounds.min(2);
    }
    options
}

fn main() -> ExitCode {
    let options = parse_args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .build()
        .expect("tokio runtime");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "async_bench: tokio multi-thread runtime, {WORKERS} workers, {cores} cores, {} rounds{}\n",
        options.rounds,
        if options.quick { " (quick)" } else { "" }
    );

    // 1. Episodes per second.
    println!("| tasks | barrier | episodes/s (median) | spread (min–max) | vs tokio |");
    println!("|---:|---|---:|---:|---:|");
    for n in TASKS {
        // About 100-300 ms per run on 16 cores for barrier.
        let episodes = if options.quick {
            200
        } else {
            200_000 / n.max(4)
        };
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); KINDS.len()];
        for _ in 0..options.rounds {
            for (k, kind) in KINDS.into_iter().enumerate() {
                let elapsed = runtime.block_on(episodes_run(kind, n, episodes));
                rates[k].push(episodes as f64 / elapsed.as_secs_f64());
            }
        }
        let tokio_median = median(&rates[1]);
        for (k, kind) in KINDS.into_iter().enumerate() {
            let (lo, hi) = spread(&rates[k]);
            println!(
                "| {n} | {} | {:.0} | {:.0}–{:.0} | {:.1}x |",
                kind.name(),
                median(&rates[k]),
                lo,
                hi,
                median(&rates[k]) / tokio_median
            );
        }
    }

    // 2. Wake-up latency.
    println!("\n| barrier | wake-up p50 | wake-up p99 | samples |");
    println!("|---|---:|---:|---:|");
    let samples = if options.quick { 200 } else { 2_000 };
    let mut latencies: Vec<Vec<u64>> = vec![Vec::new(); KINDS.len()];
    for _ in 0..options.rounds {
        for (k, kind) in KINDS.into_iter().enumerate() {
            latencies[k].extend(latency_run(&runtime, kind, samples));
        }
    }
    for (k, kind) in KINDS.into_iter().enumerate() {
        let l = &mut latencies[k];
        l.sort_unstable();
        println!(
            "| {} | {:.1} µs | {:.1} µs | {} |",
            kind.name(),
            percentile(l, 0.50) as f64 / 1e3,
            percentile(l, 0.99) as f64 / 1e3,
            l.len()
        );
    }
    ExitCode::SUCCESS
}

/// `n` tasks run `episodes` barrier episodes; the time from spawning them to
/// the last one done. Panics unless each episode had exactly one leader.
async fn episodes_run(kind: Kind, n: usize, episodes: usize) -> Duration {
    let barrier = AnyBarrier::new(kind, n);
    let leaders = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (barrier, leaders) = (barrier.clone(), leaders.clone());
            tokio::spawn(async move {
                for _ in 0..episodes {
                    if barrier.wait().await {
                        leaders.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("bench task");
    }
    let elapsed = start.elapsed();
    assert_eq!(
        leaders.load(Ordering::Relaxed),
        episodes,
        "{kind:?}: one leader per episode"
    );
    elapsed
}

/// `samples` wake-ups, in ns, of a waiter task pending on `runtime` by a
/// completer on this (non-worker) thread, which drives its arrival with a
/// current-thread runtime of its own: the wake crosses threads, as when an
/// I/O thread completes the phase that a compute task waits for.
fn latency_run(runtime: &tokio::runtime::Runtime, kind: Kind, samples: usize) -> Vec<u64> {
    let barrier = AnyBarrier::new(kind, 2);
    let base = Instant::now();
    // The completer's clock reading just before the completing arrival.
    let t0 = Arc::new(AtomicU64::new(0));
    // The sample the waiter is about to wait for (1-based).
    let ready = Arc::new(AtomicUsize::new(0));
    let waiter = {
        let (barrier, t0, ready) = (barrier.clone(), t0.clone(), ready.clone());
        runtime.spawn(async move {
            let mut out = Vec::with_capacity(samples);
            for i in 1..=samples {
                // Release: pairs with the completer's load (a flag only).
                ready.store(i, Ordering::Release);
                if barrier.wait().await {
                    // The completer came first after all: no wake-up to time.
                    continue;
                }
                let t1 = base.elapsed().as_nanos() as u64;
                // Acquire: the barrier ordered the store before our resumption.
                out.push(t1.saturating_sub(t0.load(Ordering::Acquire)));
            }
            out
        })
    };
    let local = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");
    for i in 1..=samples {
        // Acquire: pairs with the waiter's store.
        while ready.load(Ordering::Acquire) < i {
            std::hint::spin_loop();
        }
        // Give the waiter 20 µs to become pending (and its worker to idle).
        let until = Instant::now() + Duration::from_micros(20);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        // Release: the waiter reads it after it resumes.
        t0.store(base.elapsed().as_nanos() as u64, Ordering::Release);
        local.block_on(barrier.wait());
    }
    runtime.block_on(waiter).expect("waiter")
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn spread(xs: &[f64]) -> (f64, f64) {
    xs.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}
