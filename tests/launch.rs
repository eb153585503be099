//! `launch` and `Block`: rank order, borrowing, the `sync*` family through the
//! block handle, and panics that poison the block instead of hanging it.

mod common;

use common::{mix, panic_message as message, panic_of as panic_message, scaled, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use syncthreads::{launch, Block};

/// A kernel that uses everything a `Block` offers: ranks, a shared-memory
/// exchange ordered by `sync`, and the reductions, checked in every thread.
fn kernel_checks(threads: usize, rounds: u64) {
    let shared: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(u64::MAX)).collect();
    let entered = AtomicUsize::new(0);
    let results = watchdog(
        60,
        || format!("{} threads entered", entered.load(Ordering::Relaxed)),
        || {
            launch(threads, |block: &Block| {
                entered.fetch_add(1, Ordering::Relaxed);
                let (rank, size) = (block.thread_rank(), block.size());
                assert_eq!(size, threads);
                assert_eq!(block.barrier().threads(), threads);
                let neighbour = (rank + 1) % size;
                for round in 0..rounds {
                    // Relaxed on purpose: only the block's barrier orders these.
                    shared[rank].store(round * 1_000 + rank as u64, Ordering::Relaxed);
                    block.sync();
                    assert_eq!(
                        shared[neighbour].load(Ordering::Relaxed),
                        round * 1_000 + neighbour as u64
                    );
                    let pred = |r: usize| mix(round << 16 | r as u64) % 3 == 0;
                    let expected = (0..size).filter(|&r| pred(r)).count();
                    assert_eq!(
                        block.sync_count(pred(rank)),
                        expected,
                        "rank {rank}, round {round}"
                    );
                    assert_eq!(block.sync_and(pred(rank)), expected == size);
                    assert_eq!(block.sync_or(pred(rank)), expected > 0);
                }
                rank * 10
            })
        },
    );
    assert_eq!(results, (0..threads).map(|r| r * 10).collect::<Vec<_>>());
    assert_eq!(entered.load(Ordering::Relaxed), threads);
}

#[test]
fn launch_one_thread() {
    kernel_checks(1, scaled(1_000, 20) as u64);
}

#[test]
fn launch_two_threads() {
    kernel_checks(2, scaled(1_000, 20) as u64);
}

#[test]
fn launch_sixteen_threads() {
    kernel_checks(scaled(16, 6), scaled(100, 3) as u64);
}

#[test]
fn launch_sixty_four_threads() {
    kernel_checks(scaled(64, 10), scaled(20, 2) as u64);
}

#[test]
fn the_kernel_borrows_from_the_caller_and_results_come_in_rank_order() {
    let names: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
    let got = watchdog(30, String::new, || {
        launch(5, |block| names[4 - block.thread_rank()].clone())
    });
    assert_eq!(got, ["t4", "t3", "t2", "t1", "t0"]);
}

#[test]
fn launch_zero_threads_panics() {
    assert_eq!(
        panic_message(|| launch(0, |_| ())),
        "syncthreads: launch(0, _): the thread count must be in 1 ..= 1048575 (Barrier::MAX)"
    );
}

/// The root cause's payload type, so the test can tell it from any string.
#[derive(Debug, PartialEq)]
struct Boom(usize);

/// Rank 5 of 16 panics while the other 15 are in `sync()` (parked by then:
/// rank 5 waits until all have arrived and then some): `launch` must return,
/// and re-raise rank 5's own payload.
#[test]
fn a_panicking_thread_releases_the_others_and_launch_re_raises_its_payload() {
    const THREADS: usize = 16;
    let passed = AtomicUsize::new(0);
    let entered = AtomicUsize::new(0);
    let seen_poisoned = AtomicUsize::new(0);
    let result = watchdog(
        60,
        || format!("{} threads passed sync", passed.load(Ordering::Relaxed)),
        || {
            catch_unwind(AssertUnwindSafe(|| {
                launch(THREADS, |block| {
                    if block.thread_rank() == 5 {
                        // Wait until the 15 others are in `sync` (their
                        // arrivals sit in the block's tree, not on the word) ...
                        while entered.load(Ordering::Relaxed) < THREADS - 1 {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        // ... and give them time to stop spinning and park.
                        std::thread::sleep(Duration::from_millis(50));
                        std::panic::panic_any(Boom(5));
                    }
                    entered.fetch_add(1, Ordering::Relaxed);
                    let synced = catch_unwind(|| block.sync());
                    if let Err(payload) = &synced {
                        // Not a panic of its own (tests/launch_report.rs):
                        // an opaque payload, no message.
                        assert_eq!(message(&**payload), "<non-string panic payload>");
                        seen_poisoned.fetch_add(1, Ordering::Relaxed);
                    }
                    synced.unwrap_or_else(|p| std::panic::resume_unwind(p));
                    passed.fetch_add(1, Ordering::Relaxed);
                })
            }))
        },
    );
    let payload = result.expect_err("launch must re-raise the panic");
    assert_eq!(payload.downcast_ref::<Boom>(), Some(&Boom(5)));
    assert_eq!(passed.load(Ordering::Relaxed), 0);
    assert_eq!(seen_poisoned.load(Ordering::Relaxed), THREADS - 1);
}

/// Even when a poisoned-barrier panic is caught first, the root cause wins.
/// Rank 1 poisons the barrier by hand, waits until rank 2 has panicked out of
/// `sync` (and a little longer, so rank 2's panic is surely caught first),
/// then panics itself.
#[test]
fn a_root_cause_wins_over_earlier_poisoned_barrier_panics() {
    let rank2_unwinding = AtomicBool::new(false);
    let result = watchdog(30, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(3, |block| match block.thread_rank() {
                1 => {
                    block.barrier().poison();
                    while !rank2_unwinding.load(Ordering::Relaxed) {
                        std::thread::yield_now();
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    panic!("root cause in rank 1");
                }
                2 => {
                    struct Flag<'a>(&'a AtomicBool);
                    impl Drop for Flag<'_> {
                        fn drop(&mut self) {
                            self.0.store(true, Ordering::Relaxed);
                        }
                    }
                    let _flag = Flag(&rank2_unwinding);
                    block.sync();
                    unreachable!("the barrier is poisoned");
                }
                _ => {} // rank 0 returns without syncing
            })
        }))
    });
    let payload = result.expect_err("launch must re-raise the panic");
    assert_eq!(message(&*payload), "root cause in rank 1");
}

