//! A future dropped while being woken: the task's arrival happened at the
//! call, it polls once (registering if the phase is still open) and drops
//! the future while the completer may be unlinking and waking its node. loom
//! checks every access to the node's links (a `loom::cell::UnsafeCell`), so
//! a waker touching the node after unlocking, or a drop that unlinks without
//! the lock, is a reported race; the arrival must stand.

mod common;
use common::{model_reaching, Probe};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

/// Both layouts: the task on the main thread (which loom runs first) and
/// the completer spawned, then the other way round. The cases: the poll
/// found the phase completed, or it registered (and the drop then races
/// the completer's unlink and wake).
#[test]
fn a_future_dropped_while_being_woken_is_safe_and_keeps_its_arrival() {
    for task_on_main in [true, false] {
        model_reaching(
            &["ready at the poll", "pending at the poll"],
            move |reach| {
                let barrier = Arc::new(Barrier::new(2));
                let task = |barrier: &Barrier, reach: &common::Reach| {
                    let probe = Probe::new();
                    let mut fut = Box::pin(barrier.arrive_and_wait_async());
                    reach.case(if probe.poll(fut.as_mut()).is_ready() {
                        "ready at the poll"
                    } else {
                        "pending at the poll"
                    });
                    drop(fut);
                    probe
                };
                let other = {
                    let (barrier, reach) = (barrier.clone(), reach.clone());
                    thread::spawn(move || {
                        if task_on_main {
                            drop(barrier.arrive());
                            None
                        } else {
                            Some(task(&barrier, &reach))
                        }
                    })
                };
                let probe = if task_on_main {
                    Some(task(&barrier, reach))
                } else {
                    drop(barrier.arrive());
                    None
                };
                let probe = probe.or(other.join().unwrap()).unwrap();
                assert!(probe.wakes() <= 1);
                assert!(
                    barrier.phase_parity(),
                    "the dropped future's arrival counted"
                );
            },
        );
    }
}
