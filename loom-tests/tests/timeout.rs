//! Timed waits racing the completion. Under loom the clock advances 1 ms per
//! reading, and a timed park times out only once the clock has passed its
//! deadline (one still ahead sleeps until the completion wakes it), so a
//! short timeout gives loom a few check points at which the completing
//! arrival may or may not have landed. Whatever the interleaving: `Ok`
//! means the phase's writes are visible, `Err` hands the token back and the
//! arrival still counts.

mod common;
use common::{model_reaching, Slots};
use loom::{sync::Arc, thread};
use std::time::Duration;
use syncthreads::Barrier;

const TIMEOUT: Duration = Duration::from_millis(2);

/// Both layouts: the timed waiter on the main thread (which loom runs
/// first), then on the spawned thread. Each must come through both
/// outcomes.
#[test]
fn wait_timeout_races_the_completion() {
    for waiter_on_main in [true, false] {
        model_reaching(&["in time", "timed out"], move |reach| {
            let shared = Arc::new((Barrier::new(2), Slots::new(1)));
            let complete = |shared: &(Barrier, Slots)| {
                shared.1.set(0, 7);
                drop(shared.0.arrive());
            };
            let wait = |shared: &(Barrier, Slots), reach: &common::Reach| {
                let (barrier, slots) = shared;
                let token = barrier.arrive();
                match barrier.wait_timeout(token, TIMEOUT) {
                    Ok(()) => {
                        reach.case("in time");
                        assert_eq!(slots.get(0), 7);
                    }
                    Err(token) => {
                        reach.case("timed out");
                        // The arrival stands: the other arrival alone ends the phase.
                        barrier.wait(token);
                        assert_eq!(slots.get(0), 7);
                    }
                }
            };
            let other = {
                let (shared, reach) = (shared.clone(), reach.clone());
                thread::spawn(move || {
                    if waiter_on_main {
                        complete(&shared)
                    } else {
                        wait(&shared, &reach)
                    }
                })
            };
            if waiter_on_main {
                wait(&shared, reach)
            } else {
                complete(&shared)
            }
            other.join().unwrap();
            assert!(shared.0.phase_parity());
        });
    }
}

/// The waiter does not arrive, so it only reads the barrier; it runs on the
/// main thread (which loom runs first), then on the spawned thread. With
/// loom's tracking of one last access per atomic, the main-thread layout
/// never saw the completion in time (`README.md`, "Which thread runs
/// first"); on the patched loom both layouts reach both outcomes.
#[test]
fn wait_parity_timeout_races_the_completion() {
    for waiter_on_main in [true, false] {
        model_reaching(&["in time", "timed out"], move |reach| {
            let shared = Arc::new((Barrier::new(1), Slots::new(1)));
            let wait = |shared: &(Barrier, Slots), reach: &common::Reach| {
                let (barrier, slots) = shared;
                if barrier.wait_parity_timeout(false, TIMEOUT) {
                    reach.case("in time");
                    assert_eq!(slots.get(0), 7);
                } else {
                    reach.case("timed out");
                    barrier.wait_parity(false);
                    assert_eq!(slots.get(0), 7);
                }
            };
            let complete = |shared: &(Barrier, Slots)| {
                shared.1.set(0, 7);
                drop(shared.0.arrive());
            };
            let other = {
                let (shared, reach) = (shared.clone(), reach.clone());
                thread::spawn(move || {
                    if waiter_on_main {
                        complete(&shared)
                    } else {
                        wait(&shared, &reach)
                    }
                })
            };
            if waiter_on_main {
                wait(&shared, reach)
            } else {
                complete(&shared)
            }
            other.join().unwrap();
        });
    }
}
