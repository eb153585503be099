//! Parking: under loom waits never spin, so every unsatisfied wait parks, and
//! the completer must wake every parked waiter of the phase, with and without
//! a completion function. A lost wakeup leaves a waiter asleep forever, which
//! loom reports as a deadlock.
//!
//! Cases (each model): a wait slept until the completer woke it, a wait
//! about to sleep found its phase completed under the parking lot's lock
//! (the completer came in between), and which thread's arrival completed
//! phase 0 (the main thread's or a waiter's). One layout: the waiters and
//! the completer swap the completing arrival in it (those cases), and a
//! waiter on the main thread only parks first, which the spawned waiters
//! do at no cost in preemptions as soon as the main thread blocks.

mod common;
use common::{model_reaching, model_reaching_bounded, Reach};
use loom::{sync::Arc, thread};
use syncthreads::{Barrier, Completion};

/// Two waiters arrive and park on phase 0; the main thread's arrival, the
/// last or not, completes it and wakes both.
#[test]
fn completer_wakes_every_parked_waiter() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, CASES, |reach| {
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
        let led = barrier.arrive_and_wait().is_leader();
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert!(barrier.phase_parity());
        name_cases(reach, led);
    });
}

const CASES: &[&str] = &[
    "the main thread completed phase 0",
    "a waiter completed phase 0",
    "event:park-sleeps",
    "event:park-refused",
];

fn name_cases(reach: &Reach, main_led: bool) {
    reach.either(
        main_led,
        "the main thread completed phase 0",
        "a waiter completed phase 0",
    );
    let _ = reach.events();
}

/// A waiter parks on phase 0 and then, without arriving, on phase 1 by
/// parity; the main thread completes phase 1 alone.
fn parked_observer_is_woken_twice<F: Completion + 'static>(reach: &Reach, barrier: Barrier<F>) {
    let barrier = Arc::new(barrier);
    let waiter = {
        let barrier = barrier.clone();
        thread::spawn(move || {
            let token = barrier.arrive();
            barrier.wait(token);
            barrier.wait_parity(true);
        })
    };
    let led = barrier.arrive_and_wait().is_leader();
    drop(barrier.arrive_n(2));
    waiter.join().unwrap();
    assert!(!barrier.phase_parity(), "two phases completed");
    name_cases(reach, led);
}

#[test]
fn completer_wakes_a_parked_waiter() {
    model_reaching(CASES, |reach| {
        parked_observer_is_woken_twice(reach, Barrier::new(2))
    });
}

#[test]
fn completer_wakes_a_parked_waiter_after_the_completion_function() {
    model_reaching(CASES, |reach| {
        parked_observer_is_woken_twice(reach, Barrier::with_completion(2, || {}))
    });
}
