//! The command line: options, their parsing and the usage text.

use super::*;

pub(crate) fn usage() -> String {
    let kinds: Vec<&str> = KINDS.iter().map(|e| e.key).collect();
    let stats = if cfg!(feature = "bench") {
        " [--stats]"
    } else {
        ""
    };
    format!(
        "usage: bench_table [--quick] [--threads 2,4,8,16] [--only KINDS] [--rounds N]\n\
         \x20                  [--budget-ms N | --episodes K [--cap-ms N]] [--sections LIST] [--fresh N [--versus PATH]]\n\
         \x20                  [--pin] [--cpus N] [--hogs N [--hog-pattern BUSY_MS,SLEEP_MS] [--hog-procs]]{stats}\n\
         \x20      bench_table --list-kinds | --be-hog BUSY_MS,SLEEP_MS\n\
         --threads: participant counts (default 2,4,8,16 and 2x, 4x the cores, up to 64)\n\
         --only: kinds, comma-separated, of: {}\n\
         --rounds: measurements per (threads, kind) (default 5; --quick 2; --fresh: per process, 3)\n\
         --budget-ms: time per measurement (default 100; --quick 10); --episodes: a fixed count\n\
         \x20 instead (default with --fresh: 20000), each round cut short after --cap-ms (default 10000)\n\
         --sections: of episode,fuzzy,wake,pipeline,single (default all; --fresh: episode only)\n\
         --fresh N: each measurement in N new processes, one line per measurement with each one's median\n\
         --versus PATH: also run each fresh process's measurement in PATH, another build of bench_table\n\
         \x20 (e.g. with --features diagnostics), alternating, and compare the two builds (default --fresh 5)\n\
         --pin: participant i runs on CPU i of the allowed set; --cpus N: use only the first N allowed CPUs\n\
         --hogs N: N busy foreign threads during the episodes (--hog-procs: processes; --hog-pattern:\n\
         \x20 busy BUSY_MS then asleep SLEEP_MS, in turn)\n\
         --be-hog: be one such foreign process until killed or the parent exits (for scripts)",
        kinds.join(",")
    )
}

/// The command line's usage errors and `--help` (`common::cli`, on lexopt).
const CLI: common::cli::Cli = common::cli::Cli {
    program: "bench_table",
    usage,
};

/// Prints `why` and the usage to stderr and exits with status 2.
pub(crate) fn bad(why: &str) -> ! {
    CLI.bad(why)
}

/// The arguments, without the `--bench` that `cargo bench` adds.
fn argv() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sections {
    pub(crate) episode: bool,
    pub(crate) fuzzy: bool,
    pub(crate) wake: bool,
    pub(crate) pipeline: bool,
    pub(crate) single: bool,
}

pub(crate) struct Opts {
    pub(crate) threads: Vec<usize>,
    pub(crate) rounds: usize,
    pub(crate) budget: Duration,
    pub(crate) episodes: Option<u64>,
    pub(crate) cap: Duration,
    pub(crate) quick: bool,
    pub(crate) hogs: usize,
    /// `(busy, asleep)`; asleep zero means busy all the time.
    pub(crate) hog_pattern: (Duration, Duration),
    pub(crate) hog_procs: bool,
    pub(crate) pin: bool,
    pub(crate) cpus: Option<usize>,
    /// Indices into [`KINDS`].
    pub(crate) only: Vec<usize>,
    pub(crate) sections: Sections,
    pub(crate) fresh: Option<usize>,
    /// `--versus PATH`: another build of this binary to compare with.
    pub(crate) versus: Option<String>,
    pub(crate) stats: bool,
    pub(crate) child: bool,
    pub(crate) list_kinds: bool,
    pub(crate) be_hog: bool,
    /// The command line, for the report.
    pub(crate) argv: Vec<String>,
}

impl Opts {
    pub(crate) fn how(&self) -> How {
        match self.episodes {
            Some(count) => How::Episodes {
                count,
                cap: self.cap,
            },
            None => How::For(self.budget),
        }
    }
    pub(crate) fn kinds(&self) -> impl Iterator<Item = (usize, &'static Entry)> + '_ {
        self.only.iter().map(|&k| (k, &KINDS[k]))
    }
}

pub(crate) fn number<T: std::str::FromStr>(flag: &str, v: &str) -> T {
    CLI.parse(flag, v)
}

pub(crate) fn pair_ms(flag: &str, v: &str) -> (Duration, Duration) {
    let (a, b) = v
        .split_once(',')
        .unwrap_or_else(|| bad(&format!("{flag}: want BUSY_MS,SLEEP_MS, got {v:?}")));
    let (a, b): (u64, u64) = (number(flag, a), number(flag, b));
    if a == 0 {
        bad(&format!("{flag}: the busy time must be at least 1 ms"));
    }
    (Duration::from_millis(a), Duration::from_millis(b))
}

pub(crate) fn parse() -> Opts {
    let argv = argv();
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
        versus: None,
        stats: false,
        child: false,
        list_kinds: false,
        be_hog: false,
        argv: argv.clone(),
    };
    let mut parser = common::cli::parser();
    while let Some(arg) = CLI.next(&mut parser) {
        use lexopt::Arg::{Long, Short};
        let flag = match arg {
            Short('h') | Long("help") => CLI.help(),
            Long(name) => format!("--{name}"),
            other => CLI.unexpected(other),
        };
        let mut val = || CLI.text(&mut parser, &flag);
        match flag.as_str() {
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
                let r: usize = number("--rounds", &val());
                if r == 0 {
                    bad("--rounds: at least 1");
                }
                rounds = Some(r);
            }
            "--budget-ms" => budget = Some(Duration::from_millis(number("--budget-ms", &val()))),
            "--episodes" => {
                let k: u64 = number("--episodes", &val());
                if k == 0 {
                    bad("--episodes: at least 1");
                }
                o.episodes = Some(k);
            }
            "--cap-ms" => o.cap = Duration::from_millis(number("--cap-ms", &val())),
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
                let n: usize = number("--fresh", &val());
                if n == 0 {
                    bad("--fresh: at least 1 process");
                }
                o.fresh = Some(n);
            }
            "--quick" => o.quick = true,
            "--hogs" => o.hogs = number("--hogs", &val()),
            "--hog-pattern" => o.hog_pattern = pair_ms("--hog-pattern", &val()),
            "--hog-procs" => o.hog_procs = true,
            "--pin" => o.pin = true,
            "--cpus" => {
                let n: usize = number("--cpus", &val());
                if n == 0 {
                    bad("--cpus: at least 1");
                }
                o.cpus = Some(n);
            }
            "--stats" if cfg!(feature = "bench") => o.stats = true,
            "--stats" => bad("--stats needs a build with --features bench"),
            "--list-kinds" => o.list_kinds = true,
            "--be-hog" => {
                o.hog_pattern = pair_ms("--be-hog", &val());
                o.be_hog = true;
            }
            "--versus" => o.versus = Some(val()),
            "--child" => o.child = true,
            other => bad(&format!("unknown flag {other:?}")),
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
    if o.versus.is_some() && o.fresh.is_none() {
        o.fresh = Some(if o.quick { 1 } else { 5 });
    }
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
