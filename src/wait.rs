//! The waiting policy (spin, then yield, then park) and both halves of the
//! park/wake handshake, for every word a waiter can wait on: a barrier's
//! state and a `WarpBarrier` lane.
//!
//! 1. **Spin** (only while threads <= cores): re-read the word for at most
//!    [`SPIN_NANOS`] (less for a thread whose recent spins ran out: the
//!    budget adapts per thread, `wait/policy.rs`), load-only, with pause hints between loads. A phase on
//!    idle cores completes within a few microseconds at most, while parking
//!    and being woken costs several. Between loads a waiter pauses a little
//!    longer the more arrivals the phase still owes ([`PAUSES_PER_PENDING`]),
//!    so that it does not pull the cache line away from the arriving threads.
//!    With more threads than cores spinning would only keep the thread we
//!    wait for off its core, so this stage is skipped.
//! 2. **Yield**: give the core away for at most [`YIELD_NANOS`], re-reading
//!    the word after each yield. This is what makes oversubscription cheap,
//!    and it also rescues participants preempted by foreign load. Yielding
//!    only pays while the participants are (nearly) the only runnable
//!    threads: once one yield takes longer than [`SLOW_YIELD_NANOS`] (the
//!    scheduler gave a whole time slice to someone else), every waiter of
//!    the process skips this stage for a backoff of a few milliseconds that
//!    grows while the slow yields persist (`wait/policy.rs`).
//! 3. **Park**: set the word's `PARKED` bit and sleep in the parking lot
//!    keyed by an address inside the word; whoever changes the word in the
//!    way the waiter waits for calls [`wake`] with the word it replaced.
//!
//! A task (an async wait, [`poll_wait`]) takes none of these stages: it
//! checks the word and, unsatisfied, registers its waker in the task table
//! (`park/tasks.rs`) under the same key, by the same handshake.
//!
//! Every number here was measured, not guessed (benches/RESULTS.md and the
//! notes beside each constant). Under `--cfg loom` / `--cfg shuttle` each
//! stage runs once (one load of the spin stage, one yield), so the models
//! take every path a real wait takes.
//!
//! # No lost wake-up
//!
//! The waiter sets `PARKED` with a CAS from a word it found unsatisfying; the
//! waker changes the word with one RMW and, if the word it replaced had
//! `PARKED`, calls [`wake`]. Both work on the same word, so its modification
//! order decides: either the change comes first, and the waiter's CAS fails
//! (it re-reads and sees the change), or the CAS comes first, and the waker
//! sees `PARKED` and wakes. The parking lot's `validate` re-reads the word
//! under the bucket lock and sleeps only if `PARKED` is still set and the wait
//! still unsatisfied; `wake` takes that lock after the change, so either the
//! waker's lock comes first, and `validate` (ordered after it by the lock)
//! sees the change, or the parker's comes first, and the waker finds it
//! queued.
//!
//! A task registers the same way: it sets `PARKED` by the same CAS, and the
//! task table's `validate` re-reads the word under the table's bucket lock,
//! which [`wake`] takes after the change too.

use crate::park::{self, Parked, TaskNode};
use crate::sync::{self, Ordering};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

pub(crate) mod policy;
pub(crate) mod stats;

use policy::Policy;
use stats::{Stage, Trace};

/// How long a waiter spins before it yields, when every participant can
/// have a core: long enough to catch a phase whose slowest thread is a
/// little late (the fuzzy barrier then hides most of the imbalance, where a
/// shorter spin hid much less), short enough that beside busy foreign
/// threads the spin costs little more than a shorter one, where a longer
/// spin cost much more (benches/RESULTS.md, "The wait policy").
pub(crate) const SPIN_NANOS: u64 = 10_000;

/// How long a waiter yields before it parks. With more threads than cores,
/// parking at once costs a wake-up per episode, while yielding lets the
/// thread waited for run, at less CPU per episode than
/// `std::sync::Barrier`. A budget too short for many threads feeds itself:
/// waiters begin to park, episodes grow past the budget, and every episode
/// pays the wake-ups (benches/RESULTS.md, "The wait policy").
pub(crate) const YIELD_NANOS: u64 = 200_000;

/// How long a pool thread whose launch ended keeps yielding (after its
/// spin) before it parks: longer than a phase's [`YIELD_NANOS`], so that a
/// program launching a block every millisecond or so (a launch per time
/// step, with a little serial work between) finds its threads awake; an
/// idle pool burns the CPU for this long after a launch, no longer
/// (benches/RESULTS.md, "Launch").
pub(crate) const IDLE_YIELD_NANOS: u64 = 2_000_000;

