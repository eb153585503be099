//! Joining a running `Team` (SPEC §10): `Team::with_capacity`, `Team::join`
//! (the lowest free rank, from the current phase on, the window rule), rank
//! reuse, the misuse panics, and `missing()` / the progress in `Debug`
//! (SPEC §9) beside joins and leaves. Every multi-threaded test runs under
//! a watchdog.

mod common;

use common::ledger::{self, Ledger};
use common::shape::{self, Shape};
use common::{assert_word, eventually, mix, on_threads, panic_of, progress_of, watchdog};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;
use syncthreads::{BlockBarrier, Team};

/// The shapes a join has to work on (those of them the build has, see
/// `common::shape`): the default (flat, one leaf, or a tree with empty
/// subtrees to revive, by capacity), a binary tree (the most levels), and
/// flat.
fn shapes(seats: usize, capacity: usize) -> Vec<(String, Team)> {
    shape::shapes(&[Shape::DEFAULT, Shape::BINARY, Shape::FLAT])
        .into_iter()
        .map(|shape| {
            (
                format!("with_capacity({seats}, {capacity}) {}", shape.name),
                shape.team(seats, capacity),
            )
        })
        .collect()
}

// ---- construction ---------------------------------------------------------------

#[test]
fn capacity_is_reported_and_new_has_its_seat_count_as_capacity() {
    assert_eq!(Team::new(5).capacity(), 5);
    assert_eq!(Team::with_capacity(3, 64).capacity(), 64);
    assert_eq!(Team::with_capacity(3, 64).seat_count(), 3);
    assert_eq!(
        Team::with_completion_and_capacity(2, 9, || {}).capacity(),
        9
    );
}

#[test]
fn with_capacity_out_of_range_panics() {
    assert!(panic_of(|| Team::with_capacity(0, 4))
        .contains("syncthreads: Team::with_capacity(0, 4): the seat count must be in 1 ..= "));
    assert!(panic_of(|| Team::with_capacity(5, 4))
        .contains("syncthreads: Team::with_capacity(5, 4): the capacity must be in 5 ..= 1048575"));
    assert!(
        panic_of(|| Team::with_capacity(1, syncthreads::Barrier::MAX + 1))
            .contains("the capacity must be in 1 ..= 1048575")
    );
    assert!(panic_of(|| Team::with_completion_and_capacity(3, 2, || {}))
        .contains("syncthreads: Team::with_completion_and_capacity(3, 2, _): the capacity must be in 3 ..= 1048575"));
}

#[test]
fn seat_of_a_rank_not_taking_part_names_join_and_beyond_capacity_names_the_range() {
    let team = Team::with_capacity(2, 6);
    let message = panic_of(|| team.seat(4));
    assert!(
        message.contains("syncthreads: Team::seat(4): rank 4 does not take part"),
        "{message}"
    );
    assert!(message.contains("Team::join"), "{message}");
    let message = panic_of(|| team.seat(6));
    assert!(
        message.contains(
            "syncthreads: Team::seat(6): rank out of range: the team has capacity 6 (ranks 0 ..= 5)"
        ),
        "{message}"
    );
    assert_eq!(team.seats().map(|s| s.rank()).collect::<Vec<_>>(), [0, 1]);
    // A joined rank is handed out.
    let team = Team::with_capacity(1, 3);
    let joined = team.join().expect("a free rank");
    assert!(panic_of(|| team.seat(joined.rank())).contains("already handed out"));
}

// ---- the current-phase rule --------------------------------------------------------

#[test]
fn a_join_makes_the_current_phase_wait_for_the_joined_seat() {
    for (what, team) in shapes(2, 8) {
        let (a, b) = (team.seat(0), team.seat(1));
        let token = a.arrive();
        let c = team.join().unwrap_or_else(|| panic!("{what}: a free rank"));
        assert_eq!(c.rank(), 2, "{what}: the lowest free rank");
        drop(b.arrive());
        assert!(
            !team.try_wait(&token),
            "{what}: the phase also owes the joined seat"
        );
        assert_eq!(team.missing(), [2], "{what}");
        let last = c.arrive();
        assert!(team.try_wait(&token) && team.try_wait(&last), "{what}");
        // From then on it takes part like the others.
        for _ in 0..6 {
            let t = a.arrive();
            drop(b.arrive());
            assert!(!team.try_wait(&t), "{what}");
            drop(c.arrive());
            assert!(team.try_wait(&t), "{what}");
        }
        drop((a, b, c));
    }
}

