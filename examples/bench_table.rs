//! The key benchmark comparisons in one process, interleaved, as a markdown
//! table: barrier episode latency against `std::sync::Barrier`, `hurdles`
//! and two textbook spin barriers, CPU per episode, wait-policy prototypes,
//! the fuzzy barrier, wake latency after parking, the double-buffer
//! pipeline, single-thread costs, and the size of the barrier.
//!
//! ```text
//! cargo run --release --example bench_table -- --threads 2,4,8,16
//! cargo run --release --example bench_table -- --quick        # a few seconds, for CI
//! ```
//!
//! Options: `--threads LIST` (default 2,4,8,16 plus 2x and 4x the cores, up
//! to 64), `--rounds N`, `--budget-ms N` (per measurement), `--quick`,
//! `--no-policies` (skip the wait-policy prototypes), `--team-shapes LIST`
//! (the `Team` rows: `fan_in:flat` pairs, default `4:2`; `none` skips them
//! and the `launch` rows). The binary needs no
//! cargo: copy `target/release/examples/bench_table` to another Linux machine.
//!
//! Method: for every thread count, each round runs every barrier kind once
//! (the order rotates each round); a measurement spawns its threads, warms
//! up, then runs episodes for the budget; the table shows the median over
//! rounds. CPU time is all threads' on-CPU time from
//! `/proc/thread-self/schedstat`.

#[path = "../benches/common/mod.rs"]
mod common;

use common::peers::{Dissemination, SenseSpin};
use common::proto::{set_policy, Policy, Proto};
use common::workloads::{
    pipeline, single, wake_latency, Fuzzy, FuzzyMode, PipeKind, WakeKind, ITEM_WORDS, SINGLE_OPS,
};
use common::{cores, median, percentile, Hurdles, Kind, Mb, Pool, Sample, Std};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// OpenMP's barrier at 16 threads on 16 cores, from the issue's reference
/// figures (measured elsewhere): ~1 600–1 900 ns. The target uses the low end.
const OPENMP_16: f64 = 1_600.0;

struct Opts {
    threads: Vec<usize>,
    rounds: usize,
    budget: Duration,
    quick: bool,
    policies: bool,
    /// Busy threads (not participants) running during the episode
    /// measurements: a machine loaded by other work.
    hogs: usize,
    /// `Team` shapes to measure: (fan-in, flat up to).
    team_shapes: Vec<(usize, usize)>,
}

fn parse() -> Opts {
    let c = cores();
    let mut threads: Vec<usize> = vec![2, 4, 8, 16, 2 * c, 4 * c];
    threads.retain(|&n| n <= 64);
    let mut o = Opts {
        threads,
        rounds: 5,
        budget: Duration::from_millis(100),
        quick: false,
        policies: true,
        hogs: 0,
        team_shapes: vec![(4, 2)],
    };
    let mut explicit = (false, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        match a.as_str() {
            "--threads" => {
                o.threads = val("--threads")
                    .split(',')
                    .map(|t| {
                        t.trim()
                            .parse()
                            .expect("--threads: a comma-separated list of counts")
                    })
                    .collect();
                assert!(
                    o.threads.iter().all(|&n| (1..=64).contains(&n)),
                    "--threads: counts must be in 1..=64"
                );
            }
            "--rounds" => {
                o.rounds = val("--rounds").parse().expect("--rounds: a number");
                explicit.0 = true;
            }
            "--budget-ms" => {
                o.budget = Duration::from_millis(
                    val("--budget-ms").parse().expect("--budget-ms: a number"),
                );
                explicit.1 = true;
            }
            "--quick" => o.quick = true,
            "--no-policies" => o.policies = false,
            "--hogs" => o.hogs = val("--hogs").parse().expect("--hogs: a number"),
            "--team-shapes" => o.team_shapes = team::parse_shapes(&val("--team-shapes")),
            "--help" | "-h" => {
                println!("usage: bench_table [--threads 2,4,8,16] [--rounds N] [--budget-ms N] [--quick] [--no-policies] [--hogs N] [--team-shapes 4:2,2:0|none]");
                std::process::exit(0);
            }
            other => panic!("unknown argument {other:?} (try --help)"),
        }
    }
    if o.quick {
        if !explicit.0 {
            o.rounds = 2;
        }
        if !explicit.1 {
            o.budget = Duration::from_millis(10);
        }
        o.policies = false;
    }
    o.threads.sort_unstable();
    o.threads.dedup();
    o
}

