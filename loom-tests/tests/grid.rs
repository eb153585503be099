//! The grid's two-level barrier (launch/grid.rs): a team of
//! `blocks × threads` seats whose tree combines each block's seats first,
//! then one arrival per block at the level above
//! (`TeamShape::grid_team`, the team `launch_grid` builds), and a
//! grid launched on the pool. Two blocks of two: each block's leaf is the
//! first level, the root (one member per block) the second, then the word.
//! Each model checks the ordering chain seat → block's node → root → word
//! → waiter with loom-checked data slots.

mod common;
use common::{model_reaching, model_reaching_bounded, panic_message, quiet_expected_panics, Slots};
use loom::sync::Arc;
use loom::thread;
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{Launcher, Team, TeamShape};

/// Both levels, one phase, four threads (one per seat): every seat writes
/// its slot, arrives and waits, then reads every slot. Ranks 0 and 2 use
/// the split form (`arrive`, then `wait` on the team), 1 and 3
/// `arrive_and_wait`, so that a split arrival and an `arrive_and_wait`
/// meet at each block's node.
///
/// Cases: a seat of block 0 completed the phase (block 0's climber was the
/// root's last member), a seat of block 1 did. Bounded at 1 preemption:
/// four threads over three nodes and the word; each case needs the other
/// block's climb to land first, which the schedule order gives without a
/// preemption, and one preemption interleaves the two climbs at the root.
#[test]
fn two_blocks_of_two_combine_at_both_levels() {
    let cases = &[
        "a seat of block 0 completed the phase",
        "a seat of block 1 completed the phase",
    ];
    model_reaching_bounded(1, cases, |reach| {
        let team = Arc::new(TeamShape::grid_team(2, 2));
        let slots = Arc::new(Slots::new(4));
        let run = |team: &Team, slots: &Slots, rank: usize| -> bool {
            let seat = team.seat(rank);
            slots.set(rank, 10 + rank);
            let led = if rank % 2 == 0 {
                let token = seat.arrive();
                team.wait(token);
                false
            } else {
                seat.arrive_and_wait().is_leader()
            };
            for r in 0..4 {
                assert_eq!(slots.get(r), 10 + r, "rank {rank} reads rank {r}");
            }
            std::mem::forget(seat);
            led
        };
        let others: Vec<_> = (1..4)
            .map(|rank| {
                let (team, slots) = (team.clone(), slots.clone());
                thread::spawn(move || (rank, run(&team, &slots, rank)))
            })
            .collect();
        let mut completers = vec![(0, run(&team, &slots, 0))];
        completers.extend(others.into_iter().map(|t| t.join().unwrap()));
        // `arrive_and_wait` names its completer: at most one odd rank
        // leads (none when a split arrival completed the phase).
        let odd_leaders = completers
            .iter()
            .filter(|&&(r, led)| r % 2 == 1 && led)
            .count();
        assert!(odd_leaders <= 1);
        if let Some(&(rank, _)) = completers.iter().find(|&&(r, led)| r % 2 == 1 && led) {
            reach.either(rank < 2, cases[0], cases[1]);
        }
    });
}

/// A poison racing the second level: two threads, each holding one
/// block's two seats, arrive with both (the second arrival completes the
/// block's node and climbs to the root), one waits; a third thread poisons
/// the team. Nobody hangs: the wait returns if the phase completed before
/// the poison, and panics with the poisoned-barrier message otherwise;
/// every later wait panics.
///
/// Cases: the phase completed before the poison; the poison came first
/// and the wait panicked.
#[test]
fn a_poison_races_the_second_level() {
    quiet_expected_panics();
    let cases = &[
        "the phase completed before the poison",
        "the poison came first: the wait panicked",
    ];
    model_reaching_bounded(2, cases, |reach| {
        let team = Arc::new(TeamShape::grid_team(2, 2));
        let poisoner = {
            let team = team.clone();
            thread::spawn(move || team.poison())
        };
        let block1 = {
            let team = team.clone();
            thread::spawn(move || {
                let (a, b) = (team.seat(2), team.seat(3));
                let arrived = catch_unwind(AssertUnwindSafe(|| {
                    drop(a.arrive());
                    drop(b.arrive());
                }));
                std::mem::forget((a, b));
                arrived.is_ok()
            })
        };
        let (a, b) = (team.seat(0), team.seat(1));
        let waited = catch_unwind(AssertUnwindSafe(|| {
            drop(a.arrive());
            b.arrive_and_wait();
        }));
        std::mem::forget((a, b));
        let block1_arrived = block1.join().unwrap();
        poisoner.join().unwrap();
        match waited {
            Ok(()) => {
                assert!(block1_arrived, "the phase completed: block 1 arrived");
                reach.case(cases[0]);
            }
            Err(payload) => {
                assert!(panic_message(&*payload).contains("poisoned"));
                reach.case(cases[1]);
            }
        }
        // Poisoned for good: a later wait of any phase panics.
        assert!(team.is_poisoned());
    });
}

