//! `Block::tiled_partition` and `Tile`: tiles of every size in blocks of up
//! to 256 threads, every collective lane by lane against the model
//! (tests/warp_model) with the tile's size as the width; tiles never wait
//! for each other; a panic in the block poisons its tiles; misuse panics.

mod common;
#[path = "warp_model/mod.rs"]
mod warp_model;

use common::{panic_message, panic_of, watchdog};
use std::sync::atomic::{AtomicBool, Ordering};
use syncthreads::{Launcher, Tile};

/// A launch on a pool of the test's own, joined when it drops, so that no
/// pool thread outlives the test (ThreadSanitizer reports one that exits
/// unjoined after its keep-alive while a long test runs on).
fn launch<R: Send>(threads: usize, kernel: impl Fn(&syncthreads::Block<'_>) -> R + Sync) -> Vec<R> {
    Launcher::new().launch(threads, kernel)
}
use warp_model::*;

/// Each thread runs `rounds` tile collectives (one plan per round and tile)
/// and checks each against the model.
fn check_tile(tile: &Tile<'_>, rank: usize, seed: u64, rounds: u64) {
    let n = tile.size();
    let base = rank - tile.thread_rank();
    let me = tile.thread_rank();
    for round in 0..rounds {
        let values: Vec<u64> = (0..n).map(|l| value(seed, round, base + l)).collect();
        let v = values[me];
        let r = mix(seed ^ round);
        let arg = (r >> 8) as usize % 100;
        let full = u64::MAX >> (64 - n);
        let what = || {
            format!(
                "tile {} of {n}, rank {me}, round {round}",
                tile.meta_group_rank()
            )
        };
        match r % 10 {
            0 => tile.sync(),
            1 => {
                let bits = (0..n)
                    .filter(|&l| values[l] % 2 == 1)
                    .map(|l| 1u64 << l)
                    .sum::<u64>();
                assert_eq!(tile.ballot(v % 2 == 1), bits, "{}", what());
                assert_eq!(tile.any(v % 2 == 1), bits != 0, "{}", what());
                assert_eq!(tile.all(v % 2 == 1), bits == full, "{}", what());
            }
            2 => assert_eq!(
                tile.shfl(v, arg),
                model_shfl(&values, full, me, n, Shfl::Idx(arg)),
                "{}",
                what()
            ),
            3 => assert_eq!(
                tile.shfl_up(v, arg),
                model_shfl(&values, full, me, n, Shfl::Up(arg)),
                "{}",
                what()
            ),
            4 => assert_eq!(
                tile.shfl_down(pair(v), arg),
                pair(model_shfl(&values, full, me, n, Shfl::Down(arg))),
                "{}",
                what()
            ),
            5 => assert_eq!(
                tile.shfl_xor(big(v), arg),
                big(model_shfl(&values, full, me, n, Shfl::Xor(arg))),
                "{}",
                what()
            ),
            6 => {
                let key = |x: u64| x % 3;
                let same = (0..n)
                    .filter(|&l| key(values[l]) == key(v))
                    .map(|l| 1u64 << l)
                    .sum::<u64>();
                assert_eq!(tile.match_any(key(v)), same, "{}", what());
                assert_eq!(
                    tile.match_all(key(v)),
                    (same == full).then_some(full),
                    "{}",
                    what()
                );
            }
            7 => {
                assert_eq!(
                    tile.reduce_add(v as u32),
                    values.iter().map(|&x| x as u32).fold(0, u32::wrapping_add),
                    "{}",
                    what()
                );
                assert_eq!(
                    tile.reduce_min(v as i32),
                    values.iter().map(|&x| x as i32).min().unwrap(),
                    "{}",
                    what()
                );
            }
            8 => {
                assert_eq!(
                    tile.reduce_max(v as i64),
                    values.iter().map(|&x| x as i64).max().unwrap(),
                    "{}",
                    what()
                );
                assert_eq!(
                    tile.reduce_and(v),
                    values.iter().fold(u64::MAX, |a, &b| a & b),
                    "{}",
                    what()
                );
                assert_eq!(
                    tile.reduce_or(v),
                    values.iter().fold(0, |a, &b| a | b),
                    "{}",
                    what()
                );
                assert_eq!(
                    tile.reduce_xor(v),
                    values.iter().fold(0, |a, &b| a ^ b),
                    "{}",
                    what()
                );
            }
            _ => {
                let op = |a: u64, b: u64| a.wrapping_mul(31).wrapping_add(b);
                assert_eq!(
                    tile.reduce(v, op),
                    values.iter().copied().reduce(op).unwrap(),
                    "{}",
                    what()
                );
            }
        }
    }
}

#[test]
fn tiles_of_every_size_in_blocks_up_to_256_threads() {
    for threads in [1, 2, 6, 32, 64, 96, 256] {
        let rounds = if threads > 64 { 12 } else { 40 };
        watchdog(
            120,
            || format!("block of {threads}"),
            || {
                launch(threads, |block| {
                    let mut n = 1;
                    while n <= 64 {
                        if threads % n == 0 {
                            let tile = block.tiled_partition(n);
                            assert_eq!(tile.size(), n);
                            assert_eq!(tile.thread_rank(), block.thread_rank() % n);
                            assert_eq!(tile.meta_group_rank(), block.thread_rank() / n);
                            assert_eq!(tile.meta_group_size(), threads / n);
                            check_tile(&tile, block.thread_rank(), n as u64, rounds);
                        }
                        n *= 2;
                    }
                });
            },
        );
    }
}

#[test]
fn a_tile_never_waits_for_another_tile() {
    let done = AtomicBool::new(false);
    watchdog(
        60,
        || "tiles".into(),
        || {
            launch(8, |block| {
                let tile = block.tiled_partition(4);
                if tile.meta_group_rank() == 1 {
                    for i in 0..200u32 {
                        tile.sync();
                        assert_eq!(tile.reduce_add(i), 4 * i);
                    }
                    done.store(true, Ordering::Release);
                } else {
                    // Tile 0 makes no call until tile 1 is done.
                    while !done.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    assert_eq!(tile.reduce_add(1u32), 4);
                }
            });
        },
    );
}

#[test]
fn a_panic_in_the_block_poisons_its_tiles() {
    for (threads, n) in [(8, 4), (64, 32), (6, 2)] {
        let payload = watchdog(
            60,
            || "poisoned tiles".into(),
            || {
                std::panic::catch_unwind(|| {
                    launch(threads, |block| {
                        let tile = block.tiled_partition(n);
                        tile.sync();
                        if block.thread_rank() == threads - 1 {
                            panic!("rank {} failed", block.thread_rank());
                        }
                        // Would wait for ever for the panicked thread (in its tile) or
                        // go on alone (other tiles): loop until poisoned.
                        for i in 0.. {
                            let _ = tile.reduce_add(i as u32);
                            tile.sync();
                            if i > 100_000 && tile.meta_group_rank() != (threads - 1) / n {
                                break;
                            }
                        }
                    })
                })
                .unwrap_err()
            },
        );
        assert_eq!(
            panic_message(&*payload),
            format!("rank {} failed", threads - 1)
        );
    }
}

#[test]
fn tiled_partition_refuses_bad_sizes() {
    for (threads, n) in [(8, 3), (8, 0), (256, 128), (6, 4)] {
        let message = panic_of(|| launch(threads, |block| block.tiled_partition(n).size()));
        assert_eq!(
            message,
            format!("syncthreads: Block::tiled_partition({n}): the tile size must be a power of two in 1 ..= 64 that divides the block's {threads} threads")
        );
    }
}
