//! Barrier episode latency: `n` persistent threads call arrive-and-wait in a
//! loop; one episode = every thread passing the barrier once. Peers:
//! `std::sync::Barrier`, `hurdles`, and two textbook spin barriers (the floor).
//!
//! Oversubscribed thread counts (more threads than cores) also get an
//! `episode_cpu` group whose "time" is the CPU time of all threads per
//! episode (`CLOCK_THREAD_CPUTIME_ID` of each thread), not wall time. The spin
//! barriers are left out there: they collapse to scheduler time slices.
//!
//! `cargo bench --bench episode`

mod common;

use common::peers::{Dissemination, SenseSpin};
use common::{cores, Hurdles, Kind, Plain, Pool, Std};
use criterion::{criterion_group, BenchmarkGroup, Criterion};
use std::time::Duration;

const THREADS: [usize; 4] = [2, 4, 8, 16];

fn wall<K: Kind>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    n: usize,
) {
    let pool = Pool::new::<K>(n);
    g.bench_function(format!("{name}/{n}"), |b| {
        b.iter_custom(|iters| pool.run_episodes(iters).elapsed)
    });
}

fn cpu<K: Kind>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    n: usize,
) {
    let pool = Pool::new::<K>(n);
    g.bench_function(format!("{name}/{n}"), |b| {
        b.iter_custom(|iters| {
            let s = pool.run_episodes(iters);
            Duration::from_nanos(s.cpu_ns.expect("CLOCK_THREAD_CPUTIME_ID is not readable"))
        })
    });
}

fn episode(c: &mut Criterion) {
    let mut g = c.benchmark_group("episode");
    for n in THREADS {
        wall::<Plain>(&mut g, "barrier", n);
        wall::<Std>(&mut g, "std", n);
        wall::<Hurdles>(&mut g, "hurdles", n);
        if n <= cores() {
            wall::<SenseSpin>(&mut g, "sense_spin", n);
            wall::<Dissemination>(&mut g, "dissemination", n);
        }
    }
    g.finish();

    let mut g = c.benchmark_group("episode_cpu");
    for n in THREADS.into_iter().filter(|&n| n > cores()) {
        cpu::<Plain>(&mut g, "barrier", n);
        cpu::<Std>(&mut g, "std", n);
        cpu::<Hurdles>(&mut g, "hurdles", n);
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = common::multi_thread_config();
    targets = episode
}
fn main() {
    common::cli::criterion_args("episode");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
