//! The waiting policy: spin briefly, then park on the barrier's address.
//!
//! 1. **Spin** (only while threads <= cores): re-read the word for at most
//!    [`SPIN_NANOS`], load-only, with pause hints between loads. A phase on
//!    idle cores completes within a few microseconds at most, while parking
//!    and being woken costs several. Between loads a waiter pauses a little
//!    longer the more arrivals the phase still owes ([`PAUSES_PER_PENDING`]),
//!    so that it does not pull the cache line away from the arriving threads
//!    (only after a load that found the word changed: a `Team`'s word sees
//!    one combined arrival per phase, and there the pause only delays).
//!    With more threads than cores spinning would only keep the thread we
//!    wait for off its core, so this stage is skipped.
//! 2. **Yield**: give the core away for at most [`YIELD_NANOS`], re-reading
//!    the word after each yield. This is what makes oversubscription cheap,
//!    and it also rescues participants preempted by foreign load. Yielding
//!    only pays while the participants are (nearly) the only runnable
//!    threads: once one yield takes longer than [`SLOW_YIELD_NANOS`] (the
//!    scheduler gave a whole time slice to someone else), every waiter of
//!    the process skips this stage for the next [`YIELD_OFF_NANOS`].
//! 3. **Park**: set `PARKED` and sleep in `parking_lot_core` keyed by the
//!    barrier's address; whoever starts the next phase (or poisons the
//!    barrier) clears `PARKED` in the same RMW and wakes every parked thread.
//!
//! Every number here was measured, not guessed (benches/RESULTS.md and the
//! notes beside each constant).
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

/// How long a waiter spins before it yields, when every participant can
/// have a core. Measured on 16 cores with spins of 5, 10 and 20 µs, each
/// followed by the yield stage (benches/RESULTS.md): 10 µs catches a phase
/// whose slowest thread is 10 µs late (the fuzzy barrier: 87–101% of the
/// imbalance hidden, against 65% with 5 µs), while with 16 threads beside 2
/// busy foreign threads the spin costs 15 µs per episode (11 µs with 5 µs,
/// 26 µs with 20 µs, 44 µs with 20 µs and no yield stage).
pub(crate) const SPIN_NANOS: u64 = 10_000;

/// How long a waiter yields before it parks. Measured with 4 and 8 threads
/// on 2 cores and 32 and 64 on 16 (benches/RESULTS.md): parking at once
/// costs 7–100 µs per episode; yielding for up to 200 µs costs 1.3–11 µs and
/// less CPU per episode than `std::sync::Barrier`. A 50 µs budget was too
/// short for 64 threads: waiters began to park, episodes grew past the
/// budget, and it ended at 117 µs and 1.6 ms of CPU per episode.
pub(crate) const YIELD_NANOS: u64 = 200_000;

/// A yield slower than this means another thread took a whole time slice.
/// Measured on Linux 6.18 (EEVDF) with two busy non-participant threads: a
/// yield then costs ~3 ms, and an oversubscribed episode 2–5 ms against
/// 20–140 µs when parking at once; unloaded, one yield takes 1–20 µs.
pub(crate) const SLOW_YIELD_NANOS: u64 = 200_000;

/// How long yielding stays off after a slow yield. With 20 ms it was retried
/// too often under load (0.1–1.3 ms per episode); with 1 s the retry costs
/// one slow yield per second per waiting thread.
pub(crate) const YIELD_OFF_NANOS: u64 = 1_000_000_000;

/// Extra pause hints per still-owed arrival between two loads of the word,
/// capped by [`MAX_EXTRA_PAUSES`]. 8 cut the 16-thread episode on 16 cores by
/// about 15% (4.1 → 3.4 µs) and the 8-thread one by about 10%; the 2-thread
/// episode is unaffected (one arrival owed means no extra pause).
const PAUSES_PER_PENDING: u32 = 8;
const MAX_EXTRA_PAUSES: u32 = 512;

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

/// Cores available to this process (its affinity mask), read once.
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
    // A deadline already passed (a zero timeout) checks once, as above.
    if sync::MAY_SPIN && deadline.map_or(true, |d| sync::now() < d) {
        if s.expected() <= cores() {
            if let Some(done) = spin(state, deadline, &check) {
                return Some(done);
            }
        }
        if let Some(done) = yield_cpu(state, deadline, &check) {
            return Some(done);
        }
    }
    park_until(state, key, deadline, check)
}

/// Stage 1: load-only spinning, for about [`SPIN_NANOS`].
fn spin<T>(
    state: &State,
    deadline: Option<Instant>,
    check: &impl Fn(Snapshot) -> Option<T>,
) -> Option<T> {
    if deadline.is_some_and(|d| d < sync::now() + Duration::from_nanos(SPIN_NANOS)) {
        return None; // a short timed wait goes straight to the deadline-aware park
    }
    let budget = spin_iterations();
    let mut spent = 0;
    let mut seen = None;
    while spent < budget {
        sync::spin_hint();
        // Acquire: as in `wait_until`.
        let s = state.load(Ordering::Acquire);
        if let Some(done) = check(s) {
            return Some(done);
        }
        // The extra pauses make room for arrivals landing on this word, so
        // only a word seen changing gets them: a `Team`'s word is updated
        // about once per phase (its arrivals land in its tree), and pausing
        // there would only delay the waiter (team.rs).
        let extra = if seen.map_or(true, |seen| seen == s) {
            0
        } else {
            s.pending()
                .saturating_sub(1)
                .saturating_mul(PAUSES_PER_PENDING)
                .min(MAX_EXTRA_PAUSES)
        };
        seen = Some(s);
        for _ in 0..extra {
            sync::spin_hint();
        }
        spent += 1 + extra;
    }
    None
}

/// Stage 2: yield the core for about [`YIELD_NANOS`],
/// unless a recent yield showed that other work competes for the cores.
fn yield_cpu<T>(
    state: &State,
    deadline: Option<Instant>,
    check: &impl Fn(Snapshot) -> Option<T>,
) -> Option<T> {
    /// Yielding is off until this many nanoseconds after `epoch()`.
    static YIELD_OFF_UNTIL: sync::HintU64 = sync::HintU64::new(0);
    fn epoch() -> Instant {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        *EPOCH.get_or_init(Instant::now)
    }
    let since_epoch = |t: Instant| t.saturating_duration_since(epoch()).as_nanos() as u64;

    let mut before = sync::now();
    // Relaxed: a hint; a stale value costs one yield too many or too few.
    if since_epoch(before) < YIELD_OFF_UNTIL.load(Ordering::Relaxed) {
        return None;
    }
    let until = before + Duration::from_nanos(YIELD_NANOS);
    let until = deadline.map_or(until, |d| d.min(until));
    loop {
        sync::yield_now();
        // Acquire: as in `wait_until`.
        if let Some(done) = check(state.load(Ordering::Acquire)) {
            return Some(done);
        }
        let after = sync::now();
        if after.saturating_duration_since(before) > Duration::from_nanos(SLOW_YIELD_NANOS) {
            // Relaxed: a hint, as above.
            YIELD_OFF_UNTIL.store(since_epoch(after) + YIELD_OFF_NANOS, Ordering::Relaxed);
            return None;
        }
        if after >= until {
            return None;
        }
        before = after;
    }
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
