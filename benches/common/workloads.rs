//! The non-episode workloads: fuzzy barrier, wake latency after parking,
//! double-buffer pipeline, single-thread costs, and calibrated busy work.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

// ---- busy work ----------------------------------------------------------

/// Iterations of [`spin_work`]'s loop per µs, measured once (median of 7).
pub fn work_per_us() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        let mut rates: Vec<f64> = (0..7)
            .map(|_| {
                let iters = 200_000;
                let t = Instant::now();
                spin_work(iters);
                iters as f64 / (t.elapsed().as_nanos().max(1) as f64 / 1000.0)
            })
            .collect();
        super::median(&mut rates)
    })
}

/// A dependent chain of integer ops: real work that a preempted thread does
/// not get done (unlike a busy wait on the clock).
#[inline(never)]
pub fn spin_work(iters: u64) -> u64 {
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..iters {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    }
    black_box(x)
}

/// Busy work of about `ns` nanoseconds.
#[inline]
pub fn work_ns(ns: u64) {
    spin_work((ns as f64 * work_per_us() / 1000.0) as u64);
}

// ---- fuzzy barrier --------------------------------------------------------

/// The fuzzy-barrier schedule: in phase p thread `p % n` does `slow_ns` of
/// dependent work, the others `fast_ns`; every thread also has `indep_ns` of
/// work that does not depend on the phase.
#[derive(Clone, Copy, Debug)]
pub struct Fuzzy {
    pub slow_ns: u64,
    pub fast_ns: u64,
    pub indep_ns: u64,
}

/// How the threads synchronise each phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuzzyMode {
    /// barrier: dependent + independent work, then `arrive_and_wait`.
    BarrierJoined,
    /// barrier: dependent work, `arrive`, independent work, `wait`.
    BarrierSplit,
    /// std::sync::Barrier: dependent + independent work, then `wait`.
    StdJoined,
}

impl Fuzzy {
    /// The figure: one 10 µs-slow thread per phase, ~1 µs for the
    /// others, and 9 µs (the imbalance) of independent work.
    pub const DEFAULT: Fuzzy = Fuzzy {
        slow_ns: 10_000,
        fast_ns: 1_000,
        indep_ns: 9_000,
    };

    /// The best any barrier could do per phase (ns): the slow thread's
    /// dependent work, a fast thread's whole work, and the mean work per
    /// thread per phase are each a lower bound.
    pub fn ideal_ns(&self, n: usize) -> f64 {
        let mean =
            (self.slow_ns + (n as u64 - 1) * self.fast_ns) as f64 / n as f64 + self.indep_ns as f64;
        mean.max(self.slow_ns as f64)
            .max((self.fast_ns + self.indep_ns) as f64)
    }

    /// What a barrier with no split and no overhead takes per phase (ns).
    pub fn joined_ns(&self) -> f64 {
        (self.slow_ns + self.indep_ns) as f64
    }

    /// Runs `phases` phases on `n` threads; returns wall time per phase
    /// (thread 0's loop, after a common start).
    pub fn run(&self, n: usize, phases: u64, mode: FuzzyMode) -> Duration {
        work_per_us();
        let bar = syncthreads::Barrier::new(n);
        let sb = std::sync::Barrier::new(n);
        let start = std::sync::Barrier::new(n);
        let elapsed = AtomicU64::new(0);
        std::thread::scope(|s| {
            for i in 0..n {
                let (bar, sb, start, elapsed) = (&bar, &sb, &start, &elapsed);
                s.spawn(move || {
                    start.wait();
                    let t0 = Instant::now();
                    for p in 0..phases {
                        let dep = if p % n as u64 == i as u64 {
                            self.slow_ns
                        } else {
                            self.fast_ns
                        };
                        work_ns(dep);
                        match mode {
                            FuzzyMode::BarrierSplit => {
                                let token = bar.arrive();
                                work_ns(self.indep_ns);
                                bar.wait(token);
                            }
                            FuzzyMode::BarrierJoined => {
                                work_ns(self.indep_ns);
                                bar.arrive_and_wait();
                            }
                            FuzzyMode::StdJoined => {
                                work_ns(self.indep_ns);
                                sb.wait();
                            }
                        }
                    }
                    if i == 0 {
                        elapsed.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                });
            }
        });
        Duration::from_nanos(elapsed.load(Ordering::Relaxed) / phases.max(1))
    }
}

/// Share of the imbalance the split hides: 1.0 means the split reaches the
/// ideal, 0.0 that it is no better than `arrive_and_wait`.
pub fn hidden_share(joined_ns: f64, split_ns: f64, ideal_ns: f64) -> f64 {
    (joined_ns - split_ns) / (joined_ns - ideal_ns)
}

// ---- wake latency ---------------------------------------------------------

/// Which barrier the wake-latency probe parks on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeKind {
    Barrier,
    Std,
}

