//! The episode sections of the report: header, tables, targets, fresh processes.

use super::*;

pub(crate) fn header(r: &mut Report<'_>) {
    let o = r.o;
    let c = cores();
    r.line("# bench_table\n");
    r.line(format!("- command: `bench_table {}`", o.argv.join(" ")));
    r.line(format!(
        "- machine: {c} CPUs for this process (online: {}), CPU `{}`, kernel {}, loadavg at start {}",
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into()),
        first_line("/proc/cpuinfo", "model name"),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into()),
        loadavg()
    ));
    r.line(format!(
        "- size_of::<syncthreads::Barrier>() = {}, size_of::<std::sync::Barrier>() = {}, size_of::<hurdles::Barrier>() = {} per thread (+ a shared heap block)",
        std::mem::size_of::<syncthreads::Barrier>(),
        std::mem::size_of::<std::sync::Barrier>(),
        std::mem::size_of::<hurdles::Barrier>()
    ));
    let per = match o.episodes {
        Some(k) => format!(
            "{k} episodes per measurement (a round cut short after {} ms is counted and flagged)",
            o.cap.as_millis()
        ),
        None => format!("{} ms per measurement", o.budget.as_millis()),
    };
    let how = match o.fresh {
        Some(n) => format!(
            "{n} new processes per (threads, kind), one at a time, interleaved; each runs {} rounds of {per}",
            o.rounds
        ),
        None => format!(
            "{} rounds; each round runs every kind once (rotating order), {per}",
            o.rounds
        ),
    };
    r.line(format!(
        "- method: {how}, after a warm-up of a fifth of that; threads spawned per measurement, not timed"
    ));
    r.line(format!(
        "- participants: {}; foreign load: {}",
        if o.pin {
            format!(
                "pinned, participant i to CPU i of the allowed set {:?} (modulo its size)",
                common::allowed_cpus()
            )
        } else {
            "not pinned".into()
        },
        describe_load(o)
    ));
    r.line(format!(
        "- build: {}",
        if cfg!(feature = "bench") {
            "--features bench (policy switch and wait-stage counters of syncthreads::bench_hooks)"
        } else {
            "default features (the crate's default policy only; no wait-stage counters)"
        }
    ));
}

pub(crate) fn episodes(r: &mut Report<'_>) -> Results {
    let o = r.o;
    let kinds: Vec<_> = o.kinds().collect();
    let mut res = Results::new();
    for &n in &o.threads {
        for round in 0..o.rounds {
            for i in 0..kinds.len() {
                let (k, e) = kinds[(i + round) % kinds.len()];
                let t = Instant::now();
                let got = measure(o, e, n);
                let m = res.entry((n, k)).or_default();
                if let Some((s, st)) = &got {
                    m.push(s, o.episodes, st);
                }
                r.progress(format_args!(
                    "{n} threads, round {round}, {}: {} per episode ({:.2} s)",
                    e.name,
                    got.map_or("-".into(), |(s, _)| fmt_time(s.ns())),
                    t.elapsed().as_secs_f64()
                ));
            }
        }
    }
    res
}

/// The median of a kind by key at `n` threads (NaN if not measured), or of
/// the best peer.
pub(crate) fn median_of(res: &Results, n: usize, key: &str, cpu: bool) -> f64 {
    let get = |k: usize| {
        res.get(&(n, k))
            .map_or(f64::NAN, |m| med(if cpu { &m.cpu } else { &m.ns }))
    };
    if key == BEST_PEER {
        KINDS
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.ours)
            .map(|(k, _)| get(k))
            .filter(|x| !x.is_nan())
            .fold(f64::NAN, f64::min)
    } else {
        kind_index(key).map_or(f64::NAN, get)
    }
}

pub(crate) fn ratio_header(ratios: &[(&str, &str)]) -> (String, String) {
    let mut h = String::new();
    let mut a = String::new();
    for (x, y) in ratios {
        let _ = write!(h, " {x} / {y} |");
        a.push_str("---:|");
    }
    (h, a)
}

