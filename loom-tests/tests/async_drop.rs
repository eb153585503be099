//! A future dropped while being woken: the task's arrival happened at the
//! call, it polls once (registering if the phase is still open) and drops
//! the future while the completer may be unlinking and waking its node. loom
//! checks every access to the node's links (a `loom::cell::UnsafeCell`), so
//! a waker touching the node after unlocking, or a drop that unlinks without
//! the lock, is a reported race; the arrival must stand.

mod common;
use common::{model, Probe};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

#[test]
fn a_future_dropped_while_being_woken_is_safe_and_keeps_its_arrival() {
    model(|| {
        let barrier = Arc::new(Barrier::new(2));
        let probe = Probe::new();
        let mut fut = Box::pin(barrier.arrive_and_wait_async());
        let completer = {
            let barrier = barrier.clone();
            thread::spawn(move || drop(barrier.arrive()))
        };
        let _ = probe.poll(fut.as_mut());
        drop(fut);
        completer.join().unwrap();
        assert!(probe.wakes() <= 1);
        assert!(
            barrier.phase_parity(),
            "the dropped future's arrival counted"
        );
    });
}
