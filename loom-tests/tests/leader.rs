//! `arrive_and_wait`: exactly one leader per phase (the thread whose arrival
//! completed it): three threads for one phase, and two threads for three
//! phases (parity 0, 1, 0).

mod common;
use loom::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use syncthreads::Barrier;

/// `threads` threads run `phases` rounds of `arrive_and_wait`; each phase
/// must have had exactly one leader.
fn one_leader_per_phase(threads: usize, phases: usize) {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_bounded(2, move || {
        let barrier = Arc::new(Barrier::new(threads));
        let leaders: Arc<Vec<AtomicUsize>> =
            Arc::new((0..phases).map(|_| AtomicUsize::new(0)).collect());
        let run = {
            let (barrier, leaders) = (barrier.clone(), leaders.clone());
            move || {
                for count in leaders.iter() {
                    if barrier.arrive_and_wait().is_leader() {
                        // Relaxed: a plain counter, read after the joins.
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        };
        let others: Vec<_> = (1..threads).map(|_| thread::spawn(run.clone())).collect();
        run();
        for other in others {
            other.join().unwrap();
        }
        for (phase, count) in leaders.iter().enumerate() {
            // Relaxed: every increment happened-before the joins.
            assert_eq!(count.load(Ordering::Relaxed), 1, "leaders of phase {phase}");
        }
        assert_eq!(barrier.phase_parity(), phases % 2 == 1);
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
