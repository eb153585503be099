//! Poisoning wakes a parked waiter: `poison()` from another thread, or a
//! completion function that panics, makes every waiter panic with the
//! poisoned message instead of sleeping forever. Panics stay inside the
//! model's threads (`catch_unwind`), as loom requires.

mod common;
use common::{model, panic_message, quiet_expected_panics};
use loom::{sync::Arc, thread};
use mbarrier::Barrier;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, which must panic; returns its message.
fn panics(f: impl FnOnce()) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("expected a panic"),
        Err(payload) => panic_message(&*payload),
    }
}

#[test]
fn poison_wakes_a_parked_waiter() {
    quiet_expected_panics();
    model(|| {
        let barrier = Arc::new(Barrier::new(2));
        let waiter = {
            let barrier = barrier.clone();
            // Either its arrive sees the poison, or its wait does (parked or not).
            thread::spawn(move || {
                panics(|| {
                    barrier.arrive_and_wait();
                })
            })
        };
        barrier.poison();
        let message = waiter.join().unwrap();
        assert_eq!(
            message,
            "mbarrier: barrier poisoned by poison() (seen by arrive_and_wait())"
        );
        assert!(barrier.is_poisoned());
        assert!(
            !barrier.phase_parity(),
            "a poisoned barrier stays in its phase"
        );
    });
}

#[test]
fn panicking_completion_wakes_a_parked_waiter() {
    quiet_expected_panics();
    model(|| {
        let barrier = Arc::new(Barrier::with_completion(2, || panic!("boom")));
        let other = {
            let barrier = barrier.clone();
            thread::spawn(move || {
                panics(|| {
                    barrier.arrive_and_wait();
                })
            })
        };
        let mine = panics(|| {
            barrier.arrive_and_wait();
        });
        let theirs = other.join().unwrap();
        // The completer's panic goes on; the other participant, parked or
        // not, sees the poison.
        let mut messages = [mine, theirs];
        messages.sort();
        assert_eq!(
            messages,
            [
                "boom".to_string(),
                "mbarrier: barrier poisoned: completion panicked in phase 0 (seen by arrive_and_wait())"
                    .to_string()
            ]
        );
        assert!(barrier.is_poisoned());
    });
}
