//! A task registering while the completer wakes: the task polls (and
//! re-polls with a new waker) while another thread completes the phase.
//! Whatever the interleaving, a poll that returned `Pending` is followed by
//! exactly one wake, through the waker of the latest poll; a lost wake-up
//! leaves the task parked forever, which loom reports as a deadlock.

mod common;
use common::{model_reaching, Probe};
use loom::{sync::Arc, thread};
use std::pin::pin;
use syncthreads::Barrier;

/// The cases: the first poll found the phase completed, the second did,
/// or the task waited for the wake through its latest waker.
#[test]
fn a_pending_task_is_woken_once_through_its_latest_waker() {
    model_reaching(
        &[
            "ready at the first poll",
            "ready at the second poll",
            "woken",
        ],
        |reach| {
            let barrier = Arc::new(Barrier::new(2));
            let token = barrier.arrive();
            let completer = {
                let barrier = barrier.clone();
                thread::spawn(move || drop(barrier.arrive()))
            };
            let (first, latest) = (Probe::new(), Probe::new());
            let mut fut = pin!(barrier.wait_async(token));
            if first.poll(fut.as_mut()).is_ready() {
                reach.case("ready at the first poll");
            } else if latest.poll(fut.as_mut()).is_ready() {
                reach.case("ready at the second poll");
            } else {
                latest.wait_for(1);
                assert!(latest.poll(fut.as_mut()).is_ready());
                assert_eq!(first.wakes(), 0, "a replaced waker was woken");
                reach.case("woken");
            }
            completer.join().unwrap();
            assert!(first.wakes() + latest.wakes() <= 1, "woken twice");
            assert!(barrier.phase_parity());
        },
    );
}

/// A task waits for two phases in turn (token, then parity) while a thread
/// completes both: its registration for the second phase may race the
/// completer's wake of the first, which must not take it (it was linked
/// after that wake began) nor lose the second wake.
///
/// Cases: each wait was pending (and then woken) or ready at its first
/// poll. One layout: the task's polls are the main thread's program (a
/// spawned task is only polled later, which the completer's preemptions
/// cover: both outcomes of each poll come up).
#[test]
fn a_task_registers_again_for_the_next_phase_while_the_completer_wakes() {
    let cases = &[
        "the first wait was pending",
        "the first wait was ready at once",
        "the second wait was pending",
        "the second wait was ready at once",
    ];
    model_reaching(cases, |reach| {
        let barrier = Arc::new(Barrier::new(2));
        let token = barrier.arrive();
        let completer = {
            let barrier = barrier.clone();
            thread::spawn(move || {
                drop(barrier.arrive());
                drop(barrier.arrive_n(2));
            })
        };
        let probe = Probe::new();
        let mut woken = 0;
        let mut first = pin!(barrier.wait_async(token));
        while probe.poll(first.as_mut()).is_pending() {
            woken += 1;
            probe.wait_for(woken);
        }
        reach.either(
            woken > 0,
            "the first wait was pending",
            "the first wait was ready at once",
        );
        let before = woken;
        let mut second = pin!(barrier.wait_parity_async(true));
        while probe.poll(second.as_mut()).is_pending() {
            woken += 1;
            probe.wait_for(woken);
        }
        reach.either(
            woken > before,
            "the second wait was pending",
            "the second wait was ready at once",
        );
        completer.join().unwrap();
        assert_eq!(probe.wakes(), woken, "a wake the task did not wait for");
        assert!(!barrier.phase_parity(), "two phases completed");
    });
}
