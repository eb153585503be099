//! Parity waits: a participant that drops its token and waits by parity sees
//! what the other participant wrote before arriving, over three phases
//! (parity 0, 1, 0: the parity wraps).
//!
//! Cases: the parity waiter's arrival completed a phase, the other
//! thread's did; the parity wait slept until woken; a wait about to sleep
//! found its phase completed under the parking lot's lock. One layout (the
//! parity waiter on the main thread): both arrival orders come up in it
//! (the first two cases), and the swap would double a capped model.

mod common;
use common::Slots;
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

const PHASES: usize = 3;

#[test]
fn wait_parity_sees_the_phase_writes() {
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    common::model_reaching_bounded(
        2,
        &[
            "the parity waiter completed a phase",
            "the other thread completed a phase",
            "event:park-sleeps",
            "event:park-refused",
        ],
        |reach| {
            // Slot (parity, thread), double-buffered as in split_arrive_wait.
            let shared = Arc::new((Barrier::new(2), Slots::new(4)));
            let tokened = {
                let shared = shared.clone();
                thread::spawn(move || {
                    let (barrier, slots) = &*shared;
                    let mut led = [false; PHASES];
                    for (phase, led) in led.iter_mut().enumerate() {
                        slots.set((phase % 2) * 2, phase);
                        *led = barrier.arrive_and_wait().is_leader();
                        assert_eq!(slots.get((phase % 2) * 2 + 1), phase + 100);
                    }
                    led
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
            for led in tokened.join().unwrap() {
                reach.either(
                    led,
                    "the other thread completed a phase",
                    "the parity waiter completed a phase",
                );
            }
            let _ = reach.events();
        },
    );
}
