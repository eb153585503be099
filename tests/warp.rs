//! `WarpBarrier`: `__syncwarp(mask)` with full, disjoint and single-lane
//! masks, random partitions with one-lane parts, visibility of writes, and
//! misuse panics.

mod common;

use common::{panic_of as panic_message, watchdog};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use syncthreads::WarpBarrier;

/// Every lane of `mask` writes its slot, syncs, checks every slot of the
/// mask, and syncs again before the next round overwrites it.
fn exchange(warp: &WarpBarrier, slots: &[AtomicU64], lane: usize, mask: u64, round: u64) {
    // Relaxed on purpose: only the warp barrier orders these.
    slots[lane].store(round << 8 | lane as u64, Ordering::Relaxed);
    warp.sync(lane, mask); // read-after-write
    for other in (0..64).filter(|&l| mask & (1 << l) != 0) {
        let seen = slots[other].load(Ordering::Relaxed);
        assert_eq!(
            seen,
            round << 8 | other as u64,
            "lane {lane} reading lane {other}, mask {mask:#x}, round {round}"
        );
    }
    warp.sync(lane, mask); // write-after-read
}

fn full_mask_exchange(lanes: usize, rounds: u64) {
    let warp = WarpBarrier::new(lanes);
    let slots: Vec<AtomicU64> = (0..lanes).map(|_| AtomicU64::new(u64::MAX)).collect();
    let full = warp.full_mask();
    watchdog(
        60,
        || format!("{warp:?}"),
        || {
            std::thread::scope(|s| {
                for lane in 0..lanes {
                    let (warp, slots) = (&warp, &slots);
                    s.spawn(move || {
                        for round in 0..rounds {
                            exchange(warp, slots, lane, full, round);
                        }
                    });
                }
            });
        },
    );
    assert_eq!(
        format!("{warp:?}"),
        format!("WarpBarrier {{ synced: {:?} }}", vec![2 * rounds; lanes])
    );
}

#[test]
fn full_mask_orders_an_exchange_between_two_lanes() {
    full_mask_exchange(2, 5_000);
}

#[test]
fn full_mask_orders_an_exchange_between_eight_lanes() {
    full_mask_exchange(8, 1_000);
}

#[test]
fn full_mask_orders_an_exchange_between_sixty_four_lanes() {
    full_mask_exchange(64, 100);
}

/// The low and the high half sync at the same time, each with its own mask.
/// The high half then waits until the low half has finished all its rounds:
/// if the low half needed the high lanes, that would deadlock (and the
/// watchdog would fail the test).
#[test]
fn disjoint_half_masks_sync_independently_at_the_same_time() {
    const LANES: usize = 8;
    let warp = WarpBarrier::new(LANES);
    let slots: Vec<AtomicU64> = (0..LANES).map(|_| AtomicU64::new(u64::MAX)).collect();
    let low_done = AtomicBool::new(false);
    let (low, high) = (0x0f_u64, 0xf0_u64);
    watchdog(
        60,
        || format!("{warp:?}, low done: {low_done:?}"),
        || {
            std::thread::scope(|s| {
                for lane in 0..LANES {
                    let (warp, slots, low_done) = (&warp, &slots, &low_done);
                    s.spawn(move || {
                        if lane < 4 {
                            for round in 0..2_000 {
                                exchange(warp, slots, lane, low, round);
                            }
                            // Relaxed: a flag for the waiting loop, nothing to publish.
                            low_done.store(true, Ordering::Relaxed);
                        } else {
                            for round in 0..500 {
                                exchange(warp, slots, lane, high, round);
                            }
                            while !low_done.load(Ordering::Relaxed) {
                                std::thread::yield_now();
                            }
                            for round in 500..1_000 {
                                exchange(warp, slots, lane, high, round);
                            }
                        }
                    });
                }
            });
        },
    );
    assert_eq!(
        format!("{warp:?}"),
        "WarpBarrier { synced: [4000, 4000, 4000, 4000, 2000, 2000, 2000, 2000] }"
    );
}

