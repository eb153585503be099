//! The benchmark table: the key comparisons in one process, interleaved,
//! printed as markdown: barrier episode latency against `std::sync::Barrier`,
//! `hurdles` and two textbook spin barriers (with the spread over rounds, not
//! only medians), CPU per episode, the fuzzy barrier, wake latency after
//! parking, the double-buffer pipeline, single-thread costs and the size of
//! the barrier. It measures and reports; it checks nothing: the targets at
//! the end say "met" or "missed by" and the exit status is 0 either way.
//!
//! ```text
//! cargo bench --bench bench_table -- --threads 2,4,8,16
//! cargo bench --bench bench_table -- --quick        # a few seconds, for CI
//! cargo bench --bench bench_table -- --help         # every option
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
//! bench_table --threads 64 --only barrier,hurdles --fresh 10 --episodes 20000
//! # 2 participants on 2 CPUs of a larger machine, beside 2 hog processes
//! bench_table --cpus 2 --threads 2 --sections episode --hogs 2 --hog-procs --hog-pattern 2,1
//! ```
//!
//! Built with `--features bench` (the crate's `bench_hooks`: wait-stage
//! counters and a process-wide switch to spin-only waits), the table also
//! has the kind "Barrier (spin only)", and `--stats` prints which stage each
//! wait ended in and the time spent in each.
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

#[path = "../common/mod.rs"]
mod common;

mod format;
mod kinds;
mod load;
mod measure;
mod opts;
mod report;
mod sections;

use format::*;
use kinds::*;
use load::*;
use measure::*;
use opts::*;
use report::*;
use sections::*;

use common::peers::{Dissemination, SenseSpin};
use common::workloads::{
    pipeline, single, spin_work, wake_latency, Fuzzy, FuzzyMode, PipeKind, WakeKind, ITEM_WORDS,
    SINGLE_OPS,
};
use common::{cores, How, Hurdles, Plain, Pool, Sample, Std};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// All measurements, by `(threads, kind index)`.
pub(crate) type Results = std::collections::BTreeMap<(usize, usize), Meas>;

pub(crate) struct Report<'a> {
    pub(crate) o: &'a Opts,
    pub(crate) started: Instant,
    pub(crate) out: String,
}

impl Report<'_> {
    pub(crate) fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }
    pub(crate) fn progress(&self, what: std::fmt::Arguments<'_>) {
        eprintln!("[{:7.1} s] {what}", self.started.elapsed().as_secs_f64());
    }
    pub(crate) fn flush(&mut self) {
        print!("{}", self.out);
        self.out.clear();
    }
}

pub(crate) fn over(n: usize) -> String {
    let c = cores();
    if n > c {
        format!("{c} (over)")
    } else {
        c.to_string()
    }
}

pub(crate) fn main() {
    let o = parse();
    if o.be_hog {
        be_hog(o.hog_pattern);
    }
    if o.pin {
        common::set_pinning(true);
    }
    // Counting waits costs clock readings and shared RMWs: only with --stats.
    #[cfg(feature = "bench")]
    syncthreads::bench_hooks::set_stats(o.stats);
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
        if let (Some(n), Some(path)) = (o.fresh, &o.versus) {
            versus(&mut r, n, path);
        } else if let Some(n) = o.fresh {
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
            "memory: size_of::<syncthreads::Barrier>() == 8: {} ({} bytes; std::sync::Barrier: {} bytes)",
            verdict(std::mem::size_of::<syncthreads::Barrier>() as f64, 8.0, false),
            std::mem::size_of::<syncthreads::Barrier>(),
            std::mem::size_of::<std::sync::Barrier>()
        ));
    }
    if !targets.is_empty() {
        r.line("\n## Targets (the contract's rules on waiting)\n");
        r.line("Printed, not enforced: the exit status is 0 whether they are met or not.\n");
        for t in &targets {
            r.line(format!("- {t}"));
        }
    }
    if !policy_targets.is_empty() {
        r.line("\n## Targets of the wait policy (the contract: foreign load, agreement between runs)\n");
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
