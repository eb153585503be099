//! Multi-threaded behaviour of `Barrier`: split arrive/wait publishing data,
//! one leader per phase, a shrinking group, tx completed by other threads,
//! parity observers (SPEC §1). Each test runs under a watchdog.

mod common;

use common::{assert_one_leader_each, dbg, eventually, on_threads, phase_loop, running, watchdog};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::thread;
use syncthreads::Barrier;

#[test]
fn split_arrive_wait_publishes_writes_made_before_the_arrive() {
    const THREADS: usize = 4;
    const PHASES: u64 = 2_000;
    // Double-buffered: in phase p a thread writes buffer p % 2 before it
    // arrives; buffer p % 2 is written again only in phase p + 2, which
    // needs this thread's arrival in phase p + 1.
    let slots: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..THREADS).map(|_| AtomicU64::new(u64::MAX)).collect());
    let b = Barrier::new(THREADS);
    phase_loop(
        30,
        || dbg(&b),
        THREADS,
        PHASES as usize,
        |i, p| {
            let p = p as u64;
            let buffer = &slots[(p % 2) as usize];
            // Relaxed: the barrier orders it before the others' waits.
            buffer[i].store(p, Ordering::Relaxed);
            let t = b.arrive();
            // Independent work between arrive and wait.
            std::hint::black_box((0..(p % 7)).sum::<u64>());
            b.wait(t);
            for (j, slot) in buffer.iter().enumerate() {
                assert_eq!(slot.load(Ordering::Relaxed), p, "thread {i} reading {j}");
            }
        },
    );
    assert_eq!(dbg(&b), running(PHASES % 2 == 1, THREADS, THREADS, 0));
}

#[test]
fn exactly_one_leader_per_phase() {
    const THREADS: usize = 8;
    const PHASES: usize = 2_000;
    let leaders: Vec<AtomicU32> = (0..PHASES).map(|_| AtomicU32::new(0)).collect();
    let b = Barrier::new(THREADS);
    phase_loop(
        30,
        || dbg(&b),
        THREADS,
        PHASES,
        |_, p| {
            if b.arrive_and_wait().is_leader() {
                leaders[p].fetch_add(1, Ordering::Relaxed);
            }
        },
    );
    assert_one_leader_each(leaders.iter().map(|l| l.load(Ordering::Relaxed)));
    assert_eq!(dbg(&b), running(PHASES % 2 == 1, THREADS, THREADS, 0));
}

#[test]
fn arrive_and_drop_shrinks_the_group_while_the_rest_continue() {
    // Thread i takes part in phases 0 ..= LEAVE[i] and leaves (arrive_and_drop)
    // in phase LEAVE[i]; the last one to leave retires the barrier.
    const LEAVE: [u64; 6] = [0, 37, 100, 100, 250, 400];
    let arrivals: Vec<AtomicUsize> = (0..=LEAVE[5]).map(|_| AtomicUsize::new(0)).collect();
    let bad_phases = AtomicUsize::new(0);
    let completed = AtomicU64::new(0);
    let mut phase = 0u64;
    let b = Barrier::with_completion(LEAVE.len(), || {
        let members = LEAVE.iter().filter(|&&l| l >= phase).count();
        // Relaxed: the barrier orders the arrivers' counts before the completion.
        if arrivals[phase as usize].load(Ordering::Relaxed) != members {
            bad_phases.fetch_add(1, Ordering::Relaxed);
        }
        phase += 1;
        completed.store(phase, Ordering::Relaxed);
    });
    on_threads(
        30,
        || dbg(&b),
        LEAVE,
        |leave| {
            for p in 0..leave {
                arrivals[p as usize].fetch_add(1, Ordering::Relaxed);
                b.arrive_and_wait();
            }
            arrivals[leave as usize].fetch_add(1, Ordering::Relaxed);
            b.arrive_and_drop();
        },
    );
    assert_eq!(bad_phases.load(Ordering::Relaxed), 0);
    // Phases 0 ..= 400 completed; the barrier is retired in phase 401.
    assert_eq!(completed.load(Ordering::Relaxed), LEAVE[5] + 1);
    assert_eq!(dbg(&b), running(LEAVE[5] % 2 == 0, 0, 0, 0));
}

#[test]
fn shrinking_group_ends_retired_after_the_last_leaves() {
    const THREADS: usize = 4;
    let b = Barrier::new(THREADS);
    on_threads(
        20,
        || dbg(&b),
        0..THREADS,
        |i| {
            for _ in 0..(10 * i) {
                b.arrive_and_wait();
            }
            b.arrive_and_drop();
        },
    );
    // 31 phases: 0 ..= 30 (the last thread leaves in phase 30).
    assert_eq!(dbg(&b), running(true, 0, 0, 0));
}

#[test]
fn consumer_wait_returns_only_after_every_workers_complete_tx() {
    const WORKERS: u32 = 3;
    const PIECES: u32 = 50;
    const PIECE: u32 = 7;
    const TOTAL: u32 = WORKERS * PIECES * PIECE;
    const ROUNDS: u64 = 200;
    // One barrier per round-trip: the consumer is its only arriver; the
    // workers' bytes are tx. `done[r % 2]` counts the bytes of round r.
    let b = Barrier::new(1);
    let done = [AtomicU64::new(0), AtomicU64::new(0)];
    watchdog(
        30,
        || format!("{b:?}, done {done:?}"),
        || {
            thread::scope(|s| {
                for _ in 0..WORKERS {
                    s.spawn(|| {
                        for r in 0..ROUNDS {
                            // Contribute to round r only once phase r - 1 is
                            // over (phase -1 counts as completed).
                            b.wait_parity(r % 2 == 0);
                            for _ in 0..PIECES {
                                // Relaxed: published by the complete_tx (Release).
                                done[(r % 2) as usize]
                                    .fetch_add(u64::from(PIECE), Ordering::Relaxed);
                                b.complete_tx(PIECE);
                            }
                        }
                    });
                }
                for r in 0..ROUNDS {
                    let t = if r % 2 == 0 {
                        b.arrive_tx(1, TOTAL)
                    } else {
                        b.expect_tx(TOTAL);
                        b.arrive()
                    };
                    b.wait(t);
                    let bytes = done[(r % 2) as usize].swap(0, Ordering::Relaxed);
                    assert_eq!(bytes, u64::from(TOTAL), "round {r}");
                }
            });
        },
    );
    assert_eq!(dbg(&b), running(ROUNDS % 2 == 1, 1, 1, 0));
}

