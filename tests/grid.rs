//! `launch_grid`, `Block::grid` and `Grid`: grid rank order, the grid's
//! barrier across blocks (sync and the split form, one barrier), blocks
//! syncing on their own, leaving, panics anywhere in the grid, the
//! cooperative limit, and nested and concurrent grids.

mod common;

use common::{mix, panic_message as message, panic_of, scaled, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use syncthreads::{launch, launch_grid, Launcher};

/// Every shape a test below sweeps: one block, one thread per block, and
/// grids whose blocks are flat, one tree node, and several (under Miri,
/// the small ones).
fn shapes() -> &'static [(usize, usize)] {
    const ALL: [(usize, usize); 9] = [
        (1, 1),
        (1, 4),
        (2, 1),
        (2, 2),
        (4, 4),
        (2, 8),
        (3, 5),
        (16, 1),
        (5, 9),
    ];
    if cfg!(miri) {
        &ALL[..4]
    } else {
        &ALL
    }
}

#[test]
fn results_come_in_grid_rank_order_with_every_rank_and_shape() {
    for &(blocks, threads) in shapes() {
        let caller = std::thread::current().id();
        let got = watchdog(60, String::new, || {
            launch_grid(blocks, threads, |block| {
                let grid = block.grid();
                assert_eq!(block.num_blocks(), blocks);
                assert_eq!(grid.num_blocks(), blocks);
                assert_eq!(block.size(), threads);
                assert_eq!(grid.size(), blocks * threads);
                assert_eq!(grid.block_rank(), block.block_rank());
                assert_eq!(
                    grid.thread_rank(),
                    block.block_rank() * threads + block.thread_rank()
                );
                let on_caller = std::thread::current().id() == caller;
                (block.block_rank(), block.thread_rank(), on_caller)
            })
        });
        let want: Vec<_> = (0..blocks * threads)
            .map(|r| (r / threads, r % threads, r == 0))
            .collect();
        assert_eq!(got, want, "{blocks} x {threads}");
    }
}

#[test]
fn a_plain_launch_is_a_grid_of_one_block() {
    let got = launch(3, |block| {
        let grid = block.grid();
        grid.sync();
        (
            block.block_rank(),
            block.num_blocks(),
            grid.thread_rank(),
            grid.size(),
        )
    });
    assert_eq!(got, [(0, 1, 0, 3), (0, 1, 1, 3), (0, 1, 2, 3)]);
}

/// Each round every thread writes its slot with plain (Relaxed) stores, the
/// grid syncs, and every thread checks every slot: the grid's barrier
/// orders the writes of every block before the reads of every block.
fn exchange(blocks: usize, threads: usize, rounds: u64, split: bool) {
    let size = blocks * threads;
    let slots: Vec<AtomicU64> = (0..size).map(|_| AtomicU64::new(u64::MAX)).collect();
    watchdog(
        60,
        || format!("{blocks} x {threads}"),
        || {
            launch_grid(blocks, threads, |block| {
                let grid = block.grid();
                let me = grid.thread_rank();
                for round in 0..rounds {
                    slots[me].store(round * 1_000 + me as u64, Ordering::Relaxed);
                    // Half the threads (by a per-round mix) use the split
                    // form in the same phase as the others' sync.
                    if split && mix(round << 20 | me as u64) % 2 == 0 {
                        let token = grid.arrive();
                        std::hint::black_box(me);
                        grid.wait(token);
                    } else {
                        grid.sync();
                    }
                    for (r, slot) in slots.iter().enumerate() {
                        assert_eq!(slot.load(Ordering::Relaxed), round * 1_000 + r as u64);
                    }
                    grid.sync(); // nobody writes again before everyone read
                }
            })
        },
    );
}

#[test]
fn grid_sync_orders_every_blocks_writes_before_every_blocks_reads() {
    for &(blocks, threads) in shapes() {
        exchange(blocks, threads, scaled(200, 3) as u64, false);
    }
}

#[test]
fn arrive_and_wait_are_the_same_barrier_as_sync() {
    for &(blocks, threads) in shapes() {
        exchange(blocks, threads, scaled(200, 3) as u64, true);
    }
}

#[test]
fn work_between_arrive_and_wait_overlaps_the_phase() {
    // Thread 0 of block 0 arrives, then waits for a flag that the last
    // thread sets only after its own arrival: a split arrival must not
    // block until the phase completes.
    let flag = AtomicBool::new(false);
    watchdog(60, String::new, || {
        launch_grid(3, 3, |block| {
            let grid = block.grid();
            let me = grid.thread_rank();
            if me == 0 {
                let token = grid.arrive();
                while !flag.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                grid.wait(token);
            } else if me == grid.size() - 1 {
                let token = grid.arrive();
                flag.store(true, Ordering::Release);
                grid.wait(token);
            } else {
                grid.sync();
            }
        })
    });
}

