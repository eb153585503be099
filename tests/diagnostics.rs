//! The `diagnostics` feature: divergent `__syncthreads` panics, `stalls()`
//! and its reports, and `SYNCTHREADS_STALL_REPORT` (in a child process). The
//! report shown in docs/debugging.md is made by tests/debugging_page.rs.
//!
//! `stalls()` sees every waiter of the process, so the tests that look at
//! it take `SERIAL` (the others may run beside them: they never wait long).
#![cfg(feature = "diagnostics")]
// Two identical branches are the point: two call sites of one sync.
#![allow(clippy::if_same_then_else)]

mod common;

use common::{eventually, panic_message, scaled, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use syncthreads::diagnostics::{stalls, Stall};
use syncthreads::{launch, Barrier, BlockBarrier, Team, WarpBarrier};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `file:line:col` of the call site `line` in this file, as the messages
/// name it (the column is left to the caller).
fn site(line: u32) -> String {
    format!("{}:{line}:", file!())
}

/// Polls `stalls(older_than)` until a stall of `kind` with `waiters`
/// waiters shows up (the threads take a moment to block); at most 20 s.
fn stall_of(kind: &str, waiters: usize) -> Stall {
    let mut seen = None;
    eventually(
        &format!("a stall of a {kind} with {waiters} waiters"),
        || {
            seen = stalls(Duration::from_millis(1)).into_iter().find(|s| {
                s.to_string()
                    .starts_with(&format!("syncthreads: {kind} stalled"))
                    && s.waiting().len() == waiters
            });
            seen.is_some()
        },
    );
    seen.unwrap()
}

// ---- divergent __syncthreads ---------------------------------------------

#[test]
fn a_sync_from_another_call_site_panics_naming_both() {
    let (a, b) = (line!() + 6, line!() + 8);
    let result = watchdog(60, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(4, |block| {
                let rank = block.thread_rank();
                if rank < 2 {
                    block.sync();
                } else {
                    block.sync();
                }
            })
        }))
    });
    let message = panic_message(&*result.unwrap_err());
    let (sa, sb) = (site(a), site(b));
    // Either side may be the phase's first: both readings name both sites.
    let shape = |this: &str, first: &str| {
        message.starts_with("syncthreads: divergent __syncthreads in phase 0: rank ")
            && message.contains(&format!(" synced at {this}"))
            && message.contains(" (sync), rank ")
            && message.contains(&format!(" at {first}"))
            && message.ends_with(" (sync)")
    };
    assert!(
        shape(&sa, &sb) || shape(&sb, &sa),
        "unexpected message: {message}"
    );
    // The ranks named are one of each side.
    let ranks: Vec<usize> = message
        .split("rank ")
        .skip(1)
        .map(|r| r.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ranks.len(), 2, "{message}");
    assert_ne!(ranks[0] < 2, ranks[1] < 2, "{message}");
}

#[test]
fn a_sync_of_another_kind_panics_naming_both_kinds() {
    let (a, b) = (line!() + 6, line!() + 8);
    let result = watchdog(60, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(2, |block| {
                block.sync(); // phase 0 is fine
                if block.thread_rank() == 0 {
                    let _ = block.sync_count(true);
                } else {
                    let _ = block.sync_or(true);
                }
            })
        }))
    });
    let message = panic_message(&*result.unwrap_err());
    let one = format!(
        "syncthreads: divergent __syncthreads in phase 1: rank 0 synced at {}",
        site(a)
    );
    let other = format!(
        "syncthreads: divergent __syncthreads in phase 1: rank 1 synced at {}",
        site(b)
    );
    if message.starts_with(&one) {
        assert!(message.contains(" (sync_count), rank 1 at "), "{message}");
        assert!(
            message.contains(&site(b)) && message.ends_with(" (sync_or)"),
            "{message}"
        );
    } else {
        assert!(message.starts_with(&other), "{message}");
        assert!(message.contains(" (sync_or), rank 0 at "), "{message}");
        assert!(
            message.contains(&site(a)) && message.ends_with(" (sync_count)"),
            "{message}"
        );
    }
}

