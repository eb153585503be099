//! The warp collectives lane by lane against a model of CUDA's semantics
//! (tests/warp_model: the PTX definition of `shfl.sync`): every width of
//! every shuffle with deltas past the width and out-of-range sources, on
//! full, single-lane, range and random masks; votes, matches, reductions;
//! values of word types, a padded tuple and a type larger than a slot's
//! inline buffer; and the misuse panics.

mod common;
#[path = "warp_model/mod.rs"]
mod warp_model;

use common::{panic_of, watchdog};
use syncthreads::WarpBarrier;
use warp_model::*;

/// Runs `cases` on a warp of `lanes` lanes, one thread per lane: in each
/// case the lanes of its mask run its call, the other lanes sync among
/// themselves (so every lane syncs once per case, as CUDA's rule wants).
fn run_cases(lanes: usize, cases: &[(u64, Call, Ty)]) {
    let warp = WarpBarrier::new(lanes);
    let full = warp.full_mask();
    watchdog(
        120,
        || format!("{warp:?}"),
        || {
            std::thread::scope(|s| {
                for lane in 0..lanes {
                    let warp = &warp;
                    s.spawn(move || {
                        for (i, &(mask, call, ty)) in cases.iter().enumerate() {
                            if mask & (1 << lane) == 0 {
                                warp.sync(lane, full & !mask);
                                continue;
                            }
                            let values: Vec<u64> =
                                (0..lanes).map(|l| value(7, i as u64, l)).collect();
                            run_and_check(warp, lane, mask, call, ty, &values, &|| {
                                format!("case {i} on {lanes} lanes")
                            });
                        }
                    });
                }
            });
        },
    );
}

/// Masks of every kind for `lanes` lanes: full, single lanes, ranges, random.
fn masks(lanes: usize, seed: u64) -> Vec<u64> {
    let full = u64::MAX >> (64 - lanes);
    let mut masks = vec![
        full,
        1,
        1 << (lanes - 1),
        full >> (lanes / 2),
        full & !(full >> (lanes / 3 + 1)),
    ];
    masks.extend((0..3).map(|i| mix(seed + i) & full).filter(|&m| m != 0));
    masks.retain(|&m| m != 0);
    masks
}

fn every_width_of_every_shuffle(lanes: usize) {
    let mut cases = Vec::new();
    for (k, mask) in masks(lanes, lanes as u64).into_iter().enumerate() {
        let mut width = 1;
        while width <= lanes {
            for (j, arg) in [
                0,
                1,
                3,
                width - 1,
                width,
                width + 1,
                31,
                32,
                33,
                34,
                63,
                64,
                65,
                97,
                140,
            ]
            .into_iter()
            .enumerate()
            {
                let ty = [Ty::U32, Ty::I64, Ty::Pair, Ty::Big][(j + k) % 4];
                for shfl in [
                    Shfl::Idx(arg),
                    Shfl::Up(arg),
                    Shfl::Down(arg),
                    Shfl::Xor(arg),
                ] {
                    cases.push((mask, Call::Shuffle(shfl, width), ty));
                }
            }
            width *= 2;
        }
    }
    run_cases(lanes, &cases);
}

#[test]
fn shuffles_on_32_lanes_every_width_delta_and_source() {
    every_width_of_every_shuffle(32);
}

#[test]
fn shuffles_on_64_lanes_every_width_delta_and_source() {
    every_width_of_every_shuffle(64);
}

#[test]
fn shuffles_on_groups_that_are_not_a_power_of_two() {
    for lanes in [1, 3, 5, 33, 48] {
        every_width_of_every_shuffle(lanes);
    }
}

#[test]
fn votes_matches_and_reductions_on_every_kind_of_mask() {
    for lanes in [1, 2, 7, 32, 64] {
        let mut cases = Vec::new();
        for mask in masks(lanes, 99) {
            for call in [
                Call::Ballot,
                Call::Any,
                Call::All,
                Call::MatchAny,
                Call::MatchAll,
                Call::ReduceAdd,
                Call::ReduceMin,
                Call::ReduceMax,
                Call::ReduceAnd,
                Call::ReduceOr,
                Call::ReduceXor,
                Call::Fold,
            ] {
                for ty in [Ty::U32, Ty::I64, Ty::Pair, Ty::Big] {
                    cases.push((mask, call, ty));
                }
            }
        }
        run_cases(lanes, &cases);
    }
}

