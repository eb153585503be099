//! The races around three bugs of a `Team` (team.rs, "Leaving" and
//! "Joining"; state.rs, the poisoned completion window), each a model that
//! names its cases and fails if one is never reached:
//!
//! - a joined seat dropped before its first arrival while the team's other
//!   seat arrives and leaves: once that seat's leave is in, the drop ends
//!   phase 0 with nobody left, one completion, retired in phase 1 (it used
//!   to complete an empty phase 1 too);
//! - a joined seat's `arrive_and_drop` racing the `complete_tx` and the
//!   leaves that end phase 0: whichever ends it, nothing panics, one
//!   completion, retired in phase 1 (the joined seat's leave used to panic
//!   when its own arrival retired the team);
//! - `poison()` racing a completion function: once `poison()` returned,
//!   `is_poisoned()`, `Debug` and `add_participants(0)` say poisoned,
//!   also while the completion function runs (they used to wait for it).

mod common;
use common::{model_reaching, panic_message, quiet_expected_panics, word};
use loom::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{Barrier, Team, TeamShape};

/// A team of `seats` (capacity 3, one leaf of fan-in 4, never flat) that
/// counts its completions.
fn counted_tree(seats: usize) -> (Arc<Team<impl syncthreads::Completion>>, Arc<AtomicUsize>) {
    common::counted(seats, 3, 4)
}

/// Seat 0 arrives and leaves on its own thread; the main thread joins
/// (rank 1, before seat 0's thread starts) and drops the joined seat
/// before its first arrival. If seat 0's leave is in before the drop (its
/// thread said so), phase 0 still waited for the joined seat, so both left
/// in it: the drop completes it once and the team retires in phase 1.
/// Otherwise seat 0's leave may land in phase 1 (after the drop ended
/// phase 0): then two completions, retired in phase 2; never an empty one.
#[test]
fn a_joined_seat_dropped_after_the_others_left_retires_the_team_in_its_phase() {
    quiet_expected_panics();
    model_reaching(
        &[
            "seat 0 left before the joined seat's drop",
            "the joined seat dropped, seat 0's leave not seen yet",
        ],
        |reach| {
            let (team, runs) = counted_tree(1);
            let joined = team.join().expect("ranks 1 and 2 are free");
            let left = Arc::new(AtomicBool::new(false));
            let seat0 = {
                let (team, left) = (team.clone(), left.clone());
                thread::spawn(move || {
                    let seat = team.seat(0);
                    drop(seat.arrive());
                    seat.arrive_and_drop();
                    // Release: the drop that reads this comes after the leave.
                    left.store(true, Ordering::Release);
                })
            };
            // Acquire: pairs with the store after seat 0's leave.
            let after_leave = left.load(Ordering::Acquire);
            drop(joined);
            seat0.join().unwrap();
            // Relaxed: the join above ordered every completion.
            let completions = runs.load(Ordering::Relaxed);
            if after_leave {
                reach.case("seat 0 left before the joined seat's drop");
                assert_eq!(completions, 1, "{}", word(&team));
            } else {
                reach.case("the joined seat dropped, seat 0's leave not seen yet");
                assert!(matches!(completions, 1 | 2), "{completions}");
            }
            // Retired in phase `completions`: nothing owed, parity matching.
            assert_eq!(
                word(&team),
                format!(
                    "Barrier {{ phase_parity: {}, pending: 0, expected: 0, tx: 0, poisoned: false }}",
                    completions % 2 == 1
                )
            );
        },
    );
}

