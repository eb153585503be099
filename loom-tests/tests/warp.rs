//! `WarpBarrier` (`__syncwarp(mask)`): writes before `sync` are visible to the
//! mask's lanes after it, over several rounds; a subset mask synchronizes
//! without the lanes outside it; no lane's wake-up is lost (loom would report
//! a parked lane as a deadlock). Two lanes only: each `sync` reads every lane
//! of its mask, so a third lane multiplies the schedules beyond the budget.

mod common;
use common::{model, Slots};
use loom::{sync::Arc, thread};
use mbarrier::WarpBarrier;

const ROUNDS: usize = 3;

#[test]
fn full_mask_sync_publishes_writes() {
    model(|| {
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
    });
}

#[test]
fn subset_mask_does_not_wait_for_lanes_outside_it() {
    model(|| {
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
    });
}
