//! The benchmark table: the key comparisons in one process, interleaved,
//! printed as markdown: barrier episode latency against `std::sync::Barrier`,
//! `hurdles` and two textbook spin barriers (with the spread over rounds, not
//! only medians), CPU per episode, the fuzzy barrier, wake latency after
//! parking, the double-buffer pipeline, single-thread costs and the size of
//! the barrier. It measures and reports; it checks nothing: the targets at
//! the end say "met" or "missed by" and the exit status is 0 either way.
//!
//! ```text
//! cargo run --release --example bench_table -- --threads 2,4,8,16
//! cargo run --release --example bench_table -- --quick        # a few seconds, for CI
//! cargo run --release --example bench_table -- --help         # every option
//! ```
//!
//! Reproducing the slow modes of the wait policy on demand:
//!
//! ```text
//! # 16 participants beside 2 foreign processes busy 2 ms, asleep 1 ms in turn
//! bench_table --threads 16 --sections episode --hogs 2 --hog-procs --hog-pattern 2,1
//! # participant i pinned to CPU i of the allowed set
//! bench_table --threads 16 --sections episode --pin
//! # the same short measurement in 10 new processes: is the result bimodal?
//! bench_table --threads 64 --only mbarrier,hurdles --fresh 10 --episodes 20000
//! # 2 participants on 2 CPUs of a larger machine, beside 2 hog processes
//! bench_table --cpus 2 --threads 2 --sections episode --hogs 2 --hog-procs --hog-pattern 2,1
//! ```
//!
//! Built with `--features bench` (the crate's `bench_hooks`: wait-stage
//! counters and a process-wide policy switch), the table also has the kinds
//! "mbarrier (classic policy)" and "mbarrier (spin only)", and `--stats`
//! prints which stage each wait ended in and the time spent in each.
//!
//! Method: for every thread count, each round runs every barrier kind once
//! (the order rotates each round); a measurement spawns its threads (not
//! timed), warms up for a fifth of its budget, then runs episodes for the
//! budget (`--budget-ms`) or a fixed number of them (`--episodes`). CPU time
//! is all participants' on-CPU time (`CLOCK_THREAD_CPUTIME_ID`).
//! `--fresh N` runs each measurement in N new processes of this binary
//! (a hidden `--child` mode) instead, one measurement per process. The binary
//! needs no cargo: build it statically and copy it to another Linux machine
//! (benches/device-build.sh).

#[path = "../benches/common/mod.rs"]
mod common;

mod args;

use common::peers::{Dissemination, SenseSpin};
use common::workloads::{
    pipeline, single, spin_work, wake_latency, Fuzzy, FuzzyMode, PipeKind, WakeKind, ITEM_WORDS,
    SINGLE_OPS,
};
use common::{cores, How, Hurdles, Mb, Pool, Sample, Std};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---- the barrier kinds ------------------------------------------------------

/// The wait policy a kind runs under (`bench_hooks::set_policy`, with
/// `--features bench`; without it every kind runs the crate's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
enum Pol {
    Default,
    Classic,
    SpinOnly,
    NoYieldBackoff,
}

/// One row of the latency tables.
struct Entry {
    /// The name `--only` takes.
    key: &'static str,
    /// The name in the tables.
    name: &'static str,
    /// Spawns the participants.
    make: fn(usize) -> Pool,
    /// Ours (wait-stage statistics apply) or a peer we compare against.
    ours: bool,
    /// A pure spin barrier: collapses to scheduler time slices when the
    /// threads outnumber the cores (shorter budget there, none in --quick).
    spin: bool,
    policy: Pol,
}

impl Entry {
    const fn ours(key: &'static str, name: &'static str, make: fn(usize) -> Pool) -> Entry {
        Entry {
            key,
            name,
            make,
            ours: true,
            spin: false,
            policy: Pol::Default,
        }
    }
    const fn peer(key: &'static str, name: &'static str, make: fn(usize) -> Pool) -> Entry {
        Entry {
            ours: false,
            ..Entry::ours(key, name, make)
        }
    }
    const fn spin_peer(key: &'static str, name: &'static str, make: fn(usize) -> Pool) -> Entry {
        Entry {
            spin: true,
            ..Entry::peer(key, name, make)
        }
    }
    #[cfg_attr(not(feature = "bench"), allow(dead_code))]
    const fn policy(self, policy: Pol) -> Entry {
        Entry { policy, ..self }
    }
}

