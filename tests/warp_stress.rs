//! Random programs of warp collectives: each round splits the lanes into
//! random disjoint masks (whole group, single lanes, ranges, random
//! subsets), each mask runs a random collective (random width, delta,
//! source, value type), and every lane checks its result against the model
//! (tests/warp_model). Masks change every round, so slots are reused by
//! lanes whose readers have left their mask. Under a watchdog.

mod common;
#[path = "warp_model/mod.rs"]
mod warp_model;

use common::watchdog;

/// Rounds per program: fewer under Miri (`MIRI` shrinks the whole test).
const ROUNDS: u64 = if cfg!(miri) { 24 } else { 400 };

fn programs(lanes: usize, seeds: std::ops::Range<u64>, rounds: u64) {
    for seed in seeds {
        watchdog(
            120,
            || format!("program {seed} on {lanes} lanes"),
            || warp_model::run_program(lanes, seed, rounds),
        );
    }
}

#[test]
fn random_programs_on_four_lanes() {
    programs(4, 0..if cfg!(miri) { 1 } else { 20 }, ROUNDS);
}

#[test]
fn random_programs_on_eight_lanes() {
    programs(8, 100..if cfg!(miri) { 101 } else { 110 }, ROUNDS);
}

#[test]
#[cfg_attr(miri, ignore = "32 threads: too slow under Miri")]
fn random_programs_on_thirty_two_lanes() {
    programs(32, 200..204, ROUNDS);
}

#[test]
#[cfg_attr(miri, ignore = "64 threads: too slow under Miri")]
fn random_programs_on_sixty_four_lanes() {
    programs(64, 300..302, ROUNDS / 2);
}

#[test]
fn random_programs_on_three_lanes() {
    programs(3, 400..if cfg!(miri) { 401 } else { 420 }, ROUNDS);
}