/// The whole spin and yield of a pool thread's idle wait, at most: its
/// keep-alive counts from the end of this.
pub(crate) const IDLE_POLL: Duration = Duration::from_nanos(SPIN_NANOS + IDLE_YIELD_NANOS);

/// A yield slower than this means another thread took a whole time slice:
/// an unloaded yield returns far sooner, and one beside busy foreign
/// threads takes a scheduler slice, so that yielding then costs far more
/// than parking (benches/RESULTS.md, "The wait policy").
pub(crate) const SLOW_YIELD_NANOS: u64 = 200_000;

/// Extra pause hints per still-owed arrival between two loads of the word,
/// capped by [`MAX_EXTRA_PAUSES`]: a waiter that reads less often leaves the
/// cache line to the threads still arriving, which shortens the episodes of
/// many threads on many cores, and costs two threads nothing (one arrival
/// owed means no extra pause) (benches/RESULTS.md, "The wait policy").
pub(crate) const PAUSES_PER_PENDING: u32 = 8;
const MAX_EXTRA_PAUSES: u32 = 512;

/// A word that waiters poll and park on. Its `PARKED` bit is set by
/// [`Word::mark_parked`] and cleared by the RMW that changes the word in the
/// way waiters wait for, whose caller then calls [`wake`] with the word it
/// replaced.
pub(crate) trait Word {
    /// A decoded copy of the word.
    type Snapshot: Copy;
    /// One load of the word.
    fn load(&self, order: Ordering) -> Self::Snapshot;
    /// Whether `PARKED` is set in `s`.
    fn parked(s: Self::Snapshot) -> bool;
    /// Sets `PARKED` if the word is still `s` (one CAS); the word found otherwise.
    fn mark_parked(&self, s: Self::Snapshot) -> Result<(), Self::Snapshot>;
    /// The parking key: an address inside the word, so no other user of the
    /// parking lot (say, one keyed by a struct that starts with this word)
    /// can share it.
    fn park_key(&self) -> usize;
    /// Extra pause hints between two loads while spinning on `s` (for a
    /// barrier, more the more arrivals are still owed).
    fn spin_pauses(_s: Self::Snapshot) -> u32 {
        0
    }
}

/// The waking half of the handshake: `prior` is the word that the caller's
/// RMW replaced; if a waiter had marked it `PARKED`, wake every thread
/// parked on the word and every task registered on it. Waking an address
/// nobody waits on is harmless, even after the word is gone.
#[inline]
pub(crate) fn wake<W: Word>(word: &W, prior: W::Snapshot) {
    if W::parked(prior) {
        wake_parked(word.park_key());
    }
}

#[cold]
fn wake_parked(key: usize) {
    park::unpark_all(key);
    park::wake_tasks(key);
}

/// The stages of one wait (spin, yield, park), possibly over several words
/// in turn (a `WarpBarrier` lane waits for each lane it is behind): the spin
/// and yield budgets are spent once per wait, not once per word. (Not the
/// diagnostics' `Waiter`, a waiting thread's record.)
pub(crate) struct Stages {
    /// Whether every participant can have a core (then spinning pays).
    may_spin: bool,
    deadline: Option<Instant>,
    /// The spin and yield stages are behind us.
    spun: bool,
    /// How long the yield stage lasts, in nanoseconds.
    yield_nanos: u64,
    /// A pool thread's wait for its next launch: it teaches the
    /// process-wide hints nothing (its spin, which a launch usually
    /// outlasts, leaves this thread's spin budget as it is; its slow yields
    /// turn nobody's yielding off) and heeds none of them (it yields while
    /// yielding is off for the waits of phases: its latency is nobody's
    /// critical path, and a yield gives the core to whoever needs it).
    idle: bool,
    policy: Policy,
    trace: Trace,
    /// This wait for the stall reports, begun once it stops spinning.
    record: crate::diagnostics::Record,
    /// A park of this wait ended woken (for the models' cases).
    woken: bool,
}

impl Stages {
    /// A wait for a phase of `participants` threads, until `deadline`.
    pub(crate) fn new(participants: u32, deadline: Option<Instant>) -> Stages {
        let policy = policy::current(deadline);
        Stages {
            may_spin: sync::MODEL || policy::spins_always(policy) || participants <= cores(),
            deadline,
            spun: false,
            yield_nanos: YIELD_NANOS,
            idle: false,
            policy,
            trace: Trace::new(),
            record: Default::default(),
            woken: false,
        }
    }

