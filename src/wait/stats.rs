//! Wait-stage counters for the benches (feature `bench`): how many blocking
//! waits ended in each stage, and how long they spent in each. Process-wide
//! sums in plain std atomics (`Relaxed`: statistics, ordering nothing); off
//! in normal builds, where [`Trace`] is an empty struct.

// Relaxed everywhere below: the counters and the switch hand no data over
// and guard no decision a result depends on. A wait that reads a stale
// switch is counted or not; `take_stats`'s swaps are RMWs, so each count
// lands in exactly one sum (this one or the next), whatever the ordering.
#[cfg(feature = "bench")]
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
#[cfg(feature = "bench")]
use std::time::Instant;

/// The stages of a wait.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Spin,
    Yield,
    Park,
}

/// What the waits of the process did since the last [`take_stats`]: only
/// waits that did not end at their first load are counted.
#[cfg(feature = "bench")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitStats {
    /// Blocking waits counted.
    pub waits: u64,
    /// Waits that ended while spinning.
    pub ended_spin: u64,
    /// Waits that ended while yielding.
    pub ended_yield: u64,
    /// Waits that ended after parking (or on their deadline).
    pub ended_park: u64,
    /// Nanoseconds spent spinning, all waits together.
    pub spin_ns: u64,
    /// Nanoseconds spent yielding.
    pub yield_ns: u64,
    /// Nanoseconds spent in the park stage.
    pub park_ns: u64,
    /// Yields slower than the policy's slow-yield threshold.
    pub slow_yields: u64,
}

#[cfg(feature = "bench")]
static COUNTERS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

/// Whether waits are counted: off until [`set_stats`], so that a `bench`
/// build measures the same waits as a normal one (counting costs two clock
/// readings and shared RMWs per wait).
#[cfg(feature = "bench")]
static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns the counters on or off for every later wait of the process.
#[cfg(feature = "bench")]
pub fn set_stats(on: bool) {
    ENABLED.store(on, Relaxed);
}

/// Sums of every wait since the last call, then resets them.
#[cfg(feature = "bench")]
pub fn take_stats() -> WaitStats {
    let c: Vec<u64> = COUNTERS.iter().map(|c| c.swap(0, Relaxed)).collect();
    WaitStats {
        waits: c[0],
        ended_spin: c[1],
        ended_yield: c[2],
        ended_park: c[3],
        spin_ns: c[4],
        yield_ns: c[5],
        park_ns: c[6],
        slow_yields: c[7],
    }
}

/// One wait's trace: the time each stage began.
pub(crate) struct Trace {
    #[cfg(feature = "bench")]
    on: bool,
    #[cfg(feature = "bench")]
    marks: [Option<Instant>; 3],
}

impl Trace {
    #[inline]
    pub(crate) fn new() -> Trace {
        Trace {
            #[cfg(feature = "bench")]
            on: ENABLED.load(Relaxed),
            #[cfg(feature = "bench")]
            marks: [None; 3],
        }
    }

    /// A stage begins now.
    #[inline]
    pub(crate) fn enter(&mut self, _stage: Stage) {
        #[cfg(feature = "bench")]
        if self.on {
            self.marks[_stage as usize] = Some(Instant::now());
        }
    }

    /// A yield was slow.
    #[inline]
    pub(crate) fn slow_yield() {
        #[cfg(feature = "bench")]
        if ENABLED.load(Relaxed) {
            COUNTERS[7].fetch_add(1, Relaxed);
        }
    }

    /// The wait ended in `stage`.
    #[inline]
    pub(crate) fn end(&self, _stage: Stage) {
        #[cfg(feature = "bench")]
        if self.on {
            let now = Instant::now();
            COUNTERS[0].fetch_add(1, Relaxed);
            COUNTERS[1 + _stage as usize].fetch_add(1, Relaxed);
            // Each stage lasted until the next one that began, or until now.
            for stage in 0..3 {
                if let Some(start) = self.marks[stage] {
                    let end = self.marks[stage + 1..]
                        .iter()
                        .flatten()
                        .next()
                        .copied()
                        .unwrap_or(now);
                    let ns = end.saturating_duration_since(start).as_nanos() as u64;
                    COUNTERS[4 + stage].fetch_add(ns, Relaxed);
                }
            }
        }
    }
}
