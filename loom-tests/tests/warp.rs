//! `WarpBarrier` (`__syncwarp(mask)`): writes before `sync` are visible to the
//! mask's lanes after it, over several rounds; a subset mask synchronizes
//! without the lanes outside it; no lane's wake-up is lost (loom would report
//! a parked lane as a deadlock). Two lanes only: each `sync` reads every lane
//! of its mask, so a third lane multiplies the schedules beyond the budget.
//!
//! Cases (each model): a lane's sync slept in the parking lot until the
//! other lane's sync woke it, and a lane about to sleep found the sync
//! done under the lot's lock (the other lane came in between). One layout:
//! the two-lane models run one program on both lanes; the one-lane part's
//! lanes run different programs, but the interleaving it is about needs
//! lanes 1 and 2 first, which the main thread's first sync (alone, it
//! never waits) hands them at no cost in preemptions.

mod common;
use common::{model_reaching_bounded, Slots};
use loom::{sync::Arc, thread};
use syncthreads::WarpBarrier;

const ROUNDS: usize = 3;

const PARKING: &[&str] = &["event:park-sleeps", "event:park-refused"];

#[test]
fn full_mask_sync_publishes_writes() {
    model_reaching_bounded(2, PARKING, |reach| {
        let shared = Arc::new((WarpBarrier::new(2), Slots::new(4)));
        let lane = |me: usize| {
            let shared = shared.clone();
            move || {
                let (warp, slots) = &*shared;
                for r in 0..ROUNDS {
                    // Double-buffered by round parity, as in split_arrive_wait.
                    slots.set((r % 2) * 2 + me, r * 10 + me);
                    warp.sync(me, 0b11);
                    assert_eq!(slots.get((r % 2) * 2 + (1 - me)), r * 10 + 1 - me);
                }
            }
        };
        let other = thread::spawn(lane(1));
        lane(0)();
        other.join().unwrap();
        let _ = reach.events();
    });
}

#[test]
fn subset_mask_does_not_wait_for_lanes_outside_it() {
    model_reaching_bounded(2, PARKING, |reach| {
        // A 3-lane warp whose lane 2 never syncs: lanes 0 and 1 sync on 0b011
        // for several rounds without waiting for it.
        let shared = Arc::new((WarpBarrier::new(3), Slots::new(4)));
        let lane = |me: usize| {
            let shared = shared.clone();
            move || {
                let (warp, slots) = &*shared;
                for r in 0..ROUNDS - 1 {
                    slots.set((r % 2) * 2 + me, r * 10 + me);
                    warp.sync(me, 0b011);
                    assert_eq!(slots.get((r % 2) * 2 + (1 - me)), r * 10 + 1 - me);
                }
            }
        };
        let other = thread::spawn(lane(1));
        lane(0)();
        other.join().unwrap();
        assert_eq!(
            format!("{:?}", shared.0),
            "WarpBarrier { synced: [2, 2, 0] }"
        );
        let _ = reach.events();
    });
}

/// Issue 10's program, cut to what the bug needs: a one-lane part counts.
/// Lane 0 syncs alone, then with lane 1; lane 1 first syncs with lane 2
/// (whose second, lone sync is left out: a lane may stop syncing). Every
/// pair has synced equally often before, so CUDA's rule holds. If a lone
/// sync did not count, lane 0 would take lane 1's {1,2} sync for the {0,1}
/// one and read lane 1's slot unordered (loom reports the race), and lane 1
/// would then wait for ever (loom reports the deadlock).
///
/// Three lanes that park, and since the models' waits go straight to their
/// park path, every step of each park is a scheduling point: beyond the
/// suite's time at bound 2, so the bound is capped at 1. The bad
/// interleaving needs no preemption at all (lanes 1 and 2 run first), and
/// bound 1 still covers a wake-up racing one park.
#[test]
fn one_lane_part_counts_and_keeps_the_lanes_in_step() {
    model_reaching_bounded(1, PARKING, |reach| {
        let shared = Arc::new((WarpBarrier::new(3), Slots::new(2)));
        let lane1 = {
            let shared = shared.clone();
            thread::spawn(move || {
                let (warp, slots) = &*shared;
                warp.sync(1, 0b110);
                slots.set(1, 11);
                warp.sync(1, 0b011);
                assert_eq!(slots.get(0), 10);
            })
        };
        let lane2 = {
            let shared = shared.clone();
            thread::spawn(move || shared.0.sync(2, 0b110))
        };
        let (warp, slots) = &*shared;
        warp.sync(0, 0b001);
        slots.set(0, 10);
        warp.sync(0, 0b011);
        assert_eq!(slots.get(1), 11);
        lane1.join().unwrap();
        lane2.join().unwrap();
        assert_eq!(format!("{warp:?}"), "WarpBarrier { synced: [2, 2, 1] }");
        let _ = reach.events();
    });
}
