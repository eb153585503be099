//! Regression tests, one per bug found under join and diagnostics stress,
//! each named after its bug: the reported sequence, on every shape where it
//! applies (the flat team is the control: it never had the bug).

mod common;

use common::shape::{self, Shape};
use common::{eventually, panic_of, watchdog};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use syncthreads::{Barrier, Team};

/// The shapes of a team of `seats` seats and capacity `capacity` with a
/// completion function (those of them the build has, see `common::shape`):
/// the default (a tree from three ranks), a binary tree, and flat.
fn shapes<F: FnMut() + Send + Clone>(
    seats: usize,
    capacity: usize,
    f: F,
) -> Vec<(&'static str, Team<F>)> {
    shape::shapes(&[Shape::DEFAULT, Shape::BINARY, Shape::FLAT])
        .into_iter()
        .map(|shape| (shape.name, shape.team_with(seats, capacity, f.clone())))
        .collect()
}

/// The word of a retired team (nothing owed, not poisoned) and a wait for
/// its phase, which can never complete.
fn assert_retired_in<F: syncthreads::Completion>(team: &Team<F>, phase: usize, what: &str) {
    let debug = format!("{team:?}");
    assert!(
        debug.contains(&format!(
            "barrier: Barrier {{ phase_parity: {}, pending: 0, expected: 0, tx: 0, poisoned: false }}",
            phase % 2 == 1
        )),
        "{what}: not retired in phase {phase}: {debug}"
    );
    let wait = panic_of(|| team.wait_parity(phase % 2 == 1));
    assert!(wait.contains("retired"), "{what}: {wait}");
}

/// Bug: a tree team whose members have all left completed an empty extra
/// phase. Seat 0 arrives in phase 0 and leaves (from phase 1 on); the
/// joined seat is dropped before its first arrival, which completes phase
/// 0 with nobody left: the completion runs once and the team retires in
/// phase 1. The tree ran it twice and retired in phase 2: the joined seat's
/// arrival on the word ended phase 0 before its leave reached its leaf,
/// whose round then carried seat 0's leave into phase 1 as an arrival.
#[test]
fn bug_tree_team_whose_members_all_left_completes_an_empty_extra_phase() {
    let runs = AtomicUsize::new(0);
    let count = || {
        runs.fetch_add(1, Ordering::Relaxed);
    };
    for (what, team) in shapes(1, 3, count) {
        runs.store(0, Ordering::Relaxed);
        let seat = team.seat(0);
        let joined = team.join().expect("ranks 1 and 2 are free");
        drop(seat.arrive());
        seat.arrive_and_drop();
        assert_eq!(
            runs.load(Ordering::Relaxed),
            0,
            "{what}: phase 0 still owes the joined seat"
        );
        drop(joined);
        assert_eq!(runs.load(Ordering::Relaxed), 1, "{what}: completions");
        assert_retired_in(&team, 1, what);
    }
}

/// Bug: a joined seat's legal leave panicked. Two seats leave while a
/// transaction count holds phase 0; a third seat joins; `complete_tx`
/// releases the count; the joined seat's `arrive_and_drop()` completes
/// phase 0 and retires the team, and must return quietly, as its drop
/// does. It panicked "the barrier is retired": its leave's second half,
/// an empty contribution climbing its tree, reached the retired word.
#[test]
fn bug_joined_seats_legal_leave_panics_on_the_phase_it_retires() {
    let runs = AtomicUsize::new(0);
    let count = || {
        runs.fetch_add(1, Ordering::Relaxed);
    };
    for by_call in [true, false] {
        for (what, team) in shapes(2, 3, count) {
            runs.store(0, Ordering::Relaxed);
            team.expect_tx(1);
            let (a, b) = (team.seat(0), team.seat(1));
            a.arrive_and_drop();
            b.arrive_and_drop();
            let joined = team.join().expect("rank 2 is free");
            team.complete_tx(1);
            assert_eq!(
                runs.load(Ordering::Relaxed),
                0,
                "{what}: the joined seat is owed"
            );
            if by_call {
                joined.arrive_and_drop();
            } else {
                drop(joined);
            }
            assert_eq!(runs.load(Ordering::Relaxed), 1, "{what}, by call {by_call}");
            assert_retired_in(&team, 1, what);
        }
    }
}

