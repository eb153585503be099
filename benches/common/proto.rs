//! A prototype of `mbarrier::Barrier`'s arrive/wait path with a pluggable
//! wait policy, to compare policies for `src/wait.rs` without touching `src/`.
//!
//! Same shape as the crate: one `AtomicU64` (PARKED bit, phase, pending),
//! arrivals by a CAS loop whose result says who completed, waits that load,
//! maybe spin, maybe yield, then set PARKED and park on the word's address
//! through `parking_lot_core`; the completer clears PARKED in its RMW and
//! calls `unpark_all` if it was set.

use super::Kind;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How a waiter behaves before it parks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `src/wait.rs` before e66e627: spin `spin_ns` if participants <= cores,
    /// otherwise park at once.
    ParkOver { spin_ns: u64 },
    /// Spin `spin_ns` whatever the participant count, then park.
    SpinAlways { spin_ns: u64 },
    /// Participants <= cores: spin `spin_ns`, then park. Oversubscribed:
    /// `yield_now()` (`sched_yield`) for up to `yield_ns`, then park.
    /// `src/wait.rs` since e66e627 is this with 20 µs / 50 µs (plus extra
    /// pauses per owed arrival while spinning, not modelled here).
    YieldOver { spin_ns: u64, yield_ns: u64 },
    /// As `YieldOver`, but a yield that takes longer than `slow_ns` (another
    /// process, not a participant, got the core for a time slice) stops the
    /// yielding and turns it off process-wide for `off_ns`: oversubscribed
    /// waiters then park at once, as `ParkOver`.
    Adaptive {
        spin_ns: u64,
        yield_ns: u64,
        slow_ns: u64,
        off_ns: u64,
    },
    /// Always: spin `spin_ns`, then yield for up to `yield_ns`, then park.
    SpinYield { spin_ns: u64, yield_ns: u64 },
}

impl Policy {
    /// A short label for tables.
    pub fn label(&self) -> String {
        let us = |ns: u64| {
            if ns % 1000 == 0 {
                format!("{}us", ns / 1000)
            } else {
                format!("{ns}ns")
            }
        };
        match *self {
            Policy::ParkOver { spin_ns } => format!("spin {}; over: park", us(spin_ns)),
            Policy::SpinAlways { spin_ns } => format!("spin {} always", us(spin_ns)),
            Policy::YieldOver { spin_ns, yield_ns } => {
                format!("spin {}; over: yield {}", us(spin_ns), us(yield_ns))
            }
            Policy::SpinYield { spin_ns, yield_ns } => {
                format!("spin {} + yield {}", us(spin_ns), us(yield_ns))
            }
            Policy::Adaptive {
                spin_ns,
                yield_ns,
                slow_ns,
                off_ns,
            } => format!(
                "spin {}; over: yield {}, off {} after a yield > {}",
                us(spin_ns),
                us(yield_ns),
                us(off_ns),
                us(slow_ns)
            ),
        }
    }
}

const PARKED: u64 = 1 << 63;
const PHASE_SHIFT: u32 = 32;
const PHASE_MASK: u64 = (1 << 31) - 1;
const PENDING_MASK: u64 = (1 << 32) - 1;

/// `Policy::Adaptive`: yielding is off until this time (ns since [`now_ns`]'s base).
static YIELD_OFF_UNTIL: AtomicU64 = AtomicU64::new(0);

fn now_ns() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The prototype barrier for `n` threads under `policy`.
pub struct Proto {
    word: AtomicU64,
    n: u64,
    policy: Policy,
}

/// Spin-hint iterations per ns on this machine, measured once (as `src/wait.rs` does).
fn hints_per_ns() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| {
        const PROBE: u32 = 10_000;
        let start = Instant::now();
        for _ in 0..PROBE {
            std::hint::spin_loop();
        }
        PROBE as f64 / (start.elapsed().as_nanos().max(1) as f64)
    })
}

impl Proto {
    /// A barrier for `n` threads with `policy`.
    pub fn with_policy(n: usize, policy: Policy) -> Proto {
        hints_per_ns();
        Proto {
            word: AtomicU64::new(n as u64),
            n: n as u64,
            policy,
        }
    }

    fn key(&self) -> usize {
        &self.word as *const AtomicU64 as usize
    }

