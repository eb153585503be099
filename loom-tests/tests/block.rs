//! `BlockBarrier` (`__syncthreads*`): every thread of a phase gets the same
//! `sync_count` result, consecutive phases never mix their predicates, and
//! `sync` publishes the writes made before it. Over three phases the model
//! races both edges of the counter clears (block.rs): the leader of phase 0
//! clears phase 2's counter while phase 2's adds may be near, and the leader
//! of phase 2 clears phase 0's counter while phase 0's readers may be late.
//! (Five racing phases, to see a cleared counter reused, grow past the
//! suite's budget even at preemption bound 2: the five-phase models below let
//! only three phases race; `tests/block.rs` covers reuse over thousands of
//! phases.)

mod common;
use common::{model_reaching_bounded, quiet_expected_panics, Reach, Slots};
use loom::{sync::Arc, thread};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{BlockBarrier, BlockSeat};

// Every sync of these models goes through the helpers below, one call site
// per kind and receiver, so all threads of a phase sync at the same site:
// with the `diagnostics` feature, whose divergent-sync check panics when a
// phase's syncs come from two call sites, the models run as they do
// without it (the check itself has its models in `diagnostics.rs`).

fn sync(block: &BlockBarrier) {
    block.sync()
}

fn sync_count(block: &BlockBarrier, pred: bool) -> usize {
    block.sync_count(pred)
}

fn sync_or(block: &BlockBarrier, pred: bool) -> bool {
    block.sync_or(pred)
}

fn seat_sync(seat: &BlockSeat<'_>) {
    seat.sync()
}

fn seat_sync_count(seat: &BlockSeat<'_>, pred: bool) -> usize {
    seat.sync_count(pred)
}

fn seat_sync_or(seat: &BlockSeat<'_>, pred: bool) -> bool {
    seat.sync_or(pred)
}

const PHASES: usize = 3;

/// Thread `me`'s predicate in phase `k`; with 2 threads the true ones per
/// phase are 2, 1, 0.
fn pred(me: usize, k: usize) -> bool {
    (me + k) % 4 < 2
}

fn expected_count(threads: usize, k: usize) -> usize {
    (0..threads).filter(|&t| pred(t, k)).count()
}

/// The cases of the models whose threads all sync alike: a sync slept in
/// the parking lot until the phase's last arrival woke it, and a sync
/// about to sleep found its phase completed under the lot's lock (the
/// completer came in between). Who leads a phase leaves no outside trace
/// (the counts pin the rest). One layout for each: every thread runs the
/// same syncs on the same block, so a swap explores the same schedules.
const PARKING: &[&str] = &["event:park-sleeps", "event:park-refused"];

fn parking(reach: &Reach) {
    let _ = reach.events();
}

#[test]
fn sync_count_per_phase_never_mixes_phases() {
    // Capped at 1 preemption: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(1, PARKING, |reach| {
        let block = Arc::new(BlockBarrier::new(2));
        let other = {
            let block = block.clone();
            thread::spawn(move || {
                (0..PHASES)
                    .map(|k| sync_count(&block, pred(1, k)))
                    .collect::<Vec<_>>()
            })
        };
        let mine: Vec<_> = (0..PHASES)
            .map(|k| sync_count(&block, pred(0, k)))
            .collect();
        let theirs = other.join().unwrap();
        let expected: Vec<_> = (0..PHASES).map(|k| expected_count(2, k)).collect();
        assert_eq!(expected, [2, 1, 0]);
        assert_eq!(mine, expected);
        assert_eq!(theirs, expected);
        parking(reach);
    });
}

#[test]
fn three_threads_agree_on_sync_and_or() {
    // Capped at 1 preemption: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(1, PARKING, |reach| {
        let block = Arc::new(BlockBarrier::new(3));
        let others: Vec<_> = (1..3)
            .map(|me| {
                let block = block.clone();
                thread::spawn(move || sync_or(&block, me == 2))
            })
            .collect();
        assert!(
            sync_or(&block, false),
            "lane 2's true predicate is seen by all"
        );
        for other in others {
            assert!(other.join().unwrap());
        }
        parking(reach);
    });
}

