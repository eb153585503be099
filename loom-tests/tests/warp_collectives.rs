//! The warp collectives' slots (docs/design/warp-collectives.md): a value
//! rides its lane's arrival, and a slot is written again only after every
//! reader of its last round has read it, although nobody leads a round.
//! The values are mostly a padded tuple, which lives in the lanes' value
//! slots (loom `UnsafeCell`s inside the crate): a write that races a read
//! fails the model, and so does a read of the wrong round's value. The
//! word models use `u32`, which rides the lane line: there a read of the
//! wrong round's value fails the model.
//!
//! One model per hazard, each naming its cases:
//! - a fast lane's next collectives while the slow lane has not read yet:
//!   the fast lane publishes round 2 before or after the slow lane read
//!   round 1 (its round-3 write must wait), with a shuffle's slot value
//!   (read during the wait) and with `reduce`'s (read after it);
//! - the same for a word value, which the slow lane reads during its
//!   wait, from the line whose load showed the fast lane arrived: the
//!   fast lane publishes round 2 before or after that, and the slow lane
//!   found it arrived at its first look or after waiting for it;
//! - two disjoint masks at once: one pair's lanes arrive between the other
//!   pair's, or not;
//! - a mask change between rounds: a lane that left the mask still reads
//!   the slot that the lane it left reuses, which must wait for its `done`
//!   (the slow reuse check waits, or finds it done, or finds it arrived again),
//!   with a shuffle's slot value, `reduce`'s (read after the wait) and a
//!   word value;
//! - the same for a vote, whose value is a bit of the lane's word that the
//!   reader takes from the word its wait loads: a lane that left the mask
//!   may not have loaded it yet when the voter's next vote of the same
//!   parity would flip the bit (the same three cases);
//! - a collective publishes what each lane wrote before it, as a `sync`
//!   does: a word value and a plain write ride the arrival (either lane
//!   returns first);
//! - and three programs that break the rules, which may get wrong values
//!   but never a race on a slot: two threads as one lane (the claim: the
//!   second finds the lane busy, or they take turns); a `sync` as a lane on
//!   another thread while its collective runs (the reader's wait is
//!   satisfied by that sync, and the reader must acquire the slot through
//!   its header: the collective sees the sync and panics, or does not, or
//!   takes the next round), and the same two rounds later, where the
//!   reader may see the round's header with the mask of the writer's
//!   earlier round, unless it acquires the header's round (the reader
//!   reads the new value, or its own); a reader whose round is one the writer did not
//!   include it in (it sees that round's header and the writer's next mask,
//!   which names it: it must acquire the slot through the mask, or sees the
//!   round's own mask).

mod common;
use common::{model_reaching_bounded, panic_message, Order, Slots};
use loom::{sync::Arc, thread};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::WarpBarrier;

/// Runs `f`; its panic, if one of a lane used by two threads, as `Err`
/// with the message. Such panics print nothing (a hook installed once).
fn misuse<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_message(info.payload()).contains("(one thread per lane)") {
                default(info);
            }
        }));
    });
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_message(&*payload))
}

/// A value of the slot path: padded, so it never rides the lane word.
fn value(round: u8, lane: usize) -> (u8, u32) {
    (round, 100 * lane as u32 + round as u32)
}

const FAST_LANE: &[&str] = &[
    "lane 1 entered round 2 before lane 0 read round 1",
    "lane 0 read round 1 before lane 1 entered round 2",
];

/// Two lanes, three rounds of `exchange` (a lane, a round: what the lane
/// got), each checked against `expected` (a round, a lane); `cases[0]` is
/// "lane 1 entered round 2 before lane 0's round 1 returned", `cases[1]`
/// the other order. A lane that reused its slot or word for round 3 before
/// the slow lane read round 1 would hand that lane round 3's value.
fn fast_lane_against_a_slow_reader<T: PartialEq + std::fmt::Debug + 'static>(
    cases: &'static [&'static str],
    exchange: fn(&WarpBarrier, usize, u8) -> T,
    expected: fn(usize, u8) -> T,
) {
    model_reaching_bounded(1, cases, move |reach| {
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
                    assert_eq!(exchange(&warp, 1, round), expected(1, round));
                }
            })
        };
        for round in 1..=3u8 {
            assert_eq!(exchange(&warp, 0, round), expected(0, round));
            if round == 1 {
                // Lane 0's round 1 returned: 1 if lane 1 had not yet published round 2.
                order[0].set(1);
            }
        }
        lane1.join().unwrap();
        reach.either(order[1].get() == 1, cases[0], cases[1]);
        let _ = reach.events();
    });
}

