//! A thread and a task wait for one phase: the thread parks in the parking
//! lot, the task registers in the task table, under the same key; the
//! completer's one wake reaches both, and both see every arrival's write.

mod common;
use common::Slots;
use loom::{future::block_on, sync::Arc, thread};
use syncthreads::Barrier;

#[test]
fn one_completer_wakes_a_parked_thread_and_a_pending_task() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_bounded(2, || {
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
                block_on(barrier.arrive_and_wait_async());
                assert_eq!((slots.get(0), slots.get(2)), (10, 12));
            })
        };
        slots.set(2, 12);
        drop(barrier.arrive());
        thread_waiter.join().unwrap();
        task.join().unwrap();
        assert!(barrier.phase_parity());
    });
}