/// A team of capacity 2 is flat (its seats arrive on the word, each with
/// the one RMW that checks its phase); step by step through joins, a
/// joined seat's first arrival, a leave and a rejoin of the same rank, and
/// a joined seat that leaves before it arrived, it answers as the tree
/// does: the joined seat's first arrival lands in the phase it joined (the
/// flat team's word says so at each step).
#[test]
fn joins_on_a_flat_team_answer_as_on_a_tree() {
    for (what, team) in shapes(1, 2) {
        let team_is_flat = format!("{team:?}").contains("nodes: 0");
        let word = |parity: bool, pending: usize, expected: usize| {
            format!("Barrier {{ phase_parity: {parity}, pending: {pending}, expected: {expected}, tx: 0, poisoned: false }}")
        };
        let step = |step: &str, missing: &[usize], progress: (usize, usize), w: String| {
            assert_eq!(team.missing(), missing, "{what}: {step}");
            assert_eq!(progress_of(&team), progress, "{what}: {step}");
            // A tree's word sees its seats' arrivals only as the root's.
            if team_is_flat {
                assert_word(&team, &w, &format!("{what}: {step}"));
            }
        };
        let first = team.seat(0);
        step("new", &[0], (0, 1), word(false, 1, 1));
        let token = first.arrive();
        assert!(team.try_wait(&token), "{what}: phase 0 alone");
        step("phase 1", &[0], (0, 1), word(true, 1, 1));
        let joined = team
            .join()
            .unwrap_or_else(|| panic!("{what}: rank 1 is free"));
        assert_eq!(joined.rank(), 1, "{what}");
        assert!(team.join().is_none(), "{what}: full");
        step("joined phase 1", &[0, 1], (0, 2), word(true, 2, 2));
        // Its first arrival is phase 1's (its last is phase 0, which it
        // never took part in).
        let early = joined.arrive();
        step("joined arrived", &[0], (1, 2), word(true, 1, 2));
        assert!(!team.try_wait(&early), "{what}: phase 1 owes rank 0");
        assert!(
            panic_of(|| drop(joined.arrive()))
                .contains("seat 1 already arrived in phase 1 (mod 4), which has not completed"),
            "{what}"
        );
        step("refused", &[0], (1, 2), word(true, 1, 2));
        drop(first.arrive());
        assert!(team.try_wait(&early), "{what}");
        step("phase 2", &[0, 1], (0, 2), word(false, 2, 2));
        // A leave is its arrival in phase 2: rank 1 is free from phase 3.
        joined.arrive_and_drop();
        step("left", &[0], (1, 2), word(false, 1, 1));
        assert!(team.join().is_none(), "{what}: rank 1 counts in phase 2");
        drop(first.arrive());
        step("phase 3", &[0], (0, 1), word(true, 1, 1));
        let again = team
            .join()
            .unwrap_or_else(|| panic!("{what}: rank 1 is free again"));
        assert_eq!(again.rank(), 1, "{what}");
        step("rejoined phase 3", &[0, 1], (0, 2), word(true, 2, 2));
        drop(first.arrive());
        step("rank 0 arrived", &[1], (1, 2), word(true, 1, 2));
        // Leaving before its first arrival: that arrival and its drop.
        drop(again);
        step("phase 4", &[0], (0, 1), word(false, 1, 1));
        let last = team
            .join()
            .unwrap_or_else(|| panic!("{what}: rank 1 is free"));
        drop(last.arrive());
        step(
            "joined phase 4 and arrived",
            &[0],
            (1, 2),
            word(false, 1, 2),
        );
        drop((first, last));
    }
}

#[test]
fn a_joined_seat_arrives_with_the_others_across_threads() {
    for (what, team) in shapes(3, 16) {
        let joined_arrivals = AtomicUsize::new(0);
        let seats: Vec<_> = team.seats().collect();
        let late = team.join().unwrap();
        // The joined seat (`true`) counts each arrival before it makes it.
        let seats = std::iter::once((late, true)).chain(seats.into_iter().map(|s| (s, false)));
        on_threads(
            60,
            || format!("{what}: {team:?}"),
            seats,
            |(seat, late)| {
                if late {
                    for _ in 0..200 {
                        joined_arrivals.fetch_add(1, Ordering::Relaxed);
                        seat.arrive_and_wait();
                    }
                } else {
                    for phase in 1..=200 {
                        seat.arrive_and_wait();
                        assert!(joined_arrivals.load(Ordering::Relaxed) >= phase);
                    }
                }
            },
        );
    }
}

