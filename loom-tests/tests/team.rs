//! `Team` and `Seat` (team.rs): the combining tree in front of the word.
//! Small shapes (`TeamShape`, fan-in 2, not flat) so that the tree
//! is real: two seats share one node (the root), three seats climb from a
//! leaf to the root; a few models run a flat team of two as well, whose
//! seats arrive on the word directly. Each model checks the ordering chain seat → node →
//! root → word → waiter with loom-checked data slots, and the counts with
//! the word's `Debug`.

mod common;
use common::{model_reaching, panic_message, quiet_expected_panics, word, Order, Reach, Slots};
use loom::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Notify,
    },
    thread,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{Team, TeamShape};

/// A team of `seats` seats, fan-in 2, no flat shortcut.
fn team(seats: usize) -> Arc<Team> {
    Arc::new(TeamShape::new(2, 0).team(seats))
}

/// Two seats on one node over two phases: the last arriver at the node
/// re-arms it and makes the combined arrival; one seat splits arrive and
/// wait (tokens on the team), the other uses `arrive_and_wait`. Writes
/// before each arrival are visible after the wait (double-buffered slots).
///
/// Cases (both shapes): seat 0's arrival completed a phase, seat 1's did;
/// a wait slept until woken. One layout: both arrival orders come up in
/// each phase's race (the cases), and a swap would double a model among
/// the suite's costliest.
#[test]
fn two_seats_combine_over_two_phases() {
    combine_over_two_phases(0);
}

/// The same with a flat team (no tree): each seat's arrival is one RMW of
/// the word, whose own read checks the seat's phase (`Seat::arrive_flat`).
#[test]
fn two_flat_seats_combine_over_two_phases() {
    combine_over_two_phases(2);
}

fn combine_over_two_phases(flat: usize) {
    let cases = &[
        "seat 0 completed a phase",
        "seat 1 completed a phase",
        "event:park-sleeps",
    ];
    model_reaching(cases, move |reach| {
        let team = Arc::new(TeamShape::new(2, flat).team(2));
        let slots = Arc::new(Slots::new(4));
        let other = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let seat = team.seat(1);
                for p in 0..2 {
                    slots.set(p * 2 + 1, p);
                    let token = seat.arrive();
                    team.wait(token);
                    assert_eq!(slots.get(p * 2), p);
                }
                std::mem::forget(seat);
            })
        };
        let seat = team.seat(0);
        for p in 0..2 {
            slots.set(p * 2, p);
            reach.either(
                seat.arrive_and_wait().is_leader(),
                "seat 0 completed a phase",
                "seat 1 completed a phase",
            );
            assert_eq!(slots.get(p * 2 + 1), p);
        }
        other.join().unwrap();
        std::mem::forget(seat);
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }"
        );
        let _ = reach.events();
    });
}

/// Three seats, fan-in 2: seats 0 and 1 share a leaf, seat 2 has its own
/// (so its arrival climbs at once); whoever completes the first leaf climbs
/// to the root, whose last arriver arrives on the word for all three. Two
/// threads: the main one holds seats 2 and 0. Both see every write; one
/// leader.
///
/// Cases: the main thread (seat 0) led, the other thread (seat 1) led; a
/// wait slept. One layout: either thread's climb completes the root in it
/// (the cases).
#[test]
fn three_seats_climb_to_the_root() {
    let cases = &[
        "the main thread led",
        "the other thread led",
        "event:park-sleeps",
    ];
    model_reaching(cases, |reach| {
        let team = team(3);
        let slots = Arc::new(Slots::new(3));
        let other = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let seat = team.seat(1);
                slots.set(1, 11);
                let leader = seat.arrive_and_wait().is_leader();
                assert_eq!((slots.get(0), slots.get(2)), (10, 12));
                std::mem::forget(seat);
                leader
            })
        };
        let (two, zero) = (team.seat(2), team.seat(0));
        slots.set(2, 12);
        let token = two.arrive();
        slots.set(0, 10);
        let leader = zero.arrive_and_wait().is_leader();
        assert_eq!(slots.get(1), 11);
        assert!(team.try_wait(&token));
        let other_led = other.join().unwrap();
        assert!(leader != other_led, "exactly one leader");
        reach.either(leader, "the main thread led", "the other thread led");
        let _ = reach.events();
        assert!(team.phase_parity());
        std::mem::forget((two, zero));
    });
}