/// `waiters` threads arrive and wait; the completer sleeps `sleep` (so that
/// they are parked), reads the clock and arrives. Each waiter reads the clock
/// when its wait returns. Returns the `samples * waiters` latencies in ns
/// (samples where a waiter was late and did not wait at all are dropped).
pub fn wake_latency(kind: WakeKind, waiters: usize, samples: usize, sleep: Duration) -> Vec<f64> {
    let n = waiters + 1;
    let bar = syncthreads::Barrier::new(n);
    let sb = std::sync::Barrier::new(n);
    let base = Instant::now();
    let stamp = AtomicU64::new(0);
    let out = std::sync::Mutex::new(Vec::with_capacity(samples * waiters));
    std::thread::scope(|s| {
        for _ in 0..waiters {
            let (bar, sb, stamp, out) = (&bar, &sb, &stamp, &out);
            s.spawn(move || {
                let mut mine = Vec::with_capacity(samples);
                for _ in 0..samples {
                    let waited = match kind {
                        WakeKind::Barrier => {
                            let token = bar.arrive();
                            let waited = !bar.try_wait(&token);
                            bar.wait(token);
                            waited
                        }
                        WakeKind::Std => !sb.wait().is_leader(),
                    };
                    let woke = base.elapsed().as_nanos() as u64;
                    // Relaxed: the barrier orders the completer's store before our wake.
                    let at = stamp.load(Ordering::Relaxed);
                    if waited && woke >= at {
                        mine.push((woke - at) as f64);
                    }
                }
                out.lock().unwrap().extend(mine);
            });
        }
        for _ in 0..samples {
            std::thread::sleep(sleep);
            stamp.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
            match kind {
                WakeKind::Barrier => bar.wait(bar.arrive()),
                WakeKind::Std => {
                    sb.wait();
                }
            }
        }
    });
    out.into_inner().unwrap()
}

// ---- pipeline ---------------------------------------------------------------

/// Words per item of the double-buffer pipeline (2 KiB).
pub const ITEM_WORDS: usize = 256;

/// How the producer and the consumer hand the two buffers over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeKind {
    /// barrier `full[2]` / `empty[2]` (expected 1 each) with parity waits:
    /// the producer runs up to two items ahead.
    BarrierParity,
    /// Lockstep with `std::sync::Barrier(2)`: the producer fills one buffer
    /// while the consumer drains the other, then both `wait`.
    StdLockstep,
    /// The same lockstep with `syncthreads::Barrier::arrive_and_wait`.
    BarrierLockstep,
}