// ---- the window rule -----------------------------------------------------------------

#[test]
fn a_join_in_the_completion_window_waits_and_joins_the_next_phase() {
    // Capacity 2 is flat: the joined seat's first arrival is its RMW of
    // the word, for the phase it joined; capacity 4 has a leaf.
    for capacity in [2, 4] {
        join_in_the_completion_window(capacity);
    }
}

fn join_in_the_completion_window(capacity: usize) {
    let inside = AtomicBool::new(false);
    let joiner_called = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    let team = Team::with_completion_and_capacity(1, capacity, || {
        if inside.swap(true, Ordering::AcqRel) {
            return;
        }
        while !joiner_called.load(Ordering::Acquire) {
            thread::yield_now();
        }
        // Widens the window so the join lands in it; a join that does not
        // wait shows up as `finished == false` below.
        thread::sleep(Duration::from_millis(50));
        finished.store(true, Ordering::Release);
    });
    let seat = team.seat(0);
    watchdog(
        30,
        || format!("{team:?}"),
        || {
            thread::scope(|s| {
                let team = &team;
                let (inside, joiner_called, finished) = (&inside, &joiner_called, &finished);
                let joiner = s.spawn(move || {
                    eventually("the completion runs", || inside.load(Ordering::Acquire));
                    joiner_called.store(true, Ordering::Release);
                    let joined = team.join().expect("a free rank");
                    assert!(
                        finished.load(Ordering::Acquire),
                        "the join returned before the completion function did"
                    );
                    joined
                });
                drop(seat.arrive()); // completes phase 0
                let joined = joiner.join().unwrap();
                assert_eq!(joined.rank(), 1);
                // It joined phase 1: its arrival and seat 0's complete it.
                assert!(team.phase_parity());
                assert_eq!(progress_of(team), (0, 2));
                assert_eq!(team.missing(), [0, 1]);
                drop(joined.arrive());
                assert_eq!(team.missing(), [0]);
                let token = seat.arrive();
                assert!(team.try_wait(&token));
                drop((seat, joined));
            });
        },
    );
}

// ---- free ranks: lowest first, reused from the phase after the leave -------------------

#[test]
fn join_on_a_full_team_is_none_and_a_left_rank_is_free_from_the_next_phase() {
    for (what, team) in shapes(3, 3) {
        let seats: Vec<_> = team.seats().collect();
        assert!(team.join().is_none(), "{what}: full");
        let mut seats = seats.into_iter();
        let (a, b, c) = (
            seats.next().unwrap(),
            seats.next().unwrap(),
            seats.next().unwrap(),
        );
        b.arrive_and_drop(); // counts as b's arrival in phase 0
        assert!(
            team.join().is_none(),
            "{what}: rank 1 is counted in phase 0"
        );
        drop(a.arrive());
        drop(c.arrive()); // phase 0 completes
        let b2 = team
            .join()
            .unwrap_or_else(|| panic!("{what}: rank 1 is free in phase 1"));
        assert_eq!(b2.rank(), 1, "{what}");
        assert!(team.join().is_none(), "{what}");
        let t = a.arrive();
        drop(c.arrive());
        assert!(
            !team.try_wait(&t),
            "{what}: the rejoined rank is owed in phase 1"
        );
        drop(b2.arrive());
        assert!(team.try_wait(&t), "{what}");
        drop((a, c));
    }
}

#[test]
fn a_seat_that_leaves_after_arriving_frees_its_rank_two_phases_on() {
    // Arrived in phase 0, then left: its leave is its arrival in phase 1,
    // so the rank is free from phase 2.
    for (what, team) in shapes(2, 2) {
        let (a, b) = (team.seat(0), team.seat(1));
        drop(b.arrive());
        b.arrive_and_drop();
        assert!(team.join().is_none(), "{what}: phase 0");
        drop(a.arrive()); // phase 0 completes
        assert_eq!(
            progress_of(&team),
            (1, 2),
            "{what}: b's leave counts in phase 1"
        );
        assert!(team.join().is_none(), "{what}: phase 1");
        drop(a.arrive()); // phase 1 completes with a alone
        let again = team
            .join()
            .unwrap_or_else(|| panic!("{what}: free in phase 2"));
        assert_eq!(again.rank(), 1, "{what}");
        drop((a, again));
    }
}