/// Every kind, in table order. Adding a kind is one line here, plus a
/// constructor for a barrier whose per-thread handles borrow it, e.g.
///
/// ```text
/// Entry::ours("team", "Team", team_pool),
///
/// fn team_pool(n: usize) -> Pool {
///     Pool::custom(n, |runners| {
///         let team = Arc::new(mbarrier::Team::new(n));
///         runners.into_iter().map(|r| {
///             let team = team.clone();
///             std::thread::spawn(move || {
///                 let seat = team.seat(r.rank());
///                 r.serve(|| { seat.arrive_and_wait(); })
///             })
///         }).collect()
///     })
/// }
/// ```
const KINDS: &[Entry] = &[
    Entry::ours("mbarrier", "mbarrier", Pool::new::<Mb>),
    #[cfg(feature = "bench")]
    Entry::ours("classic", "mbarrier (classic policy)", Pool::new::<Mb>).policy(Pol::Classic),
    #[cfg(feature = "bench")]
    Entry::ours("spin-only", "mbarrier (spin only)", Pool::new::<Mb>).policy(Pol::SpinOnly),
    #[cfg(feature = "bench")]
    Entry::ours("no-backoff", "mbarrier (no yield backoff)", Pool::new::<Mb>)
        .policy(Pol::NoYieldBackoff),
    Entry::ours("team", "Team", |n| Pool::team(n, 4, 2)),
    Entry::ours("team-f2", "Team (fan-in 2)", |n| Pool::team(n, 2, 2)),
    Entry::ours("team-f8", "Team (fan-in 8)", |n| Pool::team(n, 8, 2)),
    Entry::ours("team-f16", "Team (fan-in 16)", |n| Pool::team(n, 16, 2)),
    Entry::ours("team-flat", "Team (flat)", |n| Pool::team(n, 4, usize::MAX)),
    Entry::ours("block", "launch+Block", Pool::launched),
    Entry::peer("std", "std", Pool::new::<Std>),
    Entry::peer("hurdles", "hurdles", Pool::new::<Hurdles>),
    Entry::spin_peer("sense", "sense spin", Pool::new::<SenseSpin>),
    Entry::spin_peer("dissemination", "dissemination", Pool::new::<Dissemination>),
];

/// Ratio columns of the latency table: `(numerator, denominator)` by key;
/// [`BEST_PEER`] is the fastest peer of the row.
const RATIOS: &[(&str, &str)] = &[
    ("std", "mbarrier"),
    ("mbarrier", BEST_PEER),
    ("mbarrier", "dissemination"),
    ("team", "dissemination"),
    ("team", "mbarrier"),
];

/// Ratio columns of the CPU table.
const CPU_RATIOS: &[(&str, &str)] = &[("mbarrier", "std")];

const BEST_PEER: &str = "best peer";

fn kind_index(key: &str) -> Option<usize> {
    KINDS.iter().position(|e| e.key == key)
}

fn set_policy(p: Pol) {
    #[cfg(feature = "bench")]
    {
        use mbarrier::bench_hooks::Policy;
        mbarrier::bench_hooks::set_policy(match p {
            Pol::Default => Policy::Adaptive,
            Pol::Classic => Policy::Classic,
            Pol::SpinOnly => Policy::SpinOnly,
            Pol::NoYieldBackoff => Policy::NoYieldBackoff,
        });
    }
    #[cfg(not(feature = "bench"))]
    let _ = p;
}

/// Process-wide wait-stage counters (`bench_hooks::WaitStats`), summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Stats {
    waits: u64,
    ended_spin: u64,
    ended_yield: u64,
    ended_park: u64,
    spin_ns: u64,
    yield_ns: u64,
    park_ns: u64,
    slow_yields: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        let (a, b) = (self.fields_mut(), o.fields());
        for (x, y) in a.into_iter().zip(b) {
            *x += y;
        }
    }
    fn fields(&self) -> [u64; 8] {
        [
            self.waits,
            self.ended_spin,
            self.ended_yield,
            self.ended_park,
            self.spin_ns,
            self.yield_ns,
            self.park_ns,
            self.slow_yields,
        ]
    }
    fn fields_mut(&mut self) -> [&mut u64; 8] {
        [
            &mut self.waits,
            &mut self.ended_spin,
            &mut self.ended_yield,
            &mut self.ended_park,
            &mut self.spin_ns,
            &mut self.yield_ns,
            &mut self.park_ns,
            &mut self.slow_yields,
        ]
    }
    fn encode(&self) -> String {
        join(self.fields().iter())
    }
    fn decode(s: &str) -> Option<Stats> {
        let v: Vec<u64> = s
            .split(',')
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        let mut out = Stats::default();
        if v.len() != 8 {
            return None;
        }
        for (x, y) in out.fields_mut().into_iter().zip(v) {
            *x = y;
        }
        Some(out)
    }
}

/// The counters since the last call (and resets them); zeros without
/// `--features bench`.
fn take_stats() -> Stats {
    #[cfg(feature = "bench")]
    {
        let s = mbarrier::bench_hooks::take_stats();
        Stats {
            waits: s.waits,
            ended_spin: s.ended_spin,
            ended_yield: s.ended_yield,
            ended_park: s.ended_park,
            spin_ns: s.spin_ns,
            yield_ns: s.yield_ns,
            park_ns: s.park_ns,
            slow_yields: s.slow_yields,
        }
    }
    #[cfg(not(feature = "bench"))]
    Stats::default()
}