#[test]
fn block_sync_syncs_only_the_threads_own_block() {
    // Block b syncs its block b * 3 times between two grid syncs: if a
    // block sync waited for other blocks, the counts would not match and
    // the grid would hang (the watchdog).
    let counts: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
    watchdog(60, String::new, || {
        launch_grid(4, 3, |block| {
            let b = block.block_rank();
            for _ in 0..b * 3 {
                if block.thread_rank() == 0 {
                    counts[b].fetch_add(1, Ordering::Relaxed);
                }
                block.sync();
            }
            block.grid().sync();
            for (other, count) in counts.iter().enumerate() {
                assert_eq!(count.load(Ordering::Relaxed), other * 3);
            }
        })
    });
}

#[test]
fn the_block_reductions_still_reduce_over_the_block_only() {
    let got = launch_grid(3, 4, |block| {
        let n = block.sync_count(block.thread_rank() < block.block_rank() + 1);
        block.grid().sync();
        n
    });
    assert_eq!(got, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
}

#[test]
fn split_arrivals_in_a_one_block_grid_keep_the_block_reductions_exact() {
    // In a grid of one block the grid's phases are the block's: a split
    // arrival that completes a phase must clear what a leading sync clears.
    for threads in [1, 2, 4, 7] {
        watchdog(60, String::new, || {
            launch_grid(1, threads, |block| {
                let grid = block.grid();
                for round in 0..scaled(300, 5) {
                    let pred = |r: usize| mix((round << 8 | r) as u64) % 2 == 0;
                    let want = (0..threads).filter(|&r| pred(r)).count();
                    assert_eq!(block.sync_count(pred(block.thread_rank())), want);
                    let token = grid.arrive();
                    grid.wait(token);
                }
            })
        });
    }
}

#[test]
fn a_thread_whose_kernel_returns_leaves_its_block_and_the_grid() {
    for &(blocks, threads) in shapes() {
        let got = watchdog(
            60,
            || format!("{blocks} x {threads}"),
            || {
                launch_grid(blocks, threads, |block| {
                    let grid = block.grid();
                    // Odd grid ranks leave at once; in grids of one thread per
                    // block, whole blocks leave.
                    if grid.thread_rank() % 2 == 1 {
                        return 0;
                    }
                    let mut phases = 0;
                    for _ in 0..scaled(50, 3) {
                        grid.sync();
                        block.sync();
                        let token = grid.arrive();
                        grid.wait(token);
                        phases += 1;
                    }
                    phases
                })
            },
        );
        let phases = scaled(50, 3);
        let want: Vec<_> = (0..blocks * threads)
            .map(|r| if r % 2 == 1 { 0 } else { phases })
            .collect();
        assert_eq!(got, want, "{blocks} x {threads}");
    }
}

#[test]
fn a_panic_in_any_block_is_raised_once_and_nobody_hangs() {
    let shapes: &[(usize, usize)] = if cfg!(miri) {
        &[(2, 2)]
    } else {
        &[(2, 2), (4, 4), (3, 5), (16, 1)]
    };
    for &(blocks, threads) in shapes {
        for culprit in [0, blocks * threads - 1, threads] {
            let culprit = culprit % (blocks * threads);
            let result = watchdog(
                60,
                || format!("{blocks} x {threads}, {culprit}"),
                || {
                    catch_unwind(AssertUnwindSafe(|| {
                        launch_grid(blocks, threads, |block| {
                            let grid = block.grid();
                            grid.sync();
                            if grid.thread_rank() == culprit {
                                panic!("rank {culprit} failed");
                            }
                            // Every other thread waits somewhere: its block,
                            // or a split wait of the grid, then the grid.
                            // (One call site per grid phase, so that the
                            // diagnostics build sees no divergent sync.)
                            if grid.thread_rank() % 2 == 0 {
                                block.sync();
                            } else {
                                grid.wait(grid.arrive());
                            }
                            grid.sync();
                        })
                    }))
                },
            );
            let payload = result.expect_err("the panic is re-raised");
            assert_eq!(message(&*payload), format!("rank {culprit} failed"));
        }
    }
}

#[test]
fn results_of_threads_that_ran_are_dropped_once_when_one_panics() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    let result = watchdog(60, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch_grid(3, 4, |block| {
                if block.grid().thread_rank() == 6 {
                    panic!("six");
                }
                if block.block_rank() == 0 {
                    return Counted; // block 0 returns before the poisoning
                }
                block.grid().sync();
                Counted
            })
        }))
    });
    assert!(result.is_err());
    // Block 0's four returned; the others either returned (none could
    // pass the poisoned grid sync) or unwound: four results, each dropped once.
    assert_eq!(DROPS.load(Ordering::Relaxed), 4);
}

