//! Shared by every bench in `benches/`, the table `benches/bench_table/`
//! among them (each includes this file as its module, so the table stays one
//! standalone binary): the peer barriers, a pool of persistent threads that runs barrier episodes, and
//! the fuzzy-barrier, wake-latency, pipeline and single-thread workloads.
//!
//! CPU time is read with `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (the
//! thread's on-CPU time, user + system, in ns) by each worker before and
//! after its loop. Not `/proc/thread-self/schedstat`, which it used before:
//! that figure is only brought up to date at scheduler ticks and switches,
//! so a thread that ran without a switch for a few ms read 0 (measured:
//! 2 ms of busy work read as 66 µs). Pinning (`set_pinning`) uses
//! `sched_setaffinity`; both go through `libc`, a dev-dependency.

// Each bench binary uses a different part of this module.
#![allow(dead_code)]

pub mod cli;
pub mod peers;
pub mod workloads;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A barrier under test: shared state plus one local handle per thread.
pub trait Kind: Send + Sync + 'static {
    /// Per-thread state (a sense bit, a cloned handle, ...).
    type Local: Send + 'static;
    /// The barrier for `n` threads.
    fn new(n: usize) -> Self;
    /// One local handle per thread, made before any thread waits.
    fn locals(&self, n: usize) -> Vec<Self::Local>;
    /// One episode: arrive and wait for the others.
    fn wait(&self, local: &mut Self::Local);
}

/// `syncthreads::Barrier::arrive_and_wait`.
pub struct Plain(pub syncthreads::Barrier);

impl Kind for Plain {
    type Local = ();
    fn new(n: usize) -> Self {
        Plain(syncthreads::Barrier::new(n))
    }
    fn locals(&self, n: usize) -> Vec<()> {
        vec![(); n]
    }
    #[inline]
    fn wait(&self, _: &mut ()) {
        self.0.arrive_and_wait();
    }
}

/// `syncthreads::Barrier`, split: `arrive` then `wait(token)`.
pub struct SplitBarrier(pub syncthreads::Barrier);

impl Kind for SplitBarrier {
    type Local = ();
    fn new(n: usize) -> Self {
        SplitBarrier(syncthreads::Barrier::new(n))
    }
    fn locals(&self, n: usize) -> Vec<()> {
        vec![(); n]
    }
    #[inline]
    fn wait(&self, _: &mut ()) {
        let token = self.0.arrive();
        self.0.wait(token);
    }
}

/// `std::sync::Barrier::wait`.
pub struct Std(pub std::sync::Barrier);

impl Kind for Std {
    type Local = ();
    fn new(n: usize) -> Self {
        Std(std::sync::Barrier::new(n))
    }
    fn locals(&self, n: usize) -> Vec<()> {
        vec![(); n]
    }
    #[inline]
    fn wait(&self, _: &mut ()) {
        self.0.wait();
    }
}

/// `hurdles::Barrier` (a centralized sense-reversing barrier that spins,
/// then `sched_yield`s, and never parks), cloned per thread.
pub struct Hurdles(hurdles::Barrier);

impl Kind for Hurdles {
    type Local = hurdles::Barrier;
    fn new(n: usize) -> Self {
        Hurdles(hurdles::Barrier::new(n))
    }
    fn locals(&self, n: usize) -> Vec<hurdles::Barrier> {
        (0..n).map(|_| self.0.clone()).collect()
    }
    #[inline]
    fn wait(&self, local: &mut hurdles::Barrier) {
        local.wait();
    }
}

/// Cores available to this process, read once (`available_parallelism`
/// reads cgroup files: far too slow for a wait path).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// This thread's on-CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`), if readable.
pub fn thread_cpu_ns() -> Option<u64> {
    // SAFETY: timespec is plain data; zeroed is a valid value.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The result of one run of a pool.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Episodes run.
    pub episodes: u64,
    /// Wall time of thread 0's loop.
    pub elapsed: Duration,
    /// On-CPU time of all threads during their loops, if readable.
    pub cpu_ns: Option<u64>,
}

impl Sample {
    /// Wall ns per episode.
    pub fn ns(&self) -> f64 {
        self.elapsed.as_nanos() as f64 / self.episodes.max(1) as f64
    }
    /// CPU ns (all threads together) per episode.
    pub fn cpu(&self) -> Option<f64> {
        self.cpu_ns.map(|c| c as f64 / self.episodes.max(1) as f64)
    }
}

