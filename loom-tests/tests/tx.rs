//! Transaction counts: a "copy engine" thread writes the data and calls
//! `complete_tx`; the participant's `arrive_tx` (or `expect_tx` + `arrive`)
//! may come before or after it (then tx goes negative first). The phase
//! completes exactly when both happened, and the waiter sees the data.

mod common;
use common::Slots;
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

const PHASES: usize = 2;
const BYTES: u32 = 8;

/// The copy engine: per phase, write the data, complete the bytes, then wait
/// by parity so its next `complete_tx` cannot land in the current phase.
fn copy_engine(barrier: &Barrier, slots: &Slots, split: bool) {
    for phase in 0..PHASES {
        slots.set(phase % 2, phase + 7);
        if split {
            barrier.complete_tx(BYTES / 2);
            barrier.complete_tx(BYTES / 2);
        } else {
            barrier.complete_tx(BYTES);
        }
        barrier.wait_parity(phase % 2 == 1);
    }
}

fn run(split: bool) {
    // The split variant capped at 2 preemptions: the suite's budget
    // (README.md, "Bounds").
    common::model_bounded(if split { 2 } else { usize::MAX }, move || {
        let shared = Arc::new((Barrier::new(1), Slots::new(2)));
        let engine = {
            let shared = shared.clone();
            thread::spawn(move || copy_engine(&shared.0, &shared.1, split))
        };
        let (barrier, slots) = &*shared;
        for phase in 0..PHASES {
            let token = if split {
                barrier.expect_tx(BYTES);
                barrier.arrive()
            } else {
                barrier.arrive_tx(1, BYTES)
            };
            barrier.wait(token);
            assert_eq!(slots.get(phase % 2), phase + 7);
        }
        engine.join().unwrap();
        assert_eq!(
            format!("{barrier:?}"),
            "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
    });
}

#[test]
fn arrive_tx_with_complete_tx_from_another_thread() {
    run(false);
}

#[test]
fn expect_tx_then_arrive_with_split_complete_tx() {
    run(true);
}
