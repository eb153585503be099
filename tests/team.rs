//! `Team` and `Seat` (SPEC §7): many seats over thousands of phases through
//! the combining tree (and flat), one leader per phase, seats leaving at
//! random phases (also right after their arrival), tx through seats,
//! unwinding seats poisoning, double arrivals, completion functions, parity
//! and timed waits on the team. Each multi-threaded test runs under a watchdog.

mod common;

use common::shape::{self, Shape};
use common::{assert_word, mix, on_threads, panic_of, panics_of_each, scaled, watchdog};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::Duration;
use syncthreads::{Barrier, Seat, Team};

/// The shapes every behaviour runs on (those of them the build has, see
/// `common::shape`): the default, a binary tree (the most levels), a wide
/// fan-in, and flat. Under Miri the binary tree and flat: the tree's paths
/// and the flat one, fewer times.
fn wanted() -> &'static [Shape] {
    if cfg!(miri) {
        &[Shape::BINARY, Shape::FLAT]
    } else {
        &[Shape::DEFAULT, Shape::BINARY, Shape::WIDE, Shape::FLAT]
    }
}

/// A team of `seats` seats in each shape to run.
fn shapes(seats: usize) -> Vec<(String, Team)> {
    shape::shapes(wanted())
        .into_iter()
        .map(|shape| (shape.name.into(), shape.team(seats, seats)))
        .collect()
}

/// Every seat stamps its slot with the phase before `arrive_and_wait` and
/// after it reads every slot: each is the phase or the next (a fast seat
/// may have stamped the next one already), never older. Counts leaders.
fn stamps_and_leaders(team: &Team, seats: usize, phases: usize, what: &str) {
    let stamps: Vec<AtomicU64> = (0..seats).map(|_| AtomicU64::new(u64::MAX)).collect();
    let leaders: Vec<AtomicU32> = (0..phases).map(|_| AtomicU32::new(0)).collect();
    on_threads(
        120,
        || format!("{what}: {team:?}"),
        team.seats(),
        |seat| {
            let me = seat.rank();
            for p in 0..phases as u64 {
                // Relaxed: the team orders it before the others' reads.
                stamps[me].store(p, Ordering::Relaxed);
                if seat.arrive_and_wait().is_leader() {
                    leaders[p as usize].fetch_add(1, Ordering::Relaxed);
                }
                for (j, stamp) in stamps.iter().enumerate() {
                    let seen = stamp.load(Ordering::Relaxed);
                    assert!(
                        seen == p || seen == p + 1,
                        "{what}: seat {me} in phase {p} sees stamp {seen} of seat {j}"
                    );
                }
            }
        },
    );
    for (p, l) in leaders.iter().enumerate() {
        assert_eq!(l.load(Ordering::Relaxed), 1, "{what}: leaders of phase {p}");
    }
    // The seats left when their threads ended: one more phase, then retired.
    assert_retired(team, phases + 1, what);
}

/// The team is retired in phase `phase`: every seat left.
#[track_caller]
fn assert_retired<F>(team: &Team<F>, phase: usize, what: &str) {
    assert_word(
        team,
        &format!(
            "Barrier {{ phase_parity: {}, pending: 0, expected: 0, tx: 0, poisoned: false }}",
            phase % 2 == 1
        ),
        what,
    );
}

#[test]
fn sixteen_seats_thousands_of_phases_one_leader_each() {
    for (what, team) in shapes(16) {
        stamps_and_leaders(&team, 16, scaled(3_000, 4), &what);
    }
}

#[test]
fn sixty_four_seats_thousands_of_phases_one_leader_each() {
    for (what, team) in shapes(64) {
        stamps_and_leaders(&team, 64, scaled(1_000, 2), &what);
    }
}

#[test]
fn odd_seat_counts_climb_uneven_trees() {
    for seats in [1, 2, 3, 5, 7, 13, 17] {
        for (what, team) in shapes(seats) {
            stamps_and_leaders(
                &team,
                seats,
                scaled(300, 2),
                &format!("{seats} seats, {what}"),
            );
        }
    }
}

