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
    assert!(text.contains("tests/grid_diagnostics.rs:62:"), "{text}");
    assert!(text.contains("tests/grid_diagnostics.rs:64:"), "{text}");
    assert!(text.contains("grid.sync()"), "{text}");
}
