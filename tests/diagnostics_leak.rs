//! The `diagnostics` feature and a leaked pending future: its record stays
//! for the life of the process, so this test has a process (a test file)
//! of its own, where no other test looks at `stalls()`.
#![cfg(feature = "diagnostics")]

use std::future::Future;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};
use syncthreads::diagnostics::{stalls, Stall};
use syncthreads::Barrier;

/// The stalls of a `Barrier` once some time has passed since the wait
/// began (`stalls(ZERO)` lists a wait only once it is older than zero);
/// at most 20 s.
fn barrier_stalls() -> Vec<Stall> {
    let start = Instant::now();
    loop {
        let found: Vec<Stall> = stalls(Duration::ZERO)
            .into_iter()
            .filter(|s| s.to_string().starts_with("syncthreads: Barrier stalled"))
            .collect();
        if !found.is_empty() {
            return found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the leaked future's wait is not listed"
        );
        std::hint::spin_loop();
    }
}

/// Regression: a pending future's record pointed at the barrier it
/// borrowed, and a future may be leaked; the barrier then moved out of its
/// (freed) box, and `stalls()` read the freed memory. The record now keeps
/// what the barrier said when the wait began.
#[test]
fn a_leaked_pending_future_never_reads_its_barrier_again() {
    let boxed = Box::new(Barrier::new(2));
    let token = boxed.arrive();
    let mut wait = Box::pin(boxed.wait_async(token));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(wait.as_mut().poll(&mut cx).is_pending());
    std::mem::forget(wait);
    // Nothing borrows the barrier now: it moves out of its box, which is
    // freed, into another, and goes on to the next phase.
    let barrier: Box<Barrier> = Box::new(*boxed);
    drop(barrier.arrive());
    let found = barrier_stalls();
    assert_eq!(found.len(), 1, "{found:?}");
    let stall = &found[0];
    assert_eq!(stall.waiting().len(), 1, "{stall}");
    assert_eq!(stall.waiting()[0].name(), "task");
    assert_eq!(stall.phase(), 0);
    // The barrier as the poll found it, said to be so.
    assert_eq!(
        stall.barrier(),
        "Barrier { phase_parity: false, pending: 1, expected: 2, tx: 0, poisoned: false }"
    );
    assert!(
        stall
            .to_string()
            .contains("barrier: Barrier { phase_parity: false, pending: 1, expected: 2, tx: 0, poisoned: false } (when the latest task began waiting)"),
        "{stall}"
    );
    // Freed, too: the record is still read safely.
    drop(barrier);
    assert_eq!(barrier_stalls().len(), 1);
}