/// Masks change from sync to sync (pairs, then all), as in a warp shuffle
/// reduction; every lane syncs equally often, so the rule holds.
#[test]
fn pair_masks_then_the_full_mask() {
    const LANES: usize = 4;
    let warp = WarpBarrier::new(LANES);
    let slots: Vec<AtomicU64> = (0..LANES).map(|_| AtomicU64::new(u64::MAX)).collect();
    watchdog(
        60,
        || format!("{warp:?}"),
        || {
            std::thread::scope(|s| {
                for lane in 0..LANES {
                    let (warp, slots) = (&warp, &slots);
                    s.spawn(move || {
                        let pair = 0b11 << (lane & !1);
                        for round in 0..1_000 {
                            exchange(warp, slots, lane, pair, 2 * round);
                            exchange(warp, slots, lane, 0b1111, 2 * round + 1);
                        }
                    });
                }
            });
        },
    );
}

#[test]
fn a_single_lane_mask_returns_at_once_and_counts() {
    let warp = WarpBarrier::new(4);
    watchdog(
        10,
        || format!("{warp:?}"),
        || {
            // No other lane ever syncs: each call must return on its own.
            for _ in 0..1_000 {
                warp.sync(2, 0b100);
            }
        },
    );
    // A lone sync counts like any other (see the regression test below).
    assert_eq!(
        format!("{warp:?}"),
        "WarpBarrier { synced: [0, 0, 1000, 0] }"
    );
    let one = WarpBarrier::new(1);
    one.sync(0, one.full_mask());
    assert_eq!(format!("{one:?}"), "WarpBarrier { synced: [1] }");
}

/// Regression: a lone sync did not count (before commit 00697cc), so in
/// this legal program (every lane syncs once per round: {0} {1,2}, then
/// {0,1} {2}) lane 0 reached its {0,1} sync one count behind lane 1, took
/// lane 1's {1,2} sync for it and returned about 200 ms early; lane 1 then
/// waited for ever. The sleep only makes that interleaving likely; what
/// decides is the data check and the watchdog.
#[test]
fn a_lone_sync_counts_so_a_legal_three_lane_program_does_not_hang() {
    let warp = WarpBarrier::new(3);
    let slots: Vec<AtomicU64> = (0..3).map(|_| AtomicU64::new(0)).collect();
    watchdog(
        10,
        || format!("{warp:?}"),
        || {
            std::thread::scope(|s| {
                let (warp, slots) = (&warp, &slots);
                s.spawn(move || {
                    warp.sync(0, 0b001);
                    // Relaxed on purpose: only the warp barrier orders these.
                    slots[0].store(10, Ordering::Relaxed);
                    warp.sync(0, 0b011);
                    assert_eq!(slots[1].load(Ordering::Relaxed), 11, "lane 0 after {{0,1}}");
                });
                s.spawn(move || {
                    slots[1].store(1, Ordering::Relaxed);
                    warp.sync(1, 0b110);
                    assert_eq!(slots[2].load(Ordering::Relaxed), 2, "lane 1 after {{1,2}}");
                    std::thread::sleep(Duration::from_millis(200));
                    slots[1].store(11, Ordering::Relaxed);
                    warp.sync(1, 0b011);
                    assert_eq!(slots[0].load(Ordering::Relaxed), 10, "lane 1 after {{0,1}}");
                });
                s.spawn(move || {
                    slots[2].store(2, Ordering::Relaxed);
                    warp.sync(2, 0b110);
                    assert_eq!(slots[1].load(Ordering::Relaxed), 1, "lane 2 after {{1,2}}");
                    warp.sync(2, 0b100);
                });
            });
        },
    );
    assert_eq!(format!("{warp:?}"), "WarpBarrier { synced: [2, 2, 2] }");
}

/// A small deterministic generator (xorshift64*), so that every lane
/// computes the same partitions without sharing anything.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % n
    }
}

/// For each round, the mask of the part of each lane: a random partition of
/// `lanes` lanes (shuffled, then cut into parts of 1 lane with probability
/// 1/3, else of a random size), so one-lane parts are frequent.
fn random_partitions(lanes: usize, rounds: usize, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = Rng(seed);
    (0..rounds)
        .map(|_| {
            let mut order: Vec<usize> = (0..lanes).collect();
            for i in (1..lanes).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut part_of = vec![0u64; lanes];
            let mut rest = &order[..];
            while !rest.is_empty() {
                let size = if rng.below(3) == 0 {
                    1
                } else {
                    1 + rng.below(rest.len() as u64) as usize
                };
                let (part, tail) = rest.split_at(size);
                let mask = part.iter().fold(0, |m, &l| m | 1 << l);
                for &lane in part {
                    part_of[lane] = mask;
                }
                rest = tail;
            }
            part_of
        })
        .collect()
}