struct Shared {
    ctl: std::sync::Barrier,
    exit: AtomicBool,
    /// Every thread stops once it has completed this many episodes.
    stop_at: AtomicU64,
    /// Set by the pool's owner once the time budget (or cap) has passed;
    /// thread 0 then moves `stop_at` down. A flag rather than a clock read
    /// per episode: the clock would cost the fast barriers ~25 ns per
    /// episode, and checking it only every k episodes overshoots by minutes
    /// when a spin barrier's episodes collapse from ns to ms after the first
    /// few.
    time_up: AtomicBool,
    /// Set by thread 0 when its loop has ended, so that a run of a fixed
    /// number of episodes returns as soon as it is done (no polling).
    finished: std::sync::Mutex<bool>,
    finished_cv: std::sync::Condvar,
    elapsed_ns: AtomicU64,
    episodes: AtomicU64,
    cpu_ns: AtomicU64,
    cpu_ok: AtomicBool,
}

/// How long one run of a pool lasts.
#[derive(Clone, Copy, Debug)]
pub enum How {
    /// Episodes for about this long (at least one).
    For(Duration),
    /// Exactly `count` episodes, unless that takes longer than `cap`: then
    /// the run ends early (`Sample::episodes < count`).
    Episodes { count: u64, cap: Duration },
}

impl How {
    /// The warm-up before a measurement of this kind: a fifth of it.
    pub fn warm_up(self) -> How {
        match self {
            How::For(d) => How::For(d / 5),
            How::Episodes { count, cap } => How::Episodes {
                count: (count / 5).max(1),
                cap: cap / 5,
            },
        }
    }

    /// The same run with a budget (or cap) divided by `k`.
    pub fn shorter(self, k: u32) -> How {
        match self {
            How::For(d) => How::For(d / k),
            How::Episodes { count, cap } => How::Episodes {
                count,
                cap: cap / k,
            },
        }
    }
}

/// One participant of a [`Pool`], handed to the thread that runs it.
pub struct Runner {
    rank: usize,
    shared: Arc<Shared>,
}

impl Runner {
    /// This participant's index, `0..n`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Runs the pool's episodes on this thread until the pool is dropped;
    /// `episode` is one arrive-and-wait of the barrier under test.
    pub fn serve(self, episode: impl FnMut()) {
        worker(self.rank, &self.shared, episode);
    }
}

/// `n` persistent threads running episodes of barrier `K` on command, so
/// that spawning is never measured.
pub struct Pool {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Spawns `n` threads sharing a fresh `K::new(n)`.
    pub fn new<K: Kind>(n: usize) -> Pool {
        Pool::custom(n, |runners| {
            let kind = Arc::new(K::new(n));
            kind.locals(n)
                .into_iter()
                .zip(runners)
                .map(|(mut local, runner)| {
                    let kind = kind.clone();
                    std::thread::spawn(move || runner.serve(|| kind.wait(&mut local)))
                })
                .collect()
        })
    }

    /// A pool whose participants `start` sets up: it gets one [`Runner`]
    /// per participant, must have each one [`serve`](Runner::serve) on a
    /// thread of its own, and returns the threads to join when the pool is
    /// dropped. For barriers whose per-thread handles borrow the barrier
    /// (seats) or that make their own threads (`launch`).
    pub fn custom(n: usize, start: impl FnOnce(Vec<Runner>) -> Vec<JoinHandle<()>>) -> Pool {
        let shared = Arc::new(Shared {
            ctl: std::sync::Barrier::new(n + 1),
            exit: AtomicBool::new(false),
            stop_at: AtomicU64::new(u64::MAX),
            time_up: AtomicBool::new(false),
            finished: std::sync::Mutex::new(false),
            finished_cv: std::sync::Condvar::new(),
            elapsed_ns: AtomicU64::new(0),
            episodes: AtomicU64::new(0),
            cpu_ns: AtomicU64::new(0),
            cpu_ok: AtomicBool::new(true),
        });
        let runners = (0..n)
            .map(|rank| Runner {
                rank,
                shared: shared.clone(),
            })
            .collect();
        let handles = start(runners);
        Pool { shared, handles }
    }

