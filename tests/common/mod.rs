//! Helpers shared by the integration tests: a watchdog that turns a deadlock
//! into a failure with the barrier's decoded state, and panic-catching
//! helpers for the misuse tests.

// Each test file compiles this module on its own and uses only part of it.
#![allow(dead_code)]

pub mod ledger;
pub mod shape;

use std::any::Any;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use syncthreads::Barrier;

/// Runs `body` on the calling thread; if it has not finished after `secs`
/// seconds, prints `describe()` (typically the barriers' `Debug`) and exits
/// the whole test process with status 101, since a deadlocked thread cannot be
/// unwound. A panic in `body` goes on as usual.
pub fn watchdog<R>(secs: u64, describe: impl Fn() -> String + Send, body: impl FnOnce() -> R) -> R {
    let test = std::thread::current()
        .name()
        .unwrap_or("<unnamed>")
        .to_owned();
    let finished = (Mutex::new(false), Condvar::new());

    /// Tells the monitor the body is over, also when it unwinds.
    struct Finished<'a>(&'a (Mutex<bool>, Condvar));
    impl Drop for Finished<'_> {
        fn drop(&mut self) {
            *self.0 .0.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.0 .1.notify_all();
        }
    }

    std::thread::scope(|s| {
        let monitor = &finished;
        s.spawn(move || {
            let (lock, cvar) = monitor;
            let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = cvar
                .wait_timeout_while(guard, Duration::from_secs(secs), |done| !*done)
                .unwrap_or_else(|e| e.into_inner());
            if !*guard {
                // Straight to stderr: the test harness's capture would swallow
                // an `eprintln!` of a process that is about to exit.
                let _ = writeln!(
                    std::io::stderr(),
                    "\nWATCHDOG: test `{test}` did not finish within {secs} s (deadlock?)\n  state: {}\n",
                    describe()
                );
                std::process::exit(101);
            }
        });
        let _finished = Finished(&finished);
        body()
    })
}

/// Runs `body(item)` on a thread of its own for each of `items`, inside a
/// scope under a [`watchdog`] of `secs` seconds that prints `describe()`:
/// the shape of every multi-threaded test of a barrier or a team.
pub fn on_threads<T: Send>(
    secs: u64,
    describe: impl Fn() -> String + Send,
    items: impl IntoIterator<Item = T>,
    body: impl Fn(T) + Sync,
) {
    watchdog(secs, describe, || {
        std::thread::scope(|s| {
            let body = &body;
            for item in items {
                s.spawn(move || body(item));
            }
        })
    })
}

/// [`on_threads`] for `threads` threads that each run `phases` phases:
/// thread `i` calls `phase(i, p)` for `p` in `0 .. phases`.
pub fn phase_loop(
    secs: u64,
    describe: impl Fn() -> String + Send,
    threads: usize,
    phases: usize,
    phase: impl Fn(usize, usize) + Sync,
) {
    on_threads(secs, describe, 0..threads, |i| {
        for p in 0..phases {
            phase(i, p);
        }
    })
}

/// Polls `done` until it holds, yielding between polls: for a test that
/// must let another thread reach a point (a wait, a stall record) before it
/// goes on. Panics naming `what` if that takes more than 20 s.
#[track_caller]
/// Polls `cond` every millisecond until it holds (true) or `secs` pass
/// (false), for a caller that asserts with its own message.
pub fn within(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while !cond() {
        if start.elapsed() > Duration::from_secs(secs) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not within 20 s: {what}"
        );
        std::thread::yield_now();
    }
}

/// Asserts that each phase had exactly one leader: `leaders[p]` counts
/// the arrivals of phase `p` whose `is_leader()` was true.
#[track_caller]
pub fn assert_one_leader_each<T: Into<u64>>(leaders: impl IntoIterator<Item = T>) {
    let wrong: Vec<(usize, u64)> = leaders
        .into_iter()
        .map(Into::into)
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .collect();
    assert!(
        wrong.is_empty(),
        "(phase, leaders) with leaders != 1: {wrong:?}"
    );
}

/// `native` rounds, or `miri` under Miri: the interpreter is thousands of
/// times slower, so the same test runs with fewer rounds (the same threads
/// and tasks; a few Team tests also try fewer tree shapes there).
pub const fn scaled(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

/// Runs `body` on a thread of its own for each of `items` and returns each
/// thread's panic message, in order; every thread must panic.
pub fn panics_of_each<T: Send>(
    items: impl IntoIterator<Item = T>,
    body: impl Fn(T) + Sync,
) -> Vec<String> {
    std::thread::scope(|s| {
        let body = &body;
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| s.spawn(move || body(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| panic_message(&*h.join().expect_err("the thread was to panic")))
            .collect()
    })
}

/// Runs `f`, which must panic, and returns its panic message.
#[track_caller]
pub fn panic_of<R>(f: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic, but the call returned"),
        Err(payload) => panic_message(&*payload),
    }
}

/// `Debug` of a barrier, shorter to write.
pub fn dbg<F>(barrier: &Barrier<F>) -> String {
    format!("{barrier:?}")
}

/// The `Debug` text of a running (not poisoned) barrier with these fields.
pub fn running(parity: bool, pending: usize, expected: usize, tx: i64) -> String {
    format!(
        "Barrier {{ phase_parity: {parity}, pending: {pending}, expected: {expected}, tx: {tx}, poisoned: false }}"
    )
}

/// Asserts that `op` panics with a message containing `message`, and that the
/// barrier's decoded state is the same before and after (misuse leaves the
/// barrier untouched).
#[track_caller]
pub fn assert_misuse<F, R>(barrier: &Barrier<F>, message: &str, op: impl FnOnce() -> R) {
    let before = dbg(barrier);
    let got = panic_of(op);
    assert!(
        got.contains(message),
        "panic message {got:?} does not contain {message:?}"
    );
    assert_eq!(dbg(barrier), before, "the misuse changed the barrier");
}

/// A small deterministic mixer (splitmix64), so that predicates differ per
/// thread and per phase and every thread can recompute everyone's.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Asserts that the word of `team`, decoded as a `Barrier`'s `Debug`,
/// reads `expected`. The contract gives a team no view of its word, so
/// this reads it through the crate's test hook of the `bench` feature; CI
/// runs the team tests in that build too, and without it this checks
/// nothing.
#[track_caller]
pub fn assert_word<F>(team: &syncthreads::Team<F>, expected: &str, what: &str) {
    #[cfg(feature = "bench")]
    assert_eq!(
        syncthreads::bench_hooks::team_word(team),
        expected,
        "{what}"
    );
    #[cfg(not(feature = "bench"))]
    let _ = (team, expected, what);
}

/// `(arrived, expected)`: the current phase's progress, the top-level
/// fields of the `Debug` of a `Team`, a block and their seats (the contract
/// names them).
#[track_caller]
pub fn progress_of(x: &impl std::fmt::Debug) -> (usize, usize) {
    let debug = format!("{x:?}");
    let field = |name: &str| -> usize {
        let at = debug
            .find(&format!("{name}: "))
            .unwrap_or_else(|| panic!("no `{name}` in {debug}"));
        debug[at + name.len() + 2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    };
    (field("arrived"), field("expected"))
}
