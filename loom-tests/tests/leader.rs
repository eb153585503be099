//! `arrive_and_wait`: exactly one leader per phase (the thread whose arrival
//! completed it): three threads for one phase, and two threads for three
//! phases (parity 0, 1, 0).
//!
//! Cases: the main thread led a phase, a spawned thread led one; a wait
//! slept until the leader woke it. One layout: every thread runs the same
//! program, so a swap explores the same schedules.

mod common;
use loom::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use syncthreads::Barrier;

const CASES: &[&str] = &[
    "the main thread led a phase",
    "a spawned thread led a phase",
    "event:park-sleeps",
];

/// `threads` threads run `phases` rounds of `arrive_and_wait`; each phase
/// must have had exactly one leader.
fn one_leader_per_phase(threads: usize, phases: usize) {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_reaching_bounded(2, CASES, move |reach| {
        let barrier = Arc::new(Barrier::new(threads));
        let leaders: Arc<Vec<AtomicUsize>> =
            Arc::new((0..phases).map(|_| AtomicUsize::new(0)).collect());
        let run = {
            let (barrier, leaders) = (barrier.clone(), leaders.clone());
            move || {
                let mut led = false;
                for count in leaders.iter() {
                    if barrier.arrive_and_wait().is_leader() {
                        led = true;
                        // Relaxed: a plain counter, read after the joins.
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
                led
            }
        };
        let others: Vec<_> = (1..threads).map(|_| thread::spawn(run.clone())).collect();
        if run() {
            reach.case("the main thread led a phase");
        }
        for other in others {
            if other.join().unwrap() {
                reach.case("a spawned thread led a phase");
            }
        }
        for (phase, count) in leaders.iter().enumerate() {
            // Relaxed: every increment happened-before the joins.
            assert_eq!(count.load(Ordering::Relaxed), 1, "leaders of phase {phase}");
        }
        assert_eq!(barrier.phase_parity(), phases % 2 == 1);
        let _ = reach.events();
    });
}

#[test]
fn three_threads_one_leader() {
    one_leader_per_phase(3, 1);
}

#[test]
fn two_threads_one_leader_per_phase_across_a_parity_wrap() {
    one_leader_per_phase(2, 3);
}