type Measure = Box<dyn Fn(usize, Duration) -> Option<Sample>>;

/// `(threads, kind index)` -> (ns per episode, CPU ns per episode), one per round.
type Results = BTreeMap<(usize, usize), (Vec<f64>, Vec<f64>)>;

fn measure<K: Kind>(n: usize, budget: Duration) -> Option<Sample> {
    let pool = Pool::new::<K>(n);
    pool.run_for(budget / 5);
    Some(pool.run_for(budget))
}

fn proto(policy: Policy) -> Measure {
    Box::new(move |n, budget| {
        set_policy(policy);
        measure::<Proto>(n, budget)
    })
}

/// The spin barriers collapse when oversubscribed (whole time slices per
/// episode): a shorter budget there, and none at all in `--quick` mode.
fn spin<K: Kind>(quick: bool) -> Measure {
    Box::new(move |n, budget| match (n > cores(), quick) {
        (false, _) => measure::<K>(n, budget),
        (true, false) => measure::<K>(n, budget / 4),
        (true, true) => None,
    })
}

/// A ratio for the tables ("-" when a side was not measured).
fn ratio(a: f64, b: f64, digits: usize) -> String {
    let r = a / b;
    if r.is_finite() {
        format!("{r:.digits$}")
    } else {
        "-".into()
    }
}

fn first_line(path: &str, key: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn fmt_ns(ns: f64) -> String {
    if ns.is_nan() {
        "-".into()
    } else if ns >= 1e6 {
        format!("{:.1} ms", ns / 1e6)
    } else if ns >= 1e4 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0}")
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "**met**"
    } else {
        "**not met**"
    }
}