    /// A pool thread's wait for its next launch, until `deadline` (its
    /// keep-alive): it spins as a phase's wait does when its last launch's
    /// threads all had cores (`spins`), then yields for [`IDLE_YIELD_NANOS`]
    /// (a launch per time step finds it awake), then parks.
    pub(crate) fn idle(spins: bool, deadline: Option<Instant>) -> Stages {
        let mut waiter = Stages::new(if spins { 1 } else { u32::MAX }, deadline);
        waiter.may_spin &= spins || sync::MODEL;
        waiter.yield_nanos = if spins { IDLE_YIELD_NANOS } else { YIELD_NANOS };
        waiter.idle = true;
        waiter
    }

    /// A wait that parks at once, until `deadline`: a pool thread that was
    /// woken for a launch that did not take it goes back to sleep.
    pub(crate) fn asleep(deadline: Option<Instant>) -> Stages {
        let mut waiter = Stages::new(1, deadline);
        waiter.spun = true;
        waiter
    }

    /// Describes this wait for the stall reports (recorded if it stops
    /// spinning).
    pub(crate) fn recorded(mut self, info: crate::diagnostics::WaitInfo) -> Stages {
        self.record = crate::diagnostics::Record::new(info);
        self
    }

    /// Waits on `word`, starting from `s` (a load that `check` did not
    /// accept), until `check` accepts a word (`Ok` with its answer) or the
    /// deadline passes (`Err` with the last word read).
    ///
    /// `check` must be pure and must not panic: it also runs under the
    /// parking lot's lock. It sees the word as loaded with `Acquire`, except
    /// inside the lock (`Relaxed`, used only to decide whether to sleep).
    pub(crate) fn wait<W: Word, T>(
        &mut self,
        word: &W,
        s: W::Snapshot,
        check: impl Fn(W::Snapshot) -> Option<T>,
    ) -> Result<T, W::Snapshot> {
        // A deadline already passed (a zero timeout) checks once, as the caller did.
        if !self.spun && self.deadline.is_none_or(|d| sync::now() < d) {
            self.spun = true;
            if self.may_spin {
                self.trace.enter(Stage::Spin);
                if let Some(done) = spin(word, s, self.deadline, &check, self.policy, !self.idle) {
                    self.trace.end(Stage::Spin);
                    return Ok(done);
                }
            }
            self.record.begin();
            self.trace.enter(Stage::Yield);
            if let Some(done) = yield_cpu(
                word,
                self.deadline,
                &check,
                self.policy,
                self.yield_nanos,
                self.idle,
            ) {
                self.trace.end(Stage::Yield);
                return Ok(done);
            }
        }
        self.record.begin();
        self.trace.enter(Stage::Park);
        let end = park_until(word, self.deadline, check, &mut self.woken);
        self.trace.end(Stage::Park);
        end
    }

    /// Whether a park of this wait ended woken by a [`wake`] (or
    /// spuriously): the models name that case.
    pub(crate) fn was_woken(&self) -> bool {
        self.woken
    }
}

/// A wait without a deadline: [`Stages::wait`] on `word` from `s` (a load
/// that `check` did not accept) for a phase of `participants`, until `check`
/// accepts a word; returns its answer.
pub(crate) fn until<W: Word, T>(
    word: &W,
    s: W::Snapshot,
    participants: u32,
    check: impl Fn(W::Snapshot) -> Option<T>,
) -> T {
    match Stages::new(participants, None).wait(word, s, check) {
        Ok(done) => done,
        Err(_) => unreachable!("a wait without a deadline ends only when satisfied"),
    }
}

/// Cores available to this process, read once.
///
/// Not `available_parallelism()` alone: on Linux that is the *calling
/// thread's* affinity mask, and a program that pins each participant to a
/// CPU would read 1 on its first wait and never spin, and pay for it in
/// every episode (benches/RESULTS.md, "The wait policy"). The process's
/// mask is the main thread's, `Cpus_allowed_list` in `/proc/self/status`.
pub(crate) fn cores() -> u32 {
    static CORES: OnceLock<u32> = OnceLock::new();
    *CORES.get_or_init(|| {
        let thread = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        process_cpus().map_or(thread, |process| process.max(thread))
    })
}