pub(crate) fn episode_tables(r: &mut Report<'_>, res: &Results) {
    let o = r.o;
    let kinds: Vec<_> = o.kinds().collect();
    let names: String = kinds
        .iter()
        .map(|(_, e)| format!(" {} |", e.name))
        .collect();
    let aligns: String = kinds.iter().map(|_| "---:|").collect();

    for cpu in [false, true] {
        let ratios = if cpu { CPU_RATIOS } else { RATIOS };
        let ratios: Vec<_> = ratios
            .iter()
            .copied()
            .filter(|(x, y)| {
                [x, y]
                    .iter()
                    .all(|k| **k == BEST_PEER || o.only.iter().any(|&i| KINDS[i].key == **k))
            })
            .collect();
        if cpu {
            r.line("\n## CPU time per episode: medians over the rounds\n");
            r.line("All participants' on-CPU time (user + system, `CLOCK_THREAD_CPUTIME_ID`) per episode.\n");
        } else {
            r.line("\n## Episode latency: medians over the rounds\n");
            r.line("Wall time per episode (every participant calls arrive-and-wait in a loop; one episode = every participant passing once). Ratios of medians; \"best peer\" is the fastest of the peers measured in the row.\n");
        }
        let (rh, ra) = ratio_header(&ratios);
        r.line(format!("| threads | cores |{names}{rh}"));
        r.line(format!("|---:|---:|{aligns}{ra}"));
        for &n in &o.threads {
            let mut row = format!("| {n} | {} |", over(n));
            for (k, _) in &kinds {
                let m = &res[&(n, *k)];
                let v = med(if cpu { &m.cpu } else { &m.ns });
                let _ = write!(row, " {} |", fmt_time(v));
            }
            for (x, y) in &ratios {
                let v = median_of(res, n, x, cpu) / median_of(res, n, y, cpu);
                let _ = write!(row, " {} |", fmt_ratio(v));
            }
            r.line(row);
        }
    }

    // The spread of every measurement.
    let tenths = o.rounds >= 10;
    r.line(format!(
        "\n## Spread over the {} rounds of each measurement\n",
        o.rounds
    ));
    r.line("Wall and CPU time per episode; spread = max / min.\n");
    let cols = |prefix: &str| {
        let names: &[&str] = if tenths {
            &["min", "p10", "median", "p90", "max"]
        } else {
            &["min", "median", "max"]
        };
        names
            .iter()
            .map(|c| format!(" {prefix}{c} |"))
            .collect::<String>()
    };
    let aligns = "---:|".repeat(if tenths { 5 } else { 3 });
    r.line(format!(
        "| threads | kind |{} spread |{} rounds cut by the cap |",
        cols(""),
        cols("CPU ")
    ));
    r.line(format!("|---:|---|{aligns}---:|{aligns}---:|"));
    let cells = |v: &[f64]| {
        let qs: &[f64] = if tenths {
            &[0.0, 0.1, 0.5, 0.9, 1.0]
        } else {
            &[0.0, 0.5, 1.0]
        };
        qs.iter()
            .map(|&q| format!(" {} |", fmt_time(quantile(v, q))))
            .collect::<String>()
    };
    for &n in &o.threads {
        for (k, e) in &kinds {
            let m = &res[&(n, *k)];
            if m.ns.is_empty() {
                r.line(format!(
                    "| {n} | {} | not measured (spin barrier, oversubscribed, --quick) |",
                    e.name
                ));
                continue;
            }
            r.line(format!(
                "| {n} | {} |{} {} |{} {} |",
                e.name,
                cells(&m.ns),
                fmt_ratio(quantile(&m.ns, 1.0) / quantile(&m.ns, 0.0)),
                cells(&m.cpu),
                m.capped
            ));
        }
    }

    if o.stats {
        r.line(format!(
            "\n## Wait stages (syncthreads::bench_hooks, summed over the {} rounds)\n",
            o.rounds
        ));
        r.line("Which stage each wait ended in, and the mean time per wait spent in each stage (over all waits). A slow yield is one that took longer than the policy's threshold.\n");
        stats_header(r, "| threads | kind |", "|---:|---|");
        for &n in &o.threads {
            for (k, e) in &kinds {
                if e.ours {
                    let m = &res[&(n, *k)];
                    let row = stats_cells(&m.stats);
                    r.line(format!("| {n} | {} |{row}", e.name));
                }
            }
        }
    }
}