#[test]
fn ranks_are_reused_lowest_first() {
    for (what, team) in shapes(6, 8) {
        let mut seats: Vec<_> = team.seats().map(Some).collect();
        for r in [4, 1, 2] {
            drop(seats[r].take()); // leave in phase 0
        }
        for seat in seats.iter().flatten() {
            drop(seat.arrive());
        }
        // Phase 1: ranks 1, 2, 4 are free again, and 6, 7 never took part.
        let ranks: Vec<usize> = std::iter::from_fn(|| team.join())
            .map(|s| {
                let r = s.rank();
                std::mem::forget(s);
                r
            })
            .collect();
        assert_eq!(ranks, [1, 2, 4, 6, 7], "{what}");
    }
}

#[test]
fn a_rank_left_many_phases_ago_is_free() {
    // The word keeps the phase modulo 4: a leave five phases back must not
    // look like a leave in the current phase.
    for (what, team) in shapes(2, 2) {
        let (a, b) = (team.seat(0), team.seat(1));
        drop(b);
        for phase in 0..9 {
            if phase > 0 {
                let again = team
                    .join()
                    .unwrap_or_else(|| panic!("{what}: phase {phase}"));
                assert_eq!(again.rank(), 1);
                drop(again.arrive());
                drop(a.arrive());
                drop(again); // leaves in the next phase, so its rank is free after it
            }
            drop(a.arrive());
        }
        drop(a);
    }
}

#[test]
fn joins_revive_empty_subtrees_and_leaves_empty_them_again() {
    // Capacity 64 with one seat: every join past a leaf's ranks wakes an
    // empty leaf and its empty ancestors; leaving empties them again.
    let team = Team::with_capacity(1, 64);
    let first = team.seat(0);
    for round in 0..6 {
        let joined: Vec<_> = (0..63).map(|_| team.join().expect("free ranks")).collect();
        assert!(team.join().is_none());
        assert_eq!(progress_of(&team), (0, 64), "round {round}");
        let t = first.arrive();
        for s in &joined[..62] {
            drop(s.arrive());
        }
        assert!(!team.try_wait(&t));
        assert_eq!(team.missing(), [63]);
        drop(joined[62].arrive());
        assert!(team.try_wait(&t), "round {round}");
        drop(joined); // every joined seat leaves in the next phase
        drop(first.arrive());
        assert_eq!(progress_of(&team), (0, 1), "round {round}");
    }
}

// ---- misuse ----------------------------------------------------------------------------

#[test]
fn join_on_a_poisoned_team_panics_and_changes_nothing() {
    let team = Team::with_capacity(2, 4);
    team.poison();
    let before = format!("{team:?}");
    let message = panic_of(|| team.join());
    assert!(
        message.starts_with("syncthreads: barrier poisoned by poison() (seen by Team::join())"),
        "{message}"
    );
    assert_eq!(format!("{team:?}"), before);
}

#[test]
fn join_on_a_retired_team_panics() {
    let team = Team::with_capacity(1, 4);
    drop(team.seat(0)); // the last seat leaves: retired
    let before = format!("{team:?}");
    let message = panic_of(|| team.join());
    assert!(
        message.contains("syncthreads: Team::join(): the barrier is retired"),
        "{message}"
    );
    assert_eq!(format!("{team:?}"), before);
}

#[test]
fn join_inside_the_teams_own_completion_function_panics() {
    static TEAM: std::sync::OnceLock<Team<fn()>> = std::sync::OnceLock::new();
    static SEEN: Mutex<Option<(String, String, String)>> = Mutex::new(None);
    fn inside() {
        let team = TEAM.get().unwrap();
        let before = format!("{team:?}");
        let message = panic_of(|| team.join());
        *SEEN.lock().unwrap() = Some((message, before, format!("{team:?}")));
    }
    let team = TEAM.get_or_init(|| Team::with_completion_and_capacity(1, 2, inside as fn()));
    let seat = team.seat(0);
    drop(seat.arrive());
    let (message, before, after) = SEEN.lock().unwrap().take().expect("the completion ran");
    assert_eq!(message, "syncthreads: Team::join(): called inside this barrier's own completion function, where it would deadlock");
    assert_eq!(before, after);
    std::mem::forget(seat);
}

