//! `BlockBarrier`: `__syncthreads`, `__syncthreads_count/and/or`, poisoning.

mod common;

use common::{eventually, mix, on_threads, panic_of as panic_message, watchdog};
use std::sync::atomic::{AtomicU64, Ordering};
use syncthreads::{Barrier, BlockBarrier};

/// Thread `rank`'s predicate in phase `phase` of a group of `n`: the density
/// changes per phase (from none to all), the choice of threads per thread.
fn pred(n: usize, rank: usize, phase: usize) -> bool {
    let density = mix(phase as u64) % (n as u64 + 2); // 0 ..= n + 1
    mix(((phase as u64) << 20) ^ rank as u64) % (n as u64 + 1) < density
}

/// `threads` threads run `phases` phases cycling through sync_count,
/// sync_and and sync_or; every thread checks every answer against the value
/// it computes from everyone's predicates.
fn reductions_are_exact(threads: usize, phases: usize) {
    let barrier = BlockBarrier::new(threads);
    let progress: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    on_threads(
        60,
        || format!("{barrier:?}, phases done per thread: {progress:?}"),
        0..threads,
        |rank| {
            let (mut alls, mut nones) = (0, 0);
            for phase in 0..phases {
                let mine = pred(threads, rank, phase);
                let expected = (0..threads).filter(|&r| pred(threads, r, phase)).count();
                alls += usize::from(expected == threads);
                nones += usize::from(expected == 0);
                match phase % 3 {
                    0 => assert_eq!(
                        barrier.sync_count(mine),
                        expected,
                        "sync_count, thread {rank}, phase {phase}"
                    ),
                    1 => assert_eq!(
                        barrier.sync_and(mine),
                        expected == threads,
                        "sync_and, thread {rank}, phase {phase} ({expected} of {threads} true)"
                    ),
                    _ => assert_eq!(
                        barrier.sync_or(mine),
                        expected > 0,
                        "sync_or, thread {rank}, phase {phase} ({expected} of {threads} true)"
                    ),
                }
                progress[rank].store(phase as u64 + 1, Ordering::Relaxed);
            }
            // The predicates really exercise both answers of and/or.
            assert!(
                alls > phases / 20 && nones > phases / 20,
                "alls {alls}, nones {nones}"
            );
        },
    );
}

#[test]
fn reductions_are_exact_for_one_thread() {
    reductions_are_exact(1, 3_000);
}

#[test]
fn reductions_are_exact_for_two_threads_over_thousands_of_phases() {
    reductions_are_exact(2, 6_000);
}

#[test]
fn reductions_are_exact_for_four_threads_over_thousands_of_phases() {
    reductions_are_exact(4, 3_000);
}

#[test]
fn reductions_are_exact_for_more_threads_than_cores() {
    reductions_are_exact(9, 1_000);
}

/// Each thread writes its slot, syncs, reads its neighbour's slot, syncs
/// again before overwriting: the two hazards `__syncthreads` exists for.
#[test]
fn sync_orders_a_shared_memory_exchange() {
    const THREADS: usize = 8;
    const ROUNDS: u64 = 2_000;
    let barrier = BlockBarrier::new(THREADS);
    let shared: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(u64::MAX)).collect();
    on_threads(
        60,
        || format!("{barrier:?}"),
        0..THREADS,
        |rank| {
            let neighbour = (rank + 1) % THREADS;
            for round in 0..ROUNDS {
                // Relaxed on purpose: only the barrier orders these.
                shared[rank].store(round * 1_000 + rank as u64, Ordering::Relaxed);
                barrier.sync(); // read-after-write
                let seen = shared[neighbour].load(Ordering::Relaxed);
                assert_eq!(
                    seen,
                    round * 1_000 + neighbour as u64,
                    "thread {rank}, round {round}"
                );
                barrier.sync(); // write-after-read
            }
        },
    );
}

/// A phase where one thread calls `sync()` and the other `sync_count()`
/// breaks CUDA's rule; the documented promise is that later well-formed
/// phases are exact again. (With the `diagnostics` feature such a phase is
/// a divergent sync and panics: tests/diagnostics.rs.)
#[cfg(not(feature = "diagnostics"))]
#[test]
fn a_mixed_phase_does_not_spoil_later_phases() {
    let barrier = BlockBarrier::new(2);
    watchdog(
        30,
        || format!("{barrier:?}"),
        || {
            std::thread::scope(|s| {
                s.spawn(|| {
                    barrier.sync(); // misuse: the other thread reduces
                    for phase in 0..100 {
                        let count = barrier.sync_count(phase % 2 == 0);
                        assert_eq!(count, 1 + usize::from(phase % 2 == 0), "phase {phase}");
                    }
                });
                let _unspecified = barrier.sync_count(true);
                for phase in 0..100 {
                    let count = barrier.sync_count(true);
                    assert_eq!(count, 1 + usize::from(phase % 2 == 0), "phase {phase}");
                }
            });
        },
    );
}

