//! The `diagnostics` feature on a grid: a stalled `grid.sync()` names the
//! missing threads as (block, thread) pairs, and a divergent `grid.sync()`
//! panics naming both call sites, re-raised by `launch_grid`.
#![cfg(feature = "diagnostics")]
// Two identical branches are the point: two call sites of one sync.
#![allow(clippy::if_same_then_else)]

mod common;

use common::{panic_message, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use syncthreads::diagnostics::stalls;
use syncthreads::launch_grid;

#[test]
fn a_stalled_grid_sync_names_the_missing_block_and_thread() {
    let release = AtomicBool::new(false);
    let report = watchdog(60, String::new, || {
        std::thread::scope(|s| {
            s.spawn(|| {
                launch_grid(2, 3, |block| {
                    let grid = block.grid();
                    // Thread 2 of block 1 (grid rank 5) is late.
                    if grid.thread_rank() == 5 {
                        while !release.load(Ordering::Acquire) {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                    grid.sync();
                })
            });
            let start = Instant::now();
            let stall = loop {
                let found = stalls(Duration::from_millis(20))
                    .into_iter()
                    .find(|s| s.to_string().contains("Grid stalled") && s.waiting().len() == 5);
                if let Some(stall) = found {
                    break stall;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "no grid stall seen"
                );
                std::thread::sleep(Duration::from_millis(5));
            };
            release.store(true, Ordering::Release);
            assert_eq!(stall.missing(), Some(&[5][..]));
            stall.to_string()
        })
    });
    assert!(report.contains("missing: (block 1, thread 2)"), "{report}");
    assert!(report.contains("block 0, thread 1"), "{report}");
    assert!(report.contains("Grid { blocks: 2, threads: 3"), "{report}");
}

#[test]
fn a_divergent_grid_sync_names_both_call_sites_and_is_the_root_cause() {
    let result = watchdog(60, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch_grid(2, 2, |block| {
                let grid = block.grid();
                if grid.thread_rank() == 3 {
                    grid.sync();
                } else {
                    grid.sync();
                }
            })
        }))
    });
    let text = panic_message(&*result.expect_err("a divergent sync panics"));
    assert!(
        text.contains("divergent __syncthreads in phase 0"),
        "{text}"
    );
    // Both call sites, each in this file, on two lines.
    let sites: std::collections::BTreeSet<&str> = text
        .split("tests/grid_diagnostics.rs:")
        .skip(1)
        .map(|rest| rest.split(':').next().unwrap())
        .collect();
    assert_eq!(sites.len(), 2, "{text}");
    assert!(text.contains("grid.sync()"), "{text}");
}

#[test]
fn a_phase_completed_by_a_leaving_thread_leaves_no_stale_call_site() {
    // Phase 2 is completed by thread 1's leave (thread 0 arrived first, by
    // the split form); phase 4 reuses phase 0's record slot (phases count
    // modulo 4) at another call site than phase 0's: not a divergence.
    let left = AtomicBool::new(false);
    let arrived = AtomicBool::new(false);
    watchdog(60, String::new, || {
        launch_grid(2, 1, |block| {
            let grid = block.grid();
            for _ in 0..2 {
                grid.sync(); // phases 0 and 1
            }
            if grid.thread_rank() == 1 {
                while !arrived.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                left.store(true, Ordering::Release);
                return;
            }
            let token = grid.arrive(); // phase 2
            arrived.store(true, Ordering::Release);
            grid.wait(token);
            assert!(left.load(Ordering::Acquire));
            grid.sync(); // phase 3
            grid.sync(); // phase 4, another call site than phase 0's
        })
    });
}