/// The root's combined arrival races an observer that does not arrive: a
/// parity waiter (parked or not) sees both seats' writes once it returns.
/// The observer only reads, and here it is the thread loom runs first: on
/// loom 0.7.3 the phase never completed before its first look (`README.md`,
/// "The patched loom"); the model below has the other layout.
///
/// Cases (both layouts): the observer slept until the root's arrival woke
/// it, or it never slept (the phase completed before it would).
#[test]
fn the_root_arrival_races_a_parity_waiter() {
    model_reaching(OBSERVER_CASES, |reach| {
        let team = team(2);
        let slots = Arc::new(Slots::new(2));
        let seats: Vec<_> = (0..2)
            .map(|rank| {
                let (team, slots) = (team.clone(), slots.clone());
                thread::spawn(move || {
                    let seat = team.seat(rank);
                    slots.set(rank, rank + 1);
                    drop(seat.arrive());
                    std::mem::forget(seat);
                })
            })
            .collect();
        team.wait_parity(false);
        assert_eq!((slots.get(0), slots.get(1)), (1, 2));
        for t in seats {
            t.join().unwrap();
        }
        observer_cases(reach);
    });
}

const OBSERVER_CASES: &[&str] = &["event:park-sleeps", "the observer never slept"];

fn observer_cases(reach: &Reach) {
    if !reach.slept() {
        reach.case("the observer never slept");
    }
}

/// The same race with the observer on a spawned thread and seat 1 on the
/// main thread, which loom runs first: here the phase may complete before
/// the observer's first look, which the model above never reaches.
#[test]
fn the_root_arrival_races_a_parity_waiter_spawned_first() {
    model_reaching(OBSERVER_CASES, |reach| {
        let team = team(2);
        let slots = Arc::new(Slots::new(2));
        let observer = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                team.wait_parity(false);
                assert_eq!((slots.get(0), slots.get(1)), (1, 2));
            })
        };
        let zero = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let seat = team.seat(0);
                slots.set(0, 1);
                drop(seat.arrive());
                std::mem::forget(seat);
            })
        };
        let seat = team.seat(1);
        slots.set(1, 2);
        drop(seat.arrive());
        std::mem::forget(seat);
        observer.join().unwrap();
        zero.join().unwrap();
        observer_cases(reach);
    });
}

/// Seat 0 arrives and leaves at once ("from the next phase on") while seat
/// 1, on the same node, may not have arrived yet: the drop either folds into
/// phase 0's round or arrives early in phase 1's. Either way phase 1 is
/// completed by seat 1 alone, and seat 0's write of phase 0 is visible.
#[test]
fn a_seat_leaves_while_its_group_is_mid_phase() {
    leave_mid_phase(|| team(2));
}

/// The same on a flat team (no tree: the default for two seats): the leave
/// is a drop without an arrival while phase 0 runs (`Op::Arrival` with `PhaseOf::After`), an
/// arrival and a drop in phase 1 once phase 0 completed.
#[test]
fn a_flat_seat_leaves_while_the_phase_runs() {
    leave_mid_phase(|| Arc::new(Team::new(2)));
}

/// Cases (both shapes): the leave returned before seat 1's phase-0
/// `arrive_and_wait` did, or began after it had returned (phase 0
/// complete). Whether the leave's RMW came before seat 1's arrival (a drop
/// in phase 0, or a fold into its round) has no outside witness: the count
/// pins it. One layout: the leaver's two operations race the other seat's
/// arrival from either side in it (the cases).
fn leave_mid_phase(make: fn() -> Arc<Team>) {
    let cases = &[
        "the leave returned before seat 1's wait",
        "the leave began after seat 1's wait",
    ];
    model_reaching(cases, move |reach| {
        let team = make();
        let slots = Arc::new(Slots::new(1));
        // Outside the model: the leave returned; seat 1's phase-0 wait returned.
        let (left, completed) = (Order::new(), Order::new());
        let leaver = {
            let (team, slots) = (team.clone(), slots.clone());
            let (left, completed, reach) = (left.clone(), completed.clone(), reach.clone());
            thread::spawn(move || {
                let seat = team.seat(0);
                slots.set(0, 7);
                drop(seat.arrive());
                if completed.get() == 1 {
                    reach.case("the leave began after seat 1's wait");
                }
                drop(seat); // leaves from phase 1 on; never waits
                left.set(1);
            })
        };
        let seat = team.seat(1);
        seat.arrive_and_wait();
        if left.get() == 1 {
            reach.case("the leave returned before seat 1's wait");
        }
        completed.set(1);
        assert_eq!(slots.get(0), 7);
        seat.arrive_and_wait(); // phase 1: only this seat
        leaver.join().unwrap();
        std::mem::forget(seat);
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
    });
}

