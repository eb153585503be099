//! Joining a running `Barrier`: `add_participants` (SPEC §10). The joiners
//! take part from the current phase on; a join in a completion window joins
//! the next phase; misuse panics and leaves the word as it was.

mod common;

use common::ledger::Ledger;
use common::{assert_misuse, dbg, eventually, panic_of, running, scaled, watchdog};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::Duration;
use syncthreads::Barrier;

// ---- the current-phase rule ---------------------------------------------------

#[test]
fn a_join_makes_the_current_phase_wait_for_the_joiners() {
    let b = Barrier::new(2);
    let first = b.arrive();
    b.add_participants(3);
    assert_eq!(dbg(&b), running(false, 4, 5, 0));
    drop(b.arrive());
    assert!(
        !b.try_wait(&first),
        "the phase also owes the joiners' arrivals"
    );
    drop(b.arrive_n(2));
    assert!(!b.try_wait(&first));
    drop(b.arrive());
    assert!(b.try_wait(&first));
    // Every later phase expects them too.
    assert_eq!(dbg(&b), running(true, 5, 5, 0));
}

#[test]
fn a_joiner_that_arrives_belongs_to_the_phase_it_joined_across_threads() {
    // One participant completes phases alone until a second joins; from
    // then on its waits return only after the joiner arrived in that phase.
    // Even: the parity asserted at the end.
    const PHASES: usize = scaled(100, 10);
    let b = Barrier::new(1);
    let joiner_arrivals = AtomicUsize::new(0);
    watchdog(
        30,
        || dbg(&b),
        || {
            for _ in 0..3 {
                b.arrive_and_wait();
            }
            thread::scope(|s| {
                b.add_participants(1);
                s.spawn(|| {
                    for _ in 0..PHASES {
                        joiner_arrivals.fetch_add(1, Ordering::Relaxed);
                        b.arrive_and_wait();
                    }
                    b.arrive_and_drop();
                });
                for phase in 1..=PHASES {
                    b.arrive_and_wait();
                    // The wait is an acquire of the phase: the joiner's add is in.
                    assert!(joiner_arrivals.load(Ordering::Relaxed) >= phase);
                }
                b.arrive_and_wait(); // the phase the joiner leaves in
            });
            assert_eq!(dbg(&b), running(false, 1, 1, 0)); // 3 + PHASES + 1 phases, alone again
        },
    );
}