#[test]
fn seatless_divergence_names_threads_and_poisons_the_block() {
    let block = BlockBarrier::new(2);
    let (a, b) = (line!() + 3, line!() + 4);
    let results: Vec<Result<(), String>> = watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let one = s.spawn(|| catch_unwind(AssertUnwindSafe(|| block.sync())));
            let two = s.spawn(|| catch_unwind(AssertUnwindSafe(|| block.sync())));
            [one, two]
                .into_iter()
                .map(|h| h.join().unwrap().map_err(|p| panic_message(&*p)))
                .collect()
        })
    });
    assert!(block.is_poisoned());
    let divergent: Vec<&String> = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .filter(|m| m.contains("divergent"))
        .collect();
    assert_eq!(divergent.len(), 1, "{results:?}");
    let m = divergent[0];
    let (sa, sb) = (site(a), site(b));
    assert!(
        m.starts_with("syncthreads: divergent __syncthreads in phase 0: a thread synced at "),
        "{m}"
    );
    assert!(m.contains(" (sync), another thread at "), "{m}");
    assert!(m.contains(&sa) && m.contains(&sb), "{m}");
    // The other thread was not left hanging: the poisoned block released it.
    let other = results
        .iter()
        .find(|r| !matches!(r, Err(m) if m.contains("divergent")));
    match other {
        Some(Err(m)) => assert!(m.starts_with("syncthreads: barrier poisoned"), "{m}"),
        other => panic!("the other thread should see the poisoned block: {other:?}"),
    }
}

#[test]
fn the_same_call_site_in_a_loop_is_fine() {
    // Past four phases either way: the sites' words wrap.
    const ROUNDS: usize = scaled(50, 3);
    let counts = watchdog(60, String::new, || {
        launch(4, |block| {
            let mut total = 0;
            for round in 0..ROUNDS {
                block.sync();
                total += block.sync_count((block.thread_rank() + round) % 2 == 0);
            }
            total
        })
    });
    assert_eq!(counts, [2 * ROUNDS; 4]);
    // Seats of a block used directly, through many phases (the sites wrap).
    let block = BlockBarrier::new(3);
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            for rank in 0..3 {
                let seat = block.seat(rank);
                s.spawn(move || {
                    for _ in 0..scaled(37, 3) {
                        seat.sync();
                        assert!(seat.sync_and(true));
                    }
                });
            }
        })
    });
}

/// Regression: one call site can have several `Location`s (a copy per
/// inlined instance of a closure); they are the same call site.
#[test]
fn one_call_site_inlined_in_two_places_is_not_divergence() {
    let block = BlockBarrier::new(2);
    let sync_count = |seat: &syncthreads::BlockSeat<'_>| seat.sync_count(true);
    let (a, b) = (block.seat(0), block.seat(1));
    let counts = watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let other = s.spawn(move || (0..5).map(|_| sync_count(&a)).collect::<Vec<_>>());
            // Two inlined copies in one function (which is what made two
            // `Location`s for one call site where this was found).
            let mine = vec![
                sync_count(&b),
                sync_count(&b),
                sync_count(&b),
                sync_count(&b),
                sync_count(&b),
            ];
            (mine, other.join().unwrap())
        })
    });
    assert_eq!(counts, (vec![2; 5], vec![2; 5]));
}

#[test]
fn an_early_return_is_not_divergence() {
    const ROUNDS: usize = scaled(20, 6);
    let got = watchdog(60, String::new, || {
        launch(4, |block| {
            if block.thread_rank() >= 2 {
                return 0; // leaves the block
            }
            let mut n = 0;
            for _ in 0..ROUNDS {
                n += block.sync_count(true);
            }
            n
        })
    });
    assert_eq!(got[0], got[1]);
    assert!(got[0] >= 2 * ROUNDS && got[0] <= 4 * ROUNDS, "{got:?}");
    // A seat dropped in the middle of the phases.
    let block = BlockBarrier::new(2);
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            // One call site for both seats.
            let step = |seat: &syncthreads::BlockSeat<'_>| seat.sync();
            let (a, b) = (block.seat(0), block.seat(1));
            s.spawn(move || {
                step(&a);
                drop(a);
            });
            s.spawn(move || {
                for _ in 0..5 {
                    step(&b);
                }
            });
        })
    });
}

#[test]
fn divergence_inside_launch_is_the_root_cause() {
    let result = watchdog(60, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(8, |block| {
                if block.thread_rank() == 5 {
                    block.sync();
                } else {
                    block.sync();
                }
                block.sync();
            })
        }))
    });
    let message = panic_message(&*result.unwrap_err());
    assert!(
        message.starts_with("syncthreads: divergent __syncthreads in phase 0: rank "),
        "{message}"
    );
}

