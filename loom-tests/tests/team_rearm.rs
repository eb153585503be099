//! A node's round completed by a plain contribution (one `fetch_add`) and
//! re-armed by a second RMW (team/tree.rs, `Node::add`): what lands in
//! between, a leaver's early fold or a join's attach, is counted in the
//! completed round, its leaver's writes reach the phase its leave counts
//! in, and every phase completes exactly once with the right counts.

mod common;
use common::{counted, model_reaching_bounded, word, Slots};
use loom::{
    sync::{atomic::Ordering, Arc},
    thread,
};

/// Capacity 6, fan-in 2: leaves {0, 1} {2, 3} {4, 5}, inner nodes
/// {leaf 0, leaf 1} and {leaf 2}, the root above both. Ranks 1-3 leave at
/// once, so rank 0 (seat S, main thread) is alone under the first inner
/// node and rank 4 (seat Y, its own thread) under the second. The main
/// thread joins rank 5 (seat X, beside Y) in phase 0 and drops it before
/// its first arrival: its arrival and drop go to the word, its leave
/// (`(0, 0, leave)`) to its leaf's round 1. Y arrives in phases 0 and 1,
/// writes, and leaves from phase 2 on.
///
/// The interleaving this is about: Y's phase-1 arrival lands before X's
/// leave at the leaf, so X's leave completes the leaf's round 1 with Y's
/// arrival as its sums (plain) and climbs: its `fetch_add` completes the
/// second inner node's round 1. Before the re-arm, Y's leave (round 2 of
/// the leaf, which it empties) climbs and folds into that completed round,
/// taking the node's last member: the re-arm climbs with the fold's drop
/// and leave, and it is the only one to carry Y's write on (nothing
/// touches the node again). The main thread reads that write after
/// phase 2 (Y's leave counts there): with a `Relaxed` re-arm it races.
/// Whatever the order, three phases complete once each and phase 3 owes
/// S alone.
///
/// Cases: the interleaving above (a fold landed between a round's
/// completing `fetch_add` and its re-arm, whose CAS then retried:
/// `event:node-rearm-retried`), and which of S and Y completed phase 1
/// (the arrival order at the word). One layout: Y's
/// thread runs every part that races the main thread's, before, between
/// and after them (the cases).
#[test]
fn a_leave_folds_into_a_completed_round_before_its_re_arm() {
    let cases = &[
        "event:node-rearm-retried",
        "Y completed phase 1",
        "S completed phase 1",
    ];
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, cases, |reach| {
        let (team, runs) = counted(5, 6, 2);
        for rank in 1..4 {
            drop(team.seat(rank));
        }
        let s = team.seat(0);
        let slots = Arc::new(Slots::new(1));
        let y = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let y = team.seat(4);
                y.arrive_and_wait();
                drop(y.arrive());
                slots.set(0, 7);
                drop(y); // leaves from phase 2 on
            })
        };
        // Phase 0 cannot complete before S's arrival: the join is in it.
        let x = team.join().expect("rank 5 is free");
        assert_eq!(x.rank(), 5);
        let t = s.arrive();
        drop(x);
        team.wait(t);
        let led = s.arrive_and_wait().is_leader(); // phase 1, with Y
        s.arrive_and_wait(); // phase 2: S alone (Y's leave counts here)
        assert_eq!(slots.get(0), 7);
        y.join().unwrap();
        reach.either(led, "S completed phase 1", "Y completed phase 1");
        let _ = reach.events();
        // Relaxed: every run happened-before the wait that returned above.
        assert_eq!(runs.load(Ordering::Relaxed), 3);
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: true, pending: 1, expected: 1, tx: 0, poisoned: false }"
        );
        std::mem::forget(s);
    });
}

/// One node of two seats (capacity 4, fan-in 4). The main thread holds
/// seat 0: it arrives in phase 0, joins (rank 2) and then drops seat 0
/// (leaving from phase 1 on); seat 1, on its own thread, arrives in phases
/// 0 and 1, and its phase-0 arrival completes the node's round 0 with its
/// `fetch_add` when seat 0's came first. The root's climber has not
/// arrived on the word yet then, so the join can still join phase 0 and
/// hold it open (from its RMW on the word to the joined seat's first
/// arrival): its attach (in round 0, owed from round 1) and then seat 0's
/// fold land between that `fetch_add` and the re-arm, or before the last
/// arrival, or after the re-arm (owed at once, the leave early in round
/// 1); a join after phase 0 completed joins phase 1. The joined seat
/// arrives from the phase it joined to phase 1; each phase completes once,
/// and phase 2 owes seats 1 and 2.
///
/// Cases: the join landed in phase 0, in phase 1; an attach or a fold
/// landed between the node's completing `fetch_add` and its re-arm, whose
/// CAS then retried (`event:node-rearm-retried`). One layout: the stayer's
/// two arrivals race every step of the main thread's from either side in
/// it (the cases).
#[test]
fn a_join_and_a_leave_land_between_the_completing_add_and_the_re_arm() {
    let cases = &[
        "joined phase 0",
        "joined phase 1",
        "event:node-rearm-retried",
    ];
    // Capped at 2 preemptions: the suite's budget (README.md, "Bounds").
    model_reaching_bounded(2, cases, |reach| {
        let (team, runs) = counted(2, 4, 4);
        let stayer = {
            let team = team.clone();
            thread::spawn(move || {
                let seat = team.seat(1);
                seat.arrive_and_wait();
                seat.arrive_and_wait();
                std::mem::forget(seat);
            })
        };
        let leaver = team.seat(0);
        drop(leaver.arrive());
        let joined = team.join().expect("ranks 2 and 3 are free");
        assert_eq!(joined.rank(), 2);
        // The phase it joined cannot complete before its arrival.
        let in_phase_0 = !team.phase_parity();
        reach.either(in_phase_0, "joined phase 0", "joined phase 1");
        drop(leaver); // leaves from phase 1 on
        joined.arrive_and_wait();
        if in_phase_0 {
            joined.arrive_and_wait();
        }
        stayer.join().unwrap();
        // Relaxed: every run happened-before the waits above.
        assert_eq!(runs.load(Ordering::Relaxed), 2);
        assert_eq!(team.missing(), [1, 2]);
        let _ = reach.events();
        assert_eq!(
            word(&team),
            "Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }"
        );
        std::mem::forget(joined);
    });
}