pub(crate) fn stats_header(r: &mut Report<'_>, first: &str, align: &str) {
    r.line(format!(
        "{first} waits | ended in spin | ended in yield | ended in park | spin per wait | yield per wait | park per wait | slow yields |"
    ));
    r.line(format!("{align}---:|---:|---:|---:|---:|---:|---:|---:|"));
}

pub(crate) fn stats_cells(s: &Stats) -> String {
    let per = |ns: u64| {
        if s.waits == 0 {
            "-".into()
        } else {
            fmt_time(ns as f64 / s.waits as f64)
        }
    };
    format!(
        " {} | {} | {} | {} | {} | {} | {} | {} |",
        s.waits,
        fmt_pct(s.ended_spin, s.waits),
        fmt_pct(s.ended_yield, s.waits),
        fmt_pct(s.ended_park, s.waits),
        per(s.spin_ns),
        per(s.yield_ns),
        per(s.park_ns),
        s.slow_yields
    )
}

/// The numbers of a comparison: "barrier 2.98 µs, std 38.3 µs".
pub(crate) fn pair(a: &str, x: f64, b: &str, y: f64) -> String {
    format!("{a} {}, {b} {}", fmt_time(x), fmt_time(y))
}

pub(crate) fn episode_targets(o: &Opts, res: &Results, t: &mut Vec<String>, p: &mut Vec<String>) {
    let c = cores();
    let has = |key: &str| kind_index(key).is_some_and(|k| o.only.contains(&k));
    if !has("barrier") {
        return;
    }
    for &n in &o.threads {
        let m = |key| median_of(res, n, key, false);
        let cpu = |key| median_of(res, n, key, true);
        let (bar, std, hurdles, diss) = (m("barrier"), m("std"), m("hurdles"), m("dissemination"));
        if o.hogs == 0 && has("std") {
            let line = if n <= c {
                format!("{n} threads / {c} cores")
            } else {
                format!(
                    "{n} threads / {c} cores (oversubscribed {:.0}x)",
                    n as f64 / c as f64
                )
            };
            t.push(format!(
                "{line}: at least 20x faster than std: {} (std / barrier = {}; {})",
                verdict(std / bar, 20.0, true),
                fmt_ratio(std / bar),
                pair("barrier", bar, "std", std)
            ));
        }
        if o.hogs == 0 && n <= c && (n == 2 || n == 16) && has("dissemination") {
            t.push(format!(
                "{n} threads / {c} cores: within 1.3x of the dissemination spin barrier: {} (barrier / dissemination = {}; {})",
                verdict(bar / diss, 1.3, false),
                fmt_ratio(bar / diss),
                pair("barrier", bar, "dissemination", diss)
            ));
        }
        if o.hogs == 0 && n == 16 && c >= 16 {
            // OpenMP's barrier at 16 threads on 16 cores, from figures
            // measured elsewhere (benches/peers/anchors.cpp): ~1 300–1 900 ns.
            const OPENMP_16: f64 = 1_600.0;
            t.push(format!(
                "16 threads / {c} cores: faster than OpenMP's barrier (reference {}, measured elsewhere: run device/anchors (benches/peers/anchors.cpp) beside this for a ratio from one run): {} (Barrier {})",
                fmt_time(OPENMP_16),
                verdict(bar, OPENMP_16, false),
                fmt_time(bar)
            ));
        }
        if o.hogs == 0 && n > c && has("std") && has("hurdles") {
            let peer = std.min(hurdles);
            t.push(format!(
                "{n} threads / {c} cores (oversubscribed): no slower than the best of std and hurdles: {} ({})",
                verdict(bar, peer, false),
                pair("barrier", bar, "best of them", peer)
            ));
            t.push(format!(
                "{n} threads / {c} cores (oversubscribed): CPU per episode at most std's: {} ({})",
                verdict(cpu("barrier"), cpu("std"), false),
                pair("barrier", cpu("barrier"), "std", cpu("std"))
            ));
        }
        // Issue 12.
        if o.hogs > 0 && has("std") && has("hurdles") {
            let best = std.min(hurdles);
            let best_cpu = cpu("std").min(cpu("hurdles"));
            let spread = |key: &str| {
                kind_index(key)
                    .and_then(|k| res.get(&(n, k)))
                    .map_or(f64::NAN, |m| quantile(&m.ns, 1.0) / quantile(&m.ns, 0.0))
            };
            p.push(format!(
                "{n} threads beside {} foreign {}: no slower than the best of hurdles and std: {} ({}; spread over rounds: Barrier {}, hurdles {}, std {})",
                o.hogs,
                if o.hog_procs { "processes" } else { "threads" },
                verdict(bar, best, false),
                pair("barrier", bar, "best of them", best),
                fmt_ratio(spread("barrier")),
                fmt_ratio(spread("hurdles")),
                fmt_ratio(spread("std"))
            ));
            p.push(format!(
                "{n} threads under that load: CPU per episode no more than theirs (the lower of the two): {} ({})",
                verdict(cpu("barrier"), best_cpu, false),
                pair("barrier", cpu("barrier"), "lower of them", best_cpu)
            ));
        }
        if o.hogs == 0 && n > c && has("std") {
            p.push(format!(
                "{n} threads / {c} cores (oversubscribed): CPU per episode at most 0.5x std's: {} (barrier / std = {}; {})",
                verdict(cpu("barrier") / cpu("std"), 0.5, false),
                fmt_ratio(cpu("barrier") / cpu("std")),
                pair("barrier", cpu("barrier"), "std", cpu("std"))
            ));
        }
    }
}