// ---- stalls() -------------------------------------------------------------

#[test]
fn no_stalls_on_healthy_barriers() {
    const PHASES: usize = scaled(100, 6);
    let _serial = serial();
    let team = Team::new(4);
    let barrier = Barrier::new(2);
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            for seat in team.seats() {
                s.spawn(move || {
                    for _ in 0..PHASES {
                        seat.arrive_and_wait();
                    }
                });
            }
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..PHASES {
                        barrier.arrive_and_wait();
                    }
                });
            }
        });
        launch(4, |block| {
            for _ in 0..PHASES {
                block.sync();
            }
        });
    });
    // Every wait has ended: nothing is recorded, however young.
    assert!(
        stalls(Duration::ZERO).is_empty(),
        "{:?}",
        stalls(Duration::ZERO)
    );
    // A barrier mid-phase with nobody waiting is no stall either.
    drop(barrier.arrive());
    assert!(stalls(Duration::ZERO).is_empty());
}

#[test]
fn a_stalled_team_lists_its_waiters_and_call_sites() {
    let _serial = serial();
    let team = Team::new(4);
    let line = line!() + 9;
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let mut seats: Vec<_> = team.seats().collect();
            let late = seats.pop().unwrap();
            for seat in seats {
                std::thread::Builder::new()
                    .name(format!("worker-{}", seat.rank()))
                    .spawn_scoped(s, move || {
                        seat.arrive_and_wait();
                    })
                    .unwrap();
            }
            let stall = stall_of("Team", 3);
            assert_eq!(stall.phase(), 0);
            let mut names: Vec<&str> = stall.waiting().iter().map(|w| w.name()).collect();
            names.sort_unstable();
            // Seats are named by rank, with the thread's own name beside.
            assert_eq!(names, ["rank 0", "rank 1", "rank 2"]);
            for w in stall.waiting() {
                assert_eq!(w.location().file(), file!());
                assert_eq!(w.location().line(), line);
                assert!(w.waited() > Duration::ZERO);
            }
            // Longest first.
            let waited: Vec<Duration> = stall.waiting().iter().map(|w| w.waited()).collect();
            assert!(waited.windows(2).all(|w| w[0] >= w[1]), "{waited:?}");
            // The seats' arrivals, counted once: no inner word's `pending`
            // (which the tree's arrivals have not reached) beside them.
            assert!(
                stall.barrier().starts_with(
                    "Team { arrived: 3, expected: 4, phase_parity: false, tx: 0, poisoned: false, capacity: 4"
                ),
                "{}",
                stall.barrier()
            );
            assert!(!stall.barrier().contains("pending"), "{}", stall.barrier());
            let report = stall.to_string();
            // The report lists the waiting ranks ascending, whatever their waits' lengths.
            let at = |rank: &str| report.find(&format!("{rank} (thread")).expect(rank);
            assert!(
                at("rank 0") < at("rank 1") && at("rank 1") < at("rank 2"),
                "{report}"
            );
            assert!(
                report.contains("rank 1 (thread \"worker-1\") at "),
                "{report}"
            );
            assert!(report.contains(&site(line)), "{report}");
            assert_eq!(stall.missing(), Some(&[3][..]), "{report}");
            assert!(report.contains("missing: rank 3"), "{report}");
            // Older than anything here: not listed.
            assert!(stalls(Duration::from_secs(3600)).is_empty());
            late.arrive_and_wait();
        })
    });
    assert!(stalls(Duration::ZERO).is_empty());
}

/// A seat's split wait (`team.wait(token)`), an observer's parity wait and
/// a task's wait on the team all describe the phase as the team's; the
/// split wait is named by its seat's rank.
#[test]
fn every_wait_on_a_team_is_the_teams() {
    let _serial = serial();
    let team = Team::new(2);
    let (first, late) = (team.seat(0), team.seat(1));
    let stall = watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let token = first.arrive();
            let split = s.spawn(|| team.wait(token));
            let observer = s.spawn(|| team.wait_parity(false));
            let task = s.spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap()
                    .block_on(team.wait_parity_async(false))
            });
            let stall = stall_of("Team", 3);
            // Released before the checks, so that a failed check fails
            // instead of hanging.
            drop(late.arrive());
            for h in [split, observer, task] {
                h.join().unwrap();
            }
            stall
        })
    });
    let mut names: Vec<&str> = stall.waiting().iter().map(|w| w.name()).collect();
    names.sort_unstable();
    // The split wait is named by the rank its token carries; the observer
    // holds no seat, so its thread (unnamed: its id) is named.
    assert!(names[0].starts_with("ThreadId("), "{stall}");
    assert_eq!(names[1..], ["rank 0", "task"], "{stall}");
    assert!(
        stall
            .barrier()
            .starts_with("Team { arrived: 1, expected: 2, phase_parity: false, tx: 0, poisoned: false, capacity: 2"),
        "{stall}"
    );
}

