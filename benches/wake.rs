//! Wake latency after parking: the completer sleeps 1 ms (so the waiters are
//! parked), reads the clock and arrives; each waiter reads the clock when its
//! wait returns. Criterion reports the mean over samples; p50 / p99 over all
//! samples are printed at the end (and by `benches/bench_table/`).
//!
//! `cargo bench --bench wake`

mod common;

use common::percentile;
use common::workloads::{wake_latency, WakeKind};
use criterion::{criterion_group, Criterion};
use std::time::Duration;

const SLEEP: Duration = Duration::from_millis(1);

fn wake(c: &mut Criterion) {
    let mut g = c.benchmark_group("wake_after_park");
    let mut summary = Vec::new();
    for waiters in [1, 3] {
        for (name, kind) in [("barrier", WakeKind::Barrier), ("std", WakeKind::Std)] {
            let mut all = Vec::new();
            g.bench_function(format!("{name}/{waiters}_waiters"), |b| {
                b.iter_custom(|iters| {
                    // Each iteration is one wake of `waiters` threads; the
                    // reported time is the mean latency over them.
                    let lat = wake_latency(kind, waiters, iters as usize, SLEEP);
                    let mean = lat.iter().sum::<f64>() / lat.len().max(1) as f64;
                    all.extend_from_slice(&lat);
                    Duration::from_nanos((mean * iters as f64) as u64)
                })
            });
            summary.push((
                name,
                waiters,
                percentile(&mut all, 50.0),
                percentile(&mut all, 99.0),
                all.len(),
            ));
        }
    }
    g.finish();
    for (name, waiters, p50, p99, count) in summary {
        eprintln!(
            "wake {name} {waiters} waiter(s): p50 {p50:.0} ns, p99 {p99:.0} ns ({count} wakes)"
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    targets = wake
}
fn main() {
    common::cli::criterion_args("wake");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