    /// A `syncthreads::Team::new(n)`, each thread arriving through its seat
    /// with `Seat::arrive_and_wait`.
    pub fn team(n: usize) -> Pool {
        Pool::seated(syncthreads::Team::new(n))
    }

    /// A `syncthreads::Team` of `n` seats of a chosen shape (`fan_in`, flat
    /// up to `flat` seats; `TeamShape`, with `--features bench`),
    /// arriving as in [`Pool::team`].
    #[cfg(feature = "bench")]
    pub fn team_shaped(n: usize, fan_in: usize, flat: usize) -> Pool {
        Pool::seated(syncthreads::TeamShape::new(fan_in, flat).team(n))
    }

    /// The threads of `team`'s seats, each arriving through its seat.
    fn seated(team: syncthreads::Team) -> Pool {
        let n = team.seat_count();
        Pool::custom(n, |runners| {
            let team = Arc::new(team);
            runners
                .into_iter()
                .map(|r| {
                    let team = team.clone();
                    std::thread::spawn(move || {
                        let seat = team.seat(r.rank());
                        r.serve(|| {
                            seat.arrive_and_wait();
                        });
                    })
                })
                .collect()
        })
    }

    /// A `syncthreads::Team::with_capacity(n, capacity)` (the default shape
    /// for the capacity, `n` seats taking part), each thread arriving
    /// through its seat: what joining costs the common case.
    pub fn team_with_capacity(n: usize, capacity: usize) -> Pool {
        Pool::seated(syncthreads::Team::with_capacity(n, capacity.max(n)))
    }

    /// A `syncthreads::BlockBarrier::new(n)` synced seat-less: each thread
    /// calls `BlockBarrier::sync` on the shared barrier.
    pub fn block_seatless(n: usize) -> Pool {
        let block = Arc::new(syncthreads::BlockBarrier::new(n));
        Pool::custom(n, |runners| {
            runners
                .into_iter()
                .map(|r| {
                    let block = block.clone();
                    std::thread::spawn(move || r.serve(|| block.sync()))
                })
                .collect()
        })
    }

    /// `syncthreads::launch(n, ..)`, each thread of the block syncing with
    /// `Block::sync` (`__syncthreads()`).
    pub fn launched(n: usize) -> Pool {
        Pool::custom(n, |runners| {
            let slots: Vec<std::sync::Mutex<Option<Runner>>> = runners
                .into_iter()
                .map(|r| std::sync::Mutex::new(Some(r)))
                .collect();
            vec![std::thread::spawn(move || {
                syncthreads::launch(n, |block| {
                    let runner = slots[block.thread_rank()]
                        .lock()
                        .unwrap()
                        .take()
                        .expect("one runner per rank");
                    runner.serve(|| block.sync());
                });
            })]
        })
    }

    /// Runs exactly `episodes` episodes.
    pub fn run_episodes(&self, episodes: u64) -> Sample {
        self.run_until(episodes.max(1), None)
    }

    /// Runs episodes for about `budget` (at least one; a barrier whose
    /// episodes take longer than the budget runs one or two).
    pub fn run_for(&self, budget: Duration) -> Sample {
        self.run_until(u64::MAX, Some(budget))
    }

    /// Runs as `how` says.
    pub fn run(&self, how: How) -> Sample {
        match how {
            How::For(budget) => self.run_for(budget),
            How::Episodes { count, cap } => self.run_until(count.max(1), Some(cap)),
        }
    }

