//! The non-blocking queries are acquire operations: a thread that polls
//! `try_wait`, `try_wait_parity` or `phase_parity` until it says the phase
//! completed, and then reads plain data the other participant wrote before
//! its arrival, reads it ordered (loom fails the model on a racing read).
//! The poller never blocks in the barrier, so its only synchronization is
//! the query's own load; and the other thread is the completer in some
//! schedules, so the poller's own arrival (where it has one) does not order
//! the read either.

mod common;
use common::{model, Slots};
use loom::{sync::Arc, thread};
use mbarrier::Barrier;

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

/// Polls `done` (yielding to loom between polls) until it holds.
fn poll(done: impl Fn() -> bool) {
    while !done() {
        thread::yield_now();
    }
}

#[test]
fn polling_try_wait_then_reading_the_phase_data() {
    model(|| {
        let shared = Arc::new((Barrier::new(2), Slots::new(1)));
        let other = writer(&shared);
        let (barrier, slots) = &*shared;
        let token = barrier.arrive();
        poll(|| barrier.try_wait(&token));
        assert_eq!(slots.get(0), 7);
        other.join().unwrap();
    });
}

#[test]
fn polling_try_wait_parity_then_reading_the_phase_data() {
    model(|| {
        // The poller does not arrive: an observer of the writer's phase.
        let shared = Arc::new((Barrier::new(1), Slots::new(1)));
        let other = writer(&shared);
        let (barrier, slots) = &*shared;
        poll(|| barrier.try_wait_parity(false));
        assert_eq!(slots.get(0), 7);
        other.join().unwrap();
    });
}

#[test]
fn polling_phase_parity_then_reading_the_phase_data() {
    model(|| {
        let shared = Arc::new((Barrier::new(1), Slots::new(1)));
        let other = writer(&shared);
        let (barrier, slots) = &*shared;
        poll(|| barrier.phase_parity());
        assert_eq!(slots.get(0), 7);
        other.join().unwrap();
    });
}
