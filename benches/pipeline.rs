//! Producer/consumer double-buffer pipeline (2 KiB items): syncthreads
//! `full[2]`/`empty[2]` with parity waits, against the lockstep pipeline on
//! `std::sync::Barrier` (and on `syncthreads::Barrier::arrive_and_wait`).
//! Reported as items per second.
//!
//! `cargo bench --bench pipeline`

mod common;

use common::workloads::{pipeline, PipeKind};
use criterion::{criterion_group, Criterion, Throughput};

fn pipe(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(1));
    for (name, kind) in [
        ("barrier_parity", PipeKind::BarrierParity),
        ("std_lockstep", PipeKind::StdLockstep),
        ("barrier_lockstep", PipeKind::BarrierLockstep),
    ] {
        // One iteration = one item; both threads live for the whole sample.
        g.bench_function(name, |b| b.iter_custom(|items| pipeline(kind, items)));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = common::multi_thread_config();
    targets = pipe
}
fn main() {
    common::cli::criterion_args("pipeline");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