    /// Arrives; returns the phase arrived in.
    #[inline]
    pub fn arrive(&self) -> u64 {
        // Relaxed: seeds the CAS loop.
        let mut s = self.word.load(Ordering::Relaxed);
        loop {
            let phase = (s >> PHASE_SHIFT) & PHASE_MASK;
            let pending = s & PENDING_MASK;
            let (new, completes) = if pending == 1 {
                ((((phase + 1) & PHASE_MASK) << PHASE_SHIFT) | self.n, true)
            } else {
                (s - 1, false)
            };
            // AcqRel: as the crate (Release for the arrival, Acquire for the completer).
            match self
                .word
                .compare_exchange_weak(s, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    if completes && s & PARKED != 0 {
                        // SAFETY: waking an address runs no callback and is always sound.
                        unsafe {
                            parking_lot_core::unpark_all(
                                self.key(),
                                parking_lot_core::DEFAULT_UNPARK_TOKEN,
                            );
                        }
                    }
                    return if completes { u64::MAX } else { phase };
                }
                Err(found) => s = found,
            }
        }
    }

    #[inline]
    fn done(&self, phase: u64) -> bool {
        // Acquire: pairs with the completer's Release RMW.
        (self.word.load(Ordering::Acquire) >> PHASE_SHIFT) & PHASE_MASK != phase
    }

    /// Waits for `phase` (as returned by `arrive`; `u64::MAX`: completed) to end.
    #[inline]
    pub fn wait(&self, phase: u64) {
        if phase == u64::MAX || self.done(phase) {
            return;
        }
        let over = self.n as usize > super::cores();
        let (spin_ns, yield_ns) = match self.policy {
            Policy::ParkOver { spin_ns } => (if over { 0 } else { spin_ns }, 0),
            Policy::SpinAlways { spin_ns } => (spin_ns, 0),
            Policy::YieldOver { spin_ns, yield_ns } => {
                if over {
                    (0, yield_ns)
                } else {
                    (spin_ns, 0)
                }
            }
            Policy::SpinYield { spin_ns, yield_ns } => (spin_ns, yield_ns),
            Policy::Adaptive {
                spin_ns, yield_ns, ..
            } => {
                if !over {
                    (spin_ns, 0)
                } else if now_ns() < YIELD_OFF_UNTIL.load(Ordering::Relaxed) {
                    (0, 0)
                } else {
                    (0, yield_ns)
                }
            }
        };
        let slow = match self.policy {
            Policy::Adaptive {
                slow_ns, off_ns, ..
            } => Some((slow_ns, off_ns)),
            _ => None,
        };
        let spins = (spin_ns as f64 * hints_per_ns()) as u64;
        for _ in 0..spins {
            std::hint::spin_loop();
            if self.done(phase) {
                return;
            }
        }
        if yield_ns > 0 {
            let mut before = Instant::now();
            let until = before + Duration::from_nanos(yield_ns);
            loop {
                std::thread::yield_now();
                if self.done(phase) {
                    return;
                }
                let now = Instant::now();
                if let Some((slow_ns, off_ns)) = slow {
                    if now.duration_since(before).as_nanos() as u64 > slow_ns {
                        YIELD_OFF_UNTIL.store(now_ns() + off_ns, Ordering::Relaxed);
                        break;
                    }
                }
                if now >= until {
                    break;
                }
                before = now;
            }
        }
        self.park(phase);
    }

    #[cold]
    fn park(&self, phase: u64) {
        loop {
            // Acquire: as in `done`.
            let s = self.word.load(Ordering::Acquire);
            if (s >> PHASE_SHIFT) & PHASE_MASK != phase {
                return;
            }
            // Relaxed: PARKED publishes nothing; the bucket lock orders the handshake.
            if s & PARKED == 0
                && self
                    .word
                    .compare_exchange(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            let validate = || {
                let now = self.word.load(Ordering::Relaxed);
                now & PARKED != 0 && (now >> PHASE_SHIFT) & PHASE_MASK == phase
            };
            // SAFETY: `validate` only loads an atomic (no panic, no parking
            // call); the callbacks are empty; the key is this word's address.
            unsafe {
                parking_lot_core::park(
                    self.key(),
                    validate,
                    || {},
                    |_, _| {},
                    parking_lot_core::DEFAULT_PARK_TOKEN,
                    None,
                );
            }
        }
    }
}

/// Picks the policy of the `Proto` kinds made by [`Kind::new`]: a bench sets
/// it before building a pool (one policy per pool).
static POLICY: std::sync::Mutex<Policy> =
    std::sync::Mutex::new(Policy::ParkOver { spin_ns: 20_000 });

/// Sets the policy used by the next `Proto::new`.
pub fn set_policy(p: Policy) {
    *POLICY.lock().unwrap() = p;
}

impl Kind for Proto {
    type Local = ();
    fn new(n: usize) -> Self {
        Proto::with_policy(n, *POLICY.lock().unwrap())
    }
    fn locals(&self, n: usize) -> Vec<()> {
        vec![(); n]
    }
    #[inline]
    fn wait(&self, _: &mut ()) {
        let phase = self.arrive();
        Proto::wait(self, phase);
    }
}
