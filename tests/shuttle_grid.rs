//! `launch_grid` under shuttle's random schedules, with more blocks than
//! the loom models afford: the grid's barrier against every block's own,
//! the split form beside `sync` in one phase, threads and whole blocks
//! leaving, a panic in one block racing the others' syncs, and two grids
//! at once on one pool. Only built with `--cfg shuttle`; `.ci/shuttle`
//! runs it.
#![cfg(shuttle)]

use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::sync::Arc;
use shuttle::thread;
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{Block, Launcher};

#[path = "common/shuttle.rs"]
mod schedules;
use schedules::{check, quiet};

/// Each grid thread adds 1 to its block's counter and to the grid's, syncs
/// (its block, then the grid, alternating `sync` and the split form by
/// rank), and checks both totals; then syncs again before the next round.
fn rounds(block: &Block<'_>, per_block: &[AtomicUsize], all: &AtomicUsize, rounds: usize) {
    let grid = block.grid();
    let b = block.block_rank();
    for round in 1..=rounds {
        per_block[b].fetch_add(1, Ordering::Relaxed);
        block.sync();
        assert_eq!(per_block[b].load(Ordering::Relaxed), round * block.size());
        all.fetch_add(1, Ordering::Relaxed);
        if (grid.thread_rank() + round) % 2 == 0 {
            grid.sync();
        } else {
            let token = grid.arrive();
            grid.wait(token);
        }
        assert_eq!(all.load(Ordering::Relaxed), round * grid.size());
        grid.sync();
    }
}

#[test]
fn four_blocks_sync_their_own_and_the_grid() {
    check(|| {
        let launcher = Launcher::new();
        let per_block: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        let all = AtomicUsize::new(0);
        launcher.launch_grid(4, 2, |block| rounds(block, &per_block, &all, 2));
    });
}

#[test]
fn threads_and_whole_blocks_leave_while_others_sync() {
    check(|| {
        let launcher = Launcher::new();
        let synced = AtomicUsize::new(0);
        // Block 0 leaves whole; in blocks 1 and 2, thread 1 leaves.
        let got = launcher.launch_grid(3, 2, |block| {
            if block.block_rank() == 0 || block.thread_rank() == 1 {
                return 0;
            }
            for _ in 0..2 {
                block.grid().sync();
                synced.fetch_add(1, Ordering::Relaxed);
                block.sync();
            }
            1
        });
        assert_eq!(got, [0, 0, 1, 0, 1, 0]);
        assert_eq!(synced.load(Ordering::Relaxed), 4);
    });
}

#[test]
fn a_panic_in_one_block_ends_every_block() {
    quiet();
    check(|| {
        let launcher = Launcher::new();
        let result = catch_unwind(AssertUnwindSafe(|| {
            launcher.launch_grid(3, 2, |block| {
                let grid = block.grid();
                if grid.thread_rank() == 3 {
                    panic!("boom");
                }
                // The others wait in their block, the grid, or a split wait.
                match grid.thread_rank() % 3 {
                    0 => block.sync(),
                    1 => grid.sync(),
                    _ => grid.wait(grid.arrive()),
                }
                grid.sync();
            })
        }));
        let payload = result.expect_err("the panic is re-raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    });
}

#[test]
fn two_grids_at_once_share_one_pool() {
    check(|| {
        let launcher = Arc::new(Launcher::new());
        let other = {
            let launcher = Arc::clone(&launcher);
            thread::spawn(move || {
                let all = AtomicUsize::new(0);
                let per_block: Vec<AtomicUsize> = (0..2).map(|_| AtomicUsize::new(0)).collect();
                launcher.launch_grid(2, 2, |block| rounds(block, &per_block, &all, 1));
            })
        };
        let got = launcher.launch_grid(3, 1, |block| {
            block.grid().sync();
            block.grid().thread_rank()
        });
        assert_eq!(got, [0, 1, 2]);
        other.join().unwrap();
    });
}