/// With no panic other than the poisoning's consequences, `launch` re-raises
/// one of those.
#[test]
fn only_poisoned_barrier_panics_re_raise_one_of_them() {
    let m = watchdog(30, String::new, || {
        panic_message(|| {
            launch(4, |block| {
                if block.thread_rank() == 0 {
                    block.barrier().poison();
                }
                block.sync();
            })
        })
    });
    assert!(
        m.starts_with("syncthreads: barrier poisoned by poison()"),
        "{m}"
    );
}

/// Counts its drops: a kernel's result that must be dropped exactly once.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Every returned result is dropped exactly once: by the caller when
/// `launch` returns them, by `launch` when it re-raises another rank's panic.
#[test]
fn every_result_is_dropped_once_whether_or_not_another_rank_panics() {
    let drops = AtomicUsize::new(0);
    watchdog(30, String::new, || {
        let results = launch(6, |block| {
            block.sync();
            Counted(&drops)
        });
        assert_eq!(results.len(), 6);
        assert_eq!(
            drops.load(Ordering::Relaxed),
            0,
            "launch dropped a result it returned"
        );
        drop(results);
    });
    assert_eq!(drops.load(Ordering::Relaxed), 6);

    drops.store(0, Ordering::Relaxed);
    let m = watchdog(30, String::new, || {
        panic_message(|| {
            launch(6, |block| {
                if block.thread_rank() == 4 {
                    panic!("rank 4 fails after the others returned");
                }
                Counted(&drops)
            })
        })
    });
    assert_eq!(m, "rank 4 fails after the others returned");
    // The five ranks that returned: their results dropped, none twice.
    assert_eq!(drops.load(Ordering::Relaxed), 5);
}

#[test]
fn block_debug_shows_rank_and_size() {
    let got = launch(2, |block| format!("{block:?}"));
    // The progress depends on whether the other thread returned (left) yet.
    for (rank, text) in got.iter().enumerate() {
        assert!(
            text.starts_with(&format!("Block {{ thread_rank: {rank}, arrived: "))
                && text.ends_with(", expected: 2, size: 2 }"),
            "{text}"
        );
    }
}

/// Regression: after one thread of a `launch` panicked, the others' seats
/// (dropped normally once `launch` caught their poisoned-barrier panics)
/// cleared the counter of the phase before their last, which a slow thread
/// that had completed that phase might not have read yet: its
/// `sync_count(true)` of 64 threads returned 0. Every thread that returns
/// from a completed phase gets its result, whatever the block does
/// afterwards. (A race: repeated, as the oversubscribed launches make slow
/// threads.)
#[test]
fn a_panic_in_launch_zeroes_a_slow_threads_sync_count() {
    // Fewer under Miri, which runs the threads one at a time.
    const THREADS: usize = scaled(64, 8);
    const LAUNCHES: usize = scaled(400, 4);
    let launches = AtomicUsize::new(0);
    watchdog(
        240,
        || format!("{} launches done", launches.load(Ordering::Relaxed)),
        || {
            for _ in 0..LAUNCHES {
                let counts: Vec<AtomicUsize> =
                    (0..THREADS).map(|_| AtomicUsize::new(usize::MAX)).collect();
                let result = catch_unwind(AssertUnwindSafe(|| {
                    launch(THREADS, |block: &Block| {
                        let c = block.sync_count(true);
                        // Relaxed: read after `launch` joined every thread.
                        counts[block.thread_rank()].store(c, Ordering::Relaxed);
                        if block.thread_rank() == 0 {
                            std::panic::resume_unwind(Box::new("rank 0 fails"));
                        }
                        block.sync();
                    })
                }));
                assert_eq!(message(&*result.unwrap_err()), "rank 0 fails");
                let done = launches.load(Ordering::Relaxed);
                assert_eq!(
                    counts[0].load(Ordering::Relaxed),
                    THREADS,
                    "launch {done}: rank 0"
                );
                for (rank, c) in counts.iter().enumerate() {
                    // usize::MAX: the thread's wait saw the poisoned word
                    // first and panicked, as a wait on a poisoned barrier
                    // does even when its phase had completed.
                    let c = c.load(Ordering::Relaxed);
                    assert!(
                        c == THREADS || c == usize::MAX,
                        "launch {done}: sync_count(true) of rank {rank} returned {c}, not {THREADS}"
                    );
                }
                launches.fetch_add(1, Ordering::Relaxed);
            }
        },
    );
}