/// Moves `items` items of [`ITEM_WORDS`] words from a producer to a consumer
/// through two buffers; returns the producer's elapsed time until the
/// consumer is done (every word is checked).
pub fn pipeline(kind: PipeKind, items: u64) -> Duration {
    let bufs: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..ITEM_WORDS).map(|_| AtomicU64::new(0)).collect());
    let full = [syncthreads::Barrier::new(1), syncthreads::Barrier::new(1)];
    let empty = [syncthreads::Barrier::new(1), syncthreads::Barrier::new(1)];
    let lock_std = std::sync::Barrier::new(2);
    let lock_mb = syncthreads::Barrier::new(2);
    let start = std::sync::Barrier::new(2);
    let sync = || match kind {
        PipeKind::StdLockstep => {
            lock_std.wait();
        }
        _ => {
            lock_mb.arrive_and_wait();
        }
    };
    let fill = |i: u64| {
        for (j, w) in bufs[(i & 1) as usize].iter().enumerate() {
            // Relaxed: the barrier hands the buffer over.
            w.store(
                i.wrapping_mul(ITEM_WORDS as u64) + j as u64,
                Ordering::Relaxed,
            );
        }
    };
    let drain = |i: u64| {
        let mut sum = 0u64;
        for (j, w) in bufs[(i & 1) as usize].iter().enumerate() {
            // Relaxed: the barrier hands the buffer over.
            let v = w.load(Ordering::Relaxed);
            assert_eq!(
                v,
                i.wrapping_mul(ITEM_WORDS as u64) + j as u64,
                "pipeline: torn item"
            );
            sum = sum.wrapping_add(v);
        }
        black_box(sum);
    };
    std::thread::scope(|s| {
        let consumer = s.spawn(|| {
            start.wait();
            if kind == PipeKind::BarrierParity {
                for i in 0..items {
                    let slot = (i & 1) as usize;
                    // Item i is phase i / 2 of full[slot].
                    full[slot].wait_parity((i >> 1) & 1 == 1);
                    drain(i);
                    drop(empty[slot].arrive());
                }
            } else {
                // Step s drains item s - 1 while the producer fills item s.
                for step in 0..=items {
                    if step >= 1 {
                        drain(step - 1);
                    }
                    sync();
                }
            }
        });
        start.wait();
        let t0 = Instant::now();
        if kind == PipeKind::BarrierParity {
            for i in 0..items {
                let slot = (i & 1) as usize;
                if i >= 2 {
                    // The consumer freed item i - 2 in phase i / 2 - 1 of empty[slot].
                    empty[slot].wait_parity(((i >> 1) - 1) & 1 == 1);
                }
                fill(i);
                drop(full[slot].arrive());
            }
        } else {
            for step in 0..=items {
                if step < items {
                    fill(step);
                }
                sync();
            }
        }
        consumer.join().expect("pipeline consumer panicked");
        t0.elapsed()
    })
}

// ---- single-thread costs ----------------------------------------------------

/// The single-thread operations measured in ns per call.
pub const SINGLE_OPS: [&str; 7] = [
    "Barrier new(1) arrive_and_wait",
    "Barrier arrive (non-completing)",
    "Barrier try_wait_parity",
    "Barrier expect_tx + complete_tx",
    "Barrier arrive + wait (new(1))",
    "std Barrier new(1) wait",
    "hurdles new(1) wait",
];

/// Runs single-thread operation `op` (index into [`SINGLE_OPS`]) `iters`
/// times; returns the elapsed time.
pub fn single(op: usize, iters: u64) -> Duration {
    match op {
        0 => {
            let b = syncthreads::Barrier::new(1);
            let t = Instant::now();
            for _ in 0..iters {
                black_box(black_box(&b).arrive_and_wait());
            }
            t.elapsed()
        }
        1 => {
            // A phase of MAX arrivals, of which we make MAX - 1; a fresh barrier
            // after that (a store, amortised over a million arrivals).
            let mut b = syncthreads::Barrier::new(syncthreads::Barrier::MAX);
            let mut left = syncthreads::Barrier::MAX - 1;
            let t = Instant::now();
            for _ in 0..iters {
                if left == 0 {
                    b = syncthreads::Barrier::new(syncthreads::Barrier::MAX);
                    left = syncthreads::Barrier::MAX - 1;
                }
                left -= 1;
                drop(black_box(black_box(&b).arrive()));
            }
            t.elapsed()
        }
        2 => {
            let b = syncthreads::Barrier::new(2);
            let t = Instant::now();
            for _ in 0..iters {
                black_box(black_box(&b).try_wait_parity(black_box(false)));
            }
            t.elapsed()
        }
        3 => {
            let b = syncthreads::Barrier::new(1);
            let t = Instant::now();
            for _ in 0..iters {
                let b = black_box(&b);
                b.expect_tx(64);
                b.complete_tx(64);
            }
            t.elapsed()
        }
        4 => {
            let b = syncthreads::Barrier::new(1);
            let t = Instant::now();
            for _ in 0..iters {
                let b = black_box(&b);
                b.wait(b.arrive());
            }
            t.elapsed()
        }
        5 => {
            let b = std::sync::Barrier::new(1);
            let t = Instant::now();
            for _ in 0..iters {
                black_box(black_box(&b).wait());
            }
            t.elapsed()
        }
        6 => {
            let mut b = hurdles::Barrier::new(1);
            let t = Instant::now();
            for _ in 0..iters {
                black_box(black_box(&mut b).wait());
            }
            t.elapsed()
        }
        _ => panic!("no single-thread op {op}"),
    }
}
