//! `launch` on the pool under shuttle's random schedules: concurrent
//! launches from several threads on one pool, nested launches, and a panic
//! racing the other launches. Under the model checkers a parked pool thread's
//! keep-alive passes at once, so every schedule also races idle exits
//! against claims. Only built with `--cfg shuttle`; `.ci/shuttle` runs it.
#![cfg(shuttle)]

use shuttle::sync::Arc;
use shuttle::thread;
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::Launcher;

#[path = "common/shuttle.rs"]
mod schedules;
use schedules::{check, quiet};

/// A kernel with two syncs and a count that every rank must agree on.
fn counted(launcher: &Launcher, threads: usize, round: usize) {
    let got = launcher.launch(threads, |block| {
        block.sync();
        block.sync_count((block.thread_rank() + round) % 2 == 0)
    });
    let even = (0..threads).filter(|r| (r + round) % 2 == 0).count();
    assert_eq!(got, vec![even; threads]);
}

#[test]
fn concurrent_launches_share_one_pool() {
    check(|| {
        let launcher = Arc::new(Launcher::new());
        let callers: Vec<_> = (0..2)
            .map(|caller| {
                let launcher = Arc::clone(&launcher);
                thread::spawn(move || {
                    for round in 0..2 {
                        counted(&launcher, 2 + caller, round);
                    }
                })
            })
            .collect();
        counted(&launcher, 3, 0);
        for c in callers {
            c.join().unwrap();
        }
    });
}

#[test]
fn nested_launches_take_other_threads() {
    check(|| {
        let launcher = Launcher::new();
        let got = launcher.launch(2, |outer| {
            let inner = launcher.launch(2, |inner| {
                inner.sync();
                inner.thread_rank()
            });
            outer.sync();
            inner
        });
        assert_eq!(got, [[0, 1], [0, 1]]);
    });
}

#[test]
fn a_panic_races_other_launches() {
    quiet();
    check(|| {
        let launcher = Arc::new(Launcher::new());
        let other = {
            let launcher = Arc::clone(&launcher);
            thread::spawn(move || counted(&launcher, 3, 1))
        };
        let failed = catch_unwind(AssertUnwindSafe(|| {
            launcher.launch(3, |block| {
                if block.thread_rank() == 2 {
                    panic!("boom");
                }
                block.sync();
            })
        }));
        let payload = failed.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        other.join().unwrap();
        counted(&launcher, 2, 0);
    });
}