/// The split form across the levels: each of two threads holds one
/// block's two seats; thread A arrives with both without waiting
/// (`arrive`, the second completing its block's node), writes a slot
/// that the phase does not cover, then waits on its token; thread B
/// arrives with one seat, writes its slot, arrives with the other and
/// waits. After the waits each thread reads the other's slot written
/// before its arrivals.
///
/// Cases: A's split arrival completed the phase (B's block had climbed
/// first), B's did; A's wait found the phase completed, or had to wait.
#[test]
fn the_split_form_spans_both_levels() {
    let cases = &[
        "block 0's split arrival completed the phase",
        "block 1's arrival completed the phase",
        "the split wait found the phase completed",
        "the split wait waited",
    ];
    model_reaching(cases, |reach| {
        let team = Arc::new(TeamShape::grid_team(2, 2));
        let slots = Arc::new(Slots::new(3));
        let b = {
            let (team, slots) = (team.clone(), slots.clone());
            thread::spawn(move || {
                let (x, y) = (team.seat(2), team.seat(3));
                drop(x.arrive());
                slots.set(1, 11);
                let led = y.arrive_and_wait().is_leader();
                assert_eq!(slots.get(0), 10);
                std::mem::forget((x, y));
                led
            })
        };
        let (x, y) = (team.seat(0), team.seat(1));
        slots.set(0, 10);
        let token = x.arrive();
        drop(y.arrive());
        // Not covered by the phase: only this thread touches it.
        slots.set(2, 12);
        reach.either(
            team.try_wait(&token),
            "the split wait found the phase completed",
            "the split wait waited",
        );
        team.wait(token);
        assert_eq!(slots.get(1), 11);
        assert_eq!(slots.get(2), 12);
        std::mem::forget((x, y));
        let b_led = b.join().unwrap();
        reach.either(
            b_led,
            "block 1's arrival completed the phase",
            "block 0's split arrival completed the phase",
        );
    });
}

/// A grid of two blocks of one thread on the pool: block 1 panics while
/// block 0 syncs its own block and then the grid. The panic poisons every
/// block and the grid before the panicking thread's seats leave, so block
/// 0's grid sync never returns (it unwinds, quietly) whether it began
/// before or after the panic, and `launch_grid` re-raises the root cause
/// once. (Without the poisoning, block 1's leave would complete the grid's
/// phase and block 0 would go on past its sync.)
///
/// Cases: block 1 panicked before block 0's grid sync; block 0's grid
/// sync began first. Bounded at 2 (the pool's hand-off adds many
/// operations; one preemption already orders the panic on either side of
/// the sync).
#[test]
fn a_panic_in_one_block_ends_the_others_grid_sync() {
    quiet_expected_panics();
    let cases = &[
        "block 1 panicked before block 0's grid sync",
        "block 0's grid sync began before block 1 panicked",
    ];
    model_reaching_bounded(2, cases, |reach| {
        use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
        let launcher = Launcher::new();
        let order = AtomicUsize::new(0);
        let past = AtomicBool::new(false);
        let result = catch_unwind(AssertUnwindSafe(|| {
            launcher.launch_grid(2, 1, |block| {
                if block.block_rank() == 1 {
                    order.fetch_add(1, SeqCst);
                    panic!("boom");
                }
                block.sync();
                reach.either(order.fetch_add(2, SeqCst) == 0, cases[1], cases[0]);
                block.grid().sync();
                past.store(true, SeqCst);
            })
        }));
        let payload = result.expect_err("the panic is re-raised");
        assert_eq!(panic_message(&*payload), "boom");
        assert!(!past.load(SeqCst), "block 0 went past a poisoned grid sync");
    });
}