// ---- options ------------------------------------------------------------------

fn usage() -> String {
    let kinds: Vec<&str> = KINDS.iter().map(|e| e.key).collect();
    let stats = if cfg!(feature = "bench") {
        " [--stats]"
    } else {
        ""
    };
    format!(
        "usage: bench_table [--quick] [--threads 2,4,8,16] [--only KINDS] [--rounds N]\n\
         \x20                  [--budget-ms N | --episodes K [--cap-ms N]] [--sections LIST] [--fresh N]\n\
         \x20                  [--pin] [--cpus N] [--hogs N [--hog-pattern BUSY_MS,SLEEP_MS] [--hog-procs]]{stats}\n\
         \x20      bench_table --list-kinds | --be-hog BUSY_MS,SLEEP_MS\n\
         --threads: participant counts (default 2,4,8,16 and 2x, 4x the cores, up to 64)\n\
         --only: kinds, comma-separated, of: {}\n\
         --rounds: measurements per (threads, kind) (default 5; --quick 2; --fresh: per process, 3)\n\
         --budget-ms: time per measurement (default 100; --quick 10); --episodes: a fixed count\n\
         \x20 instead (default with --fresh: 20000), each round cut short after --cap-ms (default 10000)\n\
         --sections: of episode,fuzzy,wake,pipeline,single (default all; --fresh: episode only)\n\
         --fresh N: each measurement in N new processes, one line per measurement with each one's median\n\
         --pin: participant i runs on CPU i of the allowed set; --cpus N: use only the first N allowed CPUs\n\
         --hogs N: N busy foreign threads during the episodes (--hog-procs: processes; --hog-pattern:\n\
         \x20 busy BUSY_MS then asleep SLEEP_MS, in turn)\n\
         --be-hog: be one such foreign process until killed or the parent exits (for scripts)",
        kinds.join(",")
    )
}

