//! Randomized schedules beyond loom's reach: 4-9 threads over many phases,
//! with every kind of arrival, leaving participants, transaction counts, parity
//! waits, a completion function and poisoning, each run for many random
//! schedules by shuttle. Only built with `--cfg shuttle` (the crate then uses
//! shuttle's atomics, threads and parking model); run it with `.ci/shuttle`.
//!
//! shuttle explores schedules, not weak memory (it runs sequentially
//! consistent), so these tests catch lost wake-ups (a deadlock, which shuttle
//! reports), miscounted arrivals, completions that run twice or too early,
//! and wrong results; loom-tests/ covers the memory orderings.
#![cfg(shuttle)]

use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::sync::Arc;
use shuttle::thread;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;
use syncthreads::{Barrier, BlockBarrier, Completion, TeamShape, WarpBarrier};

#[path = "common/shuttle.rs"]
mod schedules;
use schedules::{check, iterations};

const BYTES: u32 = 16;

/// A mixed workload: `threads` participants over `phases` phases, plus a
/// copy-engine thread that supplies each phase's transaction bytes.
/// Participant `t` publishes `stamp[t] = phase` before each arrival. With
/// `completion`, the barrier's completion function checks every stamp of the
/// phase and counts phases, and after each wait a participant checks that
/// the completion of its phase has run; without, the barrier is a plain
/// `Barrier::new` (whose completing arrival starts the next phase in the
/// same RMW) and the waiters check the stamps themselves. Participants 2 and
/// 3 leave (`arrive_and_drop`) part-way; the others rotate through
/// `arrive_and_wait`, `arrive` + `wait`, a zero-timeout `wait_timeout` then
/// `wait`, and `arrive` + `wait_parity`.
fn mixed(threads: usize, phases: usize, completion: bool) {
    assert!(threads >= 4);
    check(move || {
        let stamps: Arc<Vec<AtomicUsize>> =
            Arc::new((0..threads).map(|_| AtomicUsize::new(usize::MAX)).collect());
        let completed = Arc::new(AtomicUsize::new(0));
        if completion {
            let (seen, count) = (stamps.clone(), completed.clone());
            let barrier = Barrier::with_completion(threads, move || {
                // SeqCst everywhere: shuttle is sequentially consistent anyway.
                let phase = count.load(Ordering::SeqCst);
                // Every participant of the phase is still in it.
                check_stamps(&seen, phase, phases, 0);
                count.store(phase + 1, Ordering::SeqCst);
            });
            run_mixed(barrier, stamps, Some(completed), threads, phases);
        } else {
            run_mixed(Barrier::new(threads), stamps, None, threads, phases);
        }
    });
}

/// The last phase participant `t` takes part in (with `arrive_and_drop` if
/// it leaves early).
fn last(t: usize, phases: usize) -> usize {
    match t {
        2 => phases / 3,
        3 => phases / 2,
        _ => phases - 1,
    }
}

/// Every participant of `phase` has published its stamp for it; with
/// `slack` 1, some may already have moved on to `phase + 1` (a waiter of
/// `phase` checks after the others were released too), never further.
fn check_stamps(stamps: &[AtomicUsize], phase: usize, phases: usize, slack: usize) {
    for (t, stamp) in stamps.iter().enumerate() {
        if phase <= last(t, phases) {
            let seen = stamp.load(Ordering::SeqCst);
            assert!(
                (phase..=phase + slack).contains(&seen),
                "stamp of {t} in phase {phase}: {seen}"
            );
        }
    }
}

