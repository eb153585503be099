//! `WarpBarrier` (`__syncwarp(mask)`): writes before `sync` are visible to the
//! mask's lanes after it, over several rounds; a subset mask synchronizes
//! without the lanes outside it; no lane's wake-up is lost (loom would report
//! a parked lane as a deadlock).

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
fn subset_mask_then_full_mask() {
    model(|| {
        let shared = Arc::new((WarpBarrier::new(3), Slots::new(3)));
        // Lanes 0 and 1 sync on 0b011 while lane 2 syncs alone (0b100); then
        // all three sync on 0b111. CUDA's rule holds: the lanes of a mask have
        // synced equally often before it.
        let lane = |me: usize| {
            let shared = shared.clone();
            move || {
                let (warp, slots) = &*shared;
                slots.set(me, me + 1);
                if me < 2 {
                    warp.sync(me, 0b011);
                    assert_eq!(slots.get(1 - me), 2 - me);
                } else {
                    warp.sync(me, 0b100);
                }
                warp.sync(me, 0b111);
                for other in 0..3 {
                    assert_eq!(slots.get(other), other + 1);
                }
            }
        };
        let others: Vec<_> = (1..3).map(|me| thread::spawn(lane(me))).collect();
        lane(0)();
        for other in others {
            other.join().unwrap();
        }
    });
}
