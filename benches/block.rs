//! `BlockBarrier::sync_count` (the `__syncthreads_count` reduction) against a
//! plain `Barrier::arrive_and_wait` and `BlockBarrier::sync`, for 1, 2 and 4
//! threads: what the reduction costs on top of the barrier episode.
//!
//! The threads are persistent (spawned once per benchmark, not per sample),
//! and `iter_custom` times only the measuring thread's loop of `iters`
//! episodes; the episodes themselves keep the threads in step.
//!
//! Run: `cargo bench --bench block` (add `-- --quick` for a fast look).

// Only its criterion check is used here.
#[allow(dead_code)]
#[path = "common/cli.rs"]
mod cli;

use criterion::{criterion_group, Criterion};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use syncthreads::{Barrier, BlockBarrier};

/// What every thread does per episode: `(rank, episode index)`.
trait Episode: Send + Sync + 'static {
    fn run(&self, rank: usize, i: u64);
}

struct Shared<E> {
    /// Starts a batch (and, with `iters == 0`, tells the helpers to exit).
    go: std::sync::Barrier,
    iters: AtomicU64,
    episode: E,
}

/// `threads - 1` persistent helper threads plus the caller.
struct Crew<E: Episode> {
    shared: Arc<Shared<E>>,
    helpers: Vec<JoinHandle<()>>,
}

impl<E: Episode> Crew<E> {
    fn new(threads: usize, episode: E) -> Self {
        let shared = Arc::new(Shared {
            go: std::sync::Barrier::new(threads),
            iters: AtomicU64::new(0),
            episode,
        });
        let helpers = (1..threads)
            .map(|rank| {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || loop {
                    shared.go.wait();
                    // Relaxed: `go` orders it.
                    let iters = shared.iters.load(Ordering::Relaxed);
                    if iters == 0 {
                        return;
                    }
                    for i in 0..iters {
                        shared.episode.run(rank, i);
                    }
                })
            })
            .collect();
        Crew { shared, helpers }
    }

    /// Runs `iters` episodes on every thread; the caller's time.
    fn run(&self, iters: u64) -> Duration {
        if iters == 0 {
            return Duration::ZERO;
        }
        self.shared.iters.store(iters, Ordering::Relaxed);
        self.shared.go.wait();
        let start = Instant::now();
        for i in 0..iters {
            self.shared.episode.run(0, i);
        }
        start.elapsed()
    }
}

impl<E: Episode> Drop for Crew<E> {
    fn drop(&mut self) {
        self.shared.iters.store(0, Ordering::Relaxed);
        self.shared.go.wait();
        for helper in self.helpers.drain(..) {
            helper.join().unwrap();
        }
    }
}

struct ArriveAndWait(Barrier);
impl Episode for ArriveAndWait {
    #[inline]
    fn run(&self, _: usize, _: u64) {
        black_box(self.0.arrive_and_wait());
    }
}

struct BlockSync(BlockBarrier);
impl Episode for BlockSync {
    #[inline]
    fn run(&self, _: usize, _: u64) {
        self.0.sync();
    }
}

struct SyncCount(BlockBarrier);
impl Episode for SyncCount {
    #[inline]
    fn run(&self, rank: usize, i: u64) {
        // Predicates that differ per thread and per episode.
        black_box(self.0.sync_count((i + rank as u64) % 3 == 0));
    }
}

fn bench(c: &mut Criterion) {
    // One thread: no waiting at all, so this isolates the reduction's own cost.
    for threads in [1, 2, 4] {
        let mut group = c.benchmark_group(format!("block/{threads}"));
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(30);
        {
            let crew = Crew::new(threads, ArriveAndWait(Barrier::new(threads)));
            group.bench_function("Barrier::arrive_and_wait", |b| {
                b.iter_custom(|n| crew.run(n))
            });
        }
        {
            let crew = Crew::new(threads, BlockSync(BlockBarrier::new(threads)));
            group.bench_function("BlockBarrier::sync", |b| b.iter_custom(|n| crew.run(n)));
        }
        {
            let crew = Crew::new(threads, SyncCount(BlockBarrier::new(threads)));
            group.bench_function("BlockBarrier::sync_count", |b| {
                b.iter_custom(|n| crew.run(n))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
fn main() {
    cli::criterion_args("block");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