#[test]
fn parity_observers_that_never_arrive_see_each_phase_complete() {
    const PARTICIPANTS: usize = 2;
    const OBSERVERS: usize = 2;
    const PHASES: u64 = 1_000;
    let counts: Vec<AtomicU64> = (0..PARTICIPANTS).map(|_| AtomicU64::new(0)).collect();
    let observers_done = AtomicUsize::new(0);
    let observed = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // The participants keep completing phases until every observer has seen
    // PHASES of them; the completion decides, so all participants agree.
    let b = Barrier::with_completion(PARTICIPANTS, || {
        // Relaxed: the barrier orders it before every wait's return.
        stop.store(
            observers_done.load(Ordering::Relaxed) == OBSERVERS,
            Ordering::Relaxed,
        );
    });
    watchdog(
        30,
        || {
            format!(
                "{b:?}, observers done {}",
                observers_done.load(Ordering::Relaxed)
            )
        },
        || {
            thread::scope(|s| {
                for i in 0..PARTICIPANTS {
                    let (b, counts, stop) = (&b, &counts, &stop);
                    s.spawn(move || {
                        for p in 0.. {
                            // Relaxed: ordered by the arrival (Release).
                            counts[i].store(p + 1, Ordering::Relaxed);
                            b.arrive_and_wait();
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                        }
                    });
                }
                for _ in 0..OBSERVERS {
                    s.spawn(|| {
                        for p in 0..PHASES {
                            // The current phase is at least p (phase p - 1 was
                            // seen complete), so a parity change means phase p
                            // completed, with every participant's write.
                            b.wait_parity(p % 2 == 1);
                            for c in &counts {
                                assert!(c.load(Ordering::Relaxed) > p, "phase {p}");
                            }
                            observed.fetch_add(1, Ordering::Relaxed);
                        }
                        observers_done.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        },
    );
    assert_eq!(
        observed.load(Ordering::Relaxed),
        OBSERVERS * PHASES as usize
    );
}

#[test]
fn token_can_be_waited_on_by_another_thread() {
    let b = Barrier::new(2);
    watchdog(
        20,
        || dbg(&b),
        || {
            let t = b.arrive();
            thread::scope(|s| {
                let waiter = s.spawn(|| {
                    b.wait(t);
                    b.phase_parity()
                });
                drop(b.arrive());
                assert!(waiter.join().unwrap());
            });
        },
    );
}

#[test]
fn arrive_n_from_several_threads_counts_every_arrival() {
    const THREADS: usize = 4;
    const PHASES: usize = 500;
    let b = Barrier::new(THREADS * (THREADS + 1) / 2);
    on_threads(
        30,
        || dbg(&b),
        1..=THREADS,
        |i| {
            for _ in 0..PHASES {
                let t = b.arrive_n(i);
                b.wait(t);
            }
        },
    );
    assert_eq!(dbg(&b), running(PHASES % 2 == 1, 10, 10, 0));
}

/// CPU time this thread has run, from the kernel's scheduler statistics.
#[cfg(target_os = "linux")]
fn thread_cpu_time() -> std::time::Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    let nanos: u64 = stat.split_whitespace().next().unwrap().parse().unwrap();
    std::time::Duration::from_nanos(nanos)
}

/// CPU time `f` used on this thread.
#[cfg(target_os = "linux")]
fn cpu_of(f: impl FnOnce()) -> std::time::Duration {
    let start = thread_cpu_time();
    f();
    thread_cpu_time() - start
}

#[cfg(target_os = "linux")]
#[test]
fn long_waits_sleep_instead_of_burning_cpu() {
    use std::time::Duration;
    const WAIT: Duration = Duration::from_millis(300);
    const MAX_CPU: Duration = Duration::from_millis(30);
    let b = Barrier::new(4);
    let cpu = watchdog(
        20,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let waiters = [
                    s.spawn(|| {
                        let t = b.arrive();
                        cpu_of(|| b.wait(t))
                    }),
                    s.spawn(|| {
                        let t = b.arrive();
                        cpu_of(|| assert!(b.wait_timeout(t, Duration::MAX).is_ok()))
                    }),
                    s.spawn(|| {
                        cpu_of(|| {
                            let _ = b.arrive_and_wait();
                        })
                    }),
                    s.spawn(|| cpu_of(|| assert!(b.wait_parity_timeout(false, Duration::MAX)))),
                ];
                eventually("three waiters", || dbg(&b) == running(false, 1, 4, 0));
                thread::sleep(WAIT);
                drop(b.arrive());
                waiters.map(|w| w.join().unwrap())
            })
        },
    );
    for (kind, used) in [
        "wait",
        "wait_timeout(MAX)",
        "arrive_and_wait",
        "wait_parity_timeout(MAX)",
    ]
    .iter()
    .zip(cpu)
    {
        assert!(
            used < MAX_CPU,
            "{kind} used {used:?} of CPU while waiting {WAIT:?}"
        );
    }
}
