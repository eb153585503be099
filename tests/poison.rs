//! Poisoning: by `poison()` or a panicking completion; every arrive, wait and
//! tx operation panics afterwards, the queries never do, and the poisoned
//! phase stays (SPEC §1, "Poisoning").

mod common;

use common::{dbg, eventually, on_threads, panic_message, panic_of, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};
use syncthreads::{ArrivalToken, Barrier, Completion};

/// Runs every arrive, tx and wait operation on a poisoned `b` and checks each
/// panics with `prefix` followed by `(seen by <op>)`, leaving the word as it
/// was. `tokens` are tokens of `b` for the three token waits.
fn assert_every_operation_panics<F: Completion>(
    b: &Barrier<F>,
    prefix: &str,
    mut tokens: Vec<ArrivalToken>,
) {
    let before = dbg(b);
    let check = |op: &str, f: &mut dyn FnMut()| {
        let message = panic_of(f);
        assert_eq!(message, format!("{prefix} (seen by {op})"));
        assert_eq!(dbg(b), before, "{op} changed a poisoned barrier");
    };
    check("arrive()", &mut || drop(b.arrive()));
    check("arrive_n(1)", &mut || drop(b.arrive_n(1)));
    check("arrive_and_wait()", &mut || {
        let _ = b.arrive_and_wait();
    });
    check("arrive_and_drop()", &mut || b.arrive_and_drop());
    check("arrive_and_drop_n(1)", &mut || b.arrive_and_drop_n(1));
    check("arrive_tx(1, 3)", &mut || drop(b.arrive_tx(1, 3)));
    check("expect_tx(3)", &mut || b.expect_tx(3));
    check("complete_tx(3)", &mut || b.complete_tx(3));
    check("wait_parity", &mut || b.wait_parity(false));
    check("wait_parity", &mut || b.wait_parity(true));
    check("wait_parity_timeout", &mut || {
        let _ = b.wait_parity_timeout(false, Duration::ZERO);
    });
    check("wait_parity_timeout", &mut || {
        let _ = b.wait_parity_timeout(true, Duration::MAX);
    });
    let t = std::cell::Cell::new(tokens.pop());
    check("wait", &mut || b.wait(t.take().unwrap()));
    let t = std::cell::Cell::new(tokens.pop());
    check("wait_timeout", &mut || {
        drop(b.wait_timeout(t.take().unwrap(), Duration::ZERO))
    });
    let t = std::cell::Cell::new(tokens.pop());
    check("wait_deadline", &mut || {
        drop(b.wait_deadline(
            t.take().unwrap(),
            Instant::now() + Duration::from_secs(3600),
        ))
    });
}

#[test]
#[should_panic(expected = "syncthreads: barrier poisoned by poison() (seen by arrive())")]
fn arrive_on_a_poisoned_barrier_panics() {
    let b = Barrier::new(2);
    b.poison();
    let _ = b.arrive();
}

#[test]
#[should_panic(expected = "syncthreads: barrier poisoned by poison() (seen by wait)")]
fn wait_whose_phase_completed_before_the_poisoning_panics() {
    let b = Barrier::new(1);
    let t = b.arrive(); // phase 0 completes
    b.poison();
    b.wait(t);
}

#[test]
fn poison_makes_every_arrive_wait_and_tx_operation_panic() {
    let b = Barrier::new(4);
    let tokens: Vec<_> = (0..3).map(|_| b.arrive()).collect();
    b.poison();
    assert!(b.is_poisoned());
    assert_every_operation_panics(&b, "syncthreads: barrier poisoned by poison()", tokens);
}

#[test]
fn waits_for_phases_completed_before_the_poisoning_panic_too() {
    let b = Barrier::new(3);
    let tokens: Vec<_> = (0..3).map(|_| b.arrive()).collect(); // phase 0 completes
    assert!(tokens.iter().all(|t| b.try_wait(t)));
    b.poison();
    assert_every_operation_panics(&b, "syncthreads: barrier poisoned by poison()", tokens);
}

#[test]
fn queries_never_panic_on_a_poisoned_barrier_and_the_phase_stays() {
    let b = Barrier::new(2);
    drop(b.arrive_n(2)); // now in phase 1
    let old = b.arrive(); // phase 1, incomplete
    b.poison();
    for _ in 0..2 {
        assert!(b.is_poisoned());
        assert!(b.phase_parity(), "still in phase 1");
        assert!(!b.try_wait(&old), "phase 1 never completed");
        assert!(b.try_wait_parity(false));
        assert!(!b.try_wait_parity(true));
        let debug = dbg(&b);
        assert!(
            debug.starts_with("Barrier { phase_parity: true,"),
            "{debug}"
        );
        assert!(debug.contains("expected: 2,"), "{debug}");
        assert!(debug.ends_with("poisoned: true }"), "{debug}");
        b.poison(); // idempotent
    }
    drop(old);
}