/// Seat `rank` leaves at phase `leave_at(rank)` (never for some), half of
/// them right after arriving in that phase without waiting ("leave from the
/// next phase on"), the others by `arrive_and_drop` or a plain drop. The
/// completion function checks each phase's arrivals: exactly the seats
/// still in it.
#[test]
fn random_leaves_keep_every_phase_exact() {
    const PHASES: usize = scaled(400, 8);
    // Under Miri 16 seats only (four tree levels at fan-in 2).
    for seats in [16, 64].into_iter().take(if cfg!(miri) { 1 } else { 2 }) {
        for shape in shape::shapes(wanted()) {
            let leave_at = |rank: usize| -> usize {
                if rank % 5 == 0 {
                    usize::MAX // stays
                } else {
                    (mix(rank as u64 * 7 + seats as u64) % PHASES as u64) as usize
                }
            };
            // How the seat leaves: 0 arrive + drop (next phase on), 1
            // arrive_and_drop, 2 drop without arriving.
            let how = |rank: usize| (mix(rank as u64) % 3) as usize;
            // Seats taking part in phase p (not yet gone).
            let live = |p: usize| -> usize {
                (0..seats)
                    .filter(|&r| leave_at(r) > p || (leave_at(r) == p && how(r) != 2))
                    .count()
            };
            let arrived: Vec<AtomicUsize> = (0..PHASES + 1).map(|_| AtomicUsize::new(0)).collect();
            let phase = AtomicUsize::new(0);
            let failed = AtomicBool::new(false);
            let team = shape.team_with(seats, seats, || {
                // Relaxed: the completion runs after every arrival of the phase.
                let p = phase.fetch_add(1, Ordering::Relaxed);
                let got = arrived[p].load(Ordering::Relaxed);
                // (Phase PHASES: the staying seats drop, uncounted.)
                if p < PHASES && got != live(p) {
                    eprintln!("phase {p}: {got} arrivals, {} live", live(p));
                    failed.store(true, Ordering::Relaxed);
                }
            });
            let what = format!("{seats} seats, {}", shape.name);
            on_threads(
                120,
                || format!("{what}: {team:?}"),
                team.seats(),
                |seat| {
                    let me = seat.rank();
                    for (p, arrivals) in arrived[..PHASES].iter().enumerate() {
                        if p == leave_at(me) {
                            match how(me) {
                                0 => {
                                    arrivals.fetch_add(1, Ordering::Relaxed);
                                    drop(seat.arrive());
                                    drop(seat); // leaves from p + 1 on
                                }
                                1 => {
                                    arrivals.fetch_add(1, Ordering::Relaxed);
                                    seat.arrive_and_drop();
                                }
                                _ => drop(seat), // counts in p, leaves
                            }
                            return;
                        }
                        arrivals.fetch_add(1, Ordering::Relaxed);
                        seat.arrive_and_wait();
                    }
                },
            );
            assert!(!failed.load(Ordering::Relaxed), "{what}");
            // The staying seats leave at the end: one more phase.
            assert_eq!(phase.load(Ordering::Relaxed), PHASES + 1);
            assert_retired(&team, PHASES + 1, &what);
        }
    }
}

#[test]
fn every_seat_leaving_retires_the_team() {
    for (what, team) in shapes(12) {
        on_threads(
            30,
            || format!("{what}: {team:?}"),
            team.seats(),
            |seat| {
                for _ in 0..seat.rank() {
                    seat.arrive_and_wait();
                }
                if seat.rank() % 2 == 0 {
                    drop(seat.arrive()); // then leave from the next phase on
                }
            },
        );
        let message = panic_of(|| team.wait_parity(team.phase_parity()));
        assert!(message.contains("retired"), "{what}: {message}");
    }
}

/// A seat that arrived in the current phase and leaves while nobody else
/// has arrived: single-threaded, so a drop that waited for the phase would
/// deadlock here. The next phase then owes one arrival fewer.
#[test]
fn leaving_after_arriving_never_waits_for_the_others() {
    for (what, team) in shapes(9) {
        let seats: Vec<_> = team.seats().collect();
        let mut tokens = Vec::new();
        let mut seats = seats.into_iter();
        let first = seats.next().unwrap();
        tokens.push(first.arrive());
        drop(first); // leaves from phase 1 on
        let rest: Vec<_> = seats.collect();
        for seat in &rest {
            tokens.push(seat.arrive());
        }
        for token in tokens {
            assert!(team.try_wait(&token), "{what}: phase 0 complete");
        }
        for seat in &rest[1..] {
            drop(seat.arrive());
        }
        assert!(team.phase_parity(), "{what}: phase 1 owes 8 arrivals");
        drop(rest[0].arrive());
        assert!(!team.phase_parity(), "{what}: 8 arrivals completed phase 1");
        assert_word(
            &team,
            "Barrier { phase_parity: false, pending: 8, expected: 8, tx: 0, poisoned: false }",
            &what,
        );
    }
}

/// Regression: on a tree, the last leaves of a team whose phase a tx count
/// holds open waited for that phase to end (the leavers' round reached the
/// root early and waited for the word), so the thread that would call
/// `complete_tx` deadlocked in its own drop, and the team retired one phase
/// late. Leaving does not wait (arrive_and_drop): single-threaded here, for
/// every shape and both ways of leaving, and the team retires as the held
/// phase completes.
#[test]
fn tree_team_last_leaves_block_while_tx_holds_the_phase() {
    for (n, explicit) in [(3, false), (3, true), (9, false), (9, true)] {
        for (what, team) in shapes(n) {
            let what = format!("{what}, {n} seats, arrive_and_drop: {explicit}");
            watchdog(
                30,
                || format!("{what}: {team:?}"),
                || {
                    let seats: Vec<_> = team.seats().collect();
                    team.expect_tx(1);
                    let tokens: Vec<_> = seats.iter().map(|s| s.arrive()).collect();
                    for seat in seats {
                        if explicit {
                            seat.arrive_and_drop();
                        } else {
                            drop(seat);
                        }
                    }
                    assert!(!team.try_wait(&tokens[0]), "{what}: tx still holds phase 0");
                    team.complete_tx(1);
                    for token in &tokens {
                        assert!(team.try_wait(token), "{what}: phase 0 complete");
                    }
                },
            );
            assert_retired(&team, 1, &what);
        }
    }
}