fn run_mixed<F: Completion + 'static>(
    barrier: Barrier<F>,
    stamps: Arc<Vec<AtomicUsize>>,
    completed: Option<Arc<AtomicUsize>>,
    threads: usize,
    phases: usize,
) {
    let barrier = Arc::new(barrier);
    // After a wait for `phase`: its completion ran (or, without one, every
    // participant's stamp of it is there).
    let after_wait = {
        let (stamps, completed) = (stamps.clone(), completed.clone());
        move |phase: usize| match &completed {
            Some(completed) => assert!(completed.load(Ordering::SeqCst) > phase),
            None => check_stamps(&stamps, phase, phases, 1),
        }
    };
    let mut handles = Vec::new();
    for t in 0..threads {
        let (barrier, stamps, after_wait) = (barrier.clone(), stamps.clone(), after_wait.clone());
        handles.push(thread::spawn(move || {
            for phase in 0..=last(t, phases) {
                stamps[t].store(phase, Ordering::SeqCst);
                if phase == last(t, phases) && phase < phases - 1 {
                    barrier.arrive_and_drop();
                    return;
                }
                // Participant 1 also carries the phase's tx bytes.
                let token = if t == 1 {
                    barrier.arrive_tx(1, BYTES)
                } else {
                    match (t + phase) % 4 {
                        0 => {
                            barrier.arrive_and_wait();
                            after_wait(phase);
                            continue;
                        }
                        3 => {
                            drop(barrier.arrive());
                            barrier.wait_parity(phase % 2 == 1);
                            after_wait(phase);
                            continue;
                        }
                        _ => barrier.arrive(),
                    }
                };
                if (t + phase) % 4 == 2 {
                    match barrier.wait_timeout(token, Duration::ZERO) {
                        Ok(()) => {}
                        Err(token) => barrier.wait(token),
                    }
                } else {
                    barrier.wait(token);
                }
                after_wait(phase);
            }
        }));
    }
    // The copy engine: completes each phase's bytes (possibly before
    // participant 1's arrive_tx: tx goes negative), then waits for the
    // phase by parity so its next bytes cannot land in this phase.
    let engine = {
        let barrier = barrier.clone();
        thread::spawn(move || {
            for phase in 0..phases {
                barrier.complete_tx(BYTES / 2);
                barrier.complete_tx(BYTES / 2);
                barrier.wait_parity(phase % 2 == 1);
            }
        })
    };
    for handle in handles {
        handle.join().unwrap();
    }
    engine.join().unwrap();
    if let Some(completed) = completed {
        assert_eq!(completed.load(Ordering::SeqCst), phases);
    }
    assert_eq!(barrier.phase_parity(), phases % 2 == 1);
}

#[test]
fn mixed_workload_4_threads_12_phases() {
    mixed(4, 12, true);
}

#[test]
fn mixed_workload_8_threads_8_phases() {
    mixed(8, 8, true);
}

#[test]
fn mixed_workload_without_completion_6_threads_10_phases() {
    mixed(6, 10, false);
}

/// `threads` participants loop on `arrive_and_wait`; participant 0 poisons
/// the barrier instead of arriving in phase `at`. Every other participant
/// must end with the poisoned panic (parked or not), none may hang.
fn poison_mid_run(threads: usize, at: usize) {
    check(move || {
        let barrier = Arc::new(Barrier::new(threads));
        let others: Vec<_> = (1..threads)
            .map(|_| {
                let barrier = barrier.clone();
                thread::spawn(move || {
                    let result = catch_unwind(AssertUnwindSafe(|| loop {
                        barrier.arrive_and_wait();
                    }));
                    let payload = result.expect_err("a loop on a poisoned barrier must panic");
                    payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                })
            })
            .collect();
        for _ in 0..at {
            barrier.arrive_and_wait();
        }
        barrier.poison();
        for other in others {
            let message = other.join().unwrap();
            assert!(
                message.starts_with(
                    "syncthreads: barrier poisoned by poison() (seen by arrive_and_wait"
                ),
                "{message}"
            );
        }
        assert_eq!(barrier.phase_parity(), at % 2 == 1);
    });
}

#[test]
fn poison_mid_run_wakes_every_participant() {
    quiet_poison_panics();
    poison_mid_run(5, 3);
}

/// Keeps the expected poisoned-barrier panics out of the test output.
fn quiet_poison_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with("syncthreads: barrier poisoned") {
                default(info);
            }
        }));
    });
}