/// Seats 0 and 1 leave on one thread while a tx count holds phase 0, the
/// tx is completed on another, and the main thread's joined seat (joined
/// first) leaves with `arrive_and_drop`. Every one of these leaves is
/// legal and lands in phase 0, so whichever call ends it, the completion
/// runs once and the team retires in phase 1; no call panics. The cases
/// are the calls that end phase 0 (the completion function tells its
/// thread).
#[test]
fn a_joined_seats_leave_racing_complete_tx_never_panics() {
    quiet_expected_panics();
    loom::thread_local! {
        static WHO: std::cell::Cell<&'static str> = std::cell::Cell::new("");
    }
    model_reaching(
        &[
            "the joined seat's arrive_and_drop ended phase 0",
            "complete_tx ended phase 0",
            "a seat's leave ended phase 0",
        ],
        |reach| {
            let ender = Arc::new(std::sync::Mutex::new(""));
            let team = {
                let ender = ender.clone();
                Arc::new(
                    TeamShape::new(4, 0).team_with_completion_and_capacity(2, 3, move || {
                        *ender.lock().unwrap() = WHO.with(|w| w.get())
                    }),
                )
            };
            team.expect_tx(1);
            let joined = team.join().expect("rank 2 is free");
            let seats = {
                let team = team.clone();
                thread::spawn(move || {
                    WHO.with(|w| w.set("a seat's leave ended phase 0"));
                    let (a, b) = (team.seat(0), team.seat(1));
                    a.arrive_and_drop();
                    b.arrive_and_drop();
                })
            };
            let tx = {
                let team = team.clone();
                thread::spawn(move || {
                    WHO.with(|w| w.set("complete_tx ended phase 0"));
                    team.complete_tx(1);
                })
            };
            WHO.with(|w| w.set("the joined seat's arrive_and_drop ended phase 0"));
            let left = catch_unwind(AssertUnwindSafe(move || joined.arrive_and_drop()));
            if let Err(payload) = left {
                panic!("a legal leave panicked: {}", panic_message(&*payload));
            }
            seats.join().unwrap();
            tx.join().unwrap();
            let ended = *ender.lock().unwrap();
            reach.case(ended);
            assert_eq!(
                word(&team),
                "Barrier { phase_parity: true, pending: 0, expected: 0, tx: 0, poisoned: false }"
            );
        },
    );
}

/// A barrier of one participant whose completion function makes one step
/// (a flag, a scheduling point) between its start and its end; another
/// thread calls `poison()` and then asks. Cases by where `poison()` lands:
/// before the arrival (it panics, no completion), in the completion window
/// (the completion ran, the arrival's wait panics), after the phase
/// completed. Wherever it lands, after `poison()` returns the barrier is
/// poisoned for `is_poisoned`, `Debug` and `add_participants(0)`.
#[test]
fn poison_racing_a_completion_function_is_seen_at_once() {
    quiet_expected_panics();
    model_reaching(
        &[
            "poisoned before the arrival",
            "poisoned in the completion window",
            "poisoned after the phase completed",
        ],
        |reach| {
            let ran = Arc::new(AtomicBool::new(false));
            let barrier = {
                let ran = ran.clone();
                // Relaxed: read after the threads are joined.
                Arc::new(Barrier::with_completion(1, move || {
                    ran.store(true, Ordering::Relaxed)
                }))
            };
            let poisoner = {
                let barrier = barrier.clone();
                thread::spawn(move || {
                    barrier.poison();
                    assert!(barrier.is_poisoned(), "is_poisoned() after poison()");
                    let debug = format!("{:?}", *barrier);
                    assert!(debug.ends_with("poisoned: true }"), "{debug}");
                    let add = catch_unwind(AssertUnwindSafe(|| barrier.add_participants(0)));
                    let message = panic_message(&*add.expect_err("add_participants(0) panics"));
                    assert_eq!(
                        message,
                        "syncthreads: barrier poisoned by poison() (seen by add_participants(0))"
                    );
                })
            };
            let arrived = catch_unwind(AssertUnwindSafe(|| barrier.arrive_and_wait()));
            poisoner.join().unwrap();
            // Relaxed: the join above ordered the completion.
            let ran = ran.load(Ordering::Relaxed);
            match (ran, arrived.is_ok()) {
                (false, false) => reach.case("poisoned before the arrival"),
                (true, false) => reach.case("poisoned in the completion window"),
                (true, true) => reach.case("poisoned after the phase completed"),
                (false, true) => panic!("the arrival returned without a completion"),
            }
            assert!(barrier.is_poisoned());
        },
    );
}