#[test]
fn tx_through_seats_holds_the_phase_until_completed() {
    const PHASES: u64 = scaled(500, 3) as u64;
    const BYTES: u32 = 64;
    for (what, team) in shapes(16) {
        let what = what.as_str();
        let data = AtomicU64::new(0);
        watchdog(
            60,
            || format!("{what}: {team:?}"),
            || {
                thread::scope(|s| {
                    // The copy engine: completes each phase's bytes once they're expected.
                    let (team, data) = (&team, &data);
                    s.spawn(move || {
                        for p in 0..PHASES {
                            // Relaxed: published by the complete_tx (a Release RMW).
                            data.store(p + 1, Ordering::Relaxed);
                            team.complete_tx(BYTES);
                            if p + 1 < PHASES {
                                // (After the last, the seats may retire the team.)
                                team.wait_parity(p % 2 == 1);
                            }
                        }
                    });
                    for seat in team.seats() {
                        s.spawn(move || {
                            for p in 0..PHASES {
                                let token = if seat.rank() == 3 {
                                    seat.arrive_tx(BYTES)
                                } else {
                                    seat.arrive()
                                };
                                team.wait(token);
                                let got = data.load(Ordering::Relaxed);
                                assert!(got > p, "{what}: phase {p} ended before its bytes");
                            }
                        });
                    }
                });
            },
        );
        assert_retired(&team, PHASES as usize + 1, what);
    }
}

#[test]
fn arrive_tx_out_of_range_panics_and_changes_nothing() {
    for (what, team) in shapes(4) {
        let seat = team.seat(0);
        team.expect_tx(Barrier::MAX_TX);
        let before = format!("{team:?}");
        let message = panic_of(|| seat.arrive_tx(1));
        assert_eq!(
            message,
            "syncthreads: Seat::arrive_tx(1): the transaction count would go from 1048575 to 1048576, outside -1048575 ..= 1048575",
            "{what}"
        );
        assert_eq!(format!("{team:?}"), before, "{what}");
        // The seat has not arrived: it still can.
        team.complete_tx(Barrier::MAX_TX);
        drop(seat.arrive_tx(Barrier::MAX_TX));
        team.complete_tx(Barrier::MAX_TX);
        let pending = if what == "flat" { 3 } else { 4 }; // the tree holds the arrival
        assert_word(
            &team,
            &format!("Barrier {{ phase_parity: false, pending: {pending}, expected: 4, tx: 0, poisoned: false }}"),
            &what,
        );
        std::mem::forget(seat);
    }
}

#[test]
fn a_double_arrival_panics_and_changes_nothing() {
    for (what, team) in shapes(5) {
        let seats: Vec<_> = team.seats().collect();
        let token = seats[2].arrive();
        let before = format!("{team:?}");
        let missing = team.missing();
        assert_eq!(missing, [0, 1, 3, 4], "{what}");
        for op in 0..4 {
            let message = panic_of(|| match op {
                0 => drop(seats[2].arrive()),
                1 => drop(seats[2].arrive_and_wait()),
                2 => drop(seats[2].arrive_and_wait_async()),
                _ => drop(seats[2].arrive_tx(5)),
            });
            assert!(
                message
                    .contains("seat 2 already arrived in phase 0 (mod 4), which has not completed"),
                "{what}: {message}"
            );
            assert_eq!(format!("{team:?}"), before, "{what}");
            // Nor the seat's entry in the rank table.
            assert_eq!(team.missing(), missing, "{what}");
        }
        // The tree was not touched either: the others complete the phase.
        for (rank, seat) in seats.iter().enumerate() {
            if rank != 2 {
                drop(seat.arrive());
            }
        }
        assert!(team.try_wait(&token), "{what}");
        // The refused arrivals left no trace: seat 2 owes phase 1 as all do.
        assert_eq!(team.missing(), [0, 1, 2, 3, 4], "{what}: phase 1");
        // In phase 1 the seat may arrive again, without having waited.
        drop(seats[2].arrive());
        assert!(team.phase_parity(), "{what}");
        assert_eq!(team.missing(), [0, 1, 3, 4], "{what}: phase 1");
    }
}