#[test]
fn a_fast_lane_waits_for_a_slow_reader_before_reusing_its_slot() {
    // Bound 1: three rounds of two lanes; both cases need one preemption
    // at most (bound 2 explores some fifty times more for nothing new).
    fast_lane_against_a_slow_reader(
        FAST_LANE,
        |warp, lane, round| warp.shfl_xor(lane, 0b11, value(round, lane), 1, 2),
        |lane, round| value(round, 1 - lane),
    );
}

/// `reduce`'s operation in the slot models read after the wait: each
/// lane's value shows in the result, so a read of the wrong round's value
/// (or of nothing) fails the model.
fn fold(a: (u8, u32), b: (u8, u32)) -> (u8, u32) {
    (a.0 * 16 + b.0, a.1 * 1000 + b.1)
}

#[test]
fn a_fast_lane_waits_for_a_slow_reader_after_its_wait() {
    // The model above with `reduce` of slot values, which a lane reads
    // after its wait (a shuffle reads its one source during it), on both
    // lanes. Bound 1, as above.
    fast_lane_against_a_slow_reader(
        FAST_LANE,
        |warp, lane, round| warp.reduce(lane, 0b11, value(round, lane), fold),
        |_, round| fold(value(round, 0), value(round, 1)),
    );
}

const FAST_WORD: &[&str] = &[
    "lane 1 entered round 2 before lane 0's round 1 returned",
    "lane 0's round 1 returned before lane 1 entered round 2",
    "event:warp-took-a-lane-found-caught-up",
    "event:warp-took-a-lane-it-waited-for",
];

#[test]
fn a_fast_lane_waits_for_a_slow_word_reader_before_reusing_its_word() {
    // As the model above, with a word value (`u32`), which rides the lane
    // line and is read during the wait, right after the load that showed
    // its lane arrived. Bound 1, as above.
    fast_lane_against_a_slow_reader(
        FAST_WORD,
        |warp, lane, round| warp.shfl_xor(lane, 0b11, word(lane, round), 1, 2),
        |lane, round| word(1 - lane, round),
    );
}

/// A word value of the models above: a `u32`, which rides the lane line.
fn word(lane: usize, round: u8) -> u32 {
    100 * lane as u32 + u32::from(round)
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
        let arrivals = Arc::new([
            Order::default(),
            Order::default(),
            Order::default(),
            Order::default(),
        ]);
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
        let (low, high) = (
            (t[0].min(t[1]), t[0].max(t[1])),
            (t[2].min(t[3]), t[2].max(t[3])),
        );
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

#[test]
fn a_vote_bit_waits_for_the_reader_that_left() {
    // Round 1: lanes 0 and 1 vote, lane 0 true. Round 2: each alone. Round
    // 3: lane 0 alone votes false in the bit of round 1's parity, which lane
    // 1's round-1 wait may not have loaded yet; lane 1's last vote (alone)
    // never waited for lane 0, so only the slow reuse check keeps lane 1's
    // round-1 ballot from seeing lane 0's round-3 vote.
    model_reaching_bounded(2, MASK_CHANGE, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let lane1 = {
            let warp = warp.clone();
            thread::spawn(move || {
                assert_eq!(warp.ballot(1, 0b11, false), 0b01);
                assert_eq!(warp.ballot(1, 0b10, true), 0b10);
            })
        };
        assert_eq!(warp.ballot(0, 0b11, true), 0b01);
        assert_eq!(warp.ballot(0, 0b01, true), 0b01);
        assert_eq!(warp.ballot(0, 0b01, false), 0);
        lane1.join().unwrap();
        let _ = reach.events();
    });
}

#[test]
fn a_mask_change_waits_for_the_word_reader_that_left() {
    // The same program with a word value (`u32`): lane 1 reads lane 0's
    // round-1 word during its wait, right after the load that showed lane
    // 0 arrived; lane 0 may meanwhile finish round 1, sync alone in round
    // 2 and write the same parity's word in round 3, which only the slow
    // reuse check keeps from landing between that load and the read.
    model_reaching_bounded(2, MASK_CHANGE, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let lane1 = {
            let warp = warp.clone();
            thread::spawn(move || {
                assert_eq!(warp.shfl(1, 0b11, 11u32, 0, 2), 10);
                assert_eq!(warp.shfl(1, 0b10, 21u32, 0, 2), 21);
            })
        };
        assert_eq!(warp.shfl(0, 0b11, 10u32, 1, 2), 11);
        assert_eq!(warp.shfl(0, 0b01, 20u32, 1, 2), 20);
        assert_eq!(warp.shfl(0, 0b01, 30u32, 0, 2), 30);
        lane1.join().unwrap();
        let _ = reach.events();
    });
}

