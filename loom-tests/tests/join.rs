//! Joining a running barrier (`add_participants`): the join races the
//! arrival that completes the phase, and lands in the completion window
//! (where it waits for the next phase and joins that one). Wherever it
//! lands, it counts once, the joiner's arrival belongs to the phase it
//! joined, and the joiner sees what the phase before it published (a join is
//! an acquire operation).

mod common;
use common::{both_layouts, Slots};
use loom::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};
use syncthreads::Barrier;

/// The parity of the current phase, read with a `Relaxed` load (`Debug`),
/// so that only the join itself can order what follows it.
fn parity_relaxed<F>(barrier: &Barrier<F>) -> bool {
    format!("{barrier:?}").contains("phase_parity: true")
}

/// Both layouts (`common::both_layouts`): the joiner on the main thread,
/// then the stayer.
#[test]
fn join_racing_the_completing_arrival() {
    // Slot 0: the stayer's data of phase 0.
    both_layouts(
        &["joined phase 0 or 2", "joined phase 1"],
        || (Barrier::new(1), Slots::new(1)),
        |(barrier, slots), reach| {
            barrier.add_participants(1);
            // The phase joined cannot complete before this arrival, so the
            // word is still in it: phase 0, 1 or 2.
            if parity_relaxed(barrier) {
                reach.case("joined phase 1");
                // Phase 0 completed before the join, and the join (an
                // Acquire RMW) sees the stayer's write before it.
                assert_eq!(slots.get(0), 7);
            } else {
                reach.case("joined phase 0 or 2");
            }
            barrier.arrive_and_drop();
        },
        |(barrier, slots), _| {
            slots.set(0, 7);
            // Alone, this completes phase 0 unless the join came first.
            barrier.arrive_and_wait();
            barrier.arrive_and_wait();
        },
        |(barrier, _)| {
            // Two phases completed with the stayer whichever phase the
            // joiner took part in, and it left again.
            assert_eq!(
                format!("{barrier:?}"),
                "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
            );
        },
    );
}

type Counted = Barrier<Box<dyn FnMut() + Send>>;

/// Both layouts, as above.
#[test]
fn join_in_the_completion_window_joins_the_next_phase() {
    // Slot 0: written by each completion, read by the joiner.
    both_layouts(
        &["joined phase 0 or 2", "joined phase 1"],
        || {
            let slots = Arc::new(Slots::new(1));
            let runs = Arc::new(AtomicUsize::new(0));
            let barrier: Counted = {
                let (slots, runs) = (slots.clone(), runs.clone());
                Barrier::with_completion(
                    1,
                    Box::new(move || {
                        // Relaxed: the completions are ordered by the barrier.
                        let run = runs.fetch_add(1, Ordering::Relaxed);
                        slots.set(0, 100 + run);
                    }),
                )
            };
            (barrier, slots, runs)
        },
        |(barrier, slots, _), reach| {
            barrier.add_participants(1);
            if parity_relaxed(barrier) {
                reach.case("joined phase 1");
                // Joined phase 1 (perhaps after waiting out phase 0's
                // completion function): that function's write is visible.
                assert_eq!(slots.get(0), 100);
            } else {
                reach.case("joined phase 0 or 2");
            }
            barrier.arrive_and_drop();
        },
        |(barrier, _, _), _| {
            barrier.arrive_and_wait();
            barrier.arrive_and_wait();
        },
        |(barrier, _, runs)| {
            // Relaxed: the runs happened-before the join of the stayer.
            assert_eq!(runs.load(Ordering::Relaxed), 2);
            assert_eq!(
                format!("{barrier:?}"),
                "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
            );
        },
    );
}