/// An arrival on a poisoned team panics with the poisoned message and
/// changes nothing: not the word, nor the seat's entry in the rank table
/// (a flat seat stores it before the word's RMW refuses, and puts it back).
#[test]
fn an_arrival_on_a_poisoned_team_panics_and_changes_nothing() {
    for (what, team) in shapes(3) {
        let seats: Vec<_> = team.seats().collect();
        drop(seats[1].arrive());
        team.poison();
        let before = (format!("{team:?}"), team.missing());
        assert_eq!(before.1, [0, 2], "{what}");
        for (rank, seat) in seats.iter().enumerate() {
            for op in 0..4 {
                let message = panic_of(|| match op {
                    0 => drop(seat.arrive()),
                    1 => drop(seat.arrive_and_wait()),
                    2 => drop(seat.arrive_and_wait_async()),
                    _ => drop(seat.arrive_tx(1)),
                });
                assert!(
                    message
                        .starts_with("syncthreads: barrier poisoned by poison() (seen by Seat::"),
                    "{what}: rank {rank}: {message}"
                );
                assert_eq!((format!("{team:?}"), team.missing()), before, "{what}");
            }
        }
        drop(seats); // quietly: a drop does nothing on a poisoned team
        assert_eq!((format!("{team:?}"), team.missing()), before, "{what}");
    }
}

/// A phase that completed on other threads while this seat never waited
/// for it (it learns of it through a `Relaxed` flag, so nothing orders its
/// next load of the word after the completion): its next arrival is legal,
/// never a false double-arrival panic.
#[test]
fn arriving_again_after_others_completed_the_phase_is_no_double_arrival() {
    const PHASES: u64 = scaled(2_000, 6) as u64;
    for (what, team) in shapes(8) {
        let done = AtomicU64::new(0);
        watchdog(
            60,
            || format!("{what}: {team:?}"),
            || {
                thread::scope(|s| {
                    let mut seats = team.seats();
                    let lone = seats.next().unwrap();
                    let done = &done;
                    s.spawn(move || {
                        for p in 0..PHASES {
                            drop(lone.arrive()); // never waits
                                                 // Relaxed: no happens-before with the completion.
                            while done.load(Ordering::Relaxed) <= p {
                                std::hint::spin_loop();
                            }
                        }
                    });
                    for seat in seats {
                        s.spawn(move || {
                            for p in 0..PHASES {
                                seat.arrive_and_wait();
                                if seat.rank() == 1 {
                                    done.store(p + 1, Ordering::Relaxed);
                                }
                            }
                        });
                    }
                });
            },
        );
    }
}

#[test]
fn an_unwinding_seat_poisons_the_team_and_releases_the_others() {
    for (what, team) in shapes(16) {
        let messages: Vec<String> = watchdog(
            60,
            || format!("{what}: {team:?}"),
            || {
                panics_of_each(team.seats(), |seat| {
                    for p in 0..scaled(100, 4) {
                        if seat.rank() == 7 && p == scaled(50, 2) {
                            panic!("seat 7 failed");
                        }
                        seat.arrive_and_wait();
                    }
                })
            },
        );
        assert!(team.is_poisoned(), "{what}");
        assert_eq!(messages[7], "seat 7 failed");
        for (rank, m) in messages.iter().enumerate() {
            if rank != 7 {
                assert!(
                    m.starts_with("syncthreads: barrier poisoned: a participant panicked"),
                    "{what}: {m}"
                );
            }
        }
    }
}

#[test]
fn a_drop_on_a_poisoned_or_retired_team_does_nothing() {
    for (what, team) in shapes(6) {
        let seats: Vec<_> = team.seats().collect();
        team.poison();
        let before = format!("{team:?}");
        drop(seats); // no panic
        assert_eq!(format!("{team:?}"), before, "{what}");
    }
    let team = shape::shapes(&[Shape::BINARY])[0].team(3, 3);
    let (a, b, c) = (team.seat(0), team.seat(1), team.seat(2));
    a.arrive_and_drop();
    b.arrive_and_drop();
    drop(c.arrive());
    drop(c); // leaves in phase 1, which retires the team in phase 2
    let message = panic_of(|| team.wait_parity(false));
    assert!(message.contains("retired"), "{message}");
}

#[test]
fn arrive_and_drop_on_a_poisoned_team_panics() {
    let team = Team::new(8);
    let seat = team.seat(0);
    team.poison();
    let message = panic_of(move || seat.arrive_and_drop());
    assert!(
        message.starts_with(
            "syncthreads: barrier poisoned by poison() (seen by Seat::arrive_and_drop())"
        ),
        "{message}"
    );
}

#[test]
fn seats_are_handed_out_once_per_rank() {
    let team = Team::new(8);
    let three = team.seat(3);
    assert_eq!(
        panic_of(|| team.seat(3)),
        "syncthreads: Team::seat(3): seat 3 was already handed out (each rank once)"
    );
    assert_eq!(
        panic_of(|| team.seat(8)),
        "syncthreads: Team::seat(8): rank out of range: the team has capacity 8 (ranks 0 ..= 7)"
    );
    let ranks: Vec<usize> = team.seats().map(|s| s.rank()).collect();
    assert_eq!(ranks, [0, 1, 2, 4, 5, 6, 7]);
    assert_eq!(team.seats().count(), 0);
    drop(three);
    assert_eq!(
        panic_of(|| Team::new(0)),
        "syncthreads: Team::new(0): the seat count must be in 1 ..= 1048575 (Barrier::MAX)"
    );
}