#[test]
fn a_mask_change_waits_for_the_reader_that_left_after_its_wait() {
    // The mask-change program with `reduce` of slot values, read after the
    // wait: lane 1's round-1 read of lane 0's slot may come after lane 0
    // finished round 1, synced alone and reached its round-3 write.
    model_reaching_bounded(2, MASK_CHANGE, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let lane1 = {
            let warp = warp.clone();
            thread::spawn(move || {
                let both = fold(value(1, 0), value(1, 1));
                assert_eq!(warp.reduce(1, 0b11, value(1, 1), fold), both);
                assert_eq!(warp.reduce(1, 0b10, value(2, 1), fold), value(2, 1));
            })
        };
        let both = fold(value(1, 0), value(1, 1));
        assert_eq!(warp.reduce(0, 0b11, value(1, 0), fold), both);
        assert_eq!(warp.reduce(0, 0b01, value(2, 0), fold), value(2, 0));
        assert_eq!(warp.reduce(0, 0b01, value(3, 0), fold), value(3, 0));
        lane1.join().unwrap();
        let _ = reach.events();
    });
}

const PUBLISH: &[&str] = &["lane 0 returned first", "lane 1 returned first"];

#[test]
fn a_collective_publishes_what_each_lane_wrote_before_it() {
    // Two lanes, one word shuffle: each lane's plain write before it is
    // read by the other after it, as after a sync. Bound 1: two threads.
    model_reaching_bounded(1, PUBLISH, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let data = Arc::new(Slots::new(2));
        let (ticket, first) = (Arc::new(Order::default()), Arc::new(Order::default()));
        let lane = |me: usize| {
            let (warp, data) = (warp.clone(), data.clone());
            let (ticket, first) = (ticket.clone(), first.clone());
            move || {
                data.set(me, 10 + me);
                let got = warp.shfl_xor(me, 0b11, 7 + me as u32, 1, 2);
                if ticket.get() == 0 {
                    first.set(me);
                }
                ticket.bump();
                assert_eq!(got, 7 + (1 - me) as u32);
                assert_eq!(data.get(1 - me), 10 + (1 - me));
            }
        };
        let lane1 = thread::spawn(lane(1));
        lane(0)();
        lane1.join().unwrap();
        reach.either(
            first.get() == 0,
            "lane 0 returned first",
            "lane 1 returned first",
        );
    });
}

const TWO_THREADS: &[&str] = &[
    "the second thread found the lane busy",
    "the threads took turns",
];

#[test]
fn two_threads_as_one_lane_never_write_one_slot_at_once() {
    // A one-lane group, two threads in a collective as lane 0 (slot values):
    // the claim lets one in at a time, and the second, if it comes after,
    // sees the first's count and slot writes (a stale count would give it
    // the same round, so the same slot). Bound 1: two threads.
    model_reaching_bounded(1, TWO_THREADS, |reach| {
        let warp = Arc::new(WarpBarrier::new(1));
        let other = {
            let warp = warp.clone();
            thread::spawn(move || misuse(|| warp.shfl(0, 0b1, value(1, 1), 0, 1)))
        };
        let mine = misuse(|| warp.shfl(0, 0b1, value(1, 0), 0, 1));
        let theirs = other.join().unwrap();
        match (&mine, &theirs) {
            (Ok(a), Ok(b)) => {
                assert_eq!((*a, *b), (value(1, 0), value(1, 1)));
                assert_eq!(format!("{:?}", *warp), "WarpBarrier { synced: [2] }");
                reach.case("the threads took turns");
            }
            (Ok(_), Err(why)) | (Err(why), Ok(_)) => {
                assert!(
                    why.contains("is inside a collective on another thread"),
                    "{why}"
                );
                reach.case("the second thread found the lane busy");
            }
            (Err(a), Err(b)) => panic!("both panicked: {a}; {b}"),
        }
    });
}

const SYNC_DURING: &[&str] = &[
    "the collective saw the other thread's sync and panicked",
    "the collective arrived before the other thread's sync",
    "the collective took the round after the other thread's sync",
];