#[test]
fn a_join_while_the_phase_is_held_open_by_tx_makes_it_owe_arrivals_again() {
    // Every arrival is in; only the transaction count holds the phase.
    let b = Barrier::new(1);
    b.expect_tx(8);
    let token = b.arrive();
    b.add_participants(1);
    b.complete_tx(8);
    assert!(!b.try_wait(&token), "the joiner's arrival is still owed");
    drop(b.arrive());
    assert!(b.try_wait(&token));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

#[test]
fn joining_a_barrier_whose_participants_all_left_before_its_last_phase_completed() {
    // Expected is 0 but tx holds the phase open: not retired yet, so a
    // participant may still join and keep the barrier alive.
    let b = Barrier::new(1);
    b.expect_tx(1);
    b.arrive_and_drop();
    assert_eq!(dbg(&b), running(false, 0, 0, 1));
    b.add_participants(2);
    assert_eq!(dbg(&b), running(false, 2, 2, 1));
    b.complete_tx(1);
    drop(b.arrive_n(2));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

#[test]
fn a_join_up_to_max_is_allowed() {
    let b = Barrier::new(1);
    b.add_participants(Barrier::MAX - 1);
    assert_eq!(dbg(&b), running(false, Barrier::MAX, Barrier::MAX, 0));
    drop(b.arrive_n(Barrier::MAX));
    assert_eq!(dbg(&b), running(true, Barrier::MAX, Barrier::MAX, 0));
}

#[test]
fn adding_zero_changes_nothing() {
    let b = Barrier::new(3);
    drop(b.arrive());
    let before = dbg(&b);
    b.add_participants(0);
    assert_eq!(dbg(&b), before);
}

#[test]
fn joiners_wait_by_token_and_parity_like_everyone() {
    let b = Barrier::new(1);
    b.add_participants(1);
    let token = b.arrive();
    assert!(!b.try_wait_parity(false));
    let second = b.arrive();
    assert!(b.try_wait(&token) && b.try_wait(&second) && b.try_wait_parity(false));
}

// ---- the completion window ----------------------------------------------------

#[test]
fn a_join_in_the_completion_window_blocks_until_the_next_phase_and_joins_it() {
    let inside = AtomicBool::new(false);
    let joiner_called = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    let b = Barrier::with_completion(1, || {
        if inside.swap(true, Ordering::AcqRel) {
            return; // only phase 0's completion holds the window open
        }
        while !joiner_called.load(Ordering::Acquire) {
            thread::yield_now();
        }
        // Widen the window so that the join lands inside it; the
        // assertions hold wherever it lands, and a join that does not wait
        // shows up as `finished == false` below.
        thread::sleep(Duration::from_millis(50));
        finished.store(true, Ordering::Release);
    });
    watchdog(
        30,
        || dbg(&b),
        || {
            thread::scope(|s| {
                s.spawn(|| drop(b.arrive())); // completes phase 0
                s.spawn(|| {
                    eventually("the completion runs", || inside.load(Ordering::Acquire));
                    joiner_called.store(true, Ordering::Release);
                    b.add_participants(2);
                    assert!(
                        finished.load(Ordering::Acquire),
                        "the join returned before the completion function did"
                    );
                });
            });
        },
    );
    // It joined phase 1, not the phase that was completing.
    assert_eq!(dbg(&b), running(true, 3, 3, 0));
}

#[test]
fn adding_zero_in_the_completion_window_does_not_block() {
    let released = AtomicBool::new(false);
    let inside = AtomicBool::new(false);
    let b = Barrier::with_completion(1, || {
        if inside.swap(true, Ordering::AcqRel) {
            return;
        }
        // Holds the window open until the other thread's add_participants(0)
        // has returned: if it blocked on the window, this is a deadlock the
        // watchdog reports.
        while !released.load(Ordering::Acquire) {
            thread::yield_now();
        }
    });
    watchdog(
        30,
        || dbg(&b),
        || {
            thread::scope(|s| {
                s.spawn(|| drop(b.arrive()));
                eventually("the completion runs", || inside.load(Ordering::Acquire));
                b.add_participants(0);
                released.store(true, Ordering::Release);
            });
        },
    );
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
}

// ---- misuse: a clear panic, the word untouched ---------------------------------

#[test]
fn a_join_above_max_panics_and_changes_nothing() {
    let b = Barrier::new(5);
    drop(b.arrive_n(2));
    assert_misuse(
        &b,
        "syncthreads: add_participants(1048571): 5 participants per phase plus 1048571 would be 1048576, above Barrier::MAX (1048575)",
        || b.add_participants(Barrier::MAX - 4),
    );
    assert_misuse(&b, "above Barrier::MAX", || b.add_participants(usize::MAX));
    b.add_participants(Barrier::MAX - 5); // the largest that fits still does
    assert_eq!(dbg(&b), running(false, Barrier::MAX - 2, Barrier::MAX, 0));
}

#[test]
fn a_join_on_a_poisoned_barrier_panics_also_for_zero() {
    let b = Barrier::new(2);
    b.poison();
    for n in [0, 1, 7] {
        let before = dbg(&b);
        let message = panic_of(|| b.add_participants(n));
        assert!(
            message.starts_with(
                "syncthreads: barrier poisoned by poison() (seen by add_participants("
            ),
            "{message}"
        );
        assert_eq!(dbg(&b), before);
    }
}

#[test]
fn a_join_on_a_retired_barrier_panics_also_for_zero() {
    let b = Barrier::new(1);
    b.arrive_and_drop();
    for n in [0, 1] {
        assert_misuse(
            &b,
            &format!("syncthreads: add_participants({n}): the barrier is retired"),
            || b.add_participants(n),
        );
    }
    assert_misuse(&b, "the barrier is retired", || drop(b.arrive()));
}

static OWN: OnceLock<Barrier<fn()>> = OnceLock::new();
/// (message, word before, word after) of each join tried inside `OWN`'s completion.
static SEEN: Mutex<Vec<(String, String, String)>> = Mutex::new(Vec::new());

fn join_inside_completion() {
    let b = OWN.get().expect("barrier set");
    for n in [0, 3] {
        let before = dbg(b);
        let message = panic_of(|| b.add_participants(n));
        SEEN.lock().unwrap().push((message, before, dbg(b)));
    }
}

#[test]
fn a_join_inside_the_own_completion_function_panics_and_changes_nothing() {
    let b = OWN.get_or_init(|| Barrier::with_completion(2, join_inside_completion as fn()));
    drop(b.arrive_n(2));
    let seen = SEEN.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for (n, (message, before, after)) in [0, 3].iter().zip(seen.iter()) {
        assert_eq!(
            message,
            &format!("syncthreads: add_participants({n}): called inside this barrier's own completion function, where it would deadlock")
        );
        assert_eq!(before, after);
    }
    // The phase completed as if nothing had been tried.
    assert_eq!(dbg(b), running(true, 2, 2, 0));
}

// ---- churn: participants join and leave while phases run -------------------------

#[test]
fn barrier_churn_of_joins_and_leaves_publishes_once_per_phase() {
    const WORKERS: usize = 24;
    const PHASES: u64 = scaled(300, 6) as u64;
    let ledger = Mutex::new(Ledger::default());
    let stop = AtomicBool::new(false);
    let alive = AtomicUsize::new(WORKERS);
    let joins = AtomicUsize::new(0);
    let b = Barrier::with_completion(1, || ledger.lock().unwrap().complete());
    watchdog(
        120,
        || dbg(&b),
        || {
            thread::scope(|s| {
                for id in 1..=WORKERS {
                    let (b, ledger, stop, alive, joins) = (&b, &ledger, &stop, &alive, &joins);
                    s.spawn(move || {
                        let mut rng = common::mix(id as u64);
                        // A `Barrier` knows no identities: a worker that
                        // leaves and joins again at once may join the very
                        // phase it left in, as a new participant. So each
                        // join is a participant of its own.
                        for join in 0.. {
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                            let id = id * 1_000_000 + join;
                            b.add_participants(1);
                            joins.fetch_add(1, Ordering::Relaxed);
                            // The join is an acquire of the phase's start,
                            // so the ledger already names the joined phase.
                            ledger.lock().unwrap().join(id);
                            rng = common::mix(rng);
                            let stay = 1 + rng % 6;
                            for _ in 0..stay {
                                ledger.lock().unwrap().publish(id);
                                b.arrive_and_wait();
                            }
                            ledger.lock().unwrap().publish_and_leave(id);
                            b.arrive_and_drop();
                            thread::yield_now();
                        }
                        alive.fetch_sub(1, Ordering::Release);
                    });
                }
                // The anchor: participant 0 from phase 0 to the end, so the
                // barrier never retires under the joiners.
                ledger.lock().unwrap().join(0);
                // At least `PHASES` phases and three joins per worker (alone,
                // the anchor may finish the phases before the workers get a
                // core; joins that never come again hang here, into the
                // watchdog), then until every worker has gone.
                let mut phases = 0;
                let anchor_phase = || {
                    ledger.lock().unwrap().publish(0);
                    b.arrive_and_wait();
                };
                while phases < PHASES || joins.load(Ordering::Relaxed) < 3 * WORKERS {
                    anchor_phase();
                    phases += 1;
                }
                stop.store(true, Ordering::Relaxed);
                while alive.load(Ordering::Acquire) > 0 {
                    anchor_phase();
                }
                ledger.lock().unwrap().publish_and_leave(0);
                b.arrive_and_drop();
            });
        },
    );
    let l = ledger.lock().unwrap();
    assert!(l.checked > PHASES, "{} phases checked", l.checked);
    assert!(l.members.is_empty());
}