#[test]
fn completion_panic_goes_on_in_the_completer_and_poisons_with_the_phase() {
    let mut phase = 0;
    let b = Barrier::with_completion(2, move || {
        phase += 1;
        if phase == 3 {
            panic!("completion failed");
        }
    });
    for _ in 0..2 {
        drop(b.arrive_n(2));
    }
    assert!(!b.is_poisoned());
    let t = b.arrive(); // phase 2
    let payload = catch_unwind(AssertUnwindSafe(|| b.arrive())).unwrap_err();
    assert_eq!(panic_message(&*payload), "completion failed");
    assert!(b.is_poisoned());
    assert!(
        !b.phase_parity(),
        "the panicking phase (2) did not complete"
    );
    assert!(!b.try_wait(&t));
    assert!(b.try_wait_parity(true) && !b.try_wait_parity(false));
    let tokens = vec![t];
    let before = dbg(&b);
    assert!(before.ends_with("poisoned: true }"), "{before}");
    let message = panic_of(|| b.arrive_and_wait());
    assert_eq!(
        message,
        "syncthreads: barrier poisoned: completion panicked in phase 2 (seen by arrive_and_wait())"
    );
    let message = panic_of(|| b.wait(tokens.into_iter().next().unwrap()));
    assert_eq!(
        message,
        "syncthreads: barrier poisoned: completion panicked in phase 2 (seen by wait)"
    );
    assert_eq!(dbg(&b), before);
}

#[test]
fn every_operation_panics_after_a_completion_panic() {
    let b = Barrier::with_completion(4, || panic!("boom"));
    let tokens: Vec<_> = (0..3).map(|_| b.arrive()).collect();
    let payload = catch_unwind(AssertUnwindSafe(|| b.arrive_and_wait())).unwrap_err();
    assert_eq!(panic_message(&*payload), "boom");
    assert_every_operation_panics(
        &b,
        "syncthreads: barrier poisoned: completion panicked in phase 0",
        tokens,
    );
}

static SELF_POISON: OnceLock<Barrier<fn()>> = OnceLock::new();

fn poison_inside_completion() {
    SELF_POISON.get().expect("barrier set").poison();
}

#[test]
fn poison_inside_the_completion_takes_effect_when_it_returns() {
    let b =
        SELF_POISON.get_or_init(|| Barrier::with_completion(2, poison_inside_completion as fn()));
    let t = b.arrive();
    let u = b.arrive(); // runs the completion, which poisons
    assert!(b.is_poisoned());
    assert!(!b.phase_parity(), "the phase did not complete");
    assert!(!b.try_wait(&t) && !b.try_wait(&u));
    let message = panic_of(|| b.wait(t));
    assert_eq!(
        message,
        "syncthreads: barrier poisoned by poison() (seen by wait)"
    );
    drop(u);
}

static SELF_POISON_LEADER: OnceLock<Barrier<fn()>> = OnceLock::new();

fn poison_leader_inside_completion() {
    SELF_POISON_LEADER.get().expect("barrier set").poison();
}

#[test]
fn arrive_and_wait_whose_completion_poisons_the_barrier_panics() {
    // The completer's arrive_and_wait must not return (as leader) for a phase
    // that did not complete: poison() during the completion means the phase
    // does not complete, and waits on a poisoned barrier panic.
    let b = SELF_POISON_LEADER
        .get_or_init(|| Barrier::with_completion(1, poison_leader_inside_completion as fn()));
    let result = catch_unwind(|| b.arrive_and_wait());
    assert!(b.is_poisoned());
    assert!(!b.phase_parity(), "phase 0 did not complete");
    let payload = result.expect_err("arrive_and_wait returned for a phase that never completed");
    let message = panic_message(&*payload);
    assert!(
        message.starts_with("syncthreads: barrier poisoned by poison() (seen by arrive_and_wait"),
        "{message}"
    );
}

// ---- multi-threaded ----------------------------------------------------------------

#[test]
fn poison_wakes_a_parked_waiter() {
    let b = Barrier::new(2);
    let message = watchdog(
        20,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let waiter = s
                    .spawn(|| catch_unwind(|| b.arrive_and_wait()).map_err(|p| panic_message(&*p)));
                // Wait until the waiter has arrived, then long enough for its
                // spin phase to be over, so that it is parked (the outcome is
                // asserted either way).
                eventually("the waiter waits", || {
                    dbg(&b) == common::running(false, 1, 2, 0)
                });
                thread::sleep(Duration::from_millis(50));
                b.poison();
                waiter.join().unwrap().unwrap_err()
            })
        },
    );
    // The waiting half of arrive_and_wait saw the poisoning.
    assert!(
        message.starts_with("syncthreads: barrier poisoned by poison() (seen by arrive_and_wait"),
        "{message}"
    );
}

