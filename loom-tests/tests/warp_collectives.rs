//! The warp collectives' slots (docs/design/warp-collectives.md): a value
//! rides its lane's arrival, and a slot is written again only after every
//! reader of its last round has read it, although nobody leads a round.
//! The values are a padded tuple, which lives in the lanes' value slots
//! (loom `UnsafeCell`s inside the crate): a write that races a read fails
//! the model, and so does a read of the wrong round's value.
//!
//! One model per hazard, each naming its cases:
//! - a fast lane's next collectives while the slow lane has not read yet:
//!   the fast lane publishes round 2 before or after the slow lane read
//!   round 1 (its round-3 write must wait);
//! - two disjoint masks at once: one pair's lanes arrive between the other
//!   pair's, or not;
//! - a mask change between rounds: a lane that left the mask still reads
//!   the slot that the lane it left reuses, which must wait for its `done`
//!   (the slow reuse check waits, or finds it done, or finds it arrived again).

mod common;
use common::{model_reaching_bounded, Order};
use loom::{sync::Arc, thread};
use syncthreads::WarpBarrier;

/// A value of the slot path: padded, so it never rides the lane word.
fn value(round: u8, lane: usize) -> (u8, u32) {
    (round, 100 * lane as u32 + round as u32)
}

const FAST_LANE: &[&str] = &[
    "lane 1 entered round 2 before lane 0 read round 1",
    "lane 0 read round 1 before lane 1 entered round 2",
];

#[test]
fn a_fast_lane_waits_for_a_slow_reader_before_reusing_its_slot() {
    // Bound 1: three rounds of two lanes; both cases need one preemption
    // at most (bound 2 explores some fifty times more for nothing new).
    model_reaching_bounded(1, FAST_LANE, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let order = Arc::new([Order::default(), Order::default()]);
        let lane1 = {
            let (warp, order) = (warp.clone(), order.clone());
            thread::spawn(move || {
                for round in 1..=3u8 {
                    if round == 2 {
                        // Ticket of lane 1's round-2 publication.
                        order[1].set(order[0].get() + 1);
                    }
                    let got = warp.shfl_xor(1, 0b11, value(round, 1), 1, 2);
                    assert_eq!(got, value(round, 0));
                }
            })
        };
        for round in 1..=3u8 {
            let got = warp.shfl_xor(0, 0b11, value(round, 0), 1, 2);
            assert_eq!(got, value(round, 1));
            if round == 1 {
                // Lane 0 read round 1: 1 if lane 1 had not yet published round 2.
                order[0].set(1);
            }
        }
        lane1.join().unwrap();
        // order[1] is 2 if lane 0 had read round 1 when lane 1 published round 2.
        reach.either(
            order[1].get() == 1,
            "lane 1 entered round 2 before lane 0 read round 1",
            "lane 0 read round 1 before lane 1 entered round 2",
        );
        let _ = reach.events();
    });
}

const DISJOINT: &[&str] = &[
    "the pairs' arrivals interleaved",
    "one pair arrived before the other",
];

#[test]
fn two_disjoint_masks_exchange_at_the_same_time() {
    // Four lanes, pairs {0, 1} and {2, 3}, one collective each: a shuffle
    // of slot values in the low pair, a ballot in the high pair. Bound 1:
    // four threads; the interleaving needs one preemption at most.
    model_reaching_bounded(1, DISJOINT, |reach| {
        let warp = Arc::new(WarpBarrier::new(4));
        let order = Arc::new(Order::default());
        let arrivals = Arc::new([Order::default(), Order::default(), Order::default(), Order::default()]);
        let lane = |me: usize| {
            let (warp, order, arrivals) = (warp.clone(), order.clone(), arrivals.clone());
            move || {
                arrivals[me].set(order.get() + 1);
                order.bump();
                if me < 2 {
                    let got = warp.shfl(me, 0b0011, value(1, me), 1 - me, 2);
                    assert_eq!(got, value(1, 1 - me));
                } else {
                    assert_eq!(warp.ballot(me, 0b1100, me == 3), 0b1000);
                }
            }
        };
        let others: Vec<_> = (1..4).map(|me| thread::spawn(lane(me))).collect();
        lane(0)();
        for other in others {
            other.join().unwrap();
        }
        let t: Vec<usize> = arrivals.iter().map(Order::get).collect();
        let (low, high) = ((t[0].min(t[1]), t[0].max(t[1])), (t[2].min(t[3]), t[2].max(t[3])));
        reach.either(
            low.1 < high.0 || high.1 < low.0,
            "one pair arrived before the other",
            "the pairs' arrivals interleaved",
        );
        assert_eq!(
            format!("{:?}", *warp),
            "WarpBarrier { synced: [1, 1, 1, 1] }"
        );
        let _ = reach.events();
    });
}

const MASK_CHANGE: &[&str] = &[
    "event:warp-reuse-waited-for-a-reader",
    "event:warp-reuse-reader-done",
    "event:warp-reuse-reader-arrived-again",
];

#[test]
fn a_mask_change_waits_for_the_reader_that_left() {
    // Round 1: lanes 0 and 1 exchange. Round 2: each alone. Round 3: lane 0
    // alone again reuses its round-1 slot, which lane 1 may still be
    // reading; lane 1's last sync (alone) never waited for lane 0, so only
    // the slow reuse check stands between them.
    model_reaching_bounded(2, MASK_CHANGE, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let lane1 = {
            let warp = warp.clone();
            thread::spawn(move || {
                assert_eq!(warp.shfl(1, 0b11, value(1, 1), 0, 2), value(1, 0));
                assert_eq!(warp.shfl(1, 0b10, value(2, 1), 0, 2), value(2, 1));
            })
        };
        assert_eq!(warp.shfl(0, 0b11, value(1, 0), 1, 2), value(1, 1));
        assert_eq!(warp.shfl(0, 0b01, value(2, 0), 1, 2), value(2, 0));
        assert_eq!(warp.shfl(0, 0b01, value(3, 0), 0, 2), value(3, 0));
        lane1.join().unwrap();
        let _ = reach.events();
    });
}