#[test]
fn sync_publishes_writes() {
    // Capped at 1 preemption: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(1, PARKING, |reach| {
        let shared = Arc::new((BlockBarrier::new(2), Slots::new(4)));
        let other = {
            let shared = shared.clone();
            thread::spawn(move || {
                let (block, slots) = &*shared;
                for k in 0..PHASES {
                    slots.set((k % 2) * 2 + 1, k);
                    sync(block);
                    assert_eq!(slots.get((k % 2) * 2), k);
                }
            })
        };
        let (block, slots) = &*shared;
        for k in 0..PHASES {
            slots.set((k % 2) * 2, k);
            sync(block);
            assert_eq!(slots.get((k % 2) * 2 + 1), k);
        }
        other.join().unwrap();
        parking(reach);
    });
}

/// Plain syncs between counting ones, through seats: a plain sync's leader
/// stores a counter's clear only if the counter holds a count (block.rs,
/// step 5), and a seat takes its phase from its own record, not the word.
/// Phase 0 (`sync_count`): its leader finds phase 2's counter at 0 and skips
/// the store; phase 1 (`sync`); phase 2 (`sync_or`, on that counter): its
/// leader, either seat, clears phase 0's count of 2; seat 1 then leaves,
/// and seat 0 syncs phase 3 (`sync`, whose clear finds 0) and phase 4
/// (`sync_count`, on phase 0's counter) alone: every result is its phase's
/// own. With the clear always skipped, phase 4 counts phase 0's predicates
/// too. Three phases race, as in `sync_count_per_phase_never_mixes_phases`,
/// at a preemption bound capped at 2 (with all five racing, the schedules
/// grow past the suite's budget even at bound 1): the leader's load needs
/// no preemption to read the count it must clear.
#[test]
fn plain_syncs_between_counting_ones_leave_every_counter_to_its_phase() {
    model_reaching_bounded(2, PARKING, |reach| {
        let block = Arc::new(BlockBarrier::new(2));
        let other = {
            let block = block.clone();
            thread::spawn(move || {
                let seat = block.seat(1);
                let counts = (
                    seat_sync_count(&seat, true),
                    seat_sync(&seat),
                    seat_sync_or(&seat, true),
                );
                drop(seat); // leaves in phase 3
                counts
            })
        };
        let seat = block.seat(0);
        assert_eq!(seat_sync_count(&seat, true), 2, "phase 0");
        seat_sync(&seat); // phase 1
        assert!(
            seat_sync_or(&seat, false),
            "phase 2: seat 1's true predicate"
        );
        assert_eq!(other.join().unwrap(), (2, (), true));
        seat_sync(&seat); // phase 3, alone
        assert_eq!(
            seat_sync_count(&seat, true),
            1,
            "phase 4: phase 0's counter, cleared"
        );
        parking(reach);
    });
}

/// A seat that leaves arrives without a `sync*`, so when its leave
/// completes a phase nobody leads that phase and nobody would clear the
/// counter two phases on: the leaving seat clears it itself (block.rs).
/// Seat 1 leaves in phase 2 while seat 0's `sync_count` of phase 2 may
/// arrive before or after the leave; phase 4 reuses phase 0's counter and
/// must count its own predicate only. At a preemption bound capped at 2:
/// the schedule that matters (seat 0 waits in phase 2, seat 1's leave
/// arrives last) needs none, and bound 3 ran for over ten minutes.
///
/// Cases: the `PARKING` ones; seat 0's phase-2 `sync_count` slept there
/// until the leave woke it is the first. One layout: seat 0's part is the
/// main thread's, and the leave lands before or after its phase-2 sync in
/// it.
#[test]
fn a_leaving_seat_clears_the_counter_of_the_phase_it_may_complete() {
    model_reaching_bounded(2, PARKING, |reach| {
        let block = Arc::new(BlockBarrier::new(2));
        let other = {
            let block = block.clone();
            thread::spawn(move || {
                let seat = block.seat(1);
                assert_eq!(seat_sync_count(&seat, true), 2); // phase 0
                seat_sync(&seat); // phase 1
                drop(seat); // leaves in phase 2
            })
        };
        let seat = block.seat(0);
        assert_eq!(seat_sync_count(&seat, true), 2, "phase 0");
        seat_sync(&seat); // phase 1
        assert_eq!(
            seat_sync_count(&seat, true),
            1,
            "phase 2: the leave counts no predicate"
        );
        other.join().unwrap();
        seat_sync(&seat); // phase 3, alone
        assert_eq!(
            seat_sync_count(&seat, true),
            1,
            "phase 4: phase 0's counter, cleared"
        );
        parking(reach);
    });
}