/// (Its two threads sync from two call sites: with the `diagnostics`
/// feature that is a divergent sync, tested in tests/diagnostics.rs.)
#[cfg(not(feature = "diagnostics"))]
#[test]
fn poison_releases_the_waiting_threads_with_a_panic() {
    let barrier = BlockBarrier::new(3);
    let entered = AtomicU64::new(0);
    let messages = watchdog(
        30,
        || format!("{barrier:?}"),
        || {
            std::thread::scope(|s| {
                let waiters: Vec<_> = (0..2)
                    .map(|i| {
                        let (barrier, entered) = (&barrier, &entered);
                        s.spawn(move || {
                            entered.fetch_add(1, Ordering::Relaxed);
                            panic_message(|| {
                                if i == 0 {
                                    barrier.sync()
                                } else {
                                    let _ = barrier.sync_count(true);
                                }
                            })
                        })
                    })
                    .collect();
                // Let them reach their wait (not needed for correctness: a
                // poisoned barrier also panics on entry).
                eventually("both threads wait", || entered.load(Ordering::Relaxed) >= 2);
                std::thread::sleep(std::time::Duration::from_millis(20));
                assert!(!barrier.is_poisoned());
                barrier.poison();
                assert!(barrier.is_poisoned());
                waiters
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        },
    );
    for m in messages {
        assert!(
            m.starts_with("syncthreads: barrier poisoned by poison()"),
            "{m}"
        );
    }
    // Later calls panic too, and poison() is idempotent.
    barrier.poison();
    let m = panic_message(|| barrier.sync_or(false));
    assert!(m.starts_with("syncthreads: barrier poisoned"), "{m}");
}

/// A sync that finds the block poisoned, on entry or while it waits, names
/// the call the user made (`BlockBarrier::sync()`, `BlockSeat::sync_or(_)`,
/// ...), not the arrival and wait under it.
#[test]
fn a_poisoned_sync_names_the_call_the_user_made() {
    let seen = |call: &str| format!("syncthreads: barrier poisoned by poison() (seen by {call})");
    // While waiting: one of two threads syncs, the other poisons.
    for seated in [false, true] {
        let block = BlockBarrier::new(2);
        let m = watchdog(
            30,
            || format!("{block:?}"),
            || {
                std::thread::scope(|s| {
                    let waiter = s.spawn(|| {
                        if seated {
                            panic_message(|| block.seat(0).sync())
                        } else {
                            panic_message(|| block.sync())
                        }
                    });
                    eventually("the waiter arrived", || {
                        format!("{block:?}").contains("arrived: 1,")
                    });
                    block.poison();
                    waiter.join().unwrap()
                })
            },
        );
        let call = if seated {
            "BlockSeat::sync()"
        } else {
            "BlockBarrier::sync()"
        };
        assert_eq!(m, seen(call));
    }
    // On entry, every variant.
    let block = BlockBarrier::new(2);
    block.poison();
    assert_eq!(panic_message(|| block.sync()), seen("BlockBarrier::sync()"));
    assert_eq!(
        panic_message(|| block.sync_count(true)),
        seen("BlockBarrier::sync_count(_)")
    );
    assert_eq!(
        panic_message(|| block.sync_and(true)),
        seen("BlockBarrier::sync_and(_)")
    );
    assert_eq!(
        panic_message(|| block.sync_or(true)),
        seen("BlockBarrier::sync_or(_)")
    );
    let block = BlockBarrier::new(2);
    let seat = block.seat(1);
    block.poison();
    assert_eq!(panic_message(|| seat.sync()), seen("BlockSeat::sync()"));
    assert_eq!(
        panic_message(|| seat.sync_count(true)),
        seen("BlockSeat::sync_count(_)")
    );
    assert_eq!(
        panic_message(|| seat.sync_and(true)),
        seen("BlockSeat::sync_and(_)")
    );
    assert_eq!(
        panic_message(|| seat.sync_or(true)),
        seen("BlockSeat::sync_or(_)")
    );
}

#[test]
fn new_rejects_zero_and_more_than_max_threads() {
    assert_eq!(
        panic_message(|| BlockBarrier::new(0)),
        "syncthreads: BlockBarrier::new(0): the thread count must be in 1 ..= 1048575 (Barrier::MAX)"
    );
    assert_eq!(
        panic_message(|| BlockBarrier::new(Barrier::MAX + 1)),
        "syncthreads: BlockBarrier::new(1048576): the thread count must be in 1 ..= 1048575 (Barrier::MAX)"
    );
    assert_eq!(BlockBarrier::new(Barrier::MAX).threads(), Barrier::MAX);
}

#[test]
fn debug_shows_the_group_and_the_word() {
    let barrier = BlockBarrier::new(4);
    assert_eq!(
        format!("{barrier:?}"),
        "BlockBarrier { arrived: 0, expected: 4, threads: 4, barrier: Barrier { phase_parity: false, pending: 4, expected: 4, tx: 0, poisoned: false } }"
    );
}