/// `BlockBarrier`: 6 threads over 10 phases; thread `t`'s predicate in phase
/// `k` is `(t + k) % 3 == 0`; every thread must get the phase's exact count.
#[test]
fn block_sync_count_many_threads_many_phases() {
    const THREADS: usize = 6;
    const PHASES: usize = 10;
    let pred = |t: usize, k: usize| (t + k) % 3 == 0;
    check(move || {
        let block = Arc::new(BlockBarrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let block = block.clone();
                thread::spawn(move || {
                    for k in 0..PHASES {
                        let expected = (0..THREADS).filter(|&u| pred(u, k)).count();
                        assert_eq!(block.sync_count(pred(t, k)), expected, "phase {k}");
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    });
}

/// `WarpBarrier`: 8 lanes; each round the lanes sync in pairs, then in
/// halves, then all together, publishing a stamp before each sync and
/// checking the stamps of their mask after it.
#[test]
fn warp_nested_masks_many_rounds() {
    const LANES: usize = 8;
    const ROUNDS: usize = 4;
    check(|| {
        let warp = Arc::new(WarpBarrier::new(LANES));
        let stamps: Arc<Vec<AtomicUsize>> =
            Arc::new((0..LANES).map(|_| AtomicUsize::new(0)).collect());
        let handles: Vec<_> = (0..LANES)
            .map(|lane| {
                let (warp, stamps) = (warp.clone(), stamps.clone());
                thread::spawn(move || {
                    let mut step = 0;
                    for _ in 0..ROUNDS {
                        for group in [2usize, 4, 8] {
                            step += 1;
                            let first = lane / group * group;
                            let mask = ((1u64 << group) - 1) << first;
                            stamps[lane].store(step, Ordering::SeqCst);
                            warp.sync(lane, mask);
                            for other in first..first + group {
                                assert!(stamps[other].load(Ordering::SeqCst) >= step);
                            }
                        }
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    });
}

// ---- Team (SPEC §7): the combining tree under random schedules ----------

/// `seats` seats of a `Team` with fan-in `fan_in` over `phases` phases: seat
/// `t` stamps its slot before each `arrive_and_wait` and checks the slots of
/// every seat still in the phase after it; the completion function checks
/// that each phase got exactly the arrivals of the seats still in it. Some
/// seats leave part-way, in all three ways: arrive then drop ("from the next
/// phase on") or `arrive_and_drop` (tests/team.rs has the drop without
/// arriving).
fn team_leaves(seats: usize, phases: usize, fan_in: usize, iterations: usize) {
    let leave_at = move |t: usize| {
        if t % 3 == 0 {
            usize::MAX
        } else {
            (t * 5) % phases
        }
    };
    // How seat `t` leaves: 1: arrive, then drop; 2: `arrive_and_drop`.
    let how = |t: usize| t % 3;
    // Both arrive in the phase they leave in.
    let live = move |p: usize| (0..seats).filter(|&t| leave_at(t) >= p).count();
    let run = move || {
        let stamps: Arc<Vec<AtomicUsize>> =
            Arc::new((0..seats).map(|_| AtomicUsize::new(usize::MAX)).collect());
        let arrived: Arc<Vec<AtomicUsize>> =
            Arc::new((0..=phases).map(|_| AtomicUsize::new(0)).collect());
        let phase = Arc::new(AtomicUsize::new(0));
        let team = {
            let (arrived, phase) = (arrived.clone(), phase.clone());
            Arc::new(
                TeamShape::new(fan_in, 0).team_with_completion(seats, move || {
                    let p = phase.fetch_add(1, Ordering::SeqCst);
                    if p < phases {
                        assert_eq!(arrived[p].load(Ordering::SeqCst), live(p), "phase {p}");
                    }
                }),
            )
        };
        let handles: Vec<_> = (0..seats)
            .map(|t| {
                let (team, stamps, arrived) = (team.clone(), stamps.clone(), arrived.clone());
                thread::spawn(move || {
                    let seat = team.seat(t);
                    for p in 0..phases {
                        stamps[t].store(p, Ordering::SeqCst);
                        if p == leave_at(t) {
                            match how(t) {
                                1 => {
                                    arrived[p].fetch_add(1, Ordering::SeqCst);
                                    drop(seat.arrive());
                                    drop(seat);
                                }
                                _ => {
                                    arrived[p].fetch_add(1, Ordering::SeqCst);
                                    seat.arrive_and_drop();
                                }
                            }
                            return;
                        }
                        arrived[p].fetch_add(1, Ordering::SeqCst);
                        seat.arrive_and_wait();
                        for (u, stamp) in stamps.iter().enumerate() {
                            if leave_at(u) > p {
                                let seen = stamp.load(Ordering::SeqCst);
                                assert!(
                                    (p..=p + 1).contains(&seen),
                                    "seat {t}, phase {p}: stamp of {u} is {seen}"
                                );
                            }
                        }
                    }
                    std::mem::forget(seat); // stays: the team keeps expecting it
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(phase.load(Ordering::SeqCst), phases);
    };
    let run = std::sync::Arc::new(run);
    let again = run.clone();
    shuttle::check_random(move || again(), iterations);
    shuttle::check_pct(move || run(), iterations, 3);
}

#[test]
fn team_eight_seats_binary_tree_with_leaves() {
    team_leaves(8, 8, 2, iterations() / 2);
}

#[test]
fn team_sixteen_seats_fan_in_four_with_leaves() {
    team_leaves(16, 6, 4, iterations() / 4);
}

#[test]
fn team_sixty_four_seats_with_leaves() {
    team_leaves(64, 4, 4, iterations() / 40);
}

/// 12 seats (fan-in 2); seat 5 panics in phase `at` while holding its
/// seat, whose drop while unwinding poisons the team: every other seat
/// ends with the poisoned panic, none hangs.
#[test]
fn team_unwinding_seat_poisons_every_participant() {
    quiet_poison_panics();
    const SEATS: usize = 12;
    let run = std::sync::Arc::new(|| {
        let team = Arc::new(TeamShape::new(2, 0).team(SEATS));
        let handles: Vec<_> = (0..SEATS)
            .map(|t| {
                let team = team.clone();
                thread::spawn(move || {
                    let result = catch_unwind(AssertUnwindSafe(|| {
                        let seat = team.seat(t);
                        for p in 0.. {
                            if t == 5 && p == 3 {
                                panic!("syncthreads: barrier poisoned (test: seat 5 dies)");
                            }
                            seat.arrive_and_wait();
                        }
                    }));
                    result.is_err()
                })
            })
            .collect();
        for handle in handles {
            assert!(handle.join().unwrap());
        }
        assert!(team.is_poisoned());
    });
    // A quarter of the schedules: 12 threads per schedule.
    let again = run.clone();
    shuttle::check_random(move || again(), iterations() / 4);
    shuttle::check_pct(move || run(), iterations() / 4, 3);
}

/// Tasks beside threads: over `PHASES` phases of a barrier whose completion
/// function counts them, two threads block in `arrive_and_wait`, two drive
/// `arrive_and_wait_async` with shuttle's `block_on`, one arrives and
/// `block_on`s `wait_async(token)`, and one arrives and drops its
/// `arrive_and_wait_async` future after one poll, then waits by parity.
/// After every wait the completion of that phase must have run; a lost
/// wake-up of a task is a deadlock shuttle reports.
#[test]
fn tasks_and_threads_share_a_barrier() {
    const PARTIES: usize = 6;
    const PHASES: usize = 8;
    check(|| {
        let completed = Arc::new(AtomicUsize::new(0));
        let count = completed.clone();
        let barrier = Arc::new(Barrier::with_completion(PARTIES, move || {
            count.fetch_add(1, Ordering::SeqCst);
        }));
        let handles: Vec<_> = (0..PARTIES)
            .map(|t| {
                let (barrier, completed) = (barrier.clone(), completed.clone());
                thread::spawn(move || {
                    for phase in 1..=PHASES {
                        match t {
                            0 | 1 => {
                                barrier.arrive_and_wait();
                            }
                            2 | 3 => {
                                shuttle::future::block_on(barrier.arrive_and_wait_async());
                            }
                            4 => shuttle::future::block_on(barrier.wait_async(barrier.arrive())),
                            _ => {
                                let parity = barrier.phase_parity();
                                let mut fut = Box::pin(barrier.arrive_and_wait_async());
                                let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
                                let _ = fut
                                    .as_mut()
                                    .poll(&mut std::task::Context::from_waker(&waker));
                                drop(fut);
                                shuttle::future::block_on(barrier.wait_parity_async(parity));
                            }
                        }
                        assert!(completed.load(Ordering::SeqCst) >= phase);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(completed.load(Ordering::SeqCst), PHASES);
    });
}

/// A waker that does nothing (std's `Waker::noop` is newer than our MSRV).
struct Noop;

impl std::task::Wake for Noop {
    fn wake(self: std::sync::Arc<Self>) {}
}

// ---- joining (SPEC §10): join / leave / rejoin churn -----------------------

/// The churn ledger the std tests use (tests/common/ledger.rs).
#[path = "common/ledger.rs"]
mod ledger;
use ledger::Ledger;

/// `churners` threads join a team of capacity `capacity` (rank 0, the
/// anchor, takes part throughout), stay a phase or two and leave, in each
/// of the three ways, `rounds` times; a join on a full team retries.
///
/// Random schedules only: churn needs threads that retry (a join on a full
/// team, the anchor completing phases alone until everyone is gone), and
/// PCT's fixed priorities starve the others behind such a loop.
fn team_churn(
    capacity: usize,
    churners: usize,
    rounds: usize,
    (fan_in, flat): (usize, usize),
    iterations: usize,
) {
    shuttle::check_random(
        move || {
            let ledger = Arc::new(shuttle::sync::Mutex::new(Ledger::default()));
            let team = {
                let ledger = ledger.clone();
                Arc::new(
                    TeamShape::new(fan_in, flat).team_with_completion_and_capacity(
                        1,
                        capacity,
                        move || ledger.lock().unwrap().complete(),
                    ),
                )
            };
            ledger.lock().unwrap().join(0);
            let alive = Arc::new(AtomicUsize::new(churners));
            let handles: Vec<_> = (0..churners)
                .map(|t| {
                    let (team, ledger, alive) = (team.clone(), ledger.clone(), alive.clone());
                    thread::spawn(move || {
                        for round in 0..rounds {
                            let seat = loop {
                                match team.join() {
                                    Some(seat) => break seat,
                                    None => thread::yield_now(),
                                }
                            };
                            let rank = seat.rank();
                            assert!(ledger.lock().unwrap().join(rank), "rank {rank} taken twice");
                            for _ in 0..(t + round) % 2 {
                                ledger.lock().unwrap().publish(rank);
                                seat.arrive_and_wait();
                            }
                            let mut l = ledger.lock().unwrap();
                            l.publish(rank);
                            ledger::leave(seat, t + round, l);
                        }
                        alive.fetch_sub(1, Ordering::SeqCst);
                    })
                })
                .collect();
            let anchor = team.seat(0);
            while alive.load(Ordering::SeqCst) > 0 {
                ledger.lock().unwrap().publish(0);
                anchor.arrive_and_wait();
            }
            let mut l = ledger.lock().unwrap();
            l.publish_and_leave(0);
            drop(l);
            anchor.arrive_and_drop();
            for handle in handles {
                handle.join().unwrap();
            }
            // Whoever is left is leaving: a seat that arrived and then left
            // in the last phase counts in the next one, which retires at once.
            let l = ledger.lock().unwrap();
            assert!(l.all_leaving(), "{:?}", l.members);
        },
        iterations,
    );
}

#[test]
fn team_churn_eight_seats_more_joiners_than_ranks() {
    team_churn(8, 9, 3, (4, 0), iterations());
}

#[test]
fn team_churn_sixty_four_seats_binary_tree() {
    team_churn(64, 6, 3, (2, 0), iterations() / 4);
}

#[test]
fn team_churn_flat() {
    team_churn(2, 3, 3, (4, usize::MAX), iterations() / 2);
}