fn bad(why: &str) -> ! {
    args::bad_args(&usage(), &format!("bench_table: {why}"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sections {
    episode: bool,
    fuzzy: bool,
    wake: bool,
    pipeline: bool,
    single: bool,
}

struct Opts {
    threads: Vec<usize>,
    rounds: usize,
    budget: Duration,
    episodes: Option<u64>,
    cap: Duration,
    quick: bool,
    hogs: usize,
    /// `(busy, asleep)`; asleep zero means busy all the time.
    hog_pattern: (Duration, Duration),
    hog_procs: bool,
    pin: bool,
    cpus: Option<usize>,
    /// Indices into [`KINDS`].
    only: Vec<usize>,
    sections: Sections,
    fresh: Option<usize>,
    stats: bool,
    child: bool,
    list_kinds: bool,
    be_hog: bool,
    /// The command line, for the report.
    argv: Vec<String>,
}

impl Opts {
    fn how(&self) -> How {
        match self.episodes {
            Some(count) => How::Episodes {
                count,
                cap: self.cap,
            },
            None => How::For(self.budget),
        }
    }
    fn kinds(&self) -> impl Iterator<Item = (usize, &'static Entry)> + '_ {
        self.only.iter().map(|&k| (k, &KINDS[k]))
    }
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> T {
    v.trim()
        .parse()
        .unwrap_or_else(|_| bad(&format!("{flag}: not a number: {v:?}")))
}

fn pair_ms(flag: &str, v: &str) -> (Duration, Duration) {
    let (a, b) = v
        .split_once(',')
        .unwrap_or_else(|| bad(&format!("{flag}: want BUSY_MS,SLEEP_MS, got {v:?}")));
    let (a, b): (u64, u64) = (number(flag, a), number(flag, b));
    if a == 0 {
        bad(&format!("{flag}: the busy time must be at least 1 ms"));
    }
    (Duration::from_millis(a), Duration::from_millis(b))
}

fn parse() -> Opts {
    args::help_if_asked(&usage());
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut threads: Option<Vec<usize>> = None;
    let (mut rounds, mut budget, mut sections) = (None, None, None);
    let mut o = Opts {
        threads: Vec::new(),
        rounds: 0,
        budget: Duration::ZERO,
        episodes: None,
        cap: Duration::from_secs(10),
        quick: false,
        hogs: 0,
        hog_pattern: (Duration::from_millis(10), Duration::ZERO),
        hog_procs: false,
        pin: false,
        cpus: None,
        only: (0..KINDS.len()).collect(),
        sections: Sections {
            episode: true,
            fuzzy: true,
            wake: true,
            pipeline: true,
            single: true,
        },
        fresh: None,
        stats: false,
        child: false,
        list_kinds: false,
        be_hog: false,
        argv: argv.clone(),
    };
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let mut val = || {
            it.next()
                .unwrap_or_else(|| bad(&format!("{a} needs a value")))
                .as_str()
        };
        match a.as_str() {
            "--threads" => {
                let v: Vec<usize> = val().split(',').map(|t| number("--threads", t)).collect();
                if !v.iter().all(|&n| (1..=64).contains(&n)) {
                    bad("--threads: counts must be in 1..=64");
                }
                threads = Some(v);
            }
            "--only" => {
                o.only = val()
                    .split(',')
                    .map(|k| {
                        kind_index(k.trim()).unwrap_or_else(|| {
                            bad(&format!(
                                "--only: no kind {k:?} in this build (see --list-kinds)"
                            ))
                        })
                    })
                    .collect();
                o.only.sort_unstable();
                o.only.dedup();
            }
            "--rounds" => {
                let r: usize = number("--rounds", val());
                if r == 0 {
                    bad("--rounds: at least 1");
                }
                rounds = Some(r);
            }
            "--budget-ms" => budget = Some(Duration::from_millis(number("--budget-ms", val()))),
            "--episodes" => {
                let k: u64 = number("--episodes", val());
                if k == 0 {
                    bad("--episodes: at least 1");
                }
                o.episodes = Some(k);
            }
            "--cap-ms" => o.cap = Duration::from_millis(number("--cap-ms", val())),
            "--sections" => {
                let mut s = Sections {
                    episode: false,
                    fuzzy: false,
                    wake: false,
                    pipeline: false,
                    single: false,
                };
                for name in val().split(',') {
                    match name.trim() {
                        "episode" => s.episode = true,
                        "fuzzy" => s.fuzzy = true,
                        "wake" => s.wake = true,
                        "pipeline" => s.pipeline = true,
                        "single" => s.single = true,
                        other => bad(&format!("--sections: no section {other:?}")),
                    }
                }
                sections = Some(s);
            }
            "--fresh" => {
                let n: usize = number("--fresh", val());
                if n == 0 {
                    bad("--fresh: at least 1 process");
                }
                o.fresh = Some(n);
            }
            "--quick" => o.quick = true,
            "--hogs" => o.hogs = number("--hogs", val()),
            "--hog-pattern" => o.hog_pattern = pair_ms("--hog-pattern", val()),
            "--hog-procs" => o.hog_procs = true,
            "--pin" => o.pin = true,
            "--cpus" => {
                let n: usize = number("--cpus", val());
                if n == 0 {
                    bad("--cpus: at least 1");
                }
                o.cpus = Some(n);
            }
            "--stats" if cfg!(feature = "bench") => o.stats = true,
            "--stats" => bad("--stats needs a build with --features bench"),
            "--list-kinds" => o.list_kinds = true,
            "--be-hog" => {
                o.hog_pattern = pair_ms("--be-hog", val());
                o.be_hog = true;
            }
            "--child" => o.child = true,
            other => bad(&format!("unknown argument {other:?}")),
        }
    }
    if budget.is_some() && o.episodes.is_some() {
        bad("--budget-ms and --episodes exclude each other");
    }
    // Before anything reads the core count: it depends on the affinity.
    if let Some(n) = o.cpus {
        let allowed = common::current_affinity();
        if n > allowed.len() {
            bad(&format!(
                "--cpus {n}: only {} CPUs are allowed",
                allowed.len()
            ));
        }
        common::set_affinity(&allowed[..n]);
    }
    let c = cores();
    o.threads = threads.unwrap_or_else(|| {
        let mut t = vec![2, 4, 8, 16, 2 * c, 4 * c];
        t.retain(|&n| n <= 64);
        t
    });
    o.threads.sort_unstable();
    o.threads.dedup();
    if o.fresh.is_some() && o.episodes.is_none() && budget.is_none() {
        o.episodes = Some(if o.quick { 2_000 } else { 20_000 });
    }
    o.rounds = rounds.unwrap_or(match (o.fresh.is_some(), o.quick) {
        (true, _) => 3,
        (false, true) => 2,
        (false, false) => 5,
    });
    o.budget = budget.unwrap_or(Duration::from_millis(if o.quick { 10 } else { 100 }));
    if let Some(s) = sections {
        o.sections = s;
    } else if o.fresh.is_some() {
        o.sections = Sections {
            episode: true,
            fuzzy: false,
            wake: false,
            pipeline: false,
            single: false,
        };
    }
    o
}

// ---- formatting ---------------------------------------------------------------

/// A duration in ns with its unit, 3 significant digits: "61 ns", "4.71 µs",
/// "12.6 µs", "82.0 ms"; "-" for NaN.
fn fmt_time(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if v >= 100.0 || unit == "ns" && v >= 10.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A ratio with 3 significant digits and an "x": "30.8x", "1.09x",
/// "0.0444x", "1.4e-4x"; "-" when a side is missing.
fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() || r <= 0.0 {
        "-".into()
    } else if !(1e-3..1e4).contains(&r) {
        format!("{r:.1e}x")
    } else if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 10.0 {
        format!("{r:.1}x")
    } else if r >= 1.0 {
        format!("{r:.2}x")
    } else if r >= 0.1 {
        format!("{r:.3}x")
    } else if r >= 0.01 {
        format!("{r:.4}x")
    } else {
        format!("{r:.5}x")
    }
}

fn fmt_pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn join<T: std::fmt::Display>(v: impl Iterator<Item = T>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// The `q`-quantile of `v` (0 ≤ q ≤ 1), linear between the order statistics;
/// NaN when empty.
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

fn med(v: &[f64]) -> f64 {
    quantile(v, 0.5)
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

/// A target's verdict: "**met**" or "**missed by 1.42x**". `got` should be
/// at most `limit` (or at least, with `at_least`).
fn verdict(got: f64, limit: f64, at_least: bool) -> String {
    if !got.is_finite() || !limit.is_finite() {
        return "**not measured**".into();
    }
    let (ok, by) = if at_least {
        (got >= limit, limit / got)
    } else {
        (got <= limit, got / limit)
    };
    if ok {
        "**met**".into()
    } else {
        format!("**missed by {}**", fmt_ratio(by))
    }
}

// ---- foreign load ---------------------------------------------------------------

/// Busy `pattern.0`, then asleep `pattern.1`, in turn, while `go()` holds.
fn hog_loop(pattern: (Duration, Duration), go: impl Fn() -> bool) {
    while go() {
        let until = Instant::now() + pattern.0;
        while Instant::now() < until {
            spin_work(2_000);
        }
        if !pattern.1.is_zero() {
            std::thread::sleep(pattern.1);
        }
    }
}

/// `--be-hog`: one foreign-load process; ends when killed or when the
/// process that started it has gone (it is then re-parented).
fn be_hog(pattern: (Duration, Duration)) -> ! {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() };
    // SAFETY: as above.
    hog_loop(pattern, || unsafe { libc::getppid() } == parent);
    std::process::exit(0)
}

/// The foreign load of `--hogs`, stopped when dropped.
struct Hogs {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    procs: Vec<std::process::Child>,
}

impl Hogs {
    fn start(o: &Opts) -> Hogs {
        let stop = Arc::new(AtomicBool::new(false));
        let mut h = Hogs {
            stop: stop.clone(),
            threads: Vec::new(),
            procs: Vec::new(),
        };
        let (busy, asleep) = o.hog_pattern;
        for _ in 0..o.hogs {
            if o.hog_procs {
                let exe = std::env::current_exe().expect("current_exe");
                let child = std::process::Command::new(exe)
                    .arg("--be-hog")
                    .arg(format!("{},{}", busy.as_millis(), asleep.as_millis()))
                    .stdin(std::process::Stdio::null())
                    .spawn()
                    .expect("could not start a hog process");
                h.procs.push(child);
            } else {
                let stop = stop.clone();
                h.threads.push(std::thread::spawn(move || {
                    // Relaxed: a stop flag; nothing is published through it.
                    hog_loop((busy, asleep), || !stop.load(Ordering::Relaxed))
                }));
            }
        }
        h
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        // Relaxed: a stop flag; the join below synchronises.
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            t.join().expect("hog thread panicked");
        }
        for mut p in self.procs.drain(..) {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

fn describe_load(o: &Opts) -> String {
    if o.hogs == 0 {
        return "none started by the bench".into();
    }
    let what = if o.hog_procs { "processes" } else { "threads" };
    let pattern = if o.hog_pattern.1.is_zero() {
        "busy all the time".to_string()
    } else {
        format!(
            "busy {} ms then asleep {} ms, in turn",
            o.hog_pattern.0.as_millis(),
            o.hog_pattern.1.as_millis()
        )
    };
    format!(
        "{} foreign {what} (not participants), {pattern}, during the episode measurements",
        o.hogs
    )
}

// ---- one measurement ------------------------------------------------------------

/// The rounds of one `(threads, kind)`.
#[derive(Clone, Debug, Default)]
struct Meas {
    ns: Vec<f64>,
    cpu: Vec<f64>,
    /// Rounds that the cap ended before their episode count.
    capped: usize,
    stats: Stats,
}

impl Meas {
    fn push(&mut self, s: &Sample, want: Option<u64>, st: &Stats) {
        self.ns.push(s.ns());
        self.cpu.push(s.cpu().unwrap_or(f64::NAN));
        if want.is_some_and(|w| s.episodes < w) {
            self.capped += 1;
        }
        self.stats.add(st);
    }
}

/// One measurement of kind `e` at `n` threads: a fresh pool, a warm-up, a
/// timed run. `None` for a spin barrier that is oversubscribed in --quick.
fn measure(o: &Opts, e: &Entry, n: usize) -> Option<(Sample, Stats)> {
    let mut how = o.how();
    if e.spin && n > cores() {
        if o.quick {
            return None;
        }
        how = how.shorter(4);
    }
    set_policy(e.policy);
    let pool = (e.make)(n);
    pool.run(how.warm_up());
    take_stats();
    let sample = pool.run(how);
    let stats = take_stats();
    drop(pool);
    Some((sample, stats))
}

/// `--child`: one `(threads, kind)`, `rounds` measurements, one line on stdout.
fn child(o: &Opts) {
    if o.threads.len() != 1 || o.only.len() != 1 {
        bad("--child: exactly one thread count and one kind");
    }
    let (n, e) = (o.threads[0], &KINDS[o.only[0]]);
    let mut m = Meas::default();
    for _ in 0..o.rounds {
        if let Some((s, st)) = measure(o, e, n) {
            m.push(&s, o.episodes, &st);
        }
    }
    println!(
        "RESULT ns={} cpu={} capped={} stats={}",
        join(m.ns.iter()),
        join(m.cpu.iter()),
        m.capped,
        m.stats.encode()
    );
}

/// Runs `(n, kind)` in a new process of this binary; `None` if it failed.
fn run_child(o: &Opts, n: usize, k: usize) -> Option<Meas> {
    let exe = std::env::current_exe().ok()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "--child",
        "--threads",
        &n.to_string(),
        "--only",
        KINDS[k].key,
    ]);
    cmd.args(["--rounds", &o.rounds.to_string()]);
    match o.episodes {
        Some(k) => cmd.args([
            "--episodes",
            &k.to_string(),
            "--cap-ms",
            &o.cap.as_millis().to_string(),
        ]),
        None => cmd.args(["--budget-ms", &o.budget.as_millis().to_string()]),
    };
    if o.pin {
        cmd.arg("--pin");
    }
    if o.quick {
        cmd.arg("--quick");
    }
    let out = cmd.stderr(std::process::Stdio::inherit()).output().ok()?;
    if !out.status.success() {
        eprintln!(
            "bench_table: child {n} threads {} failed: {}",
            KINDS[k].key, out.status
        );
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("RESULT "))?;
    let mut m = Meas::default();
    for field in line["RESULT ".len()..].split_whitespace() {
        let (key, v) = field.split_once('=')?;
        let floats = || -> Vec<f64> {
            v.split(',')
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect()
        };
        match key {
            "ns" => m.ns = floats(),
            "cpu" => m.cpu = floats(),
            "capped" => m.capped = v.parse().ok()?,
            "stats" => m.stats = Stats::decode(v)?,
            _ => {}
        }
    }
    Some(m)
}

// ---- the report -------------------------------------------------------------------

/// All measurements, by `(threads, kind index)`.
type Results = std::collections::BTreeMap<(usize, usize), Meas>;

struct Report<'a> {
    o: &'a Opts,
    started: Instant,
    out: String,
}

impl Report<'_> {
    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }
    fn progress(&self, what: std::fmt::Arguments<'_>) {
        eprintln!("[{:7.1} s] {what}", self.started.elapsed().as_secs_f64());
    }
    fn flush(&mut self) {
        print!("{}", self.out);
        self.out.clear();
    }
}

fn over(n: usize) -> String {
    let c = cores();
    if n > c {
        format!("{c} (over)")
    } else {
        c.to_string()
    }
}

fn main() {
    let o = parse();
    if o.be_hog {
        be_hog(o.hog_pattern);
    }
    if o.pin {
        common::set_pinning(true);
    }
    // Counting waits costs clock readings and shared RMWs: only with --stats.
    #[cfg(feature = "bench")]
    mbarrier::bench_hooks::set_stats(o.stats);
    if o.list_kinds {
        for e in KINDS {
            println!("{}\t{}", e.key, e.name);
        }
        return;
    }
    if o.child {
        child(&o);
        return;
    }
    let mut r = Report {
        o: &o,
        started: Instant::now(),
        out: String::new(),
    };
    header(&mut r);
    r.flush();
    let mut targets = Vec::new();
    let mut policy_targets = Vec::new();
    if o.sections.episode {
        let hogs = Hogs::start(&o);
        if let Some(n) = o.fresh {
            fresh(&mut r, n, &mut policy_targets);
        } else {
            let res = episodes(&mut r);
            drop(hogs);
            episode_tables(&mut r, &res);
            episode_targets(&o, &res, &mut targets, &mut policy_targets);
        }
        r.flush();
    }
    if o.sections.fuzzy {
        fuzzy(&mut r, &mut targets, &mut policy_targets);
        r.flush();
    }
    if o.sections.wake {
        wake(&mut r);
        r.flush();
    }
    if o.sections.pipeline {
        pipe(&mut r);
        r.flush();
    }
    if o.sections.single {
        single_costs(&mut r);
    }
    if o.fresh.is_none() && o.sections.episode {
        targets.push(format!(
            "memory: size_of::<mbarrier::Barrier>() == 8: {} ({} bytes; std::sync::Barrier: {} bytes)",
            verdict(std::mem::size_of::<mbarrier::Barrier>() as f64, 8.0, false),
            std::mem::size_of::<mbarrier::Barrier>(),
            std::mem::size_of::<std::sync::Barrier>()
        ));
    }
    if !targets.is_empty() {
        r.line("\n## Targets of the 0.1 release (issue 4; SPEC §1 Waiting)\n");
        r.line("Printed, not enforced: the exit status is 0 whether they are met or not.\n");
        for t in &targets {
            r.line(format!("- {t}"));
        }
    }
    if !policy_targets.is_empty() {
        r.line("\n## Targets of the wait policy (issue 12; SPEC §1 Waiting: foreign load, agreement between runs)\n");
        r.line(
            "Those that one run of this command can judge; printed, not enforced. \
             \"Spread\" is max / min over the rounds (or processes).\n",
        );
        for t in &policy_targets {
            r.line(format!("- {t}"));
        }
    }
    r.line(format!(
        "\n_total {:.1} s; loadavg at end {}_",
        r.started.elapsed().as_secs_f64(),
        loadavg()
    ));
    r.flush();
}

fn header(r: &mut Report<'_>) {
    let o = r.o;
    let c = cores();
    r.line("# mbarrier bench_table\n");
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
        "- size_of::<mbarrier::Barrier>() = {}, size_of::<std::sync::Barrier>() = {}, size_of::<hurdles::Barrier>() = {} per thread (+ a shared heap block)",
        std::mem::size_of::<mbarrier::Barrier>(),
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
            "--features bench (policy switch and wait-stage counters of mbarrier::bench_hooks)"
        } else {
            "default features (the crate's default policy only; no wait-stage counters)"
        }
    ));
}

