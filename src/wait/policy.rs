//! What the wait policy remembers between waits, and the bench-only switch
//! to spinning (feature `bench`).
//!
//! Two hints, neither part of any barrier's synchronization (a stale or lost
//! update costs a little speed, never a wake-up):
//!
//! - **Spin budget, per thread.** A spin that ended with the phase complete
//!   doubles the thread's budget (up to [`SPIN_NANOS`]); a spin that ran out
//!   halves it (down to [`MIN_SPIN_NANOS`]). A thread whose partners are off
//!   their cores (foreign load, a preempted participant) stops paying a whole
//!   budget per phase after a few phases, and gets it back as soon as spins
//!   succeed again. Per thread, so one thread's bad luck does not slow the
//!   others, and no cache line is shared.
//! - **Yield backoff, per process.** A yield slower than
//!   [`SLOW_YIELD_NANOS`] means another process took the core for a time
//!   slice, and then a yield costs milliseconds: yielding is off for a
//!   backoff that starts at [`MIN_YIELD_OFF_NANOS`] and doubles with each
//!   slow probe, up to [`MAX_YIELD_OFF_NANOS`]; the first waiter after the
//!   backoff probes again, and a yield stage without a slow yield resets it.
//!   So foreign load costs at most one slow yield per backoff, and a run
//!   that starts under load gets yielding back within a few milliseconds of
//!   the load ending (a fixed long period, the first release's, trapped
//!   short runs in the slow mode: benches/RESULTS.md, "The wait policy").
//!
//! [`SPIN_NANOS`]: super::SPIN_NANOS
//! [`SLOW_YIELD_NANOS`]: super::SLOW_YIELD_NANOS

use super::SPIN_NANOS;
use crate::sync::{self, Ordering};
use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Instant;

/// The shortest adaptive spin: about two cache-line round trips between two
/// cores, enough for a partner that is running and about to arrive. A
/// higher floor made every phase pay it on a partner that could not run
/// (two participants sharing a CPU, or beside busy foreign processes),
/// while an idle machine gains nothing from it (benches/RESULTS.md, "The
/// wait policy").
pub(crate) const MIN_SPIN_NANOS: u64 = 250;

/// The first yield-off period after a slow yield: a few of the foreign
/// load's scheduler slices, so that a short burst of load costs one slow
/// probe (benches/RESULTS.md, "The wait policy").
pub(crate) const MIN_YIELD_OFF_NANOS: u64 = 4_000_000;

/// The longest yield-off period: under lasting foreign load one slow probe
/// per period, a small share of a waiting thread's time.
pub(crate) const MAX_YIELD_OFF_NANOS: u64 = 128_000_000;

/// Which policy the waits use: the adaptive one, and with the feature
/// `bench` a spin-only one for diagnosis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The default: the hints of this module.
    Adaptive,
    /// Diagnosis only: spin until the wait ends (never yield or park).
    #[cfg(feature = "bench")]
    SpinOnly,
}

