//! `Team::join` (team.rs, team/ranks.rs): a join racing the arrival that
//! completes the phase, racing a leave at the same node, reviving an empty
//! subtree while a leave climbs past it, landing in the completion
//! window, and reading the table beside a flat seat's refused double
//! arrival. Wherever the join lands, the joined seat is owed in the phase it
//! joined (the others wait for it), its rank is one that is free then, the
//! joiner sees what the phase before published, and the counts end right.

mod common;
use common::{
    counted, model_reaching, model_reaching_bounded, panic_message, quiet_expected_panics, word,
    Order, Slots,
};
use loom::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{Team, TeamShape};

fn odd_phase<F: syncthreads::Completion>(team: &Team<F>) -> bool {
    word(team).contains("phase_parity: true")
}

/// Rank 0 completes phases 0 and 1 (alone, or with the joined seat) and
/// then leaves; the main thread joins (rank 1, one leaf for both), arrives
/// once and leaves. A join after rank 0 left finds the team retired.
///
/// Cases: the join landed in phase 0 or 2, in phase 1, or found the team
/// retired. One layout: the stayer's arrivals land before, around and
/// after the join in it (the cases).
#[test]
fn a_join_races_the_completing_arrival() {
    quiet_expected_panics();
    let cases = &[
        "joined phase 0 or 2",
        "joined phase 1",
        "the team had retired",
    ];
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, cases, |reach| {
        let team = Arc::new(TeamShape::new(2, 0).team_with_capacity(1, 2));
        let slots = Arc::new(Slots::new(1));
        let stayer = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let seat = team.seat(0);
                slots.set(0, 7);
                seat.arrive_and_wait();
                seat.arrive_and_wait();
            })
        };
        match catch_unwind(AssertUnwindSafe(|| team.join())) {
            Ok(joined) => {
                let joined = joined.expect("rank 1 is free");
                assert_eq!(joined.rank(), 1);
                // One look at the word: each is a scheduling point.
                let odd = odd_phase(&team);
                reach.either(odd, "joined phase 1", "joined phase 0 or 2");
                if odd {
                    // Joined phase 1: the join saw phase 0's arrivals.
                    assert_eq!(slots.get(0), 7);
                }
                joined.arrive_and_wait();
            }
            Err(payload) => {
                reach.case("the team had retired");
                let message = panic_message(&*payload);
                assert!(message.contains("the barrier is retired"), "{message}");
            }
        }
        stayer.join().unwrap();
        assert_eq!(
            word(&team),
            if odd_phase(&team) {
                "Barrier { phase_parity: true, pending: 0, expected: 0, tx: 0, poisoned: false }"
            } else {
                "Barrier { phase_parity: false, pending: 0, expected: 0, tx: 0, poisoned: false }"
            }
        );
    });
}

/// Two seats on one node (capacity 4, fan-in 4): seat 1 arrives and leaves
/// at once (its leave folds into phase 0's round at the node, or arrives
/// early in phase 1's), racing a join that attaches rank 2 to the same node
/// (from the round after the joined phase). Seat 0 and the joined seat then
/// meet in every phase; rank 1 is never handed out while it is counted.
///
/// Cases: the join returned before the leave began, the leave returned
/// before the join did. One layout: the leaver's two operations land on
/// either side of the join in it (the cases).
#[test]
fn a_join_races_a_leave_at_the_same_node() {
    let cases = &[
        "the join returned before the leave began",
        "the leave returned before the join",
    ];
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, cases, |reach| {
        let team = Arc::new(TeamShape::new(4, 0).team_with_capacity(2, 4));
        // Outside the model: the leave began; it returned.
        let (began, left) = (Order::new(), Order::new());
        let leaver = {
            let (team, began, left) = (team.clone(), began.clone(), left.clone());
            thread::spawn(move || {
                let seat = team.seat(1);
                drop(seat.arrive());
                began.set(1);
                drop(seat); // leaves from phase 1 on
                left.set(1);
            })
        };
        let stayer = team.seat(0);
        let joined = team.join().expect("ranks 2 and 3 are free");
        if began.get() == 0 {
            reach.case("the join returned before the leave began");
        } else if left.get() == 1 {
            reach.case("the leave returned before the join");
        }
        // Rank 1 is counted in phases 0 and 1: never the joined rank here.
        assert_eq!(joined.rank(), 2);
        let t = stayer.arrive();
        drop(joined.arrive());
        team.wait(t); // phase 0 (the joined seat joined it) or phase 1
        let t = stayer.arrive();
        let u = joined.arrive();
        team.wait(t);
        team.wait(u);
        leaver.join().unwrap();
        // Phase 0 with all three (it cannot complete before seat 0's
        // arrival, so the join is in it), phase 1 with seats 0 and 2.
        assert_eq!(team.missing(), [0, 2]);
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }"
        );
        drop((stayer, joined));
    });
}

