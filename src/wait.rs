//! The waiting policy: spin briefly, then park on the barrier's address.
//!
//! A waiter first re-reads the word for at most [`SPIN_NANOS`] (load-only, with
//! a pause hint between loads), because a barrier episode on idle cores is over
//! in well under a microsecond and parking costs a few microseconds each way.
//! It skips the spin when the barrier has more participants than the machine
//! has cores: then the thread it waits for is likely not running, and spinning
//! would only take its core away. After the spin it sets `PARKED` and parks;
//! whoever starts the next phase (or poisons the barrier) clears `PARKED` in
//! the same RMW and wakes every parked thread.
//!
//! No wakeup is lost: the parker's `validate` re-reads the word under the
//! parking lot's bucket lock and sleeps only if `PARKED` is still set and the
//! wait is still unsatisfied; the waker changes the word *before* taking that
//! lock in `unpark_all`. Either the waker's lock comes first, and `validate`
//! (ordered after it by the lock) sees the change, or the parker's comes first,
//! and the waker finds it queued.

use crate::park::{self, Parked};
use crate::state::{Snapshot, State};
use crate::sync::{self, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a waiter spins before it parks. A completed phase usually shows up
/// within a few hundred nanoseconds; parking and being woken costs several
/// microseconds, so spinning a little longer than one wake-up round trip is
/// cheap insurance. Tuned with `benches/` (see `benches/RESULTS.md`).
pub(crate) const SPIN_NANOS: u64 = 20_000;

/// Spin iterations that take about [`SPIN_NANOS`] on this machine, measured
/// once: the cost of a pause instruction varies tenfold across CPUs, so a
/// fixed iteration count would be a guess.
fn spin_iterations() -> u32 {
    static ITERATIONS: OnceLock<u32> = OnceLock::new();
    *ITERATIONS.get_or_init(|| {
        const PROBE: u32 = 1_000;
        let start = Instant::now();
        for _ in 0..PROBE {
            sync::spin_hint();
        }
        let probe_nanos = (start.elapsed().as_nanos() as u64).max(1);
        (SPIN_NANOS * u64::from(PROBE) / probe_nanos).clamp(100, 1_000_000) as u32
    })
}

/// Cores available to this process, read once.
fn cores() -> u32 {
    static CORES: OnceLock<u32> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
}

/// Converts a timeout into a deadline; `None` (no deadline) when `now + d`
/// does not fit in an `Instant`, e.g. for `Duration::MAX`.
pub(crate) fn deadline_after(d: Duration) -> Option<Instant> {
    sync::now().checked_add(d)
}

/// Waits until `check` returns `Some` for the word, or until `deadline`.
///
/// `check` must be pure and must not panic: it also runs under the parking
/// lot's lock. It sees the word as loaded with `Acquire`, except inside the
/// lock (`Relaxed`, used only to decide whether to sleep). Returns `None` once
/// the deadline has passed with `check` still unsatisfied.
pub(crate) fn wait_until<T>(
    state: &State,
    key: usize,
    deadline: Option<Instant>,
    check: impl Fn(Snapshot) -> Option<T>,
) -> Option<T> {
    // Acquire: pairs with the Release RMW that ended the phase (state.rs, point 4).
    let s = state.load(Ordering::Acquire);
    if let Some(done) = check(s) {
        return Some(done);
    }
    if sync::MAY_SPIN && s.expected() <= cores() && deadline.map_or(true, |d| d > sync::now()) {
        for _ in 0..spin_iterations() {
            sync::spin_hint();
            // Acquire: as above.
            if let Some(done) = check(state.load(Ordering::Acquire)) {
                return Some(done);
            }
        }
    }
    park_until(state, key, deadline, check)
}

#[cold]
fn park_until<T>(
    state: &State,
    key: usize,
    deadline: Option<Instant>,
    check: impl Fn(Snapshot) -> Option<T>,
) -> Option<T> {
    loop {
        // Acquire: as in `wait_until`.
        let s = state.load(Ordering::Acquire);
        if let Some(done) = check(s) {
            return Some(done);
        }
        if deadline.is_some_and(|d| sync::now() >= d) {
            return None;
        }
        // Relaxed: PARKED publishes nothing; it only tells the waker to call
        // unpark_all, and the bucket lock orders that against our validate.
        if !s.parked() && state.cas(s, s.with_parked(), Ordering::Relaxed).is_err() {
            continue;
        }
        let mut validate = || {
            // Relaxed: only decides whether to sleep; the lock orders it (module docs).
            let now = state.load(Ordering::Relaxed);
            now.parked() && check(now).is_none()
        };
        // However the park ends (woken, timed out, or the word had already
        // changed), the loop re-reads the word and decides again.
        let _: Parked = park::park(key, &mut validate, deadline);
    }
}