fn main() {
    let o = parse();
    let c = cores();
    let started = Instant::now();
    let load0 = loadavg();
    println!("# mbarrier bench_table\n");
    println!(
        "- command: `bench_table {}`",
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    println!(
        "- machine: nproc {c}, CPU `{}`, loadavg at start {load0}",
        first_line("/proc/cpuinfo", "model name")
    );
    println!(
        "- size_of::<mbarrier::Barrier>() = {}, size_of::<std::sync::Barrier>() = {}, size_of::<hurdles::Barrier>() = {} per thread (+ a shared heap block)",
        std::mem::size_of::<mbarrier::Barrier>(),
        std::mem::size_of::<std::sync::Barrier>(),
        std::mem::size_of::<hurdles::Barrier>()
    );
    println!(
        "- method: median over {} rounds; each round runs every kind once (rotating order), {} ms per measurement after a warm-up of a fifth of that; threads spawned per measurement, not timed",
        o.rounds,
        o.budget.as_millis()
    );

    // ---- episode latency and CPU -----------------------------------------
    let mut kinds: Vec<(&str, Measure)> = vec![
        ("mbarrier", Box::new(measure::<Mb>)),
        ("std", Box::new(measure::<Std>)),
        ("hurdles", Box::new(measure::<Hurdles>)),
        ("sense spin", spin::<SenseSpin>(o.quick)),
        ("dissemination", spin::<Dissemination>(o.quick)),
    ];
    let policies = [
        Policy::ParkOver { spin_ns: 20_000 },
        Policy::YieldOver {
            spin_ns: 20_000,
            yield_ns: 20_000,
        },
        Policy::YieldOver {
            spin_ns: 20_000,
            yield_ns: 50_000,
        },
        Policy::YieldOver {
            spin_ns: 20_000,
            yield_ns: 200_000,
        },
        Policy::SpinYield {
            spin_ns: 2_000,
            yield_ns: 50_000,
        },
        Policy::Adaptive {
            spin_ns: 20_000,
            yield_ns: 50_000,
            slow_ns: 200_000,
            off_ns: 1_000_000_000,
        },
        Policy::SpinAlways { spin_ns: 20_000 },
    ];
    if o.policies {
        for p in policies {
            kinds.push((
                Box::leak(format!("proto {}", p.label()).into_boxed_str()),
                proto(p),
            ));
        }
    }
    // Foreign load: `--hogs N` busy threads during the episode measurements.
    let hogs: Vec<_> = (0..o.hogs)
        .map(|_| {
            let stop: &'static std::sync::atomic::AtomicBool =
                Box::leak(Box::new(std::sync::atomic::AtomicBool::new(false)));
            (
                stop,
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        common::workloads::spin_work(10_000);
                    }
                }),
            )
        })
        .collect();
    if o.hogs > 0 {
        println!("- foreign load: {} busy threads (not participants) run during the episode measurements", o.hogs);
    }
    let mut results = Results::new();
    for &n in &o.threads {
        for r in 0..o.rounds {
            for k in 0..kinds.len() {
                let k = (k + r) % kinds.len();
                let e = results.entry((n, k)).or_default();
                let t = Instant::now();
                let sample = (kinds[k].1)(n, o.budget);
                eprintln!(
                    "[{:6.1} s] {n} threads, round {r}, {}: {} ns/episode ({:.2} s)",
                    started.elapsed().as_secs_f64(),
                    kinds[k].0,
                    sample.map_or("-".into(), |s| fmt_ns(s.ns())),
                    t.elapsed().as_secs_f64()
                );
                if let Some(s) = sample {
                    e.0.push(s.ns());
                    e.1.extend(s.cpu());
                }
            }
        }
    }
    for (stop, h) in hogs {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        h.join().expect("hog panicked");
    }
    let med = |results: &mut Results, n, k| {
        let e = results.get_mut(&(n, k)).unwrap();
        (median(&mut e.0), median(&mut e.1))
    };

    println!(
        "\n## Episode latency: median ns per episode (all threads arrive_and_wait in a loop)\n"
    );
    println!("| threads | cores | mbarrier | std | hurdles | sense spin | dissemination | std / mb | mb / best peer | mb / dissemination |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut rows = Vec::new();
    for &n in &o.threads {
        let v: Vec<(f64, f64)> = (0..5).map(|k| med(&mut results, n, k)).collect();
        let best = v[1..].iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
        println!(
            "| {n} | {c}{} | {} | {} | {} | {} | {} | {}x | {} | {} |",
            if n > c { " (over)" } else { "" },
            fmt_ns(v[0].0),
            fmt_ns(v[1].0),
            fmt_ns(v[2].0),
            fmt_ns(v[3].0),
            fmt_ns(v[4].0),
            ratio(v[1].0, v[0].0, 1),
            ratio(v[0].0, best, 2),
            ratio(v[0].0, v[4].0, 2)
        );
        rows.push((n, v));
    }

    println!("\n## CPU time per episode (all threads, ns; from /proc/thread-self/schedstat)\n");
    println!("| threads | cores | mbarrier | std | hurdles | mb / std |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for (n, v) in &rows {
        println!(
            "| {n} | {c}{} | {} | {} | {} | {} |",
            if *n > c { " (over)" } else { "" },
            fmt_ns(v[0].1),
            fmt_ns(v[1].1),
            fmt_ns(v[2].1),
            ratio(v[0].1, v[1].1, 2)
        );
    }

    if o.policies {
        println!("\n## Wait-policy prototypes (benches/common/proto.rs: the crate's arrive/park path, policy swapped)\n");
        println!("ns per episode / CPU ns per episode; \"over\" = participants > cores.\n");
        print!("| threads | mbarrier |");
        for p in &policies {
            print!(" {} |", p.label());
        }
        println!();
        println!("|---:|---:|{}", "---:|".repeat(policies.len()));
        for &n in &o.threads {
            let m = med(&mut results, n, 0);
            print!(
                "| {n}{} | {} / {} |",
                if n > c { " (over)" } else { "" },
                fmt_ns(m.0),
                fmt_ns(m.1)
            );
            for k in 5..kinds.len() {
                let v = med(&mut results, n, k);
                print!(" {} / {} |", fmt_ns(v.0), fmt_ns(v.1));
            }
            println!();
        }
    }

    if !o.team_shapes.is_empty() {
        eprintln!("[{:6.1} s] team", started.elapsed().as_secs_f64());
        team::table(&o.threads, &o.team_shapes, o.rounds, o.budget, &rows);
    }

    eprintln!("[{:6.1} s] fuzzy", started.elapsed().as_secs_f64());
    // ---- fuzzy barrier ---------------------------------------------------------
    let f = Fuzzy::DEFAULT;
    let phases = (o.budget.as_nanos() as u64 / 20_000).max(50);
    let mut fuzzy_rows = Vec::new();
    let fuzzy_threads: Vec<usize> = {
        let mut t: Vec<usize> = o.threads.iter().copied().filter(|&n| n <= c).collect();
        if t.is_empty() {
            t.push(c.min(2));
        }
        t
    };
    println!(
        "\n## Fuzzy barrier: per phase one rotating thread does {} µs of dependent work, the others {} µs; each also has {} µs of independent work\n",
        f.slow_ns / 1000,
        f.fast_ns / 1000,
        f.indep_ns / 1000
    );
    println!("Median µs per phase ({phases} phases per run). Hidden = (joined - split) / (joined - ideal), ideal = max(slow work, fast + independent work, mean work per thread).\n");
    println!("| threads | mbarrier arrive_and_wait | mbarrier split arrive/work/wait | std wait | ideal | imbalance hidden by the split |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let modes = [
        FuzzyMode::MbJoined,
        FuzzyMode::MbSplit,
        FuzzyMode::StdJoined,
    ];
    for &n in &fuzzy_threads {
        let mut v: Vec<Vec<f64>> = vec![Vec::new(); 3];
        for r in 0..o.rounds {
            for k in 0..3 {
                let k = (k + r) % 3;
                v[k].push(f.run(n, phases, modes[k]).as_nanos() as f64);
            }
        }
        let m: Vec<f64> = v.iter_mut().map(|x| median(x)).collect();
        let hidden = common::workloads::hidden_share(m[0], m[1], f.ideal_ns(n));
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}% |",
            m[0] / 1e3,
            m[1] / 1e3,
            m[2] / 1e3,
            f.ideal_ns(n) / 1e3,
            hidden * 100.0
        );
        fuzzy_rows.push((n, hidden));
    }

    eprintln!("[{:6.1} s] wake", started.elapsed().as_secs_f64());
    // ---- wake latency ------------------------------------------------------------
    let samples = if o.quick { 20 } else { 300 };
    println!("\n## Wake latency after parking: completer sleeps 1 ms, then arrives; time until each parked waiter runs ({samples} wakes per waiter)\n");
    println!("| barrier | waiters | p50 | p99 |");
    println!("|---|---:|---:|---:|");
    for waiters in [1, 3] {
        for (name, kind) in [("mbarrier", WakeKind::Mb), ("std", WakeKind::Std)] {
            let mut lat = wake_latency(kind, waiters, samples, Duration::from_millis(1));
            println!(
                "| {name} | {waiters} | {} | {} |",
                fmt_ns(percentile(&mut lat, 50.0)),
                fmt_ns(percentile(&mut lat, 99.0))
            );
        }
    }

    eprintln!("[{:6.1} s] pipeline", started.elapsed().as_secs_f64());
    // ---- pipeline ---------------------------------------------------------------------
    // Items per run: as many as fit in the budget at the slowest pipeline's pace.
    let slowest = [
        PipeKind::MbParity,
        PipeKind::StdLockstep,
        PipeKind::MbLockstep,
    ]
    .map(|k| pipeline(k, 200).as_secs_f64() / 200.0)
    .into_iter()
    .fold(0.0, f64::max);
    let items = ((o.budget.as_secs_f64() / slowest) as u64).clamp(200, 1_000_000);
    println!("\n## Double-buffer pipeline, producer -> consumer, {} B items, {items} items per run: median items/s\n", ITEM_WORDS * 8);
    println!("| pipeline | items/s | vs std lockstep |");
    println!("|---|---:|---:|");
    let pipes = [
        ("mbarrier full/empty parity waits", PipeKind::MbParity),
        ("std::sync::Barrier lockstep", PipeKind::StdLockstep),
        ("mbarrier arrive_and_wait lockstep", PipeKind::MbLockstep),
    ];
    let mut pv: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for r in 0..o.rounds {
        for k in 0..3 {
            let k = (k + r) % 3;
            pv[k].push(items as f64 / pipeline(pipes[k].1, items).as_secs_f64());
        }
    }
    let pm: Vec<f64> = pv.iter_mut().map(|x| median(x)).collect();
    for k in 0..3 {
        println!("| {} | {:.3e} | {:.2}x |", pipes[k].0, pm[k], pm[k] / pm[1]);
    }

    eprintln!("[{:6.1} s] single", started.elapsed().as_secs_f64());
    // ---- single thread ---------------------------------------------------------------
    let iters: u64 = if o.quick { 200_000 } else { 2_000_000 };
    println!("\n## Single-thread costs: median ns per call\n");
    println!("| operation | ns |");
    println!("|---|---:|");
    let mut sv: Vec<Vec<f64>> = vec![Vec::new(); SINGLE_OPS.len()];
    for _ in 0..o.rounds {
        for (op, v) in sv.iter_mut().enumerate() {
            v.push(single(op, iters).as_nanos() as f64 / iters as f64);
        }
    }
    for (op, v) in sv.iter_mut().enumerate() {
        println!("| {} | {:.1} |", SINGLE_OPS[op], median(v));
    }

    // ---- targets -------------------------------------------------------------------------
    println!("\n## Targets (issue 4)\n");
    for (n, v) in &rows {
        let (mb, std, diss) = (v[0].0, v[1].0, v[4].0);
        let best = v[1..].iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
        if *n <= c {
            print!(
                "- {n} threads / {c} cores: >= 20x faster than std: {} ({:.1}x)",
                verdict(std / mb >= 20.0),
                std / mb
            );
            if *n == 2 || *n == 16 {
                print!(
                    "; within 1.3x of dissemination: {} ({:.2}x)",
                    verdict(mb <= 1.3 * diss),
                    mb / diss
                );
            }
            if *n == 16 && c >= 16 {
                print!(
                    "; faster than OpenMP's barrier (reference ~{OPENMP_16:.0} ns, measured elsewhere): {} ({})",
                    verdict(mb < OPENMP_16),
                    fmt_ns(mb)
                );
            }
            println!();
        } else {
            let peer = v[1].0.min(v[2].0);
            println!(
                "- {n} threads / {c} cores (oversubscribed {:.0}x): no slower than the best of std/hurdles: {} ({} vs {}; best of all peers incl. spin: {}); CPU per episode <= std's: {} ({} vs {}); >= 20x faster than std: {} ({:.1}x)",
                *n as f64 / c as f64,
                verdict(mb <= peer),
                fmt_ns(mb),
                fmt_ns(peer),
                fmt_ns(best),
                verdict(v[0].1 <= v[1].1),
                fmt_ns(v[0].1),
                fmt_ns(v[1].1),
                verdict(std / mb >= 20.0),
                std / mb
            );
        }
    }
    for (n, hidden) in &fuzzy_rows {
        println!(
            "- fuzzy barrier, {n} threads, one 10 µs-slow thread per phase: the split hides most of the imbalance: {} ({:.0}%)",
            verdict(*hidden >= 0.5),
            hidden * 100.0
        );
    }
    println!(
        "- memory: size_of::<mbarrier::Barrier>() == 8: {} (std::sync::Barrier: {} bytes)",
        verdict(std::mem::size_of::<mbarrier::Barrier>() == 8),
        std::mem::size_of::<std::sync::Barrier>()
    );
    println!(
        "\n_total {:.1} s; loadavg at end {}_",
        started.elapsed().as_secs_f64(),
        loadavg()
    );
}

