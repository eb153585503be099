//! Panic messages that name the call the user made and the real cause:
//! a team poisoned by a participant that panicked, or by a seat dropped in
//! the completion function, says so (not "by poison()", which nobody
//! called); a seat's wait names `Seat::arrive_and_wait()`; each constructor
//! names itself with its arguments. Multi-threaded tests run under a
//! watchdog.

mod common;

use common::shape::{self, Shape};
use common::{eventually, panic_of, watchdog};
use syncthreads::Team;

/// Shapes of a team of `seats` (those of them the build has, see
/// `common::shape`): the default, a binary tree, flat.
fn shapes(seats: usize) -> Vec<(&'static str, Team)> {
    shape::shapes(&[Shape::DEFAULT, Shape::BINARY, Shape::FLAT])
        .into_iter()
        .map(|shape| (shape.name, shape.team(seats, seats)))
        .collect()
}

#[test]
fn a_seat_that_panics_poisons_the_team_as_a_panicked_participant_not_by_poison() {
    for (what, team) in shapes(4) {
        let messages: Vec<String> = watchdog(
            30,
            || format!("{what}: {team:?}"),
            || {
                std::thread::scope(|s| {
                    let handles: Vec<_> = team
                        .seats()
                        .map(|seat| {
                            s.spawn(move || {
                                let rank = seat.rank();
                                seat.arrive_and_wait(); // phase 0
                                if rank == 3 {
                                    // Panics holding its seat in phase 1.
                                    panic!("rank 3 failed");
                                }
                                seat.arrive_and_wait();
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| common::panic_message(&*h.join().unwrap_err()))
                        .collect()
                })
            },
        );
        assert_eq!(messages[3], "rank 3 failed", "{what}");
        for m in &messages[..3] {
            assert_eq!(
                m,
                "syncthreads: barrier poisoned: a participant panicked in phase 1 (seen by Seat::arrive_and_wait())",
                "{what}"
            );
        }
        // Later calls say the same, naming themselves.
        let m = panic_of(|| team.wait_parity(true));
        assert_eq!(
            m,
            "syncthreads: barrier poisoned: a participant panicked in phase 1 (seen by wait_parity)",
            "{what}"
        );
        let m = panic_of(|| team.join());
        assert!(
            m.contains("a participant panicked in phase 1"),
            "{what}: {m}"
        );
        // A later poison() keeps the first cause.
        team.poison();
        let m = panic_of(|| team.complete_tx(1));
        assert!(m.contains("a participant panicked"), "{what}: {m}");
    }
}

#[test]
fn an_explicit_poison_is_named_as_such_and_a_seats_wait_names_its_call() {
    for (what, team) in shapes(2) {
        let (first, second) = (team.seat(0), team.seat(1));
        watchdog(
            30,
            || format!("{what}: {team:?}"),
            || {
                std::thread::scope(|s| {
                    let waiter = s.spawn(move || panic_of(|| first.arrive_and_wait()));
                    eventually("seat 0 waits", || team.missing() == [1]);
                    team.poison();
                    assert_eq!(
                        waiter.join().unwrap(),
                        "syncthreads: barrier poisoned by poison() (seen by Seat::arrive_and_wait())",
                        "{what}"
                    );
                });
            },
        );
        let m = panic_of(|| second.arrive());
        assert_eq!(
            m, "syncthreads: barrier poisoned by poison() (seen by Seat::arrive())",
            "{what}"
        );
    }
}

#[test]
fn a_seat_dropped_in_the_completion_function_names_that_cause() {
    use std::sync::Mutex;
    // The seat to drop, handed to the completion function of phase 0.
    type SpareSeat = syncthreads::Seat<'static, fn()>;
    static SPARE: Mutex<Option<SpareSeat>> = Mutex::new(None);
    fn completion() {
        drop(SPARE.lock().unwrap().take());
    }
    let team: &'static Team<fn()> =
        Box::leak(Box::new(Team::with_completion(3, completion as fn())));
    let (a, b) = (team.seat(0), team.seat(1));
    *SPARE.lock().unwrap() = Some(team.seat(2));
    // The spare seat's phase-0 arrival is owed: drop it in, leaving for
    // good from phase 1 on, as the completion function then drops it.
    if let Some(spare) = SPARE.lock().unwrap().as_ref() {
        drop(spare.arrive());
    }
    drop(a.arrive());
    let m = panic_of(|| b.arrive_and_wait());
    assert_eq!(
        m,
        "syncthreads: barrier poisoned: a participant was dropped inside the completion function of phase 0, where it cannot leave (seen by Seat::arrive_and_wait())"
    );
    assert!(team.is_poisoned() && !team.phase_parity());
}

#[test]
fn each_team_constructor_names_itself_in_its_panics() {
    let max = 1_048_575;
    let f = || ();
    for (m, expected) in [
        (
            panic_of(|| Team::new(0)),
            format!("syncthreads: Team::new(0): the seat count must be in 1 ..= {max} (Barrier::MAX)"),
        ),
        (
            panic_of(|| Team::with_completion(0, f)),
            format!("syncthreads: Team::with_completion(0, _): the seat count must be in 1 ..= {max} (Barrier::MAX)"),
        ),
        (
            panic_of(|| Team::with_capacity(0, 4)),
            format!("syncthreads: Team::with_capacity(0, 4): the seat count must be in 1 ..= {max} (Barrier::MAX)"),
        ),
        (
            panic_of(|| Team::with_capacity(4, 3)),
            format!("syncthreads: Team::with_capacity(4, 3): the capacity must be in 4 ..= {max} (the seat count ..= Barrier::MAX)"),
        ),
        (
            panic_of(|| Team::with_completion_and_capacity(2, 1, f)),
            format!("syncthreads: Team::with_completion_and_capacity(2, 1, _): the capacity must be in 2 ..= {max} (the seat count ..= Barrier::MAX)"),
        ),
    ] {
        assert_eq!(m, expected);
    }
}

/// The shaped constructors (the `bench` feature's `TeamShape`) name themselves too,
/// and refuse a fan-in outside `2 ..= 64`.
#[cfg(feature = "bench")]
#[test]
fn each_shaped_team_constructor_names_itself_in_its_panics() {
    use syncthreads::TeamShape;
    let max = 1_048_575;
    let f = || ();
    for (m, expected) in [
        (
            panic_of(|| TeamShape::new(4, 2).team(0)),
            format!("syncthreads: TeamShape::new(4, 2).team(0): the seat count must be in 1 ..= {max} (Barrier::MAX)"),
        ),
        (
            panic_of(|| TeamShape::new(1, 2).team(8)),
            "syncthreads: TeamShape::new(1, 2).team(8): the fan-in must be in 2 ..= 64".to_owned(),
        ),
        (
            panic_of(|| TeamShape::new(4, 2).team_with_completion(0, f)),
            format!("syncthreads: TeamShape::new(4, 2).team_with_completion(0, _): the seat count must be in 1 ..= {max} (Barrier::MAX)"),
        ),
        (
            panic_of(|| TeamShape::new(65, 2).team_with_completion(8, f)),
            "syncthreads: TeamShape::new(65, 2).team_with_completion(8, _): the fan-in must be in 2 ..= 64".to_owned(),
        ),
        (
            panic_of(|| TeamShape::new(0, 2).team_with_capacity(2, 8)),
            "syncthreads: TeamShape::new(0, 2).team_with_capacity(2, 8): the fan-in must be in 2 ..= 64".to_owned(),
        ),
        (
            panic_of(|| TeamShape::new(99, 2).team_with_completion_and_capacity(2, 8, f)),
            "syncthreads: TeamShape::new(99, 2).team_with_completion_and_capacity(2, 8, _): the fan-in must be in 2 ..= 64".to_owned(),
        ),
        (
            panic_of(|| TeamShape::new(1, 0).team(4)),
            "syncthreads: TeamShape::new(1, 0).team(4): the fan-in must be in 2 ..= 64".to_owned(),
        ),
        (
            panic_of(|| TeamShape::grid_team(0, 4)),
            format!("syncthreads: TeamShape::grid_team(0, 4): the seat count must be in 1 ..= {max} (Barrier::MAX)"),
        ),
    ] {
        assert_eq!(m, expected);
    }
}