/// Every seat leaves right after arriving, while the seat whose arrival
/// completes the phase (`arrive_and_drop`) may not have reached the word
/// yet: the leavers' early round of phase 1 can complete at the root before
/// phase 0 has completed on the word; it must not wait, nor arrive in phase
/// 0: its drops fold into phase 0 on the word. The team ends retired: in
/// phase 1 if the leavers' drops folded into phase 0 (at the node or on the
/// word), in phase 2 if they arrived in phase 1.
///
/// Cases: those two endings. One layout: the completing `arrive_and_drop`
/// is one operation, which loom places before, between and after the
/// leavers' (the cases).
#[test]
fn every_seat_leaving_early_folds_into_the_running_phase() {
    quiet_expected_panics();
    let cases = &[
        "the leaves folded into phase 0",
        "the leavers arrived in phase 1",
    ];
    model_reaching(cases, |reach| {
        let team = Arc::new(TeamShape::new(4, 0).team(3)); // one node for all three
        let leavers: Vec<_> = (0..2)
            .map(|rank| {
                let team = team.clone();
                thread::spawn(move || {
                    let seat = team.seat(rank);
                    drop(seat.arrive());
                    drop(seat);
                })
            })
            .collect();
        team.seat(2).arrive_and_drop();
        for t in leavers {
            t.join().unwrap();
        }
        let parity = team.phase_parity();
        reach.either(
            parity,
            "the leaves folded into phase 0",
            "the leavers arrived in phase 1",
        );
        assert_eq!(
            word(&team),
            format!("Barrier {{ phase_parity: {parity}, pending: 0, expected: 0, tx: 0, poisoned: false }}")
        );
        let retired = catch_unwind(AssertUnwindSafe(|| team.wait_parity(parity)));
        let phase = if parity { 1 } else { 2 };
        assert!(
            panic_message(&*retired.unwrap_err()).contains(&format!("retired in phase {phase}"))
        );
    });
}

/// Through the tree, an arrival for phase 1 that lands while phase 0's
/// completion function runs waits for phase 1 and counts there: seat 1
/// arrives again as soon as the completion has started (it opens a flag).
#[test]
fn an_arrival_in_the_completion_window_through_the_tree() {
    arrival_in_the_completion_window(0);
}

/// The same with a flat team: the second arrival's RMW finds the word
/// completing and waits for phase 1 before it counts.
#[test]
fn an_arrival_in_the_completion_window_of_a_flat_team() {
    arrival_in_the_completion_window(2);
}

/// Cases (both shapes): seat 0's arrival completed phase 0 (its
/// completion opens the window to the other thread), seat 1's did; seat 1's
/// phase-1 arrival found phase 0 completing and waited it out (the window
/// this model is about: `event:op-waits-out-completion`, the word's RMW's
/// own wait, on the flat team; `event:arrival-waits-out-completion`,
/// the tree seat's entry check's (`Engine::enter`), through the tree). One
/// layout: both threads complete phase 0 in it (the cases).
fn arrival_in_the_completion_window(flat: usize) {
    let cases: &'static [&'static str] = if flat > 0 {
        &[
            "seat 0 completed phase 0",
            "seat 1 completed phase 0",
            "event:op-waits-out-completion",
        ]
    } else {
        &[
            "seat 0 completed phase 0",
            "seat 1 completed phase 0",
            "event:arrival-waits-out-completion",
        ]
    };
    model_reaching(cases, move |reach| {
        let slots = Arc::new(Slots::new(3));
        let runs = Arc::new(AtomicUsize::new(0));
        let window = Arc::new((AtomicBool::new(false), Notify::new()));
        let team = {
            let (slots, runs, window) = (slots.clone(), runs.clone(), window.clone());
            Arc::new(TeamShape::new(2, flat).team_with_completion(2, move || {
                // Relaxed: read after the joins; the runs are ordered by the team.
                let r = runs.fetch_add(1, Ordering::Relaxed);
                if r == 0 {
                    assert_eq!((slots.get(0), slots.get(1)), (1, 2));
                    slots.set(2, 100);
                    // Relaxed: the flag only filters loom's spurious wakes.
                    window.0.store(true, Ordering::Relaxed);
                    window.1.notify();
                }
            }))
        };
        let early = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let seat = team.seat(1);
                slots.set(1, 2);
                let first = seat.arrive();
                while !window.0.load(Ordering::Relaxed) {
                    window.1.wait();
                }
                let second = seat.arrive(); // phase 1 (waits out the window)
                team.wait(first);
                assert_eq!(slots.get(2), 100);
                team.wait(second);
                std::mem::forget(seat);
            })
        };
        let seat = team.seat(0);
        slots.set(0, 1);
        reach.either(
            seat.arrive_and_wait().is_leader(),
            "seat 0 completed phase 0",
            "seat 1 completed phase 0",
        );
        assert_eq!(slots.get(2), 100);
        seat.arrive_and_wait(); // phase 1
        early.join().unwrap();
        std::mem::forget(seat);
        assert_eq!(runs.load(Ordering::Relaxed), 2);
        assert!(!team.phase_parity());
        let _ = reach.events();
    });
}