/// Capacity 4, fan-in 2: ranks 0 and 1 fill the first leaf, the second
/// leaf is empty (no member, not waited for by the root). One thread holds
/// both seats of the first leaf: it writes, arrives with both in phases 0
/// and 1, then both leave, emptying the leaf, whose last climb (with its
/// leave) goes to the root. The join takes rank 2, revives the empty leaf
/// and attaches it at the root, racing those climbs. The joined seat reads
/// the writes after each wait. A join after both left finds the team
/// retired.
///
/// Cases: the join landed in phase 0 or 2, or found the team retired. A
/// join in phase 1 is not reached at this bound: the pair's thread never
/// waits in phase 1 (its two seats complete it), so stopping it there
/// takes a second preemption besides the one that lets it run before the
/// join; the revival races (the bound's reason below) need none of that.
/// One layout: the pair's arrivals and leaves land before, around and after
/// the join in it (the cases).
#[test]
fn a_join_revives_an_empty_leaf_while_a_leave_climbs() {
    quiet_expected_panics();
    let cases = &["joined phase 0 or 2", "the team had retired"];
    // Capped at 1 preemption: at 2 the patched loom's schedules grow past
    // the suite's budget, and the races it is about (the attach at the root
    // between the pair's climbs, the revival before or after the leaf's
    // last climb) need one preemption each (README.md, "Bounds").
    model_reaching_bounded(1, cases, |reach| {
        let team = Arc::new(TeamShape::new(2, 0).team_with_capacity(2, 4));
        let slots = Arc::new(Slots::new(2));
        let pair = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let (a, b) = (team.seat(0), team.seat(1));
                for p in 0..2 {
                    slots.set(p, p + 1);
                    drop(b.arrive());
                    a.arrive_and_wait();
                }
                b.arrive_and_drop();
                a.arrive_and_drop();
            })
        };
        match catch_unwind(AssertUnwindSafe(|| team.join())) {
            Ok(joined) => {
                let joined = joined.expect("ranks 2 and 3 are free");
                assert_eq!(joined.rank(), 2);
                // Phase 0, 1 or 2 (then with the pair's leaves).
                let odd = odd_phase(&team);
                if !odd {
                    reach.case("joined phase 0 or 2");
                }
                joined.arrive_and_wait();
                assert_eq!(slots.get(odd as usize), odd as usize + 1);
                if !odd {
                    joined.arrive_and_wait();
                    assert_eq!(slots.get(1), 2);
                }
            }
            Err(payload) => {
                reach.case("the team had retired");
                let message = panic_message(&*payload);
                assert!(message.contains("the barrier is retired"), "{message}");
            }
        }
        pair.join().unwrap();
        assert!(
            word(&team).contains("pending: 0, expected: 0"),
            "{}",
            word(&team)
        );
    });
}

