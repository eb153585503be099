//! Parking: under loom waits never spin, so every unsatisfied wait parks, and
//! the completer must wake every parked waiter of the phase, with and without
//! a completion function. A lost wakeup leaves a waiter asleep forever, which
//! loom reports as a deadlock.

mod common;
use common::model;
use loom::{sync::Arc, thread};
use syncthreads::{Barrier, Completion};

/// Two waiters arrive and park on phase 0; the main thread's arrival, the
/// last or not, completes it and wakes both.
#[test]
fn completer_wakes_every_parked_waiter() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_bounded(2, || {
        let barrier = Arc::new(Barrier::new(3));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let barrier = barrier.clone();
                thread::spawn(move || {
                    let token = barrier.arrive();
                    barrier.wait(token);
                })
            })
            .collect();
        barrier.arrive_and_wait();
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert!(barrier.phase_parity());
    });
}

/// A waiter parks on phase 0 and then, without arriving, on phase 1 by
/// parity; the main thread completes both phases alone.
fn parked_observer_is_woken_twice<F: Completion + 'static>(barrier: Barrier<F>) {
    let barrier = Arc::new(barrier);
    let waiter = {
        let barrier = barrier.clone();
        thread::spawn(move || {
            let token = barrier.arrive();
            barrier.wait(token);
            barrier.wait_parity(true);
        })
    };
    barrier.arrive_and_wait();
    drop(barrier.arrive_n(2));
    waiter.join().unwrap();
    assert!(!barrier.phase_parity(), "two phases completed");
}

#[test]
fn completer_wakes_a_parked_waiter() {
    model(|| parked_observer_is_woken_twice(Barrier::new(2)));
}

#[test]
fn completer_wakes_a_parked_waiter_after_the_completion_function() {
    model(|| parked_observer_is_woken_twice(Barrier::with_completion(2, || {})));
}