/// A seat dropped while its thread unwinds poisons the team, racing the
/// other seat's arrival that completes phase 0 and runs the completion
/// function: the other seat either led phase 0 (the poison came after it)
/// or panics with the poisoned message; it never hangs, and the completion
/// runs at most once.
///
/// Cases: the other seat led phase 0 (the poison came after), or phase 0
/// was poisoned before it completed. One layout: the dying seat's arrival
/// and poisoning drop race the other seat's arrival from either side in it
/// (the cases).
#[test]
fn an_unwinding_seat_drop_races_a_completion() {
    quiet_expected_panics();
    let cases = &["phase 0 completed first", "the poison came first"];
    model_reaching(cases, |reach| {
        let runs = Arc::new(AtomicUsize::new(0));
        let team = {
            let runs = runs.clone();
            Arc::new(TeamShape::new(2, 0).team_with_completion(2, move || {
                // Relaxed: read after the joins.
                runs.fetch_add(1, Ordering::Relaxed);
            }))
        };
        let dying = {
            let team = team.clone();
            thread::spawn(move || {
                let seat = team.seat(0);
                drop(seat.arrive());
                let _ = catch_unwind(AssertUnwindSafe(move || {
                    let _seat = seat;
                    panic!("boom");
                }));
            })
        };
        let seat = team.seat(1);
        let completed = std::cell::Cell::new(false);
        let mine = catch_unwind(AssertUnwindSafe(|| {
            seat.arrive_and_wait();
            completed.set(true);
            seat.arrive_and_wait(); // phase 1 can never complete: poisoned
        }));
        dying.join().unwrap();
        reach.either(
            completed.get(),
            "phase 0 completed first",
            "the poison came first",
        );
        let message = panic_message(&*mine.unwrap_err());
        assert!(
            message.starts_with("syncthreads: barrier poisoned: a participant panicked"),
            "{message}"
        );
        assert!(team.is_poisoned());
        assert!(runs.load(Ordering::Relaxed) <= 1);
        std::mem::forget(seat);
    });
}

/// A seat's second arrival in a phase that has not completed is refused: it
/// panics and changes nothing. Here it races the other seat's arrival,
/// which may complete phase 0 first; then the second arrival is the seat's
/// arrival in phase 1 and no double arrival. Phase 0 completes only with
/// both seats (its completion function reads both seats' slots).
#[test]
fn a_double_arrival_is_refused_while_the_other_seat_races_the_phase() {
    double_arrival_races_the_phase(0);
}

/// The same with a flat team, where the refusal is the word's RMW's own
/// (`Op::Arrival` with `PhaseOf::Exactly`) and a refusal on a stale read of the word must not
/// panic: only the latest word decides.
#[test]
fn a_flat_double_arrival_is_refused_while_the_other_seat_races_the_phase() {
    double_arrival_races_the_phase(2);
}