pub(crate) fn fresh(r: &mut Report<'_>, procs: usize, p: &mut Vec<String>) {
    let o = r.o;
    let kinds: Vec<_> = o.kinds().collect();
    // (threads, kind) -> one Meas per process, in start order (None: failed).
    let mut got: std::collections::BTreeMap<(usize, usize), Vec<Option<Meas>>> = Default::default();
    for i in 0..procs {
        for &n in &o.threads {
            for j in 0..kinds.len() {
                let (k, e) = kinds[(i + j) % kinds.len()];
                let t = Instant::now();
                let m = run_child(o, n, k);
                r.progress(format_args!(
                    "process {i}, {n} threads, {}: median {} per episode ({:.2} s)",
                    e.name,
                    m.as_ref().map_or("failed".into(), |m| fmt_time(med(&m.ns))),
                    t.elapsed().as_secs_f64()
                ));
                got.entry((n, k)).or_default().push(m);
            }
        }
    }
    let per = match o.episodes {
        Some(k) => format!("{k} episodes"),
        None => format!("{} ms", o.budget.as_millis()),
    };
    r.line(format!(
        "\n## Fresh processes: {procs} per measurement, each the median of {} rounds of {per}\n",
        o.rounds
    ));
    r.line("Each process's median wall time per episode, in the order they ran; then min / median / max over the processes. A process marked * had rounds cut short by the cap.\n");
    r.line("| threads | kind | each process's median | min | median | max | slowest / fastest | CPU per episode, median over processes |");
    r.line("|---:|---|---|---:|---:|---:|---:|---:|");
    for &n in &o.threads {
        for (k, e) in &kinds {
            let runs = &got[&(n, *k)];
            let meds: Vec<f64> = runs
                .iter()
                .map(|m| m.as_ref().map_or(f64::NAN, |m| med(&m.ns)))
                .collect();
            let cpus: Vec<f64> = runs
                .iter()
                .map(|m| m.as_ref().map_or(f64::NAN, |m| med(&m.cpu)))
                .collect();
            let each: Vec<String> = runs
                .iter()
                .zip(&meds)
                .map(|(m, v)| match m {
                    None => "failed".into(),
                    Some(m) if m.capped > 0 => format!("{}*", fmt_time(*v)),
                    Some(_) => fmt_time(*v),
                })
                .collect();
            let (lo, mid, hi) = (
                quantile(&meds, 0.0),
                quantile(&meds, 0.5),
                quantile(&meds, 1.0),
            );
            r.line(format!(
                "| {n} | {} | {} | {} | {} | {} | {} | {} |",
                e.name,
                each.join(", "),
                fmt_time(lo),
                fmt_time(mid),
                fmt_time(hi),
                fmt_ratio(hi / lo),
                fmt_time(med(&cpus))
            ));
            if e.ours {
                p.push(format!(
                    "{procs} fresh processes, {n} threads{}, {}: slowest median at most 1.5x the fastest: {} (slowest / fastest = {}; {} to {})",
                    if o.pin { " pinned" } else { "" },
                    e.name,
                    verdict(hi / lo, 1.5, false),
                    fmt_ratio(hi / lo),
                    fmt_time(lo),
                    fmt_time(hi)
                ));
            }
        }
    }
    if o.stats {
        r.line("\n## Wait stages per process (syncthreads::bench_hooks, summed over its rounds)\n");
        stats_header(
            r,
            "| threads | kind | process | median |",
            "|---:|---|---:|---:|",
        );
        for &n in &o.threads {
            for (k, e) in kinds.iter().filter(|(_, e)| e.ours) {
                for (i, m) in got[&(n, *k)].iter().enumerate() {
                    if let Some(m) = m {
                        let row = stats_cells(&m.stats);
                        r.line(format!(
                            "| {n} | {} | {i} | {} |{row}",
                            e.name,
                            fmt_time(med(&m.ns))
                        ));
                    }
                }
            }
        }
    }
}