#[test]
fn the_team_debugs_its_shape_and_its_word() {
    let team = Team::new(16);
    assert_eq!(
        format!("{team:?}"),
        "Team { arrived: 0, expected: 16, capacity: 16, fan_in: 4, nodes: 5, barrier: Barrier { phase_parity: false, pending: 16, expected: 16, tx: 0, poisoned: false } }"
    );
    let seat = team.seat(0);
    assert_eq!(
        format!("{seat:?}"),
        "Seat { rank: 0, arrived: 0, expected: 16, .. }"
    );
    std::mem::forget(seat);
}

#[test]
fn completion_runs_once_per_phase_after_every_seat() {
    const SEATS: usize = 24;
    const PHASES: usize = scaled(1_000, 4);
    let arrived = AtomicUsize::new(0);
    let runs = AtomicUsize::new(0);
    let team = Team::with_completion(SEATS, || {
        let r = runs.fetch_add(1, Ordering::Relaxed);
        // Every seat of phase r incremented before arriving (phase PHASES
        // is the seats leaving as their threads end).
        assert_eq!(arrived.load(Ordering::Relaxed), (r + 1).min(PHASES) * SEATS);
    });
    on_threads(
        60,
        || format!("{team:?}"),
        team.seats(),
        |seat| {
            for p in 0..PHASES {
                arrived.fetch_add(1, Ordering::Relaxed);
                seat.arrive_and_wait();
                assert!(runs.load(Ordering::Relaxed) > p);
            }
        },
    );
    assert_eq!(runs.load(Ordering::Relaxed), PHASES + 1);
}

#[test]
fn a_panicking_completion_poisons_the_team() {
    let phase = AtomicUsize::new(0);
    let team = Team::with_completion(8, || {
        if phase.fetch_add(1, Ordering::Relaxed) == 3 {
            panic!("boom");
        }
    });
    let messages: Vec<String> = watchdog(
        30,
        || format!("{team:?}"),
        || {
            panics_of_each(team.seats(), |seat| {
                for _ in 0..10 {
                    seat.arrive_and_wait();
                }
            })
        },
    );
    assert_eq!(messages.iter().filter(|m| *m == "boom").count(), 1);
    assert!(messages
        .iter()
        .filter(|m| *m != "boom")
        .all(|m| m.starts_with("syncthreads: barrier poisoned: completion panicked in phase 3")));
}

type OwnSeat = Seat<'static, fn()>;

/// A team whose completion function (a `fn`, so that it can name the team
/// through a static) makes its seat 0 arrive again, and records what that
/// did: the panic messages, and the team's `Debug` and `missing()` before
/// and after, inside the function.
struct OwnCompletion {
    team: OnceLock<Team<fn()>>,
    seat: Mutex<Option<OwnSeat>>,
    seen: Mutex<Option<OwnSeen>>,
}

#[derive(Debug)]
struct OwnSeen {
    messages: Vec<String>,
    before: (String, Vec<usize>),
    after: (String, Vec<usize>),
}

impl OwnCompletion {
    const fn new() -> OwnCompletion {
        OwnCompletion {
            team: OnceLock::new(),
            seat: Mutex::new(None),
            seen: Mutex::new(None),
        }
    }

    /// The completion function: only while the test has put seat 0 here.
    fn inside(&'static self) {
        let seat = self.seat.lock().unwrap();
        let (Some(team), Some(seat)) = (self.team.get(), seat.as_ref()) else {
            return;
        };
        let look = || (format!("{team:?}"), team.missing());
        let before = look();
        let messages = vec![
            panic_of(|| drop(seat.arrive())),
            panic_of(|| seat.arrive_and_wait().is_leader()),
            panic_of(|| drop(seat.arrive_and_wait_async())),
        ];
        let after = look();
        *self.seen.lock().unwrap() = Some(OwnSeen {
            messages,
            before,
            after,
        });
    }