/// Cases (both shapes): the second arrival was refused (phase 0 still
/// ran), or it was phase 1's. One layout: the other seat's one arrival
/// lands before or after the second arrival in it (the cases).
fn double_arrival_races_the_phase(flat: usize) {
    quiet_expected_panics();
    let cases = &["refused", "phase 1's arrival"];
    model_reaching(cases, move |reach| {
        let slots = Arc::new(Slots::new(2));
        let runs = Arc::new(AtomicUsize::new(0));
        let team = {
            let (slots, runs) = (slots.clone(), runs.clone());
            Arc::new(TeamShape::new(2, flat).team_with_completion(2, move || {
                // Relaxed: read after the joins; the runs are ordered by the team.
                if runs.fetch_add(1, Ordering::Relaxed) == 0 {
                    assert_eq!(
                        (slots.get(0), slots.get(1)),
                        (0, 1),
                        "phase 0 without a seat"
                    );
                }
            }))
        };
        let other = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let seat = team.seat(1);
                slots.set(1, 1);
                drop(seat.arrive());
                std::mem::forget(seat); // stays a member: no leave
            })
        };
        let seat = team.seat(0);
        slots.set(0, 0);
        drop(seat.arrive());
        let again = catch_unwind(AssertUnwindSafe(|| drop(seat.arrive())));
        other.join().unwrap();
        // Relaxed: after the join.
        assert_eq!(runs.load(Ordering::Relaxed), 1, "phase 0 completed once");
        match again {
            // phase 0 had completed: an arrival in phase 1
            Ok(()) => reach.case("phase 1's arrival"),
            Err(payload) => {
                reach.case("refused");
                let message = panic_message(&*payload);
                assert!(
                    message.contains("seat 0 already arrived in phase 0"),
                    "{message}"
                );
                drop(seat.arrive()); // now phase 1's
            }
        }
        assert!(team.phase_parity(), "in phase 1");
        // Seat 0's arrival in phase 1 is on the word if flat, in the tree's
        // node otherwise.
        let pending = if flat > 0 { 1 } else { 2 };
        assert_eq!(
            word(&team),
            format!("Barrier {{ phase_parity: true, pending: {pending}, expected: 2, tx: 0, poisoned: false }}")
        );
        std::mem::forget(seat);
    });
}

/// A flat seat whose phase completed on another thread, learned of through
/// a `Relaxed` flag (nothing orders its next look at the word after the
/// completion): its next arrival is the next phase's, never a double
/// arrival. Its seed load may still return its own last arrival's word,
/// which the word's RMW refuses; only the latest word (`Engine::again`)
/// decides, and it shows the completion.
#[test]
fn a_flat_seat_that_learned_of_the_completion_relaxed_arrives_in_the_next_phase() {
    learned_of_the_completion_relaxed(usize::MAX);
}

/// The same through the tree, where the entry check's load (`Engine::enter`)
/// is the stale one.
#[test]
fn a_tree_seat_that_learned_of_the_completion_relaxed_arrives_in_the_next_phase() {
    learned_of_the_completion_relaxed(0);
}

/// Cases: the stale read this model is about came up: on the flat team the
/// word's RMW refused on it and the latest word showed the completion
/// (`event:arrival-refused-stale`), through the tree the entry check's
/// load returned it and the latest word did not (`event:arrival-read-stale`).
/// One layout: the main thread's arrival is the one after the other's
/// completion by construction (the flag).
fn learned_of_the_completion_relaxed(flat: usize) {
    let cases: &'static [&'static str] = if flat > 0 {
        &["event:arrival-refused-stale"]
    } else {
        &["event:arrival-read-stale"]
    };
    model_reaching(cases, move |reach| {
        let team = Arc::new(TeamShape::new(2, flat).team(2));
        let done = Arc::new(AtomicBool::new(false));
        let seat = team.seat(0);
        drop(seat.arrive());
        let other = {
            let (team, done) = (team.clone(), done.clone());
            thread::spawn(move || {
                let seat = team.seat(1);
                drop(seat.arrive()); // completes phase 0
                                     // Relaxed: the point of the model; no happens-before.
                done.store(true, Ordering::Relaxed);
                std::mem::forget(seat);
            })
        };
        // Relaxed: as above.
        while !done.load(Ordering::Relaxed) {
            thread::yield_now();
        }
        drop(seat.arrive()); // phase 1's
        other.join().unwrap();
        // Seat 0's arrival in phase 1 is on the word if flat, in the tree's
        // node otherwise.
        let pending = if flat > 0 { 1 } else { 2 };
        assert_eq!(
            word(&team),
            format!("Barrier {{ phase_parity: true, pending: {pending}, expected: 2, tx: 0, poisoned: false }}")
        );
        std::mem::forget(seat);
        let _ = reach.events();
    });
}
