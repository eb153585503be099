//! Single-thread costs in ns per call: uncontended arrive (completing and
//! not), `try_wait_parity`, `expect_tx` + `complete_tx`, and the peers'
//! one-thread barrier.
//!
//! `cargo bench --bench single`

mod common;

use common::workloads::{single, SINGLE_OPS};
use criterion::{criterion_group, Criterion};
use std::time::Duration;

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("single");
    for (op, name) in SINGLE_OPS.iter().enumerate() {
        g.bench_function(*name, |b| b.iter_custom(|iters| single(op, iters)));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    targets = single_thread
}
fn main() {
    common::cli::criterion_args("single");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