#[test]
fn a_stalled_block_is_reported_as_the_block() {
    let _serial = serial();
    let (go, wait) = mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    let line = line!() + 11;
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            // Rank 0 runs on the launching thread, the others on the pool.
            let caller = std::thread::Builder::new().name("caller".into());
            let launched = caller.spawn_scoped(s, || {
                launch(4, |block| {
                    if block.thread_rank() == 2 {
                        // Held back until the test has looked.
                        wait.lock().unwrap().recv().unwrap();
                    }
                    block.sync();
                })
            });
            launched.unwrap();
            let stall = stall_of("BlockBarrier", 3);
            assert_eq!(stall.phase(), 0);
            let mut names: Vec<&str> = stall.waiting().iter().map(|w| w.name()).collect();
            names.sort_unstable();
            assert_eq!(names, ["rank 0", "rank 1", "rank 3"]);
            for w in stall.waiting() {
                assert_eq!((w.location().file(), w.location().line()), (file!(), line));
            }
            let missing = stall.missing().map(<[usize]>::to_vec);
            assert!(
                stall.barrier().starts_with(
                    "BlockBarrier { arrived: 3, expected: 4, threads: 4, phase_parity: false"
                ),
                "{}",
                stall.barrier()
            );
            go.send(()).unwrap();
            assert_eq!(missing, Some(vec![2]), "{stall}");
        })
    });
}

#[test]
fn an_observer_and_a_split_wait_are_waiters_too() {
    let _serial = serial();
    let barrier = Barrier::new(2);
    let (l1, l2) = (line!() + 4, line!() + 5);
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let token = barrier.arrive();
            let one = s.spawn(|| barrier.wait(token));
            let two = s.spawn(|| barrier.wait_parity(false));
            let stall = stall_of("Barrier", 2);
            let mut lines: Vec<u32> = stall
                .waiting()
                .iter()
                .map(|w| w.location().line())
                .collect();
            lines.sort_unstable();
            assert_eq!(lines, [l1, l2]);
            // Unnamed threads, by their id as Rust writes it.
            let mut names: Vec<&str> = stall.waiting().iter().map(|w| w.name()).collect();
            names.sort_unstable();
            let mut ids = [one.thread().id(), two.thread().id()].map(|id| format!("{id:?}"));
            ids.sort_unstable();
            assert_eq!(names, ids);
            assert_eq!(stall.missing(), None);
            // Says what would name the missing.
            let report = stall.to_string();
            assert!(
                report.contains("missing: unknown (")
                    && report.contains("a Team's seats have ranks")
                    && report.contains("std::thread::Builder::name"),
                "{report}"
            );
            assert_eq!(
                stall.barrier(),
                "Barrier { phase_parity: false, pending: 1, expected: 2, tx: 0, poisoned: false }"
            );
            drop(barrier.arrive());
            one.join().unwrap();
            two.join().unwrap();
        })
    });
}

#[test]
fn async_waiters_are_listed_as_tasks() {
    let _serial = serial();
    let barrier = Barrier::new(2);
    let line = line!() + 9;
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let token = barrier.arrive();
            let task = s.spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap()
                    .block_on(async {
                        barrier.wait_async(token).await;
                    })
            });
            let stall = stall_of("Barrier", 1);
            let w = &stall.waiting()[0];
            assert_eq!(w.name(), "task");
            assert_eq!((w.location().file(), w.location().line()), (file!(), line));
            assert!(stall
                .to_string()
                .contains(&format!("task at {}", site(line))));
            drop(barrier.arrive());
            task.join().unwrap();
        })
    });
    // The future completed: its record is gone.
    assert!(stalls(Duration::ZERO).is_empty());
    // A dropped pending future leaves no record either.
    let barrier = Barrier::new(2);
    let token = barrier.arrive();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let wait = barrier.wait_async(token);
        let timed = tokio::time::timeout(Duration::from_millis(5), wait).await;
        assert!(timed.is_err());
    });
    assert!(stalls(Duration::ZERO).is_empty());
}

