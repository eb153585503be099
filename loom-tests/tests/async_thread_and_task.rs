//! A thread and a task wait for one phase: the thread parks in the parking
//! lot, the task registers in the task table, under the same key; the
//! completer's one wake reaches both, and both see every arrival's write.
//!
//! Cases: the task was pending at its first poll (and the completer's wake
//! brought it back) or its own arrival completed the phase; the thread
//! slept until woken. One layout: the main thread's part is one arrival,
//! which loom places anywhere among the others' (the cases); the roles of
//! the two spawned threads are the model's point, not their order.

mod common;
use common::{Polls, Slots};
use loom::{future::block_on, sync::Arc, thread};
use syncthreads::Barrier;

#[test]
fn one_completer_wakes_a_parked_thread_and_a_pending_task() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    let cases = &[
        "the task was pending",
        "the task was ready at its first poll",
        "event:park-sleeps",
    ];
    common::model_reaching_bounded(2, cases, |reach| {
        let barrier = Arc::new(Barrier::new(3));
        let slots = Arc::new(Slots::new(3));
        let thread_waiter = {
            let (barrier, slots) = (barrier.clone(), slots.clone());
            thread::spawn(move || {
                slots.set(0, 10);
                barrier.arrive_and_wait();
                assert_eq!((slots.get(1), slots.get(2)), (11, 12));
            })
        };
        let task = {
            let (barrier, slots) = (barrier.clone(), slots.clone());
            thread::spawn(move || {
                slots.set(1, 11);
                let polls = Polls::default();
                block_on(polls.count(barrier.arrive_and_wait_async()));
                assert_eq!((slots.get(0), slots.get(2)), (10, 12));
                polls.get()
            })
        };
        slots.set(2, 12);
        drop(barrier.arrive());
        thread_waiter.join().unwrap();
        reach.either(
            task.join().unwrap() > 1,
            "the task was pending",
            "the task was ready at its first poll",
        );
        let _ = reach.events();
        assert!(barrier.phase_parity());
    });
}