#[test]
fn grid_poison_by_hand_fails_the_launch_without_a_hang() {
    let text = watchdog(60, String::new, || {
        panic_of(|| {
            launch_grid(2, 3, |block| {
                let grid = block.grid();
                if grid.thread_rank() == 4 {
                    grid.poison();
                    assert!(grid.is_poisoned());
                }
                grid.sync();
            })
        })
    });
    assert!(text.contains("poisoned by poison()"), "{text}");
}

#[test]
fn zero_blocks_or_threads_panic_as_launch_zero_does() {
    let ran = AtomicBool::new(false);
    let zero_blocks = panic_of(|| launch_grid(0, 4, |_| ran.store(true, Ordering::Relaxed)));
    assert!(
        zero_blocks.contains("launch_grid(0, 4, _): the block count must be in 1 ..="),
        "{zero_blocks}"
    );
    let zero_threads = panic_of(|| launch_grid(2, 0, |_| ran.store(true, Ordering::Relaxed)));
    assert!(
        zero_threads.contains("launch_grid(2, 0, _): the thread count must be in 1 ..="),
        "{zero_threads}"
    );
    assert!(!ran.load(Ordering::Relaxed));
}

#[test]
fn a_grid_too_large_to_run_at_once_is_refused_before_any_thread_starts() {
    let ran = AtomicBool::new(false);
    let kernel = |_: &syncthreads::Block<'_>| ran.store(true, Ordering::Relaxed);
    let over_max = panic_of(|| launch_grid(1 << 10, 1 << 10, kernel));
    assert!(
        over_max.contains("a grid of 1024 blocks of 1024 threads is 1048576 threads, over the limit of 1048575 (Barrier::MAX)"),
        "{over_max}"
    );
    let launcher = Launcher::new().max_threads(6);
    let over_limit = panic_of(|| launcher.launch_grid(2, 4, kernel));
    assert!(
        over_limit.contains("Launcher::launch_grid(2, 4, _): a grid of 2 blocks of 4 threads is 8 threads, over the limit of 6 (this Launcher's max_threads)"),
        "{over_limit}"
    );
    let plain = panic_of(|| launcher.launch(7, kernel));
    assert!(plain.contains("over the limit of 6"), "{plain}");
    assert!(!ran.load(Ordering::Relaxed));
    assert_eq!(launcher.live_threads(), 0);
    // At the limit it runs.
    assert_eq!(launcher.launch_grid(3, 2, |b| b.grid().size()), [6; 6]);
    let zero = panic_of(|| Launcher::new().max_threads(0));
    assert!(zero.contains("Launcher::max_threads(0)"), "{zero}");
}

#[test]
fn nested_and_concurrent_grids_do_not_deadlock() {
    let total = AtomicUsize::new(0);
    let callers = scaled(3, 1);
    watchdog(60, String::new, || {
        std::thread::scope(|s| {
            for _ in 0..callers {
                s.spawn(|| {
                    let inner = launch_grid(2, 2, |block| {
                        block.grid().sync();
                        // Each thread of the outer grid launches a grid.
                        let sums = launch_grid(2, 2, |inner| {
                            inner.grid().sync();
                            1
                        });
                        block.grid().sync();
                        sums.iter().sum::<usize>()
                    });
                    total.fetch_add(inner.iter().sum::<usize>(), Ordering::Relaxed);
                });
            }
        });
    });
    assert_eq!(total.load(Ordering::Relaxed), callers * 4 * 4);
}

#[test]
fn a_grid_token_is_debug_and_the_grid_shows_its_progress() {
    let got = launch_grid(2, 2, |block| {
        let grid = block.grid();
        let shown = format!("{grid:?}");
        let token = grid.arrive();
        let token_shown = format!("{token:?}");
        grid.wait(token);
        (shown, token_shown)
    });
    assert!(
        got[1]
            .0
            .starts_with("Grid { thread_rank: 1, block_rank: 0, num_blocks: 2, size: 4, arrived:"),
        "{}",
        got[1].0
    );
    assert!(got[0].1.starts_with("GridToken("), "{}", got[0].1);
}