// ---- missing() and the progress in Debug -------------------------------------------------

#[test]
fn missing_and_progress_are_exact_at_quiescence() {
    for (what, team) in shapes(4, 8) {
        // Ranks never handed out count as taking part.
        assert_eq!(team.missing(), [0, 1, 2, 3], "{what}");
        assert_eq!(progress_of(&team), (0, 4), "{what}");
        let s0 = team.seat(0);
        let s2 = team.seat(2);
        drop(s2.arrive());
        assert_eq!(team.missing(), [0, 1, 3], "{what}");
        assert_eq!(progress_of(&team), (1, 4), "{what}");
        let s5 = team.join().unwrap();
        assert_eq!(s5.rank(), 4, "{what}");
        assert_eq!(team.missing(), [0, 1, 3, 4], "{what}");
        assert_eq!(progress_of(&team), (1, 5), "{what}");
        let (s1, s3) = (team.seat(1), team.seat(3));
        drop(s1); // a leave in phase 0 is its arrival there
        assert_eq!(team.missing(), [0, 3, 4], "{what}");
        assert_eq!(progress_of(&team), (2, 5), "{what}");
        drop(s0.arrive());
        drop(s3.arrive());
        assert_eq!(team.missing(), [4], "{what}");
        assert!(
            format!("{s5:?}").contains("arrived: 4, expected: 5"),
            "{what}: {s5:?}"
        );
        drop(s5.arrive()); // phase 0 completes; rank 1 no longer takes part
        assert_eq!(team.missing(), [0, 2, 3, 4], "{what}");
        assert_eq!(progress_of(&team), (0, 4), "{what}");
        drop(s2.arrive());
        s2.arrive_and_drop(); // leaves from phase 2 on: counts as arrived now
        assert_eq!(team.missing(), [0, 3, 4], "{what}");
        drop((s0, s3, s5));
    }
}

/// A seat that arrives in the completion window of phase 0 waits for phase
/// 1 inside its arrival; a flat seat has published its entry for phase 1
/// by then (before the word's RMW found the word completing). The progress
/// in `Debug`, read while the completion function holds the window open,
/// must still be phase 0's: three arrived of three (rank 2's leave is its
/// arrival there), the waiting seat's entry read as what it is, its
/// arrival in phase 0 and one on its way.
#[test]
fn progress_is_the_completing_phases_while_a_seat_waits_in_the_window() {
    for shape in shape::shapes(&[Shape::FLAT, Shape::BINARY]) {
        let inside = AtomicBool::new(false);
        let arriving = AtomicBool::new(false);
        let release = AtomicBool::new(false);
        let team = shape.team_with(3, 3, || {
            if inside.swap(true, Ordering::AcqRel) {
                return;
            }
            while !release.load(Ordering::Acquire) {
                thread::yield_now();
            }
        });
        let what = shape.name;
        let (first, second, third) = (team.seat(0), team.seat(1), team.seat(2));
        drop(third); // its leave is its arrival in phase 0
        drop(first.arrive());
        assert_eq!(progress_of(&team), (2, 3), "{what}");
        watchdog(
            30,
            || format!("{what}: {team:?}"),
            || {
                thread::scope(|s| {
                    let (team, inside, arriving, release) = (&team, &inside, &arriving, &release);
                    // Seat 1 completes phase 0 and runs the completion.
                    let completer = s.spawn(move || {
                        drop(second.arrive());
                        second
                    });
                    let early = s.spawn(move || {
                        eventually("the completion runs", || inside.load(Ordering::Acquire));
                        arriving.store(true, Ordering::Release);
                        let token = first.arrive(); // phase 1's, once the window ends
                        (first, token)
                    });
                    eventually("the early arrival", || arriving.load(Ordering::Acquire));
                    // The window is held open a while, so that the early
                    // arrival gets into it; its entry shows at once if it
                    // is misread.
                    let start = std::time::Instant::now();
                    let mut seen = Vec::new();
                    while start.elapsed() < Duration::from_millis(100) && seen.is_empty() {
                        let (progress, missing) = (progress_of(team), team.missing());
                        if (progress, missing.as_slice()) != ((3, 3), &[]) {
                            seen.push((progress, missing, format!("{team:?}")));
                        }
                        thread::yield_now();
                    }
                    release.store(true, Ordering::Release);
                    assert_eq!(seen, [], "{what}: inside the window");
                    let second = completer.join().unwrap();
                    let (first, token) = early.join().unwrap();
                    // Its arrival counted in phase 1, which waits for seat 1.
                    assert!(team.phase_parity(), "{what}");
                    assert!(!team.try_wait(&token), "{what}");
                    assert_eq!(team.missing(), [1], "{what}");
                    assert_eq!(progress_of(team), (1, 2), "{what}");
                    drop(second.arrive());
                    assert!(team.try_wait(&token), "{what}");
                    drop((first, second));
                });
            },
        );
    }
}