#[cfg(feature = "bench")]
static POLICY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets the policy of every later wait of the process (feature `bench`).
#[cfg(feature = "bench")]
pub fn set_policy(p: Policy) {
    // Relaxed: a setting read by later waits; no data rides on it, and a
    // wait that reads the old policy is correct under either.
    POLICY.store(p as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The policy of a wait starting now, with or without a `deadline`.
#[inline]
pub(crate) fn current(deadline: Option<Instant>) -> Policy {
    #[cfg(feature = "bench")]
    {
        // Relaxed: as in `set_policy`.
        // Diagnosis spins are unbounded: not for a timed wait.
        if POLICY.load(std::sync::atomic::Ordering::Relaxed) == Policy::SpinOnly as u8
            && deadline.is_none()
        {
            return Policy::SpinOnly;
        }
    }
    let _ = deadline;
    Policy::Adaptive
}

/// Whether `policy` spins whatever the number of cores.
#[inline]
pub(crate) fn spins_always(policy: Policy) -> bool {
    #[cfg(feature = "bench")]
    if policy == Policy::SpinOnly {
        return true;
    }
    let _ = policy;
    false
}

sync::thread_local! {
    /// This thread's spin budget in spin iterations; 0 until first used.
    static SPIN_BUDGET: Cell<u32> = const { Cell::new(0) };
}

/// Spin iterations that take about `SPIN_NANOS` on this machine, measured
/// once: the cost of a pause instruction varies tenfold across CPUs, so a
/// fixed iteration count would be a guess. One under the model checkers.
pub(crate) fn full_spin() -> u32 {
    if sync::MODEL {
        return 1;
    }
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

fn min_spin() -> u32 {
    (u64::from(full_spin()) * MIN_SPIN_NANOS / SPIN_NANOS).max(1) as u32
}

/// The spin budget (in iterations) of this thread's next spin stage.
pub(crate) fn spin_budget(policy: Policy) -> u32 {
    match policy {
        _ if sync::MODEL => 1,
        #[cfg(feature = "bench")]
        Policy::SpinOnly => u32::MAX,
        _ => SPIN_BUDGET.with(|b| match b.get() {
            0 => full_spin(),
            budget => budget,
        }),
    }
}

/// Tells the hint how this thread's spin stage ended.
pub(crate) fn spin_ended(policy: Policy, budget: u32, succeeded: bool) {
    if sync::MODEL || !adapts(policy) {
        return;
    }
    let next = if succeeded {
        budget.saturating_mul(2).min(full_spin())
    } else {
        (budget / 2).max(min_spin())
    };
    SPIN_BUDGET.with(|b| b.set(next));
}

/// Whether `policy` keeps the per-thread spin budget.
fn adapts(policy: Policy) -> bool {
    #[cfg(feature = "bench")]
    if policy == Policy::SpinOnly {
        return false;
    }
    let _ = policy;
    true
}

/// Yielding is off until this many nanoseconds after `epoch()`.
static YIELD_OFF_UNTIL: sync::HintU64 = sync::HintU64::new(0);
/// The current backoff (Adaptive), 0 when the last yield stage was fast.
static YIELD_BACKOFF: sync::HintU64 = sync::HintU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn since_epoch(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_nanos() as u64
}

/// Whether a yield stage may start at `now`.
pub(crate) fn may_yield(policy: Policy, now: Instant) -> bool {
    match policy {
        _ if sync::MODEL => true,
        #[cfg(feature = "bench")]
        Policy::SpinOnly => false,
        // Relaxed: a hint; either answer is correct and no data is read (orderings.md).
        _ => since_epoch(now) >= YIELD_OFF_UNTIL.load(Ordering::Relaxed),
    }
}

/// A yield took longer than `SLOW_YIELD_NANOS`: turn yielding off.
pub(crate) fn slow_yield(now: Instant) {
    // Relaxed (all three): hints, as above; racing slow yields may double
    // the backoff once too few times.
    let off = next_backoff(YIELD_BACKOFF.load(Ordering::Relaxed));
    YIELD_BACKOFF.store(off, Ordering::Relaxed);
    YIELD_OFF_UNTIL.store(since_epoch(now) + off, Ordering::Relaxed);
}

/// A yield stage ended without a slow yield: yielding pays again.
pub(crate) fn fast_yield_stage(policy: Policy) {
    // Relaxed: a hint; load first so that fast stages do not keep writing
    // (and bouncing) the shared line.
    if policy == Policy::Adaptive && YIELD_BACKOFF.load(Ordering::Relaxed) != 0 {
        YIELD_BACKOFF.store(0, Ordering::Relaxed);
    }
}

/// The backoff after a slow yield, given the current one.
fn next_backoff(current: u64) -> u64 {
    current
        .saturating_mul(2)
        .clamp(MIN_YIELD_OFF_NANOS, MAX_YIELD_OFF_NANOS)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn yield_backoff_doubles_from_the_minimum_to_the_maximum() {
        let mut off = 0;
        let mut seen = Vec::new();
        for _ in 0..8 {
            off = next_backoff(off);
            seen.push(off / 1_000_000);
        }
        assert_eq!(seen, [4, 8, 16, 32, 64, 128, 128, 128]);
    }

    #[test]
    fn a_slow_yield_turns_yielding_off_for_the_backoff_only() {
        // The epoch first: a `now` before it would count as the epoch
        // itself, shifting every later instant by the gap (which is long
        // under Miri's clock).
        epoch();
        let now = Instant::now();
        fast_yield_stage(Policy::Adaptive);
        assert!(may_yield(Policy::Adaptive, now));
        slow_yield(now);
        let ms = std::time::Duration::from_millis;
        assert!(!may_yield(Policy::Adaptive, now + ms(1)));
        // After the first backoff a short run gets yielding back.
        assert!(may_yield(Policy::Adaptive, now + ms(5)));
        fast_yield_stage(Policy::Adaptive);
        YIELD_OFF_UNTIL.store(0, Ordering::Relaxed);
    }

    #[test]
    fn spin_budget_halves_on_failure_and_doubles_back_on_success() {
        let full = full_spin();
        let policy = Policy::Adaptive;
        assert_eq!(spin_budget(policy), full);
        for _ in 0..20 {
            spin_ended(policy, spin_budget(policy), false);
        }
        assert_eq!(spin_budget(policy), min_spin());
        assert!(min_spin() < full / 4, "{} vs {full}", min_spin());
        for _ in 0..20 {
            spin_ended(policy, spin_budget(policy), true);
        }
        assert_eq!(spin_budget(policy), full);
    }
}