#[test]
fn a_sync_on_another_thread_during_a_collective_never_races_its_slot() {
    // Lane 1's collective (thread A) and a sync as lane 1 alone (thread B),
    // lane 0 reading lane 1's slot. Lane 0's wait may be satisfied by B's
    // sync, which releases nothing of A's: lane 0 then reads A's slot only
    // through A's header (its `Acquire` on the round). A may read the count
    // before B raised it and then panics at its arrival. Lane 0 syncs once
    // more alone, so that an A in the round after B's never hangs. Bound 1:
    // A stops between its header and its arrival once.
    model_reaching_bounded(1, SYNC_DURING, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let a = {
            let warp = warp.clone();
            thread::spawn(move || misuse(|| warp.shfl(1, 0b11, value(1, 1), 0, 2)))
        };
        let b = {
            let warp = warp.clone();
            thread::spawn(move || warp.sync(1, 0b10))
        };
        let got = warp.shfl(0, 0b11, value(1, 0), 1, 2);
        assert!(got == value(1, 1) || got == value(1, 0), "{got:?}");
        warp.sync(0, 0b01);
        b.join().unwrap();
        match a.join().unwrap() {
            Ok(_) => reach.either(
                format!("{:?}", *warp) == "WarpBarrier { synced: [2, 2] }" && got == value(1, 1),
                "the collective arrived before the other thread's sync",
                "the collective took the round after the other thread's sync",
            ),
            Err(why) => {
                assert!(
                    why.contains("synced on another thread during this call"),
                    "{why}"
                );
                reach.case("the collective saw the other thread's sync and panicked");
            }
        }
    });
}

const FOREIGN_ROUND: &[&str] = &[
    "the reader saw the writer's next mask and read its value",
    "the reader saw the round's own mask",
];

#[test]
fn a_reader_left_out_of_a_round_reads_a_slot_only_through_its_mask() {
    // Lane 1 shuffles alone in round 1, syncs alone in round 2, and in round
    // 3 shuffles with lane 0, reusing its round-1 slot with no reader to
    // wait for (lane 0 was not in round 1's mask). Lane 0 breaks CUDA's
    // rule: its round 1 names lane 1. It may see round 1's header with
    // round 3's mask, which names it, and read round 3's value: only the
    // `Acquire` on the mask orders lane 1's slot write before that read.
    // Bound 1: lane 1 stops between its mask and its round once.
    model_reaching_bounded(1, FOREIGN_ROUND, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let lane1 = {
            let warp = warp.clone();
            thread::spawn(move || {
                assert_eq!(warp.shfl(1, 0b10, value(1, 1), 1, 2), value(1, 1));
                warp.sync(1, 0b10);
                assert_eq!(warp.shfl(1, 0b11, value(3, 1), 1, 2), value(3, 1));
            })
        };
        let got = warp.shfl(0, 0b11, value(1, 0), 1, 2);
        warp.sync(0, 0b01);
        warp.sync(0, 0b11);
        lane1.join().unwrap();
        assert!(got == value(3, 1) || got == value(1, 0), "{got:?}");
        reach.either(
            got == value(3, 1),
            "the reader saw the writer's next mask and read its value",
            "the reader saw the round's own mask",
        );
    });
}

const SEEN_ROUND: &[&str] = &[
    "the reader read the collective's value",
    "the reader took its own value",
];

#[test]
fn a_reader_that_sees_a_round_in_a_header_sees_that_rounds_mask() {
    // Lanes 0 and 1 shuffle in round 1 and sync in round 2; in round 3 lane
    // 1 shuffles (thread A) while another thread (B, spawned by lane 0 after
    // round 2) syncs as lane 1 alone, which may satisfy lane 0's round-3
    // wait without releasing A's round-3 stores. Lane 0 may then see A's
    // round-3 header: only the `Acquire` on its round keeps lane 0 from
    // pairing it with round 1's mask (which names lane 0, and whose
    // `Acquire` orders only round 1's slot write) and reading the slot that
    // A is writing. A may see B's sync and panic, or take round 4; lane 0
    // syncs once more alone so that A never hangs. Bound 1: A stops between
    // its header and its arrival once.
    model_reaching_bounded(1, SEEN_ROUND, |reach| {
        let warp = Arc::new(WarpBarrier::new(2));
        let a = {
            let warp = warp.clone();
            thread::spawn(move || {
                assert_eq!(warp.shfl(1, 0b11, value(1, 1), 0, 2), value(1, 0));
                warp.sync(1, 0b11);
                let _ = misuse(|| warp.shfl(1, 0b11, value(3, 1), 0, 2));
            })
        };
        assert_eq!(warp.shfl(0, 0b11, value(1, 0), 1, 2), value(1, 1));
        warp.sync(0, 0b11);
        let b = {
            let warp = warp.clone();
            thread::spawn(move || warp.sync(1, 0b10))
        };
        let got = warp.shfl(0, 0b11, value(3, 0), 1, 2);
        warp.sync(0, 0b01);
        b.join().unwrap();
        a.join().unwrap();
        assert!(got == value(3, 1) || got == value(3, 0), "{got:?}");
        reach.either(
            got == value(3, 1),
            "the reader read the collective's value",
            "the reader took its own value",
        );
    });
}