#[test]
fn a_stalled_warp_mask_names_its_missing_lanes() {
    let _serial = serial();
    let warp = WarpBarrier::new(4);
    let line = line!() + 6;
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            for lane in 0..2 {
                let warp = &warp;
                s.spawn(move || {
                    warp.sync(lane, 0b0111);
                });
            }
            let stall = stall_of("WarpBarrier", 2);
            assert_eq!(stall.phase(), 1); // the first sync of each lane
            assert_eq!(stall.missing(), Some(&[2][..]));
            assert!(stall.waiting().iter().all(|w| w.location().line() == line));
            // Lanes are named as lanes.
            let mut names: Vec<&str> = stall.waiting().iter().map(|w| w.name()).collect();
            names.sort_unstable();
            assert_eq!(names, ["lane 0", "lane 1"], "{stall}");
            let report = stall.to_string();
            assert!(
                report.starts_with(
                    "syncthreads: WarpBarrier stalled in phase 1 (mask 0x7): 2 waiting"
                ),
                "{report}"
            );
            assert!(report.ends_with("missing: lane 2"), "{report}");
            warp.sync(2, 0b0111);
        })
    });
}

/// A stall report of a phase that has just completed, read before its
/// woken waiter returned (its record lasts until then), names no rank that
/// arrived in that phase as missing: the team describes the stall's phase,
/// not the current one (which nobody has arrived in yet).
#[test]
#[cfg_attr(
    miri,
    ignore = "needs a report read in the moment between a completion and its waiter's return, which Miri's scheduler does not give"
)]
fn a_completed_phases_stall_names_no_rank_that_arrived() {
    const ROUNDS: usize = 200;
    let _serial = serial();
    let team = Team::new(2);
    let (first, second) = (team.seat(0), team.seat(1));
    let caught = watchdog(60, String::new, || {
        std::thread::scope(|s| {
            s.spawn(move || {
                for _ in 0..ROUNDS {
                    first.arrive_and_wait();
                }
            });
            let (mut caught, mut wrong) = (0, Vec::new());
            for round in 0..ROUNDS {
                let phase = (round % 4) as u8;
                let waiting =
                    |stall: &Stall| stall.barrier().starts_with("Team") && stall.phase() == phase;
                // Rank 0 waits in this phase, recorded.
                eventually("rank 0 waits", || {
                    stalls(Duration::ZERO).iter().any(waiting)
                });
                // Rank 1 completes the phase; rank 0 is woken and may not
                // have returned yet.
                drop(second.arrive());
                for stall in stalls(Duration::ZERO).iter().filter(|s| waiting(s)) {
                    caught += 1;
                    // Checked after the rounds: rank 0 must not be left waiting.
                    if stall.missing() != Some(&[][..])
                        || !stall.to_string().contains("missing: none")
                    {
                        wrong.push(format!("round {round}: {stall}"));
                    }
                }
            }
            (caught, wrong)
        })
    });
    let (caught, wrong) = caught;
    assert!(
        wrong.is_empty(),
        "{} of {caught} reports name arrived ranks, e.g.\n{}",
        wrong.len(),
        wrong[0]
    );
    // The case happened: some report was read between the completion and
    // the waiter's return (else this test checked nothing).
    assert!(caught > 0, "no report of a completed phase was read");
}