/// A seat whose last sync ended in the poisoned-block panic (and whose
/// thread caught it, as `launch` does) must not clear a counter when it is
/// dropped: its last phase never completed, and a slow thread may still be
/// reading the phase before (block.rs). Seat 0 syncs again (phase 1, which
/// cannot complete) until the main thread poisons the block, then drops;
/// seat 1 may read phase 0's count late. Every thread that returns from
/// phase 0 gets its result.
///
/// Cases: phase 0 completed before the poison (the fast seat then dropped
/// after its phase-1 panic, beside a slow reader), or the poison came
/// first; the slow thread read its phase-0 count, or panicked. One layout:
/// the poison is the main thread's one operation, which loom places
/// before, between and after the seats' (the cases).
#[test]
fn a_seat_of_a_poisoned_block_keeps_a_slow_readers_count() {
    quiet_expected_panics();
    let cases = &[
        "phase 0 completed",
        "the poison came first",
        "the slow thread read its count",
        "the slow thread panicked",
    ];
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, cases, |reach| {
        let block = Arc::new(BlockBarrier::new(2));
        let fast = {
            let block = block.clone();
            thread::spawn(move || {
                let seat = block.seat(0);
                if let Ok(count) = catch_unwind(AssertUnwindSafe(|| seat_sync_count(&seat, true))) {
                    assert_eq!(count, 2, "the fast thread's phase 0");
                    let again = catch_unwind(AssertUnwindSafe(|| seat_sync(&seat)));
                    assert!(again.is_err(), "phase 1 cannot complete without seat 1");
                    drop(seat); // normally: the panic was caught
                    return true;
                }
                drop(seat);
                false
            })
        };
        let slow = {
            let block = block.clone();
            thread::spawn(move || {
                let seat = block.seat(1);
                let read = catch_unwind(AssertUnwindSafe(|| seat_sync_count(&seat, true)));
                if let Ok(count) = read {
                    assert_eq!(count, 2, "the slow thread's phase 0");
                }
                std::mem::forget(seat); // stays a member: phase 1 owes its arrival
                read.is_ok()
            })
        };
        block.poison();
        reach.either(
            fast.join().unwrap(),
            "phase 0 completed",
            "the poison came first",
        );
        reach.either(
            slow.join().unwrap(),
            "the slow thread read its count",
            "the slow thread panicked",
        );
    });
}

/// A seat and a seat-less sync racing for a fresh block's mode (a
/// one-thread block, so that whichever use wins completes its phase
/// alone): exactly one of them wins, the other panics before it changes
/// anything, and the winner's sync completes. Both layouts: the seat on the
/// main thread, then on the spawned one.
#[test]
fn a_seat_and_a_seatless_sync_race_for_the_mode() {
    quiet_expected_panics();
    for seat_on_main in [true, false] {
        common::model_reaching(&["seats won", "seat-less won"], move |reach| {
            let block = Arc::new(BlockBarrier::new(1));
            let by_seat = {
                let block = block.clone();
                move || {
                    catch_unwind(AssertUnwindSafe(|| {
                        let seat = block.seat(0);
                        seat_sync(&seat);
                    }))
                    .is_ok()
                }
            };
            let seatless = {
                let block = block.clone();
                move || catch_unwind(AssertUnwindSafe(|| sync(&block))).is_ok()
            };
            let (seat_won, seatless_won) = if seat_on_main {
                let other = thread::spawn(seatless);
                let seat_won = by_seat();
                (seat_won, other.join().unwrap())
            } else {
                let other = thread::spawn(by_seat);
                let seatless_won = seatless();
                (other.join().unwrap(), seatless_won)
            };
            assert!(seat_won != seatless_won, "exactly one use wins the mode");
            reach.case(if seat_won {
                "seats won"
            } else {
                "seat-less won"
            });
        });
    }
}
