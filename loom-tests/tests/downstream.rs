//! A downstream crate's own loom model, written the way a user of syncthreads
//! writes theirs: loom's `model`, `thread`, `Arc` and `UnsafeCell`, syncthreads
//! used through its public API only, and nothing from this crate's helpers.
//! Built with `RUSTFLAGS="--cfg loom"`, syncthreads's atomics and parking are
//! loom's too, so loom explores the barrier's interleavings along with the
//! user's and checks the user's cell against the barrier's ordering.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use syncthreads::Barrier;

/// The user's type: a slot that a producer fills and a consumer reads, one
/// barrier phase handing it over and the next handing it back.
struct Mailbox {
    barrier: Barrier,
    slot: UnsafeCell<u64>,
}

// SAFETY: the barrier orders every access to `slot`: the producer writes
// before its arrival and the consumer reads after its wait (phase 0); the
// consumer reads before its arrival and the producer rewrites after its
// wait (phase 1). loom fails the model if it does not.
unsafe impl Sync for Mailbox {}

#[test]
fn the_barrier_hands_a_slot_over_and_back() {
    loom::model(|| {
        let mailbox = Arc::new(Mailbox {
            barrier: Barrier::new(2),
            slot: UnsafeCell::new(0),
        });
        let producer = {
            let mailbox = mailbox.clone();
            thread::spawn(move || {
                // SAFETY: see `impl Sync for Mailbox`.
                mailbox.slot.with_mut(|p| unsafe { *p = 1 });
                // Split arrive/wait: the token waits for the consumer's arrival.
                let token = mailbox.barrier.arrive();
                mailbox.barrier.wait(token);
                mailbox.barrier.arrive_and_wait();
                // SAFETY: as above.
                mailbox.slot.with_mut(|p| unsafe { *p = 2 });
            })
        };
        mailbox.barrier.arrive_and_wait();
        // SAFETY: as above.
        let read = mailbox.slot.with(|p| unsafe { *p });
        assert_eq!(read, 1, "the consumer reads the producer's write");
        mailbox.barrier.arrive_and_wait();
        producer.join().unwrap();
        // SAFETY: the producer is joined.
        assert_eq!(mailbox.slot.with(|p| unsafe { *p }), 2);
    });
}