    /// Phase 0 with seats 0 and 1, completed by seat 1 with seat 0 in the
    /// completion function's hands; then phase 1 must owe both seats.
    fn check(&'static self, make: fn() -> Team<fn()>, what: &str) {
        let team = self.team.get_or_init(make);
        let (first, second) = (team.seat(0), team.seat(1));
        drop(first.arrive());
        *self.seat.lock().unwrap() = Some(first);
        drop(second.arrive()); // completes phase 0: the completion runs here
        let first = self.seat.lock().unwrap().take().unwrap();
        let seen = self
            .seen
            .lock()
            .unwrap()
            .take()
            .expect("the completion ran");
        for (message, op) in
            seen.messages
                .iter()
                .zip(["arrive()", "arrive_and_wait()", "arrive_and_wait_async()"])
        {
            assert_eq!(
                message,
                &format!("syncthreads: Seat::{op}: called inside this barrier's own completion function, where it would deadlock"),
                "{what}"
            );
        }
        assert_eq!(seen.after, seen.before, "{what}");
        assert!(!team.is_poisoned(), "{what}");
        // The refused arrivals left no trace: phase 1 owes both seats.
        assert!(team.phase_parity(), "{what}");
        assert_eq!(team.missing(), [0, 1], "{what}");
        assert!(
            format!("{team:?}").starts_with("Team { arrived: 0, expected: 2,"),
            "{what}: {team:?}"
        );
        drop(first.arrive());
        assert_eq!(team.missing(), [1], "{what}");
        let token = second.arrive();
        assert!(team.try_wait(&token), "{what}");
        drop((first, second));
    }
}

static OWN_FLAT: OwnCompletion = OwnCompletion::new();
static OWN_TREE: OwnCompletion = OwnCompletion::new();

fn own_flat() {
    OWN_FLAT.inside();
}

fn own_tree() {
    OWN_TREE.inside();
}

/// A flat seat publishes its entry before the word's RMW, which finds the
/// word completing; inside the team's own completion function that RMW's
/// wait refuses the arrival, and the entry must be put back as after any
/// refusal (the tree's seats check before they publish).
#[test]
fn a_seat_arriving_inside_its_teams_own_completion_panics_and_changes_nothing() {
    OWN_FLAT.check(|| Team::with_completion(2, own_flat as fn()), "flat");
    // A tree for two seats: capacity three (the default shape is flat up to two).
    OWN_TREE.check(
        || shape::shapes(&[Shape::BINARY])[0].team_with(2, 3, own_tree as fn()),
        "tree",
    );
}

#[test]
fn parity_and_timed_waits_work_on_the_team() {
    for (what, team) in shapes(6) {
        let seats: Vec<_> = team.seats().collect();
        let token = seats[0].arrive();
        let token = team
            .wait_timeout(token, Duration::from_millis(5))
            .expect_err("phase 0 still owes 5 arrivals");
        assert!(
            !team.wait_parity_timeout(false, Duration::from_millis(2)),
            "{what}"
        );
        watchdog(
            30,
            || format!("{what}: {team:?}"),
            || {
                thread::scope(|s| {
                    s.spawn(|| team.wait_parity(false)); // an observer
                    for seat in &seats[1..] {
                        drop(seat.arrive());
                    }
                });
            },
        );
        assert!(team.wait_timeout(token, Duration::ZERO).is_ok(), "{what}");
        assert!(team.try_wait_parity(false) && team.phase_parity(), "{what}");
        // The seats stay (no leave), but their Vec is freed: a forgotten
        // Vec leaks its buffer (Miri reports it).
        seats.into_iter().for_each(std::mem::forget);
    }
}

#[test]
fn split_arrive_wait_overlaps_independent_work() {
    const PHASES: u64 = scaled(1_000, 3) as u64;
    let slots: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..32).map(|_| AtomicU64::new(u64::MAX)).collect());
    let team = Team::new(32);
    on_threads(
        60,
        || format!("{team:?}"),
        team.seats(),
        |seat| {
            for p in 0..PHASES {
                let buffer = &slots[(p % 2) as usize];
                buffer[seat.rank()].store(p, Ordering::Relaxed);
                let token = seat.arrive();
                std::hint::black_box((0..(p % 11)).sum::<u64>());
                team.wait(token);
                for slot in buffer {
                    assert_eq!(slot.load(Ordering::Relaxed), p);
                }
            }
        },
    );
}

// ---- BlockBarrier seats (SPEC §2) and launch (§4) -----------------------

/// Thread `rank`'s predicate in phase `phase`: the density changes per phase.
fn pred(n: usize, rank: usize, phase: usize) -> bool {
    let density = mix(phase as u64) % (n as u64 + 2);
    mix(((phase as u64) << 20) ^ rank as u64) % (n as u64 + 1) < density
}

/// The answer of the reduction `phase % 4` selects (count, and, or, sync)
/// over the predicates of `live` threads.
fn expected_reduction(live: &[usize], n: usize, phase: usize) -> usize {
    let trues = live.iter().filter(|&&r| pred(n, r, phase)).count();
    match phase % 4 {
        0 => trues,
        1 => usize::from(trues == live.len()),
        2 => usize::from(trues > 0),
        _ => 0,
    }
}

/// What a reduction phase calls: a `BlockSeat`'s syncs or a launched `Block`'s.
trait Syncs {
    fn sync_count(&self, pred: bool) -> usize;
    fn sync_and(&self, pred: bool) -> bool;
    fn sync_or(&self, pred: bool) -> bool;
}

