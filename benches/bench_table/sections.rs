//! The other sections: fuzzy barrier, wake latency, pipeline, single-thread costs.

use super::*;

pub(crate) fn fuzzy(r: &mut Report<'_>, t: &mut Vec<String>, p: &mut Vec<String>) {
    let o = r.o;
    let c = cores();
    r.progress(format_args!("fuzzy"));
    let f = Fuzzy::DEFAULT;
    let phases = (o.budget.as_nanos() as u64 / 20_000).max(50);
    let mut threads: Vec<usize> = o.threads.iter().copied().filter(|&n| n <= c).collect();
    if threads.is_empty() {
        threads.push(c.min(2));
    }
    r.line(format!(
        "\n## Fuzzy barrier: per phase one rotating thread does {} µs of dependent work, the others {} µs; each also has {} µs of independent work\n",
        f.slow_ns / 1000,
        f.fast_ns / 1000,
        f.indep_ns / 1000
    ));
    r.line(format!("Wall time per phase, median and (min–max) over {} rounds of {phases} phases. Hidden = (joined - split) / (joined - ideal), from the medians; ideal = max(slow work, fast + independent work, mean work per thread).\n", o.rounds));
    r.line("| threads | Barrier arrive_and_wait | Barrier split arrive/work/wait | std wait | ideal | imbalance hidden by the split |");
    r.line("|---:|---:|---:|---:|---:|---:|");
    let modes = [
        FuzzyMode::BarrierJoined,
        FuzzyMode::BarrierSplit,
        FuzzyMode::StdJoined,
    ];
    set_policy(Pol::Default);
    for &n in &threads {
        let mut v: Vec<Vec<f64>> = vec![Vec::new(); 3];
        for round in 0..o.rounds {
            for k in 0..3 {
                let k = (k + round) % 3;
                v[k].push(f.run(n, phases, modes[k]).as_nanos() as f64);
            }
        }
        let cell = |v: &[f64]| {
            format!(
                "{} ({}–{})",
                fmt_time(med(v)),
                fmt_time(quantile(v, 0.0)),
                fmt_time(quantile(v, 1.0))
            )
        };
        let hidden = common::workloads::hidden_share(med(&v[0]), med(&v[1]), f.ideal_ns(n));
        r.line(format!(
            "| {n} | {} | {} | {} | {} | {:.0}% |",
            cell(&v[0]),
            cell(&v[1]),
            cell(&v[2]),
            fmt_time(f.ideal_ns(n)),
            hidden * 100.0
        ));
        t.push(format!(
            "fuzzy barrier, {n} threads, one 10 µs-slow thread per phase: the split hides at least half of the imbalance: {} ({:.0}% hidden)",
            verdict(hidden, 0.5, true),
            hidden * 100.0
        ));
        if n == 16 {
            p.push(format!(
                "fuzzy barrier, 16 threads: the split still hides at least 85% of the imbalance: {} ({:.0}% hidden)",
                verdict(hidden, 0.85, true),
                hidden * 100.0
            ));
        }
    }
}

pub(crate) fn wake(r: &mut Report<'_>) {
    let o = r.o;
    r.progress(format_args!("wake"));
    set_policy(Pol::Default);
    let samples = if o.quick { 20 } else { 300 };
    r.line(format!("\n## Wake latency after parking: the completer sleeps 1 ms, then arrives; time until each parked waiter runs ({samples} wakes per waiter)\n"));
    r.line("| barrier | waiters | p50 | p99 |");
    r.line("|---|---:|---:|---:|");
    for waiters in [1, 3] {
        for (name, kind) in [("barrier", WakeKind::Barrier), ("std", WakeKind::Std)] {
            let lat = wake_latency(kind, waiters, samples, Duration::from_millis(1));
            r.line(format!(
                "| {name} | {waiters} | {} | {} |",
                fmt_time(quantile(&lat, 0.5)),
                fmt_time(quantile(&lat, 0.99))
            ));
        }
    }
}

pub(crate) fn pipe(r: &mut Report<'_>) {
    let o = r.o;
    r.progress(format_args!("pipeline"));
    set_policy(Pol::Default);
    // Items per run: as many as fit in the budget at the slowest pipeline's pace.
    let slowest = [
        PipeKind::BarrierParity,
        PipeKind::StdLockstep,
        PipeKind::BarrierLockstep,
    ]
    .map(|k| pipeline(k, 200).as_secs_f64() / 200.0)
    .into_iter()
    .fold(0.0, f64::max);
    let items = ((o.budget.as_secs_f64() / slowest) as u64).clamp(200, 1_000_000);
    r.line(format!(
        "\n## Double-buffer pipeline, producer -> consumer, {} B items, {items} items per run\n",
        ITEM_WORDS * 8
    ));
    r.line(format!(
        "Items per second, median and (min–max) over {} rounds.\n",
        o.rounds
    ));
    r.line("| pipeline | items/s | min | max | median vs std lockstep |");
    r.line("|---|---:|---:|---:|---:|");
    let pipes = [
        ("Barrier full/empty parity waits", PipeKind::BarrierParity),
        ("std::sync::Barrier lockstep", PipeKind::StdLockstep),
        (
            "Barrier arrive_and_wait lockstep",
            PipeKind::BarrierLockstep,
        ),
    ];
    let mut pv: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for round in 0..o.rounds {
        for k in 0..3 {
            let k = (k + round) % 3;
            pv[k].push(items as f64 / pipeline(pipes[k].1, items).as_secs_f64());
        }
    }
    for k in 0..3 {
        r.line(format!(
            "| {} | {:.3e} | {:.3e} | {:.3e} | {} |",
            pipes[k].0,
            med(&pv[k]),
            quantile(&pv[k], 0.0),
            quantile(&pv[k], 1.0),
            fmt_ratio(med(&pv[k]) / med(&pv[1]))
        ));
    }
}

pub(crate) fn single_costs(r: &mut Report<'_>) {
    let o = r.o;
    r.progress(format_args!("single"));
    set_policy(Pol::Default);
    let iters: u64 = if o.quick { 200_000 } else { 2_000_000 };
    r.line(format!(
        "\n## Single-thread costs: ns per call, median and (min–max) over {} rounds of {iters} calls\n",
        o.rounds
    ));
    r.line("| operation | ns per call | min | max |");
    r.line("|---|---:|---:|---:|");
    let mut sv: Vec<Vec<f64>> = vec![Vec::new(); SINGLE_OPS.len()];
    for _ in 0..o.rounds {
        for (op, v) in sv.iter_mut().enumerate() {
            v.push(single(op, iters).as_nanos() as f64 / iters as f64);
        }
    }
    for (op, v) in sv.iter().enumerate() {
        r.line(format!(
            "| {} | {:.1} | {:.1} | {:.1} |",
            SINGLE_OPS[op],
            med(v),
            quantile(v, 0.0),
            quantile(v, 1.0)
        ));
    }
}
