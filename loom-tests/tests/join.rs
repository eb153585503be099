//! Joining a running barrier (`add_participants`): the join races the
//! arrival that completes the phase, and lands in the completion window
//! (where it waits for the next phase and joins that one). Wherever it
//! lands, it counts once, the joiner's arrival belongs to the phase it
//! joined, and the joiner sees what the phase before it published (a join is
//! an acquire operation).

mod common;
use common::{model, Slots};
use loom::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use syncthreads::Barrier;

/// The parity of the current phase, read with a `Relaxed` load (`Debug`),
/// so that only the join itself can order what follows it.
fn parity_relaxed<F>(barrier: &Barrier<F>) -> bool {
    format!("{barrier:?}").contains("phase_parity: true")
}

#[test]
fn join_racing_the_completing_arrival() {
    model(|| {
        // Slot 0: the stayer's data of phase 0.
        let shared = Arc::new((Barrier::new(1), Slots::new(1)));
        let stayer = {
            let shared = shared.clone();
            thread::spawn(move || {
                let (barrier, slots) = &*shared;
                slots.set(0, 7);
                // Alone, this completes phase 0 unless the join came first.
                barrier.arrive_and_wait();
                barrier.arrive_and_wait();
            })
        };
        let (barrier, slots) = &*shared;
        barrier.add_participants(1);
        // The phase joined cannot complete before this arrival, so the word
        // is still in it: phase 0, 1 or 2.
        if parity_relaxed(barrier) {
            // Joined phase 1: phase 0 completed before the join, and the
            // join (an Acquire RMW) sees the stayer's write before it.
            assert_eq!(slots.get(0), 7);
        }
        barrier.arrive_and_drop();
        stayer.join().unwrap();
        // Two phases completed with the stayer whichever phase the joiner
        // took part in, and it left again.
        assert_eq!(
            format!("{barrier:?}"),
            "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
    });
}

#[test]
fn join_in_the_completion_window_joins_the_next_phase() {
    model(|| {
        // Slot 0: written by each completion, read by the joiner.
        let slots = Arc::new(Slots::new(1));
        let runs = Arc::new(AtomicUsize::new(0));
        let barrier = {
            let (slots, runs) = (slots.clone(), runs.clone());
            Arc::new(Barrier::with_completion(1, move || {
                // Relaxed: the completions are ordered by the barrier.
                let run = runs.fetch_add(1, Ordering::Relaxed);
                slots.set(0, 100 + run);
            }))
        };
        let stayer = {
            let barrier = barrier.clone();
            thread::spawn(move || {
                barrier.arrive_and_wait();
                barrier.arrive_and_wait();
            })
        };
        barrier.add_participants(1);
        if parity_relaxed(&barrier) {
            // Joined phase 1 (perhaps after waiting out phase 0's
            // completion function): that function's write is visible.
            assert_eq!(slots.get(0), 100);
        }
        barrier.arrive_and_drop();
        stayer.join().unwrap();
        // Relaxed: the runs happened-before the join of the stayer.
        assert_eq!(runs.load(Ordering::Relaxed), 2);
        assert_eq!(
            format!("{:?}", *barrier),
            "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
    });
}