/// `Team` (combining tree) and `launch` + `Block::sync` episodes, beside the
/// flat `Barrier` and the dissemination barrier of the episode table.
mod team {
    use super::{fmt_ns, median, ratio};
    use std::time::{Duration, Instant};

    pub fn parse_shapes(list: &str) -> Vec<(usize, usize)> {
        if list == "none" {
            return Vec::new();
        }
        list.split(',')
            .map(|pair| {
                let (f, flat) = pair
                    .split_once(':')
                    .expect("--team-shapes: fan_in:flat pairs, e.g. 4:2,2:0");
                (
                    f.trim().parse().expect("--team-shapes: a fan-in"),
                    flat.trim().parse().expect("--team-shapes: a flat bound"),
                )
            })
            .collect()
    }

    /// ns per `Seat::arrive_and_wait` episode of `n` seats, timed by seat 0
    /// over `episodes` episodes after a warm-up.
    fn team_episode(n: usize, fan_in: usize, flat: usize, episodes: u64) -> f64 {
        let team = mbarrier::Team::with_shape(n, fan_in, flat);
        std::thread::scope(|s| {
            let handles: Vec<_> = team
                .seats()
                .map(|seat| {
                    s.spawn(move || {
                        for _ in 0..episodes / 5 + 1 {
                            seat.arrive_and_wait();
                        }
                        let start = Instant::now();
                        for _ in 0..episodes {
                            seat.arrive_and_wait();
                        }
                        let ns = start.elapsed().as_nanos() as f64 / episodes as f64;
                        std::mem::forget(seat); // no leave phase in the timing
                        ns
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .next()
                .unwrap()
        })
    }

    /// ns per `Block::sync` episode of `launch(n, ..)` (threads spawned by
    /// `launch`, not timed), timed by rank 0 after a warm-up.
    fn launch_episode(n: usize, episodes: u64) -> f64 {
        mbarrier::launch(n, |block| {
            for _ in 0..episodes / 5 + 1 {
                block.sync();
            }
            let start = Instant::now();
            for _ in 0..episodes {
                block.sync();
            }
            start.elapsed().as_nanos() as f64 / episodes as f64
        })[0]
    }

    /// Episodes that take about `budget` at `probe`'s pace.
    fn calibrate(budget: Duration, probe: impl Fn(u64) -> f64) -> u64 {
        let ns = probe(200).max(1.0);
        ((budget.as_nanos() as f64 / ns) as u64).clamp(200, 2_000_000)
    }

    /// Prints the table; `rows` are the episode table's (threads, medians
    /// of mbarrier, std, hurdles, sense spin, dissemination).
    pub fn table(
        threads: &[usize],
        shapes: &[(usize, usize)],
        rounds: usize,
        budget: Duration,
        rows: &[(usize, Vec<(f64, f64)>)],
    ) {
        println!("\n## Team (combining tree) and launch: median ns per episode, same run as the episode table\n");
        print!("| threads | flat Barrier | dissemination |");
        for (f, flat) in shapes {
            print!(" Team f{f} flat<={flat} | / flat | / diss |");
        }
        println!(" launch + Block::sync |");
        println!(
            "|---:|---:|---:|{}---:|",
            "---:|---:|---:|".repeat(shapes.len())
        );
        for &n in threads {
            let (flat_mb, diss) = rows
                .iter()
                .find(|(t, _)| *t == n)
                .map_or((f64::NAN, f64::NAN), |(_, v)| (v[0].0, v[4].0));
            print!("| {n} | {} | {} |", fmt_ns(flat_mb), fmt_ns(diss));
            for &(f, flat) in shapes {
                let episodes = calibrate(budget, |e| team_episode(n, f, flat, e));
                let mut v: Vec<f64> = (0..rounds)
                    .map(|_| team_episode(n, f, flat, episodes))
                    .collect();
                let m = median(&mut v);
                eprintln!("  team {n} threads f{f} flat<={flat}: {} ns", fmt_ns(m));
                print!(
                    " {} | {} | {} |",
                    fmt_ns(m),
                    ratio(m, flat_mb, 2),
                    ratio(m, diss, 2)
                );
            }
            let episodes = calibrate(budget, |e| launch_episode(n, e));
            let mut v: Vec<f64> = (0..rounds).map(|_| launch_episode(n, episodes)).collect();
            println!(" {} |", fmt_ns(median(&mut v)));
        }
    }
}
