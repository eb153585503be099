//! Parity waits: a participant that drops its token and waits by parity sees
//! what the other participant wrote before arriving, over three phases
//! (parity 0, 1, 0: the parity wraps).

mod common;
use common::Slots;
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

const PHASES: usize = 3;

#[test]
fn wait_parity_sees_the_phase_writes() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_bounded(2, || {
        // Slot (parity, thread), double-buffered as in split_arrive_wait.
        let shared = Arc::new((Barrier::new(2), Slots::new(4)));
        let tokened = {
            let shared = shared.clone();
            thread::spawn(move || {
                let (barrier, slots) = &*shared;
                for phase in 0..PHASES {
                    slots.set((phase % 2) * 2, phase);
                    barrier.arrive_and_wait();
                    assert_eq!(slots.get((phase % 2) * 2 + 1), phase + 100);
                }
            })
        };
        let (barrier, slots) = &*shared;
        for phase in 0..PHASES {
            let parity = phase % 2 == 1;
            assert!(
                !barrier.try_wait_parity(parity),
                "phase {phase} cannot be complete yet"
            );
            slots.set((phase % 2) * 2 + 1, phase + 100);
            drop(barrier.arrive());
            barrier.wait_parity(parity);
            assert!(barrier.try_wait_parity(parity));
            assert_eq!(slots.get((phase % 2) * 2), phase);
        }
        tokened.join().unwrap();
    });
}
