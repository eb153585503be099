//! Helpers for the `__syncthreads` family tests (block, warp, launch): a
//! watchdog that turns a deadlock into a failure, and panic-message helpers.

// Each test file compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::any::Any;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Runs `body` on the calling thread under a monitor thread. If `body` has not
/// finished after `secs` seconds, the monitor prints `describe()` (the
/// barriers' decoded state) and exits the process with status 101: a
/// deadlocked thread cannot be unwound, and a hanging test would hide the
/// failure. A panic in `body` goes on as usual.
pub fn watchdog<R>(secs: u64, describe: impl Fn() -> String + Send, body: impl FnOnce() -> R) -> R {
    let test = std::thread::current()
        .name()
        .unwrap_or("<unnamed>")
        .to_owned();
    let finished = (Mutex::new(false), Condvar::new());

    /// Tells the monitor that the body is over, also when it unwinds.
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
                // Straight to stderr: the harness's capture would swallow an
                // `eprintln!` of a process that is about to exit.
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

/// The message of a panic payload (`panic!` with a literal or a format).
pub fn message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Runs `f`, which must panic, and returns its panic message.
#[track_caller]
pub fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic, but the call returned"),
        Err(payload) => message(&*payload)
            .expect("the panic payload is not a string")
            .to_owned(),
    }
}

/// A small deterministic mixer (splitmix64), so that predicates differ per
/// thread and per phase and every thread can recompute everyone's.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