/// `--versus PATH`: every measurement in `procs` new processes of this
/// binary and as many of `path` (another build of it), alternating which
/// goes first, then the two builds side by side.
pub(crate) fn versus(r: &mut Report<'_>, procs: usize, path: &str) {
    let o = r.o;
    let exes = [
        std::env::current_exe()
            .expect("this binary")
            .into_os_string(),
        path.into(),
    ];
    let kinds: Vec<_> = o.kinds().collect();
    // (threads, kind, build) -> each process's median.
    let mut got: std::collections::BTreeMap<(usize, usize, usize), Vec<f64>> = Default::default();
    let mut labels = [build().to_owned(), String::from("?")];
    for i in 0..procs {
        for &n in &o.threads {
            for &(k, e) in &kinds {
                for b in [i % 2, 1 - i % 2] {
                    let m = run_child_of(&exes[b], o, n, k);
                    if let Some(m) = &m {
                        labels[b] = m.build.clone();
                    }
                    let v = m.as_ref().map_or(f64::NAN, |m| med(&m.ns));
                    r.progress(format_args!(
                        "process {i}, {n} threads, {} [{}]: median {} per episode",
                        e.name,
                        labels[b],
                        fmt_time(v)
                    ));
                    got.entry((n, k, b)).or_default().push(v);
                }
            }
        }
    }
    let per = match o.episodes {
        Some(k) => format!("{k} episodes"),
        None => format!("{} ms", o.budget.as_millis()),
    };
    r.line(format!(
        "\n## Two builds side by side: this one ({}) and `{path}` ({}), {procs} processes each per measurement, alternating\n",
        labels[0], labels[1]
    ));
    r.line(format!(
        "Each process: the median of {} rounds of {per}; then the median over the processes, and the ratio of the medians.\n",
        o.rounds
    ));
    r.line(format!(
        "| threads | kind | {} | {} | {} / {} | each process, {} | each process, {} |",
        labels[0], labels[1], labels[1], labels[0], labels[0], labels[1]
    ));
    r.line("|---:|---|---:|---:|---:|---|---|");
    let each = |v: &[f64]| {
        v.iter()
            .map(|&x| fmt_time(x))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for &n in &o.threads {
        for &(k, e) in &kinds {
            let (a, b) = (&got[&(n, k, 0)], &got[&(n, k, 1)]);
            let (ma, bar) = (med(a), med(b));
            r.line(format!(
                "| {n} | {} | {} | {} | {} | {} | {} |",
                e.name,
                fmt_time(ma),
                fmt_time(bar),
                fmt_ratio(bar / ma),
                each(a),
                each(b)
            ));
        }
    }
}
