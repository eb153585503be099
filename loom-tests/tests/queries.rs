//! The non-blocking queries are acquire operations: a thread that polls
//! `try_wait`, `try_wait_parity` or `phase_parity` until it says the phase
//! completed, and then reads plain data the other participant wrote before
//! its arrival, reads it ordered (loom fails the model on a racing read).
//! The poller never blocks in the barrier, so its only synchronization is
//! the query's own load; and the other thread is the completer in some
//! schedules, so the poller's own arrival (where it has one) does not order
//! the read either.
//!
//! A poller that does not arrive only reads the barrier; it runs on the
//! main thread (which loom runs first) and on a spawned one. On an
//! unpatched loom the main-thread layout never let the writer's arrival
//! land before the first poll (the writer reads the word before its CAS,
//! and loom checked a write only against the last access, the writer's own
//! read; see `README.md`, "Which thread runs first").

mod common;
use common::{model_reaching, Reach, Slots};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

/// Spawns a participant that writes slot 0 and arrives once, on a barrier
/// expecting `expected` arrivals.
fn writer(shared: &Arc<(Barrier, Slots)>) -> thread::JoinHandle<()> {
    let shared = shared.clone();
    thread::spawn(move || {
        let (barrier, slots) = &*shared;
        slots.set(0, 7);
        drop(barrier.arrive());
    })
}

/// Polls `done` (yielding to loom between polls) until it holds; returns
/// whether the first poll said so.
fn poll(done: impl Fn() -> bool) -> bool {
    let first = done();
    if !first {
        thread::yield_now();
        while !done() {
            thread::yield_now();
        }
    }
    first
}

/// The poller arrives too (a token to poll with), on a barrier of two.
/// Cases: its first poll saw the phase completed (the writer's arrival
/// came first, or completed it before the poll), or a later one did. Both
/// layouts: the poller on the main thread, then on the spawned one.
#[test]
fn polling_try_wait_then_reading_the_phase_data() {
    for poller_on_main in [true, false] {
        model_reaching(CASES, move |reach| {
            let shared = Arc::new((Barrier::new(2), Slots::new(1)));
            let poller = |shared: &(Barrier, Slots), reach: &Reach| {
                let (barrier, slots) = shared;
                let token = barrier.arrive();
                let at_once = poll(|| barrier.try_wait(&token));
                reach.either(at_once, "at once", "later");
                assert_eq!(slots.get(0), 7);
            };
            if poller_on_main {
                let other = writer(&shared);
                poller(&shared, reach);
                other.join().unwrap();
            } else {
                let other = {
                    let (shared, reach) = (shared.clone(), reach.clone());
                    thread::spawn(move || poller(&shared, &reach))
                };
                let (barrier, slots) = &*shared;
                slots.set(0, 7);
                drop(barrier.arrive());
                other.join().unwrap();
            }
        });
    }
}

/// The observer's cases: its first poll saw the phase completed, or a later one.
const CASES: &[&str] = &["at once", "later"];

/// An observer of phase 0 (it does not arrive) polls `done` until it holds
/// and then reads slot 0; the other thread writes slot 0 and arrives,
/// completing the phase of a barrier expecting one arrival. Both layouts
/// (the observer on the main thread, which loom runs first, and on the
/// spawned one), and in each both cases must come up: the first poll sees
/// the phase completed, or a later one does.
fn observe(done: fn(&Barrier) -> bool) {
    for observer_on_main in [true, false] {
        model_reaching(CASES, move |reach| {
            let shared = Arc::new((Barrier::new(1), Slots::new(1)));
            let look = move |shared: &(Barrier, Slots), reach: &Reach| {
                let (barrier, slots) = shared;
                reach.case(if poll(|| done(barrier)) {
                    "at once"
                } else {
                    "later"
                });
                assert_eq!(slots.get(0), 7);
            };
            let write = |shared: &(Barrier, Slots)| {
                shared.1.set(0, 7);
                drop(shared.0.arrive());
            };
            let other = {
                let (shared, reach) = (shared.clone(), reach.clone());
                thread::spawn(move || {
                    if observer_on_main {
                        write(&shared)
                    } else {
                        look(&shared, &reach)
                    }
                })
            };
            if observer_on_main {
                look(&shared, reach)
            } else {
                write(&shared)
            }
            other.join().unwrap();
        });
    }
}

#[test]
fn polling_try_wait_parity_then_reading_the_phase_data() {
    observe(|barrier| barrier.try_wait_parity(false))
}

#[test]
fn polling_phase_parity_then_reading_the_phase_data() {
    observe(|barrier| barrier.phase_parity())
}