    fn run_until(&self, stop_at: u64, budget: Option<Duration>) -> Sample {
        let sh = &*self.shared;
        sh.stop_at.store(stop_at, Ordering::Relaxed);
        sh.time_up.store(false, Ordering::Relaxed);
        sh.cpu_ns.store(0, Ordering::Relaxed);
        *sh.finished.lock().unwrap() = false;
        sh.ctl.wait(); // start (the std barrier orders the stores above)
        let finished = sh.finished.lock().unwrap();
        let finished = match budget {
            Some(budget) => {
                sh.finished_cv
                    .wait_timeout_while(finished, budget, |f| !*f)
                    .unwrap()
                    .0
            }
            None => sh.finished_cv.wait_while(finished, |f| !*f).unwrap(),
        };
        if !*finished {
            sh.time_up.store(true, Ordering::Relaxed);
        }
        drop(finished);
        sh.ctl.wait(); // end
        Sample {
            episodes: sh.episodes.load(Ordering::Relaxed),
            elapsed: Duration::from_nanos(sh.elapsed_ns.load(Ordering::Relaxed)),
            cpu_ns: sh
                .cpu_ok
                .load(Ordering::Relaxed)
                .then(|| sh.cpu_ns.load(Ordering::Relaxed)),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.exit.store(true, Ordering::Relaxed);
        self.shared.ctl.wait();
        for h in self.handles.drain(..) {
            h.join().expect("bench worker panicked");
        }
    }
}

fn worker(i: usize, sh: &Shared, mut episode: impl FnMut()) {
    if pinning() {
        pin_to_allowed(i);
    }
    loop {
        sh.ctl.wait();
        if sh.exit.load(Ordering::Relaxed) {
            return;
        }
        let mut timed = i == 0;
        let cpu0 = thread_cpu_ns();
        let t0 = Instant::now();
        let mut done = 0u64;
        loop {
            episode();
            done += 1;
            if timed && sh.time_up.load(Ordering::Relaxed) {
                // Every other thread has completed `done - 1` or `done`
                // episodes, and reads this after episode `done + 1`, which
                // our next arrival (ordered after this store) completes.
                // Only thread 0 writes `stop_at` during a run: it only
                // ever moves it down, so nobody has already passed it.
                if done + 1 < sh.stop_at.load(Ordering::Relaxed) {
                    sh.stop_at.store(done + 1, Ordering::Release);
                }
                timed = false;
            }
            if done == sh.stop_at.load(Ordering::Acquire) {
                break;
            }
        }
        if i == 0 {
            sh.elapsed_ns
                .store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            sh.episodes.store(done, Ordering::Relaxed);
        }
        match (cpu0, thread_cpu_ns()) {
            (Some(a), Some(b)) => {
                sh.cpu_ns.fetch_add(b.saturating_sub(a), Ordering::Relaxed);
            }
            _ => sh.cpu_ok.store(false, Ordering::Relaxed),
        }
        if i == 0 {
            *sh.finished.lock().unwrap() = true;
            sh.finished_cv.notify_one();
        }
        sh.ctl.wait();
    }
}

// ---- pinning ------------------------------------------------------------

static PINNING: AtomicBool = AtomicBool::new(false);

/// Whether pool participants pin themselves (participant i to the i-th CPU
/// of the process's allowed set, modulo its size). Off by default.
pub fn set_pinning(on: bool) {
    allowed_cpus();
    PINNING.store(on, Ordering::Relaxed);
}

/// See [`set_pinning`].
pub fn pinning() -> bool {
    PINNING.load(Ordering::Relaxed)
}

/// The CPUs this process may run on, read once (before any participant
/// pins itself: a pinned thread's own set is one CPU).
pub fn allowed_cpus() -> &'static [usize] {
    static CPUS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    CPUS.get_or_init(current_affinity)
}

/// The calling thread's allowed CPUs, read now.
pub fn current_affinity() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0
    // is the calling thread.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(
        rc,
        0,
        "sched_getaffinity failed: {}",
        std::io::Error::last_os_error()
    );
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` < CPU_SETSIZE, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Sets the calling thread's (or, from the main thread before any other is
/// spawned, the process's) affinity to exactly `cpus`.
pub fn set_affinity(cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        assert!(cpu < libc::CPU_SETSIZE as usize, "cpu {cpu} out of range");
        // SAFETY: `cpu` < CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity({cpus:?}) failed: {}",
        std::io::Error::last_os_error()
    );
}

/// Pins the calling thread to the `i`-th allowed CPU (modulo their number).
pub fn pin_to_allowed(i: usize) {
    let cpus = allowed_cpus();
    set_affinity(&[cpus[i % cpus.len()]]);
}

/// The median of `v` (sorted in place); NaN for an empty slice.
pub fn median(v: &mut [f64]) -> f64 {
    percentile(v, 50.0)
}

/// The `p`-th percentile of `v` (nearest rank, sorted in place).
pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// The criterion settings of the multi-threaded benches: few samples of about
/// a second each, so `cargo bench` stays within minutes on 2 cores (each
/// sample already averages thousands of episodes).
pub fn multi_thread_config() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1))
}