/// A join that lands while phase 0's completion function runs waits for
/// phase 1 and joins that one; the completion function's writes are visible
/// to it. Rank 0 completes phase 0 alone, or with the joined seat.
///
/// Cases: the join landed in phase 0, in phase 1, and in the window (it
/// found phase 0 completing and waited it out:
/// `event:op-waits-out-completion`). One layout: the stayer's arrivals
/// land before, inside and after the join in it (the cases).
#[test]
fn a_join_in_the_completion_window_joins_the_next_phase() {
    let cases = &[
        "joined phase 0",
        "joined phase 1",
        "event:op-waits-out-completion",
    ];
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, cases, |reach| {
        let slots = Arc::new(Slots::new(1));
        let runs = Arc::new(AtomicUsize::new(0));
        let team = {
            let (slots, runs) = (slots.clone(), runs.clone());
            Arc::new(
                TeamShape::new(2, 0).team_with_completion_and_capacity(1, 2, move || {
                    // Relaxed: the completions are ordered by the team.
                    let run = runs.fetch_add(1, Ordering::Relaxed);
                    slots.set(0, 100 + run);
                }),
            )
        };
        let stayer = {
            let team = team.clone();
            thread::spawn(move || {
                let seat = team.seat(0);
                seat.arrive_and_wait();
                seat.arrive_and_wait();
                std::mem::forget(seat);
            })
        };
        let joined = team.join().expect("rank 1 is free");
        // One look at the word: each is a scheduling point.
        let odd = odd_phase(&team);
        reach.either(odd, "joined phase 1", "joined phase 0");
        if odd {
            assert_eq!(slots.get(0), 100);
        }
        joined.arrive_and_drop();
        stayer.join().unwrap();
        let _ = reach.events();
        // Relaxed: every run happened-before the join of the stayer.
        assert_eq!(runs.load(Ordering::Relaxed), 2);
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
    });
}

/// A join whose first look at the table straddles phases: it may read the
/// word of phase 0 and then the entries of phase 2, where rank 1 arrived
/// in phases 0 and 1 and left from phase 2 on (its rank is free from phase
/// 3), and rank 0's entry already says 3 (stored before its phase-2
/// arrival): read against phase 0 the table says phase 4, and rank 1 looks
/// free. If the join's RMW lands in phase 2 (before rank 0's phase-2
/// arrival), the look after it finds the team full, and the join leaves
/// again at once (`event:team-join-leaves-again`, the path this model is
/// for: with the first look trusted it panicked, leaving the team owing an
/// arrival); a join that lands in phase 3 takes rank 1, whose seat is
/// dropped before its first arrival. Either way the team ends in phase 3
/// with rank 0 alone, as if the join had not been called.
#[test]
fn a_join_whose_look_straddles_a_completion_finds_the_team_full() {
    // Bound 2 reaches the straddle (the join's word read before phase 0
    // completes, its entries read after rank 0's phase-2 entry, its RMW
    // before rank 0's phase-2 arrival): the main thread's wait for phase 1
    // or 2 is one of the switches, so two preemptions suffice.
    model_reaching_bounded(
        2,
        &[
            "refused at first look",
            "event:team-join-leaves-again",
            "joined phase 3",
        ],
        |reach| {
            let team = Arc::new(Team::with_capacity(2, 2));
            let joiner = {
                let team = team.clone();
                let reach = reach.clone();
                thread::spawn(move || match team.join() {
                    Some(seat) => {
                        assert_eq!(seat.rank(), 1);
                        reach.case("joined phase 3");
                        drop(seat);
                    }
                    None => reach.case("refused at first look"),
                })
            };
            let (first, second) = (team.seat(0), team.seat(1));
            drop(second.arrive());
            drop(first.arrive()); // completes phase 0
            drop(second.arrive());
            drop(second); // leaves from phase 2 on
            first.arrive_and_wait(); // completes phase 1
                                     // Completes phase 2, unless the join landed in it: then the
                                     // join's leaving again does.
            first.arrive_and_wait();
            joiner.join().unwrap();
            std::mem::forget(first);
            assert_eq!(
                word(&team),
                "Barrier { phase_parity: true, pending: 1, expected: 1, tx: 0, poisoned: false }"
            );
        },
    );
}

