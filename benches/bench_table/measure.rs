//! One measurement, in this process or in a fresh child process.

use super::*;

/// The rounds of one `(threads, kind)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Meas {
    pub(crate) ns: Vec<f64>,
    pub(crate) cpu: Vec<f64>,
    /// Rounds that the cap ended before their episode count.
    pub(crate) capped: usize,
    pub(crate) stats: Stats,
    /// The child's build (`--versus`): its features.
    pub(crate) build: String,
}

impl Meas {
    pub(crate) fn push(&mut self, s: &Sample, want: Option<u64>, st: &Stats) {
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
pub(crate) fn measure(o: &Opts, e: &Entry, n: usize) -> Option<(Sample, Stats)> {
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
pub(crate) fn child(o: &Opts) {
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
        "RESULT ns={} cpu={} capped={} stats={} build={}",
        join(m.ns.iter()),
        join(m.cpu.iter()),
        m.capped,
        m.stats.encode(),
        build()
    );
}

/// The features this binary was built with, for `--versus`.
pub(crate) fn build() -> &'static str {
    match (cfg!(feature = "diagnostics"), cfg!(feature = "bench")) {
        (true, true) => "diagnostics+bench",
        (true, false) => "diagnostics",
        (false, true) => "bench",
        (false, false) => "default",
    }
}

/// Runs `(n, kind)` in a new process of this binary; `None` if it failed.
pub(crate) fn run_child(o: &Opts, n: usize, k: usize) -> Option<Meas> {
    run_child_of(std::env::current_exe().ok()?.as_os_str(), o, n, k)
}

/// Runs `(n, kind)` in a new process of `exe`, a build of this binary.
pub(crate) fn run_child_of(exe: &std::ffi::OsStr, o: &Opts, n: usize, k: usize) -> Option<Meas> {
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
            "build" => m.build = v.to_owned(),
            _ => {}
        }
    }
    Some(m)
}