/// `stalls()` beside waits that begin and end: a reader loops over the
/// records while threads and a task go through phases of a `Team` and of a
/// `Barrier`. Every stall it reads is whole: one barrier's kind and
/// `Debug`, and only that barrier's waiters, at this file's call sites
/// (under Miri, which also checks the records' accesses for races).
#[test]
fn stalls_read_beside_waits_that_begin_and_end() {
    const PHASES: usize = scaled(300, 4);
    let _serial = serial();
    let team = Team::new(3);
    let barrier = Barrier::new(3);
    let done = AtomicBool::new(false);
    let check = |stall: &Stall| {
        let report = stall.to_string();
        let (kind, names) = if report.starts_with("syncthreads: Team stalled") {
            ("Team {", ["rank 0", "rank 1", "task"])
        } else {
            assert!(
                report.starts_with("syncthreads: Barrier stalled"),
                "{report}"
            );
            ("Barrier {", ["barrier-0", "barrier-1", "task"])
        };
        assert!(stall.barrier().starts_with(kind), "{report}");
        assert!(stall.phase() < 4, "{report}");
        assert!((1..=3).contains(&stall.waiting().len()), "{report}");
        for w in stall.waiting() {
            assert!(names.contains(&w.name()), "{report}");
            assert_eq!(w.location().file(), file!(), "{report}");
        }
    };
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut reads = 0;
                // Acquire: the workers' last waits have ended (joined).
                while reads == 0 || !done.load(Ordering::Acquire) {
                    stalls(Duration::ZERO).iter().for_each(check);
                    reads += 1;
                }
            });
            let mut workers = Vec::new();
            let mut seats = team.seats();
            for rank in 0..2 {
                let seat = seats.next().unwrap();
                let worker = std::thread::Builder::new()
                    .name(format!("team-{rank}"))
                    .spawn_scoped(s, move || {
                        for _ in 0..PHASES {
                            seat.arrive_and_wait();
                        }
                    })
                    .unwrap();
                workers.push(worker);
                let barrier = &barrier;
                let worker = std::thread::Builder::new()
                    .name(format!("barrier-{rank}"))
                    .spawn_scoped(s, move || {
                        for _ in 0..PHASES {
                            barrier.arrive_and_wait();
                        }
                    })
                    .unwrap();
                workers.push(worker);
            }
            let seat = seats.next().unwrap();
            let barrier = &barrier;
            workers.push(s.spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    for _ in 0..PHASES {
                        seat.arrive_and_wait_async().await;
                        barrier.arrive_and_wait_async().await;
                    }
                });
            }));
            for worker in workers {
                worker.join().unwrap();
            }
            // Release: see the reader's Acquire.
            done.store(true, Ordering::Release);
            reader.join().unwrap();
        })
    });
    // Every wait has ended.
    assert!(stalls(Duration::ZERO).is_empty());
}

// ---- SYNCTHREADS_STALL_REPORT (a child process) ---------------------------------

/// Set in the child: which scenario to run.
const CHILD: &str = "SYNCTHREADS_TEST_CHILD";

/// Runs this test binary again, only `test`, with the variable set, and
/// returns its stderr.
fn child(test: &str, report_after: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, test)
        .env("SYNCTHREADS_STALL_REPORT", report_after)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed: {stderr}");
    stderr
}

/// The child's scenario: two phases of a `Team` stall in turn, each for
/// about ten times the report threshold, with three waiters each.
#[test]
fn child_two_stalled_phases() {
    if std::env::var(CHILD).as_deref() != Ok("child_two_stalled_phases") {
        return; // only as a child
    }
    let team = Team::new(4);
    let hold = Duration::from_millis(1500);
    std::thread::scope(|s| {
        let mut seats: Vec<_> = team.seats().collect();
        let late = seats.pop().unwrap();
        for seat in seats {
            std::thread::Builder::new()
                .name(format!("worker-{}", seat.rank()))
                .spawn_scoped(s, move || {
                    seat.arrive_and_wait();
                    seat.arrive_and_wait();
                })
                .unwrap();
        }
        // The stall lasts long enough for the report (the parent checks it).
        std::thread::sleep(hold);
        late.arrive_and_wait();
        std::thread::sleep(hold);
        late.arrive_and_wait();
    });
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process, which Miri cannot")]
fn the_env_report_is_printed_once_per_stalled_phase() {
    let stderr = child("child_two_stalled_phases", "0.1");
    let reports: Vec<&str> = stderr
        .split("syncthreads: ")
        .filter(|r| r.starts_with("Team stalled"))
        .collect();
    assert_eq!(reports.len(), 2, "one report per stalled phase:\n{stderr}");
    assert!(
        reports[0].starts_with("Team stalled in phase 0: 3 waiting"),
        "{stderr}"
    );
    assert!(
        reports[1].starts_with("Team stalled in phase 1: 3 waiting"),
        "{stderr}"
    );
    for r in &reports {
        for w in ["\"worker-0\"", "\"worker-1\"", "\"worker-2\""] {
            assert_eq!(r.matches(w).count(), 1, "{r}");
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process, which Miri cannot")]
fn a_bad_env_value_says_so() {
    let stderr = child("child_two_stalled_phases", "soon");
    assert!(
        stderr
            .contains("syncthreads: SYNCTHREADS_STALL_REPORT=\"soon\" is not a number of seconds"),
        "{stderr}"
    );
    assert!(!stderr.contains("stalled in phase"), "{stderr}");
}