/// Since a joined seat's leave before its first arrival reaches its leaf
/// before its arrival reaches the word (team.rs, "Joining"), X's leave no
/// longer holds leaf 0's round 1, so Y's phase-1 arrival completes phase 1
/// at once, as the contract wants (X left in phase 0): the join always
/// finds the team retired, and the interleaving below cannot happen (it
/// needed X's leave to climb with Y's phase-1 arrival). The model keeps
/// the sequence, with "retired" its only case.
///
/// Capacity 4, fan-in 2: leaf 0 holds ranks 0 and 1, leaf 1 (ranks 2 and 3)
/// is empty, the root above both waits for leaf 0 alone. Rank 0 (seat Y,
/// its own thread) takes part; the main thread joins rank 1 (seat X) in
/// phase 0, before Y's thread starts, and drops it before its first
/// arrival: its arrival and drop go to the word (phase 0), its leave
/// (`(0, 0, leave)`) to leaf 0's round 1. Y arrives in phases 0 and 1,
/// leaves from phase 2 on, and then joins again on its thread (seat Z).
///
/// The interleaving this is about: Y's phase-1 arrival lands at the leaf
/// before X's leave, so X's leave completes the leaf's round 1 with Y's
/// arrival as its sums (plain) and climbs: its `fetch_add` completes the
/// root's round 1. Before the re-arm, Y's leave (the leaf's round 2, which
/// it empties) climbs and folds into that completed round, taking the
/// root's last member; then Z's join attaches: rank 1 is free from phase 1
/// (X's leave counts in phase 0), so it revives the empty leaf 0 and finds
/// the root completed and member-less (pending 0, no members, the round's
/// sums in): not empty, so the member is counted in that round and the
/// re-arm climbs with the sums (Y's arrival and drop) and keeps the node
/// (`NodeWord::attach`). That takes two preemptions of the main thread
/// (after X's word arrival, and between its `fetch_add` and its re-arm)
/// and a pause of Y's thread between its phase-1 arrival and its leave:
/// Y yields there, and loom runs a yielded thread again only once another
/// has run, so the pause costs no preemption and the plain bound of 2
/// reaches the interleaving (without the yield it takes a third
/// preemption). Nothing outside the crate can see a node's word, so the
/// model's named cases are the join's outcomes; that the attach lands on
/// the completed round without members was checked by hand, counting it in
/// a scratch copy of `Node::attach`, at bounds 2 and 3; with the attach
/// taking that round for an empty node (a revival, its sums lost) the
/// model deadlocks.
///
/// Whatever the order: a join after phase 1 completed (with Y's leave the
/// team retired) panics; a join in phase 1 is in it (its first arrival
/// there: phase 2 then owes it alone), phase 2 completes with it through
/// its leaf, `missing()` names it alone in phase 3, and each phase
/// completes once.
#[test]
fn a_join_attaches_to_a_completed_round_whose_members_all_left() {
    quiet_expected_panics();
    model_reaching(&["retired"], |reach| {
        let (team, runs) = counted(1, 4, 2);
        // Phase 0 owes rank 0, which has not arrived: the join is in it.
        let x = team.join().expect("ranks 1-3 are free");
        assert_eq!(x.rank(), 1);
        let y = {
            let (team, runs, reach) = (team.clone(), runs.clone(), reach.clone());
            thread::spawn(move || {
                let y = team.seat(0);
                y.arrive_and_wait(); // phase 0 (with X's arrival on the word)
                drop(y.arrive()); // phase 1
                thread::yield_now(); // the main thread runs on (see above)
                drop(y); // leaves from phase 2 on
                match catch_unwind(AssertUnwindSafe(|| team.join())) {
                    Ok(z) => {
                        reach.case("joined phase 1");
                        let z = z.expect("rank 1 is free from phase 1");
                        assert_eq!(z.rank(), 1);
                        assert!(odd_phase(&team), "joined phase 1");
                        // Its first arrival, on the word: it completes
                        // phase 1 or the root's climber does.
                        z.arrive_and_wait();
                        // Relaxed: every run happened-before this wait.
                        assert_eq!(runs.load(Ordering::Relaxed), 2);
                        assert_eq!(
                            word(&team),
                            "Barrier { phase_parity: false, pending: 1, expected: 1, tx: 0, poisoned: false }"
                        );
                        z.arrive_and_wait(); // phase 2, through leaf 0 and the root
                                             // Relaxed: as above.
                        assert_eq!(runs.load(Ordering::Relaxed), 3);
                        assert_eq!(team.missing(), [1]);
                        assert_eq!(
                            word(&team),
                            "Barrier { phase_parity: true, pending: 1, expected: 1, tx: 0, poisoned: false }"
                        );
                        drop(z); // leaves from phase 3 on: the team retires
                        true
                    }
                    Err(payload) => {
                        reach.case("retired");
                        let message = panic_message(&*payload);
                        assert!(message.contains("the barrier is retired"), "{message}");
                        false
                    }
                }
            })
        };
        drop(x); // before its first arrival
        let joined = y.join().unwrap();
        // Relaxed: every run happened-before the join of Y's thread. Phases
        // 0-3 if Z joined (Y's leave then counted in phase 1); else phases
        // 0 and 1, and phase 2 too if Y's leave came after phase 1
        // completed (its arrival and drop there retire the team).
        let runs = runs.load(Ordering::Relaxed);
        assert!(
            if joined {
                runs == 4
            } else {
                (2..=3).contains(&runs)
            },
            "{runs} runs"
        );
        assert_eq!(team.missing(), [] as [usize; 0]);
        // Retired in the phase after the last one that ran.
        assert_eq!(
            word(&team),
            format!(
                "Barrier {{ phase_parity: {}, pending: 0, expected: 0, tx: 0, poisoned: false }}",
                runs % 2 == 1
            )
        );
    });
}

