//! `WarpBarrier`: `__syncwarp(mask)` with full, disjoint and single-lane
//! masks, visibility of writes, and misuse panics.

mod common;

use common::{panic_of as panic_message, watchdog};
use mbarrier::WarpBarrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
fn a_single_lane_mask_returns_at_once() {
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
    // A lone sync counts, as every sync does (SPEC §3's rule pairs syncs by count).
    assert_eq!(
        format!("{warp:?}"),
        "WarpBarrier { synced: [0, 0, 1000, 0] }"
    );
    let one = WarpBarrier::new(1);
    one.sync(0, one.full_mask());
}

#[test]
fn misuse_panics_with_the_lane_and_the_mask_and_changes_nothing() {
    let warp = WarpBarrier::new(4);
    assert_eq!(
        panic_message(|| warp.sync(3, 0b0101)),
        "mbarrier: WarpBarrier::sync(lane 3, mask 0x5): lane 3 is not in its own mask"
    );
    assert_eq!(
        panic_message(|| warp.sync(4, 0b1_0000)),
        "mbarrier: WarpBarrier::sync(lane 4, mask 0x10): lane 4 is out of range: this WarpBarrier has 4 lanes"
    );
    assert_eq!(
        panic_message(|| warp.sync(1, 0x302)),
        "mbarrier: WarpBarrier::sync(lane 1, mask 0x302): the mask names lanes (0x300) beyond the 4 lanes of this WarpBarrier"
    );
    assert_eq!(
        panic_message(|| warp.sync(0, 0)),
        "mbarrier: WarpBarrier::sync(lane 0, mask 0x0): lane 0 is not in its own mask"
    );
    assert_eq!(format!("{warp:?}"), "WarpBarrier { synced: [0, 0, 0, 0] }");
    let one = WarpBarrier::new(1);
    assert_eq!(
        panic_message(|| one.sync(1, 0b10)),
        "mbarrier: WarpBarrier::sync(lane 1, mask 0x2): lane 1 is out of range: this WarpBarrier has 1 lane"
    );
}

#[test]
fn new_rejects_zero_and_more_than_sixty_four_lanes() {
    assert_eq!(
        panic_message(|| WarpBarrier::new(0)),
        "mbarrier: WarpBarrier::new(0): lanes must be in 1 ..= 64"
    );
    assert_eq!(
        panic_message(|| WarpBarrier::new(65)),
        "mbarrier: WarpBarrier::new(65): lanes must be in 1 ..= 64"
    );
    let warp = WarpBarrier::new(64);
    assert_eq!((warp.lanes(), warp.full_mask()), (64, u64::MAX));
    assert_eq!(WarpBarrier::new(1).full_mask(), 1);
}