/// The number of CPUs in the process's affinity mask (Linux), if readable.
fn process_cpus() -> Option<u32> {
    // Under Miri, whose isolation refuses file access, the thread's mask
    // (Miri's configured CPU count) is the answer.
    if !cfg!(target_os = "linux") || cfg!(miri) {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    cpu_list_len(list.trim())
}

/// How many CPUs a list like `0-3,8,10-11` names.
fn cpu_list_len(list: &str) -> Option<u32> {
    let mut n = 0;
    for part in list.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.parse::<u32>().ok()?, hi.parse::<u32>().ok()?),
            None => {
                let cpu = part.parse::<u32>().ok()?;
                (cpu, cpu)
            }
        };
        n += hi.checked_sub(lo)? + 1;
    }
    (n > 0).then_some(n)
}

/// Converts a timeout into a deadline; `None` (no deadline) when `now + d`
/// does not fit in an `Instant`, e.g. for `Duration::MAX`.
pub(crate) fn deadline_after(d: Duration) -> Option<Instant> {
    sync::now().checked_add(d)
}

/// Stage 1: load-only spinning, for at most [`SPIN_NANOS`]: this thread's
/// adaptive budget (`wait/policy.rs`).
fn spin<W: Word, T>(
    word: &W,
    mut s: W::Snapshot,
    deadline: Option<Instant>,
    check: &impl Fn(W::Snapshot) -> Option<T>,
    policy: Policy,
    adapts: bool,
) -> Option<T> {
    if !sync::MODEL && deadline.is_some_and(|d| d < sync::now() + Duration::from_nanos(SPIN_NANOS))
    {
        return None; // a short timed wait goes straight to the deadline-aware park
    }
    let budget = policy::spin_budget(policy);
    let mut spent = 0u32;
    while spent < budget {
        // (Under a model checker a pause is a yield: no extra ones.)
        let extra = if sync::MODEL {
            0
        } else {
            W::spin_pauses(s).min(MAX_EXTRA_PAUSES)
        };
        for _ in 0..=extra {
            sync::spin_hint();
        }
        spent = spent.saturating_add(1 + extra);
        // Acquire: the RMW that made the word acceptable → the caller's return (orderings.md).
        s = word.load(Ordering::Acquire);
        if let Some(done) = check(s) {
            if adapts {
                policy::spin_ended(policy, budget, true);
            }
            return Some(done);
        }
    }
    if adapts {
        policy::spin_ended(policy, budget, false);
    }
    None
}

/// Stage 2: yield the core for about `nanos` ([`YIELD_NANOS`] for a phase),
/// unless a recent yield showed that other work competes for the cores
/// (`wait/policy.rs`).
fn yield_cpu<W: Word, T>(
    word: &W,
    deadline: Option<Instant>,
    check: &impl Fn(W::Snapshot) -> Option<T>,
    policy: Policy,
    nanos: u64,
    idle: bool,
) -> Option<T> {
    let mut budget = YieldBudget::start(deadline, policy, nanos, idle)?;
    loop {
        sync::yield_now();
        // Acquire: as in `spin`: an accepted word ends the wait.
        if let Some(done) = check(word.load(Ordering::Acquire)) {
            budget.end();
            return Some(done);
        }
        if budget.spent() {
            return None;
        }
    }
}

/// When the yield stage ends: after [`YIELD_NANOS`] (or the deadline), or
/// after one slow yield, which also turns yielding off for a while. Under
/// the model checkers: after one yield.
struct YieldBudget {
    policy: Policy,
    before: Instant,
    until: Instant,
    /// A pool thread's idle wait (`Stages::idle`).
    idle: bool,
}

impl YieldBudget {
    /// `None` if yielding is off (an idle wait yields anyway).
    fn start(
        deadline: Option<Instant>,
        policy: Policy,
        nanos: u64,
        idle: bool,
    ) -> Option<YieldBudget> {
        let before = sync::now();
        if !idle && !policy::may_yield(policy, before) {
            return None;
        }
        let until = before + Duration::from_nanos(nanos);
        Some(YieldBudget {
            policy,
            before,
            until: deadline.map_or(until, |d| d.min(until)),
            idle,
        })
    }

    /// Called after each unsuccessful yield: whether the stage is over.
    fn spent(&mut self) -> bool {
        if sync::MODEL {
            return true;
        }
        let after = sync::now();
        if !self.idle
            && after.saturating_duration_since(self.before) > Duration::from_nanos(SLOW_YIELD_NANOS)
        {
            Trace::slow_yield();
            policy::slow_yield(after);
            return true;
        }
        self.before = after;
        if after >= self.until {
            self.end();
            return true;
        }
        false
    }