/// A flat seat's arrival publishes its entry before the word's RMW decides
/// (`Seat::arrive_flat`); refused as a double arrival, it puts the entry
/// back. Meanwhile the table holds the entry of a phase that starts two
/// after the running one: a join that reads it then must still find the
/// team full. Phase 0 is held open by a tx count; rank 1 arrived in it and
/// left from phase 1 on, so its rank is free from phase 2 only.
///
/// Cases: the join returned before the double arrival was refused, or
/// began after it was refused; the case inside them (the join's look at the
/// entry while it is two phases ahead) has no outside witness: the count
/// pins it (and the wide-phase window's mutant, README.md). One layout:
/// the main thread's one refused arrival lands on either side of the join
/// and inside it.
#[test]
fn a_join_beside_a_refused_flat_double_arrival_finds_the_team_full() {
    quiet_expected_panics();
    let cases = &[
        "the join returned before the refusal",
        "the join began after the refusal",
    ];
    model_reaching(cases, |reach| {
        let team = Arc::new(Team::with_capacity(2, 2));
        let (first, second) = (team.seat(0), team.seat(1));
        team.expect_tx(1);
        drop(first.arrive());
        drop(second.arrive());
        drop(second); // leaves from phase 1 on
                      // Outside the model: the double arrival was refused; the join returned.
        let (refused, joined) = (Order::new(), Order::new());
        let joiner = {
            let (team, reach) = (team.clone(), reach.clone());
            let (refused, joined) = (refused.clone(), joined.clone());
            thread::spawn(move || {
                let after = refused.get() == 1;
                assert!(team.join().is_none(), "rank 1 is free from phase 2 only");
                joined.set(1);
                if after {
                    reach.case("the join began after the refusal");
                }
            })
        };
        let again = catch_unwind(AssertUnwindSafe(|| drop(first.arrive())));
        if joined.get() == 1 {
            reach.case("the join returned before the refusal");
        }
        refused.set(1);
        let message = panic_message(&*again.unwrap_err());
        assert!(
            message.contains("seat 0 already arrived in phase 0"),
            "{message}"
        );
        joiner.join().unwrap();
        assert_eq!(team.missing(), [] as [usize; 0]);
        team.complete_tx(1); // phase 0 completes
        assert_eq!(team.missing(), [0]);
        std::mem::forget(first);
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: true, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
    });
}