/// Every seat syncs at this one call site (the `diagnostics` feature
/// checks that a phase's syncs come from one).
fn sync(seat: &syncthreads::BlockSeat<'_>) {
    seat.sync();
}

/// The same for a launched block.
fn block_sync(block: &syncthreads::Block<'_>) {
    block.sync();
}

#[test]
fn block_missing_is_none_until_seats_are_used_and_then_exact() {
    let block = BlockBarrier::new(3);
    assert_eq!(block.missing(), None);
    let (a, b) = (block.seat(0), block.seat(2));
    assert_eq!(block.missing(), Some(vec![0, 1, 2]));
    let debug = format!("{block:?}");
    assert!(debug.contains("arrived: 0, expected: 3"), "{debug}");
    watchdog(
        30,
        || format!("{block:?}"),
        || {
            thread::scope(|s| {
                s.spawn(move || sync(&b));
                eventually("seat 2 waits", || block.missing() == Some(vec![0, 1]));
                assert!(format!("{block:?}").contains("arrived: 1, expected: 3"));
                assert!(format!("{a:?}").contains("arrived: 1, expected: 3"));
                let c = block.seat(1);
                s.spawn(move || sync(&c));
                sync(&a);
            });
        },
    );
    let seatless = BlockBarrier::new(1);
    seatless.sync();
    assert_eq!(seatless.missing(), None);
}

#[test]
fn launch_blocks_show_their_progress() {
    let seen = Mutex::new(Vec::new());
    syncthreads::launch(2, |block| {
        if block.thread_rank() == 1 {
            block_sync(block);
        } else {
            // Rank 1 arrives (and waits) in phase 0; rank 0 reads the block.
            eventually("rank 1 waits", || {
                block.barrier().missing() == Some(vec![0])
            });
            seen.lock().unwrap().push(format!("{block:?}"));
            block_sync(block);
        }
    });
    let seen = seen.into_inner().unwrap();
    assert!(seen[0].contains("arrived: 1, expected: 2"), "{}", seen[0]);
}

// ---- async --------------------------------------------------------------------------------