fn episodes(r: &mut Report<'_>) -> Results {
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
fn median_of(res: &Results, n: usize, key: &str, cpu: bool) -> f64 {
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

fn ratio_header(ratios: &[(&str, &str)]) -> (String, String) {
    let mut h = String::new();
    let mut a = String::new();
    for (x, y) in ratios {
        let _ = write!(h, " {x} / {y} |");
        a.push_str("---:|");
    }
    (h, a)
}

fn episode_tables(r: &mut Report<'_>, res: &Results) {
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
            "\n## Wait stages (mbarrier::bench_hooks, summed over the {} rounds)\n",
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

fn stats_header(r: &mut Report<'_>, first: &str, align: &str) {
    r.line(format!(
        "{first} waits | ended in spin | ended in yield | ended in park | spin per wait | yield per wait | park per wait | slow yields |"
    ));
    r.line(format!("{align}---:|---:|---:|---:|---:|---:|---:|---:|"));
}

fn stats_cells(s: &Stats) -> String {
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

/// The numbers of a comparison: "mbarrier 2.98 µs, std 38.3 µs".
fn pair(a: &str, x: f64, b: &str, y: f64) -> String {
    format!("{a} {}, {b} {}", fmt_time(x), fmt_time(y))
}

fn episode_targets(o: &Opts, res: &Results, t: &mut Vec<String>, p: &mut Vec<String>) {
    let c = cores();
    let has = |key: &str| kind_index(key).is_some_and(|k| o.only.contains(&k));
    if !has("mbarrier") {
        return;
    }
    for &n in &o.threads {
        let m = |key| median_of(res, n, key, false);
        let cpu = |key| median_of(res, n, key, true);
        let (mb, std, hurdles, diss) = (m("mbarrier"), m("std"), m("hurdles"), m("dissemination"));
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
                "{line}: at least 20x faster than std: {} (std / mbarrier = {}; {})",
                verdict(std / mb, 20.0, true),
                fmt_ratio(std / mb),
                pair("mbarrier", mb, "std", std)
            ));
        }
        if o.hogs == 0 && n <= c && (n == 2 || n == 16) && has("dissemination") {
            t.push(format!(
                "{n} threads / {c} cores: within 1.3x of the dissemination spin barrier: {} (mbarrier / dissemination = {}; {})",
                verdict(mb / diss, 1.3, false),
                fmt_ratio(mb / diss),
                pair("mbarrier", mb, "dissemination", diss)
            ));
        }
        if o.hogs == 0 && n == 16 && c >= 16 {
            // OpenMP's barrier at 16 threads on 16 cores, from figures
            // measured elsewhere (../shared/anchors): ~1 300–1 900 ns.
            const OPENMP_16: f64 = 1_600.0;
            t.push(format!(
                "16 threads / {c} cores: faster than OpenMP's barrier (reference {}, measured elsewhere: run ../shared/anchors beside this for a ratio from one run): {} (mbarrier {})",
                fmt_time(OPENMP_16),
                verdict(mb, OPENMP_16, false),
                fmt_time(mb)
            ));
        }
        if o.hogs == 0 && n > c && has("std") && has("hurdles") {
            let peer = std.min(hurdles);
            t.push(format!(
                "{n} threads / {c} cores (oversubscribed): no slower than the best of std and hurdles: {} ({})",
                verdict(mb, peer, false),
                pair("mbarrier", mb, "best of them", peer)
            ));
            t.push(format!(
                "{n} threads / {c} cores (oversubscribed): CPU per episode at most std's: {} ({})",
                verdict(cpu("mbarrier"), cpu("std"), false),
                pair("mbarrier", cpu("mbarrier"), "std", cpu("std"))
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
                "{n} threads beside {} foreign {}: no slower than the best of hurdles and std: {} ({}; spread over rounds: mbarrier {}, hurdles {}, std {})",
                o.hogs,
                if o.hog_procs { "processes" } else { "threads" },
                verdict(mb, best, false),
                pair("mbarrier", mb, "best of them", best),
                fmt_ratio(spread("mbarrier")),
                fmt_ratio(spread("hurdles")),
                fmt_ratio(spread("std"))
            ));
            p.push(format!(
                "{n} threads under that load: CPU per episode no more than theirs (the lower of the two): {} ({})",
                verdict(cpu("mbarrier"), best_cpu, false),
                pair("mbarrier", cpu("mbarrier"), "lower of them", best_cpu)
            ));
        }
        if o.hogs == 0 && n > c && has("std") {
            p.push(format!(
                "{n} threads / {c} cores (oversubscribed): CPU per episode at most 0.5x std's: {} (mbarrier / std = {}; {})",
                verdict(cpu("mbarrier") / cpu("std"), 0.5, false),
                fmt_ratio(cpu("mbarrier") / cpu("std")),
                pair("mbarrier", cpu("mbarrier"), "std", cpu("std"))
            ));
        }
    }
}

fn fresh(r: &mut Report<'_>, procs: usize, p: &mut Vec<String>) {
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
        r.line("\n## Wait stages per process (mbarrier::bench_hooks, summed over its rounds)\n");
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

fn fuzzy(r: &mut Report<'_>, t: &mut Vec<String>, p: &mut Vec<String>) {
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
    r.line("| threads | mbarrier arrive_and_wait | mbarrier split arrive/work/wait | std wait | ideal | imbalance hidden by the split |");
    r.line("|---:|---:|---:|---:|---:|---:|");
    let modes = [
        FuzzyMode::MbJoined,
        FuzzyMode::MbSplit,
        FuzzyMode::StdJoined,
    ];
    // BENCH_FUZZY_POLICY=classic|no-backoff (with --features bench) runs
    // this section under another policy, to compare them.
    let policy = match std::env::var("BENCH_FUZZY_POLICY").as_deref() {
        Ok("classic") => Pol::Classic,
        Ok("no-backoff") => Pol::NoYieldBackoff,
        _ => Pol::Default,
    };
    r.line(format!("Policy: {policy:?}.\n"));
    set_policy(policy);
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

fn wake(r: &mut Report<'_>) {
    let o = r.o;
    r.progress(format_args!("wake"));
    set_policy(Pol::Default);
    let samples = if o.quick { 20 } else { 300 };
    r.line(format!("\n## Wake latency after parking: the completer sleeps 1 ms, then arrives; time until each parked waiter runs ({samples} wakes per waiter)\n"));
    r.line("| barrier | waiters | p50 | p99 |");
    r.line("|---|---:|---:|---:|");
    for waiters in [1, 3] {
        for (name, kind) in [("mbarrier", WakeKind::Mb), ("std", WakeKind::Std)] {
            let lat = wake_latency(kind, waiters, samples, Duration::from_millis(1));
            r.line(format!(
                "| {name} | {waiters} | {} | {} |",
                fmt_time(quantile(&lat, 0.5)),
                fmt_time(quantile(&lat, 0.99))
            ));
        }
    }
}

fn pipe(r: &mut Report<'_>) {
    let o = r.o;
    r.progress(format_args!("pipeline"));
    set_policy(Pol::Default);
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
        ("mbarrier full/empty parity waits", PipeKind::MbParity),
        ("std::sync::Barrier lockstep", PipeKind::StdLockstep),
        ("mbarrier arrive_and_wait lockstep", PipeKind::MbLockstep),
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

fn single_costs(r: &mut Report<'_>) {
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