/// What a thread sees of a barrier while a completion function it is
/// blocked in runs: `is_poisoned`, `Debug`, and `add_participants(0)`.
fn seen_while_completing(is_poisoned: bool, debug: &str, add_zero: Result<(), String>) -> String {
    format!("is_poisoned: {is_poisoned}; {debug}; add_participants(0): {add_zero:?}")
}

/// Bug: `poison()` during a completion function was not seen until the
/// function returned: `is_poisoned()` false, `Debug` `poisoned: false`,
/// `add_participants(0)` returning. Poisoned at the call: all three say so,
/// from another thread while the completion runs and from inside it; the
/// phase then does not complete.
#[test]
fn bug_poison_during_a_completion_function_is_not_seen_until_it_returns() {
    // From another thread, while the completion function waits for it.
    let entered = AtomicBool::new(false);
    let release = AtomicBool::new(false);
    let barrier = Barrier::with_completion(1, || {
        entered.store(true, Ordering::Release);
        while !release.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    });
    let seen = watchdog(
        30,
        || format!("{barrier:?}"),
        || {
            std::thread::scope(|s| {
                let arrival = s.spawn(|| panic_of(|| barrier.arrive_and_wait()));
                eventually("the completion runs", || entered.load(Ordering::Acquire));
                barrier.poison();
                let add_zero = std::panic::catch_unwind(|| barrier.add_participants(0))
                    .map_err(|p| common::panic_message(&*p));
                let seen =
                    seen_while_completing(barrier.is_poisoned(), &format!("{barrier:?}"), add_zero);
                release.store(true, Ordering::Release);
                (seen, arrival.join().unwrap())
            })
        },
    );
    assert_eq!(
        seen.0,
        seen_while_completing(
            true,
            "Barrier { phase_parity: false, pending: 0, expected: 1, tx: 0, poisoned: true }",
            Err(
                "syncthreads: barrier poisoned by poison() (seen by add_participants(0))"
                    .to_owned()
            ),
        )
    );
    // The completer's own wait: the phase did not complete.
    assert!(
        seen.1 == "syncthreads: barrier poisoned by poison() (seen by arrive_and_wait())",
        "{}",
        seen.1
    );
    assert!(
        !barrier.phase_parity(),
        "a poisoned barrier stays in its phase"
    );

    // From inside the completion function of a team.
    static TEAM: OnceLock<&'static Team<fn()>> = OnceLock::new();
    static INSIDE: Mutex<Option<(bool, String)>> = Mutex::new(None);
    fn completion() {
        let team = TEAM.get().expect("set before the first arrival");
        team.poison();
        *INSIDE.lock().unwrap() = Some((team.is_poisoned(), format!("{team:?}")));
    }
    let team: &'static Team<fn()> =
        Box::leak(Box::new(Team::with_completion(2, completion as fn())));
    assert!(TEAM.set(team).is_ok(), "set once");
    let seats: Vec<_> = team.seats().collect();
    drop(seats[0].arrive());
    let m = panic_of(|| seats[1].arrive_and_wait());
    assert!(
        m.starts_with("syncthreads: barrier poisoned by poison()"),
        "{m}"
    );
    let (poisoned, debug) = INSIDE.lock().unwrap().take().expect("the completion ran");
    assert!(
        poisoned,
        "is_poisoned() inside the completion, after poison()"
    );
    assert!(debug.contains("poisoned: true"), "{debug}");
    assert!(team.is_poisoned() && !team.phase_parity());
    drop(seats); // quietly, on a poisoned team
}