impl Syncs for syncthreads::BlockSeat<'_> {
    fn sync_count(&self, pred: bool) -> usize {
        self.sync_count(pred)
    }
    fn sync_and(&self, pred: bool) -> bool {
        self.sync_and(pred)
    }
    fn sync_or(&self, pred: bool) -> bool {
        self.sync_or(pred)
    }
}

impl Syncs for syncthreads::Block<'_> {
    fn sync_count(&self, pred: bool) -> usize {
        self.sync_count(pred)
    }
    fn sync_and(&self, pred: bool) -> bool {
        self.sync_and(pred)
    }
    fn sync_or(&self, pred: bool) -> bool {
        self.sync_or(pred)
    }
}

/// Thread `rank` of `n` makes phase `phase` of the reduction test: the
/// reduction `phase % 4` selects (`plain` for the plain sync), checked
/// against the predicates of the `live` threads; returns its result.
#[track_caller]
fn reduction_phase(
    block: &impl Syncs,
    plain: impl FnOnce(),
    (n, rank, phase): (usize, usize, usize),
    live: &[usize],
) -> usize {
    let mine = pred(n, rank, phase);
    let got = match phase % 4 {
        0 => block.sync_count(mine),
        1 => usize::from(block.sync_and(mine)),
        2 => usize::from(block.sync_or(mine)),
        _ => {
            plain();
            0
        }
    };
    assert_eq!(
        got,
        expected_reduction(live, n, phase),
        "{n} threads, rank {rank}, phase {phase}"
    );
    got
}

#[test]
fn block_seats_reduce_exactly_over_thousands_of_phases() {
    for threads in [3, 16, 40] {
        let block = syncthreads::BlockBarrier::new(threads);
        let phases = if threads > 16 {
            scaled(800, 4)
        } else {
            scaled(3_000, 4)
        };
        watchdog(
            120,
            || format!("{block:?}"),
            || {
                thread::scope(|s| {
                    for rank in 0..threads {
                        let seat = block.seat(rank);
                        s.spawn(move || {
                            let all: Vec<usize> = (0..threads).collect();
                            for phase in 0..phases {
                                let at = (threads, rank, phase);
                                reduction_phase(&seat, || seat.sync(), at, &all);
                            }
                        });
                    }
                });
            },
        );
    }
}

/// Seats leave at staggered phases; the remaining ones' reductions count
/// exactly the threads still there (`sync_and` included).
#[test]
fn block_seats_that_leave_are_not_counted() {
    const THREADS: usize = 16;
    const PHASES: usize = scaled(1_200, 17);
    // Rank 4 and up leave one by one, spread over the phases.
    const STEP: usize = PHASES / 17;
    let leave_at = |rank: usize| if rank < 4 { usize::MAX } else { rank * STEP };
    let block = syncthreads::BlockBarrier::new(THREADS);
    watchdog(
        60,
        || format!("{block:?}"),
        || {
            thread::scope(|s| {
                for rank in 0..THREADS {
                    let seat = block.seat(rank);
                    s.spawn(move || {
                        for phase in 0..PHASES.min(leave_at(rank)) {
                            let live: Vec<usize> =
                                (0..THREADS).filter(|&r| leave_at(r) > phase).collect();
                            let at = (THREADS, rank, phase);
                            reduction_phase(&seat, || seat.sync(), at, &live);
                        }
                    });
                }
            });
        },
    );
}

#[test]
fn a_block_is_used_through_seats_or_seat_less_not_both() {
    let block = syncthreads::BlockBarrier::new(1);
    block.sync(); // seat-less from now on
    let before = format!("{block:?}");
    assert_eq!(
        panic_of(|| block.seat(0)),
        "syncthreads: BlockBarrier::seat(0): the block was already synced seat-less; a BlockBarrier is used either through seats or seat-less, not both"
    );
    assert_eq!(format!("{block:?}"), before);
    assert!(block.sync_and(true));

    let block = syncthreads::BlockBarrier::new(2);
    let seat = block.seat(1);
    let before = format!("{block:?}");
    for op in 0..4 {
        let message = panic_of(|| match op {
            0 => block.sync(),
            1 => drop(block.sync_count(true)),
            2 => drop(block.sync_and(true)),
            _ => drop(block.sync_or(true)),
        });
        assert!(
            message.starts_with("syncthreads: BlockBarrier::sync")
                && message.contains("seat-less sync of a block whose threads took seats"),
            "{message}"
        );
        assert_eq!(format!("{block:?}"), before);
    }
    assert_eq!(
        panic_of(|| block.seat(1)),
        "syncthreads: BlockBarrier::seat(1): the seat of rank 1 was already taken (each rank once)"
    );
    assert_eq!(
        panic_of(|| block.seat(2)),
        "syncthreads: BlockBarrier::seat(2): rank out of range: the block has 2 threads (ranks 0 ..= 1)"
    );
    assert_eq!(
        format!("{seat:?}"),
        "BlockSeat { rank: 1, arrived: 0, expected: 2, threads: 2 }"
    );
    let other = block.seat(0);
    // One call site for both (a divergent sync otherwise, with `diagnostics`).
    let sync_count = |seat: &syncthreads::BlockSeat<'_>| seat.sync_count(true);
    thread::scope(|s| {
        s.spawn(move || assert_eq!(sync_count(&other), 2));
        assert_eq!(sync_count(&seat), 2);
    });
}

