//! The warp collectives under shuttle's random schedules: short random
//! programs (tests/warp_model) whose masks change every round, so slots are
//! reused by lanes whose readers left their mask, each lane checking its
//! results against the model. Only built with `--cfg shuttle`;
//! `.ci/shuttle` runs it.
#![cfg(shuttle)]

#[path = "common/shuttle.rs"]
mod schedules;
#[path = "warp_model/mod.rs"]
mod warp_model;

use schedules::check;
use shuttle::sync::Arc;
use shuttle::thread;
use syncthreads::WarpBarrier;
use warp_model::{partition, plan, run_and_check, value};

/// Runs `rounds` rounds of the program `seed` on `lanes` shuttle threads.
fn program(lanes: usize, seed: u64, rounds: u64) {
    let warp = Arc::new(WarpBarrier::new(lanes));
    let lane = |lane: usize| {
        let warp = Arc::clone(&warp);
        move || {
            for round in 0..rounds {
                let masks = partition(seed, round, lanes);
                let mask = *masks
                    .iter()
                    .find(|&&m| m & (1 << lane) != 0)
                    .expect("a partition covers every lane");
                let (call, ty) = plan(seed, round, mask.trailing_zeros() as usize, lanes);
                let values: Vec<u64> = (0..lanes).map(|l| value(seed, round, l)).collect();
                run_and_check(&warp, lane, mask, call, ty, &values, &|| {
                    format!("program {seed} round {round}")
                });
            }
        }
    };
    let others: Vec<_> = (1..lanes).map(|l| thread::spawn(lane(l))).collect();
    lane(0)();
    for other in others {
        other.join().unwrap();
    }
}

#[test]
fn random_programs_on_three_lanes() {
    check(|| program(3, 11, 8));
}

#[test]
fn random_programs_on_four_lanes() {
    check(|| program(4, 12, 6));
}