#[test]
fn the_model_knows_cudas_measured_cases() {
    // SPEC: a shfl_up by 34 on 32 lanes is a shfl_up by 2.
    assert_eq!(ptx_source(5, 32, 32, Shfl::Up(34)), 3);
    // shfl_xor reads an earlier section, not a later one.
    assert_eq!(ptx_source(9, 32, 8, Shfl::Xor(8)), 1);
    assert_eq!(ptx_source(1, 32, 8, Shfl::Xor(8)), 1);
    // shfl: src modulo width, from the section's start.
    assert_eq!(ptx_source(13, 32, 8, Shfl::Idx(19)), 11);
}

#[test]
fn a_source_outside_the_mask_gives_the_own_value() {
    let warp = WarpBarrier::new(4);
    // A launcher of the test's own, joined when it drops: no pool thread
    // outlives the test (ThreadSanitizer reports one that exits unjoined).
    let got = syncthreads::Launcher::new().launch(2, |block| {
        let lane = block.thread_rank();
        warp.shfl(lane, 0b0011, lane * 10 + 1, 3, 4)
    });
    assert_eq!(got, [1, 11]);
}

#[test]
fn values_larger_than_a_slot_keep_their_buffer() {
    let warp = WarpBarrier::new(2);
    // A launcher of the test's own, joined when it drops: no pool thread
    // outlives the test (ThreadSanitizer reports one that exits unjoined).
    let got = syncthreads::Launcher::new().launch(2, |block| {
        let lane = block.thread_rank();
        let mut last = [0u8; 300];
        for round in 0..50u8 {
            last = warp.shfl_xor(lane, 0b11, [round ^ lane as u8; 300], 1, 2);
            let small = warp.shfl_xor(lane, 0b11, (round, lane as u16), 1, 2);
            assert_eq!(small, (round, 1 - lane as u16));
        }
        last[299]
    });
    assert_eq!(got, [49 ^ 1, 49]);
}

#[test]
fn misuse_panics_name_the_call_and_the_numbers() {
    let warp = WarpBarrier::new(8);
    assert_eq!(
        panic_of(|| warp.shfl(0, 0xff, 1u32, 0, 3)),
        "syncthreads: WarpBarrier::shfl(lane 0, mask 0xff): width 3 must be a power of two in 1 ..= 8 (the group's lanes)"
    );
    assert!(panic_of(|| warp.shfl_down(0, 0xff, 1u32, 0, 16)).contains("width 16 must be"));
    assert!(panic_of(|| warp.shfl_up(0, 0xff, 1u32, 0, 0)).contains("width 0 must be"));
    assert_eq!(
        panic_of(|| warp.ballot(3, 0x5, true)),
        "syncthreads: WarpBarrier::ballot(lane 3, mask 0x5): lane 3 is not in its own mask"
    );
    assert!(panic_of(|| warp.reduce_add(8, 0x1, 1u32))
        .contains("WarpBarrier::reduce_add(lane 8, mask 0x1): lane 8 is out of range"));
    assert!(
        panic_of(|| warp.match_any(0, 0x101, 1u32)).contains("the mask names lanes (0x100) beyond")
    );
    // Nothing changed: the lanes sync as before.
    assert_eq!(
        format!("{warp:?}"),
        "WarpBarrier { synced: [0, 0, 0, 0, 0, 0, 0, 0] }"
    );
}

#[test]
fn a_second_thread_on_a_lane_in_a_collective_panics() {
    let warp = WarpBarrier::new(2);
    let entered = std::sync::Barrier::new(2);
    watchdog(
        60,
        || format!("{warp:?}"),
        || {
            std::thread::scope(|s| {
                s.spawn(|| {
                    // Lane 0 waits in its collective until lane 1 comes.
                    assert_eq!(warp.shfl(0, 0b11, 5u32, 1, 2), 7);
                });
                // Wait until lane 0 has arrived (its count is 1), then act as lane 0 too.
                while format!("{warp:?}") != "WarpBarrier { synced: [1, 0] }" {
                    std::thread::yield_now();
                }
                let message = panic_of(|| warp.shfl(0, 0b11, 6u32, 1, 2));
                assert!(
                    message.contains("lane 0 is inside a collective on another thread"),
                    "{message}"
                );
                let _ = &entered;
                assert_eq!(warp.shfl(1, 0b11, 7u32, 0, 2), 5);
            });
        },
    );
}
