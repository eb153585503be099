//! The fuzzy barrier: per phase one rotating thread does 10 µs of dependent
//! work and the others 1 µs; every thread also has 9 µs of independent work,
//! done either before `arrive_and_wait` (joined) or between `arrive` and
//! `wait` (split). The time is per phase; the split hides the imbalance when
//! it approaches `Fuzzy::ideal_ns` (printed once).
//!
//! `cargo bench --bench fuzzy`

mod common;

use common::workloads::{Fuzzy, FuzzyMode};
use criterion::{criterion_group, Criterion};

fn fuzzy(c: &mut Criterion) {
    let f = Fuzzy::DEFAULT;
    let n = common::cores().clamp(2, 16);
    eprintln!(
        "fuzzy: {n} threads; ideal {:.0} ns/phase, joined without overhead {:.0} ns/phase",
        f.ideal_ns(n),
        f.joined_ns()
    );
    let mut g = c.benchmark_group(format!("fuzzy_{n}_threads"));
    for (name, mode) in [
        ("barrier_split", FuzzyMode::BarrierSplit),
        ("barrier_joined", FuzzyMode::BarrierJoined),
        ("std_joined", FuzzyMode::StdJoined),
    ] {
        g.bench_function(name, |b| {
            // One iteration = one phase; the threads live for the whole sample.
            b.iter_custom(|phases| f.run(n, phases, mode) * phases as u32)
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = common::multi_thread_config();
    targets = fuzzy
}
fn main() {
    common::cli::criterion_args("fuzzy");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