#[test]
fn a_joined_seats_async_wait() {
    let team = Team::with_capacity(1, 4);
    let first = team.seat(0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    watchdog(
        30,
        || format!("{team:?}"),
        || {
            thread::scope(|s| {
                let joined = team.join().unwrap();
                let team = &team;
                let task = s.spawn(move || {
                    rt.block_on(async {
                        let mut leaders = 0;
                        for _ in 0..51 {
                            leaders += joined.arrive_and_wait_async().await.is_leader() as usize;
                        }
                        // A wait on the team from the task: the phase after
                        // the joined seat left (it counts as arrived there).
                        let parity = team.phase_parity();
                        drop(joined);
                        team.wait_parity_async(parity).await;
                        leaders
                    })
                });
                let mut leaders = 0;
                for _ in 0..52 {
                    leaders += first.arrive_and_wait().is_leader() as usize;
                }
                let task_leaders = task.join().unwrap();
                // 51 phases with both, and the one the joined seat left in
                // (led by `first`, unless the drop's arrival completed it).
                assert!((51..=52).contains(&(leaders + task_leaders)));
            });
        },
    );
}

// ---- churn ---------------------------------------------------------------------------------

/// One phase of the anchor (rank 0): publish, arrive and wait.
fn phase_of(
    anchor: &syncthreads::Seat<'_, impl FnMut() + Send>,
    ledger: &Mutex<Ledger>,
    leaders: &Mutex<BTreeMap<u64, usize>>,
) {
    let phase = {
        let mut l = ledger.lock().unwrap();
        l.publish(0);
        l.phase
    };
    if anchor.arrive_and_wait().is_leader() {
        *leaders.lock().unwrap().entry(phase).or_default() += 1;
    }
}

fn churn(threads: usize, capacity: usize, phases: u64, shape: Shape) {
    let ledger = Mutex::new(Ledger::default());
    let stop = AtomicBool::new(false);
    let alive = AtomicUsize::new(threads);
    let (joins, nones) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let leaders = Mutex::new(BTreeMap::<u64, usize>::new());
    let team = shape.team_with(1, capacity, || ledger.lock().unwrap().complete());
    let what = format!("{threads} threads, capacity {capacity}, {}", shape.name);
    let anchor = team.seat(0);
    ledger.lock().unwrap().join(0);
    // The joiners (`None`), then the anchor, rank 0 (`Some`).
    let roles = (0..threads)
        .map(|id| (id, None))
        .chain([(threads, Some(anchor))]);
    on_threads(
        240,
        || format!("{what}: {team:?}"),
        roles,
        |(id, anchor)| {
            let Some(anchor) = anchor else {
                let mut rng = mix(id as u64 + 1);
                while !stop.load(Ordering::Relaxed) {
                    let Some(seat) = team.join() else {
                        nones.fetch_add(1, Ordering::Relaxed);
                        thread::yield_now();
                        continue;
                    };
                    joins.fetch_add(1, Ordering::Relaxed);
                    let rank = seat.rank();
                    assert!(
                        ledger.lock().unwrap().join(rank),
                        "rank {rank} handed out twice"
                    );
                    rng = mix(rng);
                    for _ in 0..1 + rng % 5 {
                        let phase = {
                            let mut l = ledger.lock().unwrap();
                            l.publish(rank);
                            l.phase
                        };
                        if seat.arrive_and_wait().is_leader() {
                            *leaders.lock().unwrap().entry(phase).or_default() += 1;
                        }
                    }
                    // Leave, one of the three ways; the leave (or the
                    // arrival before it) is published first.
                    let mut l = ledger.lock().unwrap();
                    l.publish(rank);
                    ledger::leave(seat, (rng % 3) as usize, l);
                }
                alive.fetch_sub(1, Ordering::Release);
                return;
            };
            // At least `phases` phases, three joins per thread and one join
            // that found the team full (with one free rank the anchor alone
            // may finish the phases before the threads get a core; joins that
            // never come again, or a team that never fills, hang here, into
            // the watchdog), then until every thread has gone.
            let mut done = 0;
            while done < phases
                || joins.load(Ordering::Relaxed) < 3 * threads
                || nones.load(Ordering::Relaxed) == 0
            {
                phase_of(&anchor, &ledger, &leaders);
                done += 1;
            }
            stop.store(true, Ordering::Relaxed);
            while alive.load(Ordering::Acquire) > 0 {
                phase_of(&anchor, &ledger, &leaders);
            }
            ledger.lock().unwrap().publish_and_leave(0);
            anchor.arrive_and_drop();
        },
    );
    let l = ledger.lock().unwrap();
    assert!(l.checked > phases, "{what}: {} phases checked", l.checked);
    // Whoever is left is leaving: a seat that arrived and then left in the
    // last phase counts in the next one, which retires at once (nobody is
    // owed in it), so no completion function sees it.
    assert!(l.all_leaving(), "{what}: {:?} still take part", l.members);
    for (phase, n) in leaders.lock().unwrap().iter() {
        assert!(*n <= 1, "{what}: phase {phase} had {n} leaders");
    }
}

#[test]
fn churn_of_joins_and_leaves_on_16_threads() {
    churn(16, 12, 400, Shape::DEFAULT);
}

#[test]
fn churn_of_joins_and_leaves_on_64_threads() {
    churn(64, 48, 200, Shape::DEFAULT);
}

#[test]
fn churn_on_a_binary_tree_and_flat() {
    for shape in shape::shapes(&[Shape::BINARY]) {
        churn(24, 20, 200, shape);
    }
    churn(8, 2, 300, Shape::DEFAULT); // flat: the default for two ranks
}
