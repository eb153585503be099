//! Poisoning wakes a parked waiter: `poison()` from another thread, or a
//! completion function that panics, makes every waiter panic with the
//! poisoned message instead of sleeping forever; a `poison()` that lands
//! while the completion function runs (the `COMPLETING_POISON` state) wins:
//! the phase does not complete. Panics stay inside the model's threads
//! (`catch_unwind`), as loom requires.

mod common;
use common::{model_reaching, panic_message, quiet_expected_panics, Order};
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

/// Cases: the waiter slept until the poison woke it, a wait about to sleep
/// found the poison under the parking lot's lock, and it never slept (its
/// arrival or first look saw the poison). Both layouts: the poisoner on the
/// main thread, then the waiter.
#[test]
fn poison_wakes_a_parked_waiter() {
    quiet_expected_panics();
    for waiter_first in [false, true] {
        model_reaching(
            &["event:park-sleeps", "event:park-refused", "never slept"],
            move |reach| {
                let barrier = Arc::new(Barrier::new(2));
                // Either its arrive sees the poison, or its wait does (parked or not).
                let wait = |barrier: &Barrier| {
                    panics(|| {
                        barrier.arrive_and_wait();
                    })
                };
                let message = if waiter_first {
                    let poisoner = {
                        let barrier = barrier.clone();
                        thread::spawn(move || barrier.poison())
                    };
                    let message = wait(&barrier);
                    poisoner.join().unwrap();
                    message
                } else {
                    let waiter = {
                        let barrier = barrier.clone();
                        thread::spawn(move || wait(&barrier))
                    };
                    barrier.poison();
                    waiter.join().unwrap()
                };
                if !reach.slept() {
                    reach.case("never slept");
                }
                check_poisoned(&barrier, &message);
            },
        );
    }
}

fn check_poisoned(barrier: &Barrier, message: &str) {
    {
        assert_eq!(
            message,
            "syncthreads: barrier poisoned by poison() (seen by arrive_and_wait())"
        );
        assert!(barrier.is_poisoned());
        assert!(
            !barrier.phase_parity(),
            "a poisoned barrier stays in its phase"
        );
    }
}

/// Cases: the main thread's arrival completed the phase (and ran the
/// panicking completion), the other thread's did; the other participant
/// slept until the poison woke it. One layout: both threads run the same
/// program, and both complete the phase in it (the cases).
#[test]
fn panicking_completion_wakes_a_parked_waiter() {
    quiet_expected_panics();
    let cases = &[
        "the main thread completed",
        "the spawned thread completed",
        "event:park-sleeps",
    ];
    model_reaching(cases, |reach| {
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
        reach.either(
            mine == "boom",
            "the main thread completed",
            "the spawned thread completed",
        );
        let _ = reach.events();
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
///
/// Cases: the other participant's wait panicked while the completion
/// function still ran (it sees the poison at its first look), or only after
/// the function returned. No wait parks here: the poison is in before the
/// wait begins. One layout: the flags fix each thread's part (the main
/// thread completes), and both ends of the wait come up in it.
#[test]
fn poison_during_the_completion_function_wins() {
    quiet_expected_panics();
    let cases = &[
        "the wait panicked while the completion ran",
        "the wait panicked after the completion",
    ];
    model_reaching(cases, |reach| {
        // Outside the model: the other thread's wait has panicked; it had
        // when the completion function returned.
        let (waited, early) = (Order::new(), Order::new());
        // (the completion is running, poison() has returned, thread 1 arrived)
        let flags = Arc::new([
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
        ]);
        let barrier = {
            let (flags, waited, early) = (flags.clone(), waited.clone(), early.clone());
            Arc::new(Barrier::with_completion(2, move || {
                // Release / Acquire: orders the poison() against this run.
                flags[0].store(true, Ordering::Release);
                until(&flags[1]);
                early.set(waited.get());
            }))
        };
        let other = {
            let (barrier, flags, waited) = (barrier.clone(), flags.clone(), waited.clone());
            thread::spawn(move || {
                let token = barrier.arrive();
                // Release: the main thread's arrival is the completing one.
                flags[2].store(true, Ordering::Release);
                until(&flags[0]);
                barrier.poison();
                // Release: lets the completion function return.
                flags[1].store(true, Ordering::Release);
                let message = panics(|| barrier.wait(token));
                waited.set(1);
                message
            })
        };
        until(&flags[2]);
        let mine = panics(|| {
            barrier.arrive_and_wait();
        });
        let theirs = other.join().unwrap();
        reach.either(
            early.get() == 1,
            "the wait panicked while the completion ran",
            "the wait panicked after the completion",
        );
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
///
/// Cases: the phase completed before the poison, the poison came first
/// (the main thread's `arrive_and_wait` panics); the main thread's wait
/// slept. One layout: the poison lands before, inside and after the
/// completion in it (the cases), which is what the model is about.
#[test]
fn poison_racing_a_phase_with_a_completion_function() {
    quiet_expected_panics();
    let cases = &[
        "the phase completed first",
        "the poison came first",
        "event:park-sleeps",
    ];
    model_reaching(cases, |reach| {
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
        reach.either(
            completed,
            "the phase completed first",
            "the poison came first",
        );
        let _ = reach.events();
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
