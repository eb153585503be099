//! Poisoning wakes a parked waiter: `poison()` from another thread, or a
//! completion function that panics, makes every waiter panic with the
//! poisoned message instead of sleeping forever; a `poison()` that lands
//! while the completion function runs (the `COMPLETING_POISON` state) wins:
//! the phase does not complete. Panics stay inside the model's threads
//! (`catch_unwind`), as loom requires.

mod common;
use common::{model, panic_message, quiet_expected_panics};
use loom::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::Barrier;

/// Runs `f`, which must panic; returns its message.
fn panics(f: impl FnOnce()) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("expected a panic"),
        Err(payload) => panic_message(&*payload),
    }
}

#[test]
fn poison_wakes_a_parked_waiter() {
    quiet_expected_panics();
    model(|| {
        let barrier = Arc::new(Barrier::new(2));
        let waiter = {
            let barrier = barrier.clone();
            // Either its arrive sees the poison, or its wait does (parked or not).
            thread::spawn(move || {
                panics(|| {
                    barrier.arrive_and_wait();
                })
            })
        };
        barrier.poison();
        let message = waiter.join().unwrap();
        assert_eq!(
            message,
            "syncthreads: barrier poisoned by poison() (seen by arrive_and_wait())"
        );
        assert!(barrier.is_poisoned());
        assert!(
            !barrier.phase_parity(),
            "a poisoned barrier stays in its phase"
        );
    });
}

#[test]
fn panicking_completion_wakes_a_parked_waiter() {
    quiet_expected_panics();
    model(|| {
        let barrier = Arc::new(Barrier::with_completion(2, || panic!("boom")));
        let other = {
            let barrier = barrier.clone();
            thread::spawn(move || {
                panics(|| {
                    barrier.arrive_and_wait();
                })
            })
        };
        let mine = panics(|| {
            barrier.arrive_and_wait();
        });
        let theirs = other.join().unwrap();
        // The completer's panic goes on; the other participant, parked or
        // not, sees the poison.
        let mut messages = [mine, theirs];
        messages.sort();
        assert_eq!(
            messages,
            [
                "boom".to_string(),
                "syncthreads: barrier poisoned: completion panicked in phase 0 (seen by arrive_and_wait())"
                    .to_string()
            ]
        );
        assert!(barrier.is_poisoned());
    });
}

/// Polls `flag` (yielding to loom between polls) until it is set.
fn until(flag: &AtomicBool) {
    // Acquire: pairs with the Release store that set it.
    while !flag.load(Ordering::Acquire) {
        thread::yield_now();
    }
}

/// `poison()` lands while the completion function runs (the completion waits
/// for it): the phase must not complete, the completer's `arrive_and_wait`
/// and the other participant's wait (parked or not, started before the
/// completion returns) must panic with the `poison()` message.
#[test]
fn poison_during_the_completion_function_wins() {
    quiet_expected_panics();
    model(|| {
        // (the completion is running, poison() has returned, thread 1 arrived)
        let flags = Arc::new([
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
        ]);
        let barrier = {
            let flags = flags.clone();
            Arc::new(Barrier::with_completion(2, move || {
                // Release / Acquire: orders the poison() against this run.
                flags[0].store(true, Ordering::Release);
                until(&flags[1]);
            }))
        };
        let other = {
            let (barrier, flags) = (barrier.clone(), flags.clone());
            thread::spawn(move || {
                let token = barrier.arrive();
                // Release: the main thread's arrival is the completing one.
                flags[2].store(true, Ordering::Release);
                until(&flags[0]);
                barrier.poison();
                // Release: lets the completion function return.
                flags[1].store(true, Ordering::Release);
                panics(|| barrier.wait(token))
            })
        };
        until(&flags[2]);
        let mine = panics(|| {
            barrier.arrive_and_wait();
        });
        let theirs = other.join().unwrap();
        let poisoned = "syncthreads: barrier poisoned by poison() (seen by";
        assert_eq!(mine, format!("{poisoned} arrive_and_wait())"));
        assert_eq!(theirs, format!("{poisoned} wait)"));
        assert!(barrier.is_poisoned());
        assert!(
            !barrier.phase_parity(),
            "the poisoned phase must not complete"
        );
        assert!(!barrier.try_wait_parity(false));
    });
}

/// `poison()` races the whole phase, completion function included: before
/// the last arrival, while the function runs, or after the phase completed.
/// Whatever the order, the poisoner's wait panics; the phase completed (the
/// parity moved) only if the completion function ran to its end, and a
/// participant that returned normally saw it complete.
#[test]
fn poison_racing_a_phase_with_a_completion_function() {
    quiet_expected_panics();
    model(|| {
        let runs = Arc::new(AtomicUsize::new(0));
        let barrier = {
            let runs = runs.clone();
            Arc::new(Barrier::with_completion(2, move || {
                // Relaxed: read after the joins.
                runs.fetch_add(1, Ordering::Relaxed);
            }))
        };
        let other = {
            let barrier = barrier.clone();
            thread::spawn(move || {
                let token = barrier.arrive();
                barrier.poison();
                panics(|| barrier.wait(token))
            })
        };
        let mine = std::panic::catch_unwind(AssertUnwindSafe(|| barrier.arrive_and_wait()))
            .map_err(|payload| panic_message(&*payload));
        let theirs = other.join().unwrap();
        assert_eq!(
            theirs,
            "syncthreads: barrier poisoned by poison() (seen by wait)"
        );
        assert!(barrier.is_poisoned());
        let completed = barrier.phase_parity();
        // Relaxed: the run happened-before the join or this thread's own return.
        let runs = runs.load(Ordering::Relaxed);
        assert!(runs <= 1, "the completion ran {runs} times");
        if completed {
            assert_eq!(runs, 1, "phase 0 completed without its completion");
        }
        match mine {
            Ok(_) => assert!(
                completed,
                "arrive_and_wait returned but phase 0 did not complete"
            ),
            Err(message) => assert!(
                message.starts_with("syncthreads: barrier poisoned by poison()"),
                "{message}"
            ),
        }
    });
}