#[test]
fn poison_wakes_parked_waiters_of_every_kind() {
    let b = &Barrier::new(3);
    let t1 = b.arrive();
    let t2 = b.arrive();
    let messages = watchdog(
        20,
        || dbg(b),
        || {
            thread::scope(|s| {
                let catch = |f: Box<dyn FnOnce() + Send + '_>| {
                    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p))
                };
                let waiters = vec![
                    s.spawn(move || catch(Box::new(|| b.wait(t1)))),
                    s.spawn(move || {
                        catch(Box::new(|| {
                            drop(b.wait_timeout(t2, Duration::from_secs(3600)))
                        }))
                    }),
                    s.spawn(move || catch(Box::new(|| b.wait_parity(false)))),
                    s.spawn(move || {
                        catch(Box::new(|| {
                            let _ = b.wait_parity_timeout(false, Duration::MAX);
                        }))
                    }),
                ];
                thread::sleep(Duration::from_millis(50));
                b.poison();
                waiters
                    .into_iter()
                    .map(|w| w.join().unwrap().unwrap_err())
                    .collect::<Vec<_>>()
            })
        },
    );
    let prefix = "syncthreads: barrier poisoned by poison() (seen by ";
    assert_eq!(
        messages,
        [
            "wait)",
            "wait_timeout)",
            "wait_parity)",
            "wait_parity_timeout)"
        ]
        .map(|op| format!("{prefix}{op}"))
    );
}

#[test]
fn panicking_completion_reaches_every_waiter_as_a_panic() {
    const THREADS: usize = 5;
    let mut phase = 0;
    let b = Barrier::with_completion(THREADS, move || {
        phase += 1;
        if phase == 2 {
            // Give the other threads time to get past spinning and park
            // (asserted the same either way).
            thread::sleep(Duration::from_millis(30));
            panic!("completion of phase 1 failed");
        }
    });
    let root = AtomicUsize::new(0);
    let poisoned = AtomicUsize::new(0);
    let other = Mutex::new(Vec::new());
    on_threads(
        20,
        || dbg(&b),
        0..THREADS,
        |_| {
            let result = catch_unwind(AssertUnwindSafe(|| {
                for _ in 0..3 {
                    b.arrive_and_wait();
                }
            }));
            let message = panic_message(&*result.expect_err("every thread must panic"));
            if message == "completion of phase 1 failed" {
            root.fetch_add(1, Ordering::Relaxed);
        } else if message.starts_with(
            "syncthreads: barrier poisoned: completion panicked in phase 1 (seen by arrive_and_wait",
        ) {
            poisoned.fetch_add(1, Ordering::Relaxed);
        } else {
            other.lock().unwrap().push(message);
        }
        },
    );
    assert_eq!(*other.lock().unwrap(), Vec::<String>::new());
    assert_eq!(
        root.load(Ordering::Relaxed),
        1,
        "the completer re-raises the completion's panic"
    );
    assert_eq!(poisoned.load(Ordering::Relaxed), THREADS - 1);
    assert!(
        b.is_poisoned() && b.phase_parity(),
        "stuck in phase 1: {b:?}"
    );
}

#[test]
fn arrival_during_a_panicking_completion_panics_instead_of_hanging() {
    let b = Barrier::with_completion(1, || {
        // Give a concurrent arrival time to land while we run; the outcome
        // is asserted whether or not it does.
        thread::sleep(Duration::from_millis(30));
        panic!("completion failed");
    });
    let messages = watchdog(
        20,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let first =
                    s.spawn(|| catch_unwind(|| drop(b.arrive())).map_err(|p| panic_message(&*p)));
                let second = s.spawn(|| {
                    thread::sleep(Duration::from_millis(5));
                    catch_unwind(|| drop(b.arrive())).map_err(|p| panic_message(&*p))
                });
                (first.join().unwrap(), second.join().unwrap())
            })
        },
    );
    // Whichever arrived first completed phase 0 and re-raised the panic; the
    // other saw the poisoned barrier.
    let mut got = [messages.0.unwrap_err(), messages.1.unwrap_err()];
    got.sort();
    assert_eq!(
        got,
        [
            "completion failed".to_owned(),
            "syncthreads: barrier poisoned: completion panicked in phase 0 (seen by arrive())"
                .to_owned()
        ]
    );
}

#[test]
fn poison_during_the_completion_makes_every_arrive_and_wait_panic() {
    let in_completion = AtomicBool::new(false);
    let poisoned = AtomicBool::new(false);
    let b = Barrier::with_completion(2, || {
        in_completion.store(true, Ordering::Release);
        while !poisoned.load(Ordering::Acquire) {
            thread::yield_now();
        }
    });
    let results = watchdog(
        20,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            catch_unwind(|| b.arrive_and_wait().is_leader())
                                .map_err(|p| panic_message(&*p))
                        })
                    })
                    .collect();
                eventually("the completion runs", || {
                    in_completion.load(Ordering::Acquire)
                });
                b.poison();
                poisoned.store(true, Ordering::Release);
                threads
                    .into_iter()
                    .map(|t| t.join().unwrap())
                    .collect::<Vec<_>>()
            })
        },
    );
    assert!(b.is_poisoned() && !b.phase_parity(), "{b:?}");
    for result in results {
        let message =
            result.expect_err("an arrive_and_wait returned although phase 0 never completed");
        assert!(
            message
                .starts_with("syncthreads: barrier poisoned by poison() (seen by arrive_and_wait"),
            "{message}"
        );
    }
}