/// Every round, each lane is in exactly one part of a random partition and
/// runs `exchange` with its part's mask (two syncs: write, sync, check the
/// part's slots, sync). Every lane syncs equally often, so CUDA's rule holds
/// for every mask, one-lane parts included.
fn random_partitions_exchange(lanes: usize, rounds: usize, seed: u64) {
    let parts = random_partitions(lanes, rounds, seed);
    let singletons = parts
        .iter()
        .flatten()
        .filter(|m| m.count_ones() == 1)
        .count();
    let shared = parts
        .iter()
        .flatten()
        .filter(|m| m.count_ones() > 1)
        .count();
    // The generator must really produce both kinds of parts.
    assert!(
        singletons >= rounds && shared >= rounds,
        "seed {seed:#x}: {singletons} one-lane and {shared} shared lane-rounds"
    );
    let warp = WarpBarrier::new(lanes);
    let slots: Vec<AtomicU64> = (0..lanes).map(|_| AtomicU64::new(u64::MAX)).collect();
    watchdog(
        60,
        || format!("seed {seed:#x}: {warp:?}"),
        || {
            std::thread::scope(|s| {
                for lane in 0..lanes {
                    let (warp, slots, parts) = (&warp, &slots, &parts);
                    s.spawn(move || {
                        for (round, part_of) in parts.iter().enumerate() {
                            exchange(warp, slots, lane, part_of[lane], round as u64);
                        }
                    });
                }
            });
        },
    );
    assert_eq!(
        format!("{warp:?}"),
        format!("WarpBarrier {{ synced: {:?} }}", vec![2 * rounds; lanes])
    );
}

#[test]
fn random_partitions_of_eight_lanes_with_one_lane_parts() {
    random_partitions_exchange(8, 5_000, 0x9e37_79b9_7f4a_7c15);
}

#[test]
fn random_partitions_of_sixty_four_lanes_with_one_lane_parts() {
    random_partitions_exchange(64, 500, 0xd1b5_4a32_d192_ed03);
}

#[test]
fn misuse_panics_with_the_lane_and_the_mask_and_changes_nothing() {
    let warp = WarpBarrier::new(4);
    assert_eq!(
        panic_message(|| warp.sync(3, 0b0101)),
        "syncthreads: WarpBarrier::sync(lane 3, mask 0x5): lane 3 is not in its own mask"
    );
    assert_eq!(
        panic_message(|| warp.sync(4, 0b1_0000)),
        "syncthreads: WarpBarrier::sync(lane 4, mask 0x10): lane 4 is out of range: this WarpBarrier has 4 lanes"
    );
    assert_eq!(
        panic_message(|| warp.sync(1, 0x302)),
        "syncthreads: WarpBarrier::sync(lane 1, mask 0x302): the mask names lanes (0x300) beyond the 4 lanes of this WarpBarrier"
    );
    assert_eq!(
        panic_message(|| warp.sync(0, 0)),
        "syncthreads: WarpBarrier::sync(lane 0, mask 0x0): lane 0 is not in its own mask"
    );
    assert_eq!(format!("{warp:?}"), "WarpBarrier { synced: [0, 0, 0, 0] }");
    let one = WarpBarrier::new(1);
    assert_eq!(
        panic_message(|| one.sync(1, 0b10)),
        "syncthreads: WarpBarrier::sync(lane 1, mask 0x2): lane 1 is out of range: this WarpBarrier has 1 lane"
    );
}

#[test]
fn new_rejects_zero_and_more_than_sixty_four_lanes() {
    assert_eq!(
        panic_message(|| WarpBarrier::new(0)),
        "syncthreads: WarpBarrier::new(0): lanes must be in 1 ..= 64"
    );
    assert_eq!(
        panic_message(|| WarpBarrier::new(65)),
        "syncthreads: WarpBarrier::new(65): lanes must be in 1 ..= 64"
    );
    let warp = WarpBarrier::new(64);
    assert_eq!((warp.lanes(), warp.full_mask()), (64, u64::MAX));
    assert_eq!(WarpBarrier::new(1).full_mask(), 1);
}