    /// The stage ended without a slow yield.
    fn end(&self) {
        if !sync::MODEL && !self.idle {
            policy::fast_yield_stage(self.policy);
        }
    }
}

/// Stage 3: the parking half of the handshake (module docs).
#[cold]
fn park_until<W: Word, T>(
    word: &W,
    deadline: Option<Instant>,
    check: impl Fn(W::Snapshot) -> Option<T>,
    woken: &mut bool,
) -> Result<T, W::Snapshot> {
    crate::diagnostics::parking();
    loop {
        // Acquire: as in `spin`: an accepted word ends the wait, and the
        // park always ends in this load, however it ended.
        let s = word.load(Ordering::Acquire);
        if let Some(done) = check(s) {
            return Ok(done);
        }
        if deadline.is_some_and(|d| sync::now() >= d) {
            return Err(s);
        }
        if !W::parked(s) && word.mark_parked(s).is_err() {
            continue;
        }
        let mut validate = || still_waiting(word, &check);
        // However the park ends (woken, timed out, or the word had already
        // changed), the loop re-reads the word and decides again.
        *woken |= matches!(
            park::park(word.park_key(), &mut validate, deadline),
            Parked::Woken
        );
    }
}

/// The `validate` of both halves, run under the backend's lock: whether the
/// word still has `PARKED` set and `check` still refuses it, so that the
/// thread may sleep (the task stay registered).
fn still_waiting<W: Word, T>(word: &W, check: &impl Fn(W::Snapshot) -> Option<T>) -> bool {
    // Relaxed: decides only whether to sleep; the bucket lock gives freshness (orderings.md).
    let now = word.load(Ordering::Relaxed);
    W::parked(now) && check(now).is_none()
}

/// The registering half of the handshake for a task: one poll of a wait on
/// `word`, starting from `s` (a fresh `Acquire` load). `Ready` with `check`'s
/// answer once it accepts a word (`node` is then unlinked), else `Pending`
/// with `node` linked under the word's key and holding `waker`, which the next
/// [`wake`] of the word wakes.
///
/// `check` must be pure and must not panic: it also runs under the task
/// table's lock. It sees the word as loaded with `Acquire`, except inside the
/// lock (`Relaxed`, used only to decide whether to stay registered).
pub(crate) fn poll_wait<W: Word, T>(
    word: &W,
    mut s: W::Snapshot,
    node: Pin<&TaskNode>,
    waker: &Waker,
    check: impl Fn(W::Snapshot) -> Option<T>,
) -> Poll<T> {
    debug_assert_eq!(node.key(), word.park_key());
    loop {
        if let Some(done) = check(s) {
            node.deregister();
            return Poll::Ready(done);
        }
        let marked = W::parked(s) || word.mark_parked(s).is_ok();
        if marked && node.register(waker, || still_waiting(word, &check)) {
            return Poll::Pending;
        }
        // Acquire: as in `spin`: the next turn may accept this word and
        // return `Ready`.
        s = word.load(Ordering::Acquire);
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(cpu_list_len("0-15"), Some(16));
        assert_eq!(cpu_list_len("0-3,8,10-11"), Some(7));
        assert_eq!(cpu_list_len("5"), Some(1));
        assert_eq!(cpu_list_len(""), None);
        assert_eq!(cpu_list_len("3-1"), None);
    }

    /// Regression: a participant pinned to one CPU read 1 and never spun.
    /// Not under Miri: it has neither `/proc` nor `sched_setaffinity`.
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn a_pinned_thread_still_sees_the_process_cpus() {
        let before = process_cpus().expect("/proc/self/status has Cpus_allowed_list");
        let (in_thread, pinned) = std::thread::spawn(|| {
            // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and
            // sched_setaffinity only touch it and this thread's mask.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                let cpu = libc::sched_getcpu().max(0) as usize;
                libc::CPU_SET(cpu, &mut set);
                assert_eq!(
                    libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
                    0
                );
            }
            let pinned = std::thread::available_parallelism().unwrap().get() as u32;
            (process_cpus(), pinned)
        })
        .join()
        .unwrap();
        assert_eq!(pinned, 1, "the thread is pinned");
        assert_eq!(in_thread, Some(before));
    }
}
