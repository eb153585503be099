//! More pending tasks than one wake batch: the completer wakes the task
//! table's wakers a batch at a time (the lock is dropped between batches),
//! so every task of a key, however many, must be woken once, also when a
//! batch fills up exactly and the next pass starts. A late task registers
//! while the passes run: it is either woken or sees the completed phase.

mod common;
use common::model_reaching_with;
use loom::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};
use syncthreads::Barrier;

/// A wake batch holds 32 wakers (park/tasks.rs): one full batch and a
/// second pass.
const TASKS: usize = 40;

/// A waker that only counts. (Not `common::Probe`: its unpark of the main
/// thread could land while that thread waits in `join`, which loom's join
/// does not allow; the main thread reads the counts after the join.)
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: std::sync::Arc<Self>) {
        // Release: the main thread reads the count after the join anyway.
        self.0.fetch_add(1, Ordering::Release);
    }
}

fn poll<F: Future>(fut: Pin<&mut F>, count: &std::sync::Arc<Count>) -> Poll<F::Output> {
    let waker = Waker::from(count.clone());
    fut.poll(&mut Context::from_waker(&waker))
}

///
/// Cases: the late task was pending at its poll (and woken), or the phase
/// was completed by then. One layout: the completer's wake passes are the
/// race, and they run on the spawned thread against every point of the
/// late task's poll either way.
#[test]
fn more_pending_tasks_than_a_wake_batch_are_each_woken_once() {
    // Forty tasks' registrations and wakes are many scheduling points in
    // one execution, beyond loom's default branch limit.
    let cases = &["the late task was pending", "the late task was ready"];
    model_reaching_with(usize::MAX, Some(20_000), cases, |reach| {
        let barrier = Arc::new(Barrier::new(2));
        let token = barrier.arrive();
        let counts: Vec<_> = (0..=TASKS)
            .map(|_| std::sync::Arc::new(Count(AtomicUsize::new(0))))
            .collect();
        let mut futures: Vec<_> = (0..TASKS)
            .map(|_| Box::pin(barrier.wait_parity_async(false)))
            .collect();
        for (fut, count) in futures.iter_mut().zip(&counts) {
            assert!(poll(fut.as_mut(), count).is_pending());
        }
        let completer = {
            let barrier = barrier.clone();
            thread::spawn(move || drop(barrier.arrive()))
        };
        // A late task, racing the completer's passes.
        let late = &counts[TASKS];
        let mut fut = Box::pin(barrier.wait_async(token));
        let pending = poll(fut.as_mut(), late).is_pending();
        completer.join().unwrap();
        reach.either(
            pending,
            "the late task was pending",
            "the late task was ready",
        );
        // Acquire: the completer's wakes are before the join anyway.
        let woken = late.0.load(Ordering::Acquire);
        assert_eq!(
            woken,
            usize::from(pending),
            "the late task: woken iff it was pending"
        );
        assert!(poll(fut.as_mut(), late).is_ready());
        for (i, (fut, count)) in futures.iter_mut().zip(&counts).enumerate() {
            // Acquire: as above.
            assert_eq!(
                count.0.load(Ordering::Acquire),
                1,
                "task {i} of {TASKS}: woken once"
            );
            assert!(poll(fut.as_mut(), count).is_ready());
        }
    });
}

/// A waker whose `wake` panics.
struct Boom;

impl Wake for Boom {
    fn wake(self: std::sync::Arc<Self>) {
        panic!("boom");
    }
}

/// A waker that panics (std's contract says it should not) costs no other
/// task its wake-up, in its own batch or the next: the completer's
/// `arrive` takes effect, wakes every other task, and then the panic comes
/// out of it.
///
/// No cases and one execution: the tasks are all pending before the
/// completer is spawned, so nothing races; the model is about the wake
/// passes themselves (its count, 1, is pinned).
#[test]
fn a_panicking_waker_costs_no_other_task_its_wake_up() {
    common::quiet_expected_panics();
    common::model_with(usize::MAX, Some(20_000), || {
        let barrier = Arc::new(Barrier::new(2));
        drop(barrier.arrive());
        let counts: Vec<_> = (0..TASKS)
            .map(|_| std::sync::Arc::new(Count(AtomicUsize::new(0))))
            .collect();
        let mut futures: Vec<_> = (0..TASKS)
            .map(|_| Box::pin(barrier.wait_parity_async(false)))
            .collect();
        let boom = Waker::from(std::sync::Arc::new(Boom));
        for (i, (fut, count)) in futures.iter_mut().zip(&counts).enumerate() {
            let pending = if i == 1 {
                fut.as_mut()
                    .poll(&mut Context::from_waker(&boom))
                    .is_pending()
            } else {
                poll(fut.as_mut(), count).is_pending()
            };
            assert!(pending);
        }
        let completer = {
            let barrier = barrier.clone();
            thread::spawn(move || {
                let arrived = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    drop(barrier.arrive());
                }));
                common::panic_message(&*arrived.unwrap_err())
            })
        };
        assert_eq!(
            completer.join().unwrap(),
            "boom",
            "the waker's panic comes out"
        );
        assert!(barrier.phase_parity(), "phase 0 completed");
        for (i, (fut, count)) in futures.iter_mut().zip(&counts).enumerate() {
            // Acquire: the completer's wakes are before the join anyway.
            let woken = count.0.load(Ordering::Acquire);
            assert_eq!(woken, usize::from(i != 1), "task {i} of {TASKS}");
            assert!(poll(fut.as_mut(), count).is_ready());
        }
    });
}