#[test]
fn an_unwinding_block_seat_poisons_the_block() {
    let block = syncthreads::BlockBarrier::new(8);
    let messages: Vec<String> = watchdog(
        30,
        || format!("{block:?}"),
        || {
            let seats: Vec<_> = (0..8).map(|rank| (rank, block.seat(rank))).collect();
            panics_of_each(seats, |(rank, seat)| {
                for phase in 0..scaled(50, 6) {
                    if rank == 2 && phase == scaled(20, 3) {
                        panic!("rank 2 failed");
                    }
                    seat.sync();
                }
            })
        },
    );
    assert!(block.is_poisoned());
    assert_eq!(messages[2], "rank 2 failed");
    assert!(messages
        .iter()
        .enumerate()
        .all(|(r, m)| r == 2 || m.starts_with("syncthreads: barrier poisoned")));
}

#[test]
fn launch_sixty_four_threads_reduces_through_seats() {
    const THREADS: usize = 64;
    const PHASES: usize = scaled(600, 4);
    let shared: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(0)).collect();
    let results = watchdog(
        120,
        || "launch(64)".to_string(),
        || {
            syncthreads::launch(THREADS, |block| {
                let rank = block.thread_rank();
                let all: Vec<usize> = (0..THREADS).collect();
                let mut sum = 0;
                for phase in 0..PHASES {
                    // The plain phases: a shared-memory exchange (write,
                    // sync, read the neighbour's).
                    let exchange = || {
                        shared[rank].store((phase * THREADS + rank) as u64, Ordering::Relaxed);
                        block.sync();
                        let next = (rank + 1) % THREADS;
                        assert_eq!(
                            shared[next].load(Ordering::Relaxed),
                            (phase * THREADS + next) as u64
                        );
                        block.sync(); // before anyone overwrites
                    };
                    sum += reduction_phase(block, exchange, (THREADS, rank, phase), &all);
                }
                sum
            })
        },
    );
    assert_eq!(results.len(), THREADS);
    assert!(results.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_seat_less_sync_inside_launch_panics() {
    let got = syncthreads::launch(4, |block| {
        let message = panic_of(|| block.barrier().sync());
        block.sync();
        message
    });
    for m in got {
        assert!(
            m.contains("seat-less sync of a block whose threads took seats"),
            "{m}"
        );
    }
}

/// A thread that returns early leaves the block (its seat is dropped): the
/// others' later syncs do not wait for it.
#[test]
fn a_launched_thread_that_returns_early_leaves_the_block() {
    let counts = watchdog(
        30,
        || "launch(8)".to_string(),
        || {
            syncthreads::launch(8, |block| {
                if block.thread_rank() % 2 == 1 {
                    return Vec::new();
                }
                (0..scaled(100, 8))
                    .map(|_| block.sync_count(true))
                    .collect::<Vec<_>>()
            })
        },
    );
    for (rank, c) in counts.iter().enumerate() {
        if rank % 2 == 0 {
            // In phase 0 the odd threads' drops count as arrivals (not as
            // true predicates); afterwards only the four even threads sync.
            assert!(c.iter().all(|&n| n == 4), "rank {rank}: {c:?}");
        }
    }
}

/// Regression: a seat whose leave completes a phase (no `sync*` caller
/// leads it) must still clear the counter of phase k + 2, or phase k + 2
/// reads phase k - 2's predicates too. A 2-thread block is flat, so the
/// word shows when the other seat has arrived.
#[test]
fn a_leave_that_completes_a_phase_still_clears_its_counter() {
    let block = syncthreads::BlockBarrier::new(2);
    let counts = watchdog(
        30,
        || format!("{block:?}"),
        || {
            thread::scope(|s| {
                let (a, b) = (block.seat(0), block.seat(1));
                // One call site for both (with `diagnostics`, two would diverge).
                let sync_count = |seat: &syncthreads::BlockSeat<'_>| seat.sync_count(true);
                let stays = s.spawn(move || (0..5).map(|_| sync_count(&a)).collect::<Vec<_>>());
                assert_eq!((sync_count(&b), sync_count(&b)), (2, 2));
                // Phase 2: wait until the other seat has arrived, then leave:
                // the leave completes the phase.
                while !format!("{block:?}").contains("pending: 1,") {
                    std::hint::spin_loop();
                }
                drop(b);
                stays.join().unwrap()
            })
        },
    );
    // Phases 0, 1: both true; 2: only the staying seat; 3, 4: alone.
    assert_eq!(counts, [2, 2, 1, 1, 1]);
}
