//! Timed waits racing the completion. Under loom the clock advances 1 ms per
//! reading and a timed park returns at once, so a short timeout gives loom a
//! few check points at which the completing arrival may or may not have
//! landed. Whatever the interleaving: `Ok` means the phase's writes are
//! visible, `Err` hands the token back and the arrival still counts.

mod common;
use common::{model, model_reaching, Slots};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_millis(2);

#[test]
fn wait_timeout_races_the_completion() {
    model(|| {
        let shared = Arc::new((Barrier::new(2), Slots::new(1)));
        let completer = {
            let shared = shared.clone();
            thread::spawn(move || {
                shared.1.set(0, 7);
                drop(shared.0.arrive());
            })
        };
        let (barrier, slots) = &*shared;
        let token = barrier.arrive();
        match barrier.wait_timeout(token, TIMEOUT) {
            Ok(()) => assert_eq!(slots.get(0), 7),
            Err(token) => {
                // The arrival stands: the completer's arrival alone ends the phase.
                barrier.wait(token);
                assert_eq!(slots.get(0), 7);
            }
        }
        completer.join().unwrap();
        assert!(barrier.phase_parity());
    });
}

/// The waiter does not arrive, so it only reads the barrier: it runs on a
/// spawned thread and the completer on the main thread, which loom runs
/// first. The other way round, every execution timed out (the completer's
/// CAS never landed before the waiter's first loads: see `README.md`,
/// "Which thread runs first"), and `true` was never checked; the model
/// now requires both outcomes.
#[test]
fn wait_parity_timeout_races_the_completion() {
    model_reaching(&["in time", "timed out"], |reach| {
        let shared = Arc::new((Barrier::new(1), Slots::new(1)));
        let waiter = {
            let (shared, reach) = (shared.clone(), reach.clone());
            thread::spawn(move || {
                let (barrier, slots) = &*shared;
                if barrier.wait_parity_timeout(false, TIMEOUT) {
                    reach.case("in time");
                    assert_eq!(slots.get(0), 7);
                } else {
                    reach.case("timed out");
                    barrier.wait_parity(false);
                    assert_eq!(slots.get(0), 7);
                }
            })
        };
        shared.1.set(0, 7);
        drop(shared.0.arrive());
        waiter.join().unwrap();
    });
}
