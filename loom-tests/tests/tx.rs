//! Transaction counts: a "copy engine" thread writes the data and calls
//! `complete_tx`; the participant's `arrive_tx` (or `expect_tx` + `arrive`)
//! may come before or after it (then tx goes negative first). The phase
//! completes exactly when both happened, and the waiter sees the data.
//!
//! Cases: in some phase the copy engine's bytes were all in before the
//! participant's arrival began (tx went negative first), in some phase the
//! arrival was in before the engine's first `complete_tx` began; the
//! participant's wait slept until woken. One layout (the participant on
//! the main thread): both orders come up in it (the cases).

mod common;
use common::{Order, Slots};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

const PHASES: usize = 2;
const BYTES: u32 = 8;
const CASES: &[&str] = &[
    "the bytes were in before the arrival",
    "the arrival was in before the bytes",
    "event:park-sleeps",
];

/// The copy engine: per phase, write the data, complete the bytes, then wait
/// by parity so its next `complete_tx` cannot land in the current phase.
/// `began` and `ended` record (outside the model) how many phases' bytes
/// the engine has begun and finished completing.
fn copy_engine(barrier: &Barrier, slots: &Slots, split: bool, began: &Order, ended: &Order) {
    for phase in 0..PHASES {
        slots.set(phase % 2, phase + 7);
        began.bump();
        if split {
            barrier.complete_tx(BYTES / 2);
            barrier.complete_tx(BYTES / 2);
        } else {
            barrier.complete_tx(BYTES);
        }
        ended.bump();
        barrier.wait_parity(phase % 2 == 1);
    }
}

fn run(split: bool) {
    // The split variant capped at 2 preemptions: the suite's budget
    // (README.md, "Bounds").
    let bound = if split { 2 } else { usize::MAX };
    common::model_reaching_bounded(bound, CASES, move |reach| {
        let shared = Arc::new((Barrier::new(1), Slots::new(2)));
        let (began, ended) = (Order::new(), Order::new());
        let engine = {
            let (shared, began, ended) = (shared.clone(), began.clone(), ended.clone());
            thread::spawn(move || copy_engine(&shared.0, &shared.1, split, &began, &ended))
        };
        let (barrier, slots) = &*shared;
        for phase in 0..PHASES {
            if ended.get() > phase {
                reach.case("the bytes were in before the arrival");
            }
            let token = if split {
                barrier.expect_tx(BYTES);
                barrier.arrive()
            } else {
                barrier.arrive_tx(1, BYTES)
            };
            if began.get() <= phase {
                reach.case("the arrival was in before the bytes");
            }
            barrier.wait(token);
            assert_eq!(slots.get(phase % 2), phase + 7);
        }
        engine.join().unwrap();
        let _ = reach.events();
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
