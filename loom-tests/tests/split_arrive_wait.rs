//! Split arrive/wait: what a thread writes before `arrive` is visible to every
//! participant after its `wait` returns, for three phases (parity 0, 1, 0).
//! The data is double-buffered by parity, as CUDA code does: slot
//! `(phase % 2, thread)` is rewritten two phases later, which is only
//! race-free if the barrier orders it after the other thread's read.
//!
//! Cases: a wait slept until the other thread's arrival woke it, and a
//! wait about to sleep found the phase completed under the parking lot's
//! lock (the waker came in between). One layout: both threads run the same
//! program, so a swap explores the same schedules.

mod common;
use common::{Reach, Slots};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

const THREADS: usize = 2;
const PHASES: usize = 3;
const CASES: &[&str] = &["event:park-sleeps", "event:park-refused"];

fn participant(barrier: &Barrier, slots: &Slots, me: usize) {
    for phase in 0..PHASES {
        let buffer = (phase % 2) * THREADS;
        slots.set(buffer + me, phase * 10 + me);
        let token = barrier.arrive();
        // Work that does not depend on the others could go here.
        barrier.wait(token);
        for other in 0..THREADS {
            assert_eq!(slots.get(buffer + other), phase * 10 + other);
        }
    }
}

#[test]
fn writes_before_arrive_are_visible_after_wait() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_reaching_bounded(2, CASES, |reach: &Reach| {
        let shared = Arc::new((Barrier::new(THREADS), Slots::new(2 * THREADS)));
        let other = {
            let shared = shared.clone();
            thread::spawn(move || participant(&shared.0, &shared.1, 1))
        };
        participant(&shared.0, &shared.1, 0);
        other.join().unwrap();
        assert!(shared.0.phase_parity(), "three phases completed: parity 1");
        let _ = reach.events();
    });
}
