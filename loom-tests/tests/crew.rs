//! `launch` on the pool's crew (launch/pool/crew.rs): the threads that stay
//! with the pool between launches, a launch handing its ranks out by one
//! swap of a group's go word and taking them back through its done word.
//! Each model checks that a rank's writes reach the launching thread (and
//! the next launch's rank) through those words alone: loom's cells fail
//! the model on an unordered access, and the post a launch leaves beside
//! the go word is a loom cell too.

mod common;
use common::{model_reaching_bounded, panic_message, quiet_expected_panics, write_rank, Slots};
use std::panic::{catch_unwind, AssertUnwindSafe};
use loom::sync::Arc;
use loom::thread;
use std::time::Duration;
use syncthreads::Launcher;

/// A member whose keep-alive (zero) passes as soon as it has run a rank,
/// against the next launch. Cases: the member ran both launches (the
/// launch came before its exit), or it left first and the crew enlisted a
/// new thread (reusing the leaver's slot, or a new one). The launching
/// thread yields between its launches, where the member's leave can come
/// in, so one preemption reaches either case. (A launch finding the crew
/// held by a leaving member goes by the slots, as one finding it held by a
/// launch does: the last model.)
#[test]
fn a_crew_launch_races_a_members_idle_exit() {
    model_reaching_bounded(
        1,
        &["the member ran both launches", "event:crew-member-left"],
        |reach| {
            let launcher = Launcher::new().keep_alive(Duration::ZERO);
            let cells = Slots::new(2);
            let first = write_rank(&launcher, &cells);
            // The member's write, read by the launching thread.
            assert_eq!(cells.get(1), 11);
            thread::yield_now();
            let second = launcher.launch(2, |block| {
                let rank = block.thread_rank();
                // Rank 1 reads what rank 1 wrote last launch, on whichever
                // thread: ordered through both launches' words.
                assert_eq!(cells.get(rank), 10 + rank);
                thread::current().id()
            });
            assert_eq!(first[0], second[0]);
            if first[1] == second[1] {
                reach.case("the member ran both launches");
            }
            drop(launcher); // disbands the crew and joins its threads
            reach.events();
        },
    );
}

/// A member that never leaves, and two launches. Cases: the second launch
/// found the member polling, or asleep on its go word (the launch must
/// wake it: a missing wake leaves it asleep and the launch waiting for it,
/// a deadlock), and a launch slept in its end wait on the kept block until
/// the member's leave retired the block and woke it. Capped at 1
/// preemption: each case needs at most one.
#[test]
fn a_crew_launch_wakes_a_sleeping_member_and_is_woken_by_it() {
    model_reaching_bounded(
        1,
        &[
            "found the member polling",
            "event:crew-woke-a-sleeping-member",
            "event:launch-end-slept",
        ],
        |reach| {
            let launcher = Launcher::new().keep_alive(Duration::MAX);
            let cells = Slots::new(2);
            let first = write_rank(&launcher, &cells);
            assert_eq!(cells.get(1), 11);
            let second = write_rank(&launcher, &cells);
            assert_eq!(
                first, second,
                "the member that never leaves ran rank 1 again"
            );
            drop(launcher); // wakes the sleeping member and joins it
            if !reach.events().contains("crew-woke-a-sleeping-member") {
                reach.case("found the member polling");
            }
        },
    );
}

/// Two launches at once on one pool: one takes the crew, the other finds
/// it taken and hands its rank out through a slot; neither waits for the
/// other. Cases: the second launch found the crew taken, or the launches
/// came one after the other and both ran on the crew's one member. Capped
/// at 1 preemption (four threads: two callers, the member and the slot's
/// worker).
#[test]
fn a_launch_that_finds_the_crew_taken_goes_by_the_slots() {
    model_reaching_bounded(
        1,
        &["event:crew-taken", "one after the other, both on the crew"],
        |reach| {
            let launcher = Arc::new(Launcher::new().keep_alive(Duration::MAX));
            let cells = Arc::new(Slots::new(2));
            // Each launch's rank 1 writes its own cell, read by its caller.
            let racing = |launcher: &Launcher, cells: &Slots, which: usize| {
                launcher.launch(2, |block| {
                    if block.thread_rank() == 1 {
                        cells.set(which, 1);
                    }
                });
                assert_eq!(cells.get(which), 1);
            };
            let other = {
                let (launcher, cells) = (Arc::clone(&launcher), Arc::clone(&cells));
                thread::spawn(move || racing(&launcher, &cells, 1))
            };
            racing(&launcher, &cells, 0);
            other.join().unwrap();
            let taken = reach.events().contains("crew-taken");
            // The crew's member, and the slot's worker if one launch went
            // by the slots (a keep-alive that never passes keeps both).
            assert_eq!(launcher.live_threads(), if taken { 2 } else { 1 });
            if !taken {
                reach.case("one after the other, both on the crew");
            }
        },
    );
}

/// Two launches on the crew's kept block, the second with other values.
/// The first launch ends when the member's leave retires the block; the
/// member may still be on its way back (its done add not made) when the
/// launching thread re-arms the block (atomic stores) and posts the second
/// launch. Cases: the member came back to its go word after the second
/// post, or before it. Both launches' values reach the launching thread,
/// the second launch ends only if its leaves find the re-armed block (a
/// stale word would leave it waiting: a deadlock), and the post is a loom
/// cell written while the late member may still be returning. Capped at 1
/// preemption.
#[test]
fn a_launch_re_arms_its_kept_block_while_the_member_returns() {
    model_reaching_bounded(
        1,
        &[
            "event:crew-member-back-after-the-next-post",
            "the member was back before the next post",
        ],
        |reach| {
            let launcher = Launcher::new().keep_alive(Duration::MAX);
            let cells = Slots::new(2);
            write_rank(&launcher, &cells);
            assert_eq!(cells.get(1), 11);
            launcher.launch(2, |block| cells.set(block.thread_rank(), 20 + block.thread_rank()));
            assert_eq!(cells.get(1), 21);
            drop(launcher);
            if !reach
                .events()
                .contains("crew-member-back-after-the-next-post")
            {
                reach.case("the member was back before the next post");
            }
        },
    );
}

/// A launch whose rank 1 panics poisons the kept block, which never
/// retires: the launch ends through the join, which the member's done add
/// wakes if it slept, and the crew drops the block; the next launch builds
/// a new one. Cases: the join slept until the member's add woke it, or the
/// member had added first. Capped at 1 preemption.
#[test]
fn a_poisoned_launch_ends_through_the_join() {
    quiet_expected_panics();
    model_reaching_bounded(
        1,
        &["event:crew-join-slept", "the member had counted its rank"],
        |reach| {
            let launcher = Launcher::new().keep_alive(Duration::MAX);
            let cells = Slots::new(2);
            let failed = catch_unwind(AssertUnwindSafe(|| {
                launcher.launch(2, |block| {
                    cells.set(block.thread_rank(), 1);
                    if block.thread_rank() == 1 {
                        panic!("boom");
                    }
                })
            }));
            assert_eq!(panic_message(&*failed.unwrap_err()), "boom");
            // Both ranks ended, and wrote, before the launch returned.
            assert_eq!((cells.get(0), cells.get(1)), (1, 1));
            if !reach.events().contains("crew-join-slept") {
                reach.case("the member had counted its rank");
            }
            assert_eq!(write_rank(&launcher, &cells).len(), 2);
            assert_eq!(cells.get(1), 11);
            drop(launcher);
        },
    );
}
