//! `launch` on the pool, by the slot path: the hand-off of a rank to a pool
//! thread through its slot word and its return (launch/pool.rs; the
//! launchers here have no crew, whose hand-off `crew.rs` models). Under loom a timed park whose deadline the
//! model clock has passed times out, and one whose deadline lies ahead
//! sleeps until woken (src/park/model_loom.rs): with a keep-alive of zero a
//! parked worker leaves at once, so a model races its idle exit against the
//! next claim of its slot; with `Duration::MAX` it sleeps until a claim
//! wakes it, so a lost wake is a deadlock. Each model checks that a rank's
//! writes reach the launching thread (and the next launch's rank) through
//! the slot word alone: loom's cells fail the model on an unordered access.

mod common;
use common::{model_reaching_bounded, panic_message, quiet_expected_panics, write_rank, Slots};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Notify};
use loom::thread;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;
use syncthreads::{Launcher, SlotProbe};

/// A launcher whose parked threads leave at once, handing each rank out
/// through its slot (the crew's hand-off has models of its own: crew.rs).
fn leaving() -> Launcher {
    Launcher::new().keep_alive(Duration::ZERO).without_crew()
}

/// Cases: the second launch claimed the idle worker, or found it gone
/// and spawned a new one. One layout: the launching thread is the caller
/// (rank 0) by the contract; the worker is the pool's. Capped at 1
/// preemption: at the suite's 3 the pool's hand-off explores for minutes,
/// and the race (the worker's idle exit against the second launch's
/// claim) needs one preemption for either case.
#[test]
fn a_launch_races_a_pool_threads_idle_exit() {
    model_reaching_bounded(
        1,
        &[
            "claimed the idle worker",
            "the worker had left: spawned anew",
        ],
        |reach| {
            let launcher = leaving();
            let cells = Slots::new(2);
            let first = write_rank(&launcher, &cells);
            // The pool thread's write, read by the launching thread.
            assert_eq!(cells.get(1), 11);
            let second = launcher.launch(2, |block| {
                let rank = block.thread_rank();
                // Rank 1 reads what rank 1 wrote last launch, on whichever
                // thread: ordered through both launches' slot words.
                assert_eq!(cells.get(rank), 10 + rank);
                thread::current().id()
            });
            assert_eq!(first[0], second[0]);
            assert_ne!(first[1], first[0]);
            if first[1] == second[1] {
                reach.case("claimed the idle worker");
            } else {
                reach.case("the worker had left: spawned anew");
            }
            // Drop joins the pool's threads.
        },
    );
}

#[test]
#[ignore = "long: five threads at one preemption (README.md, \"Bounds\"); run with --ignored"]
fn two_launches_race_for_the_same_idle_thread() {
    // Bounded at 1: five threads (two callers, the idle worker and up to two
    // spawned ones). Without preemptions only the third case comes up (the
    // idle worker leaves before either launch runs), so the bound stays 1.
    model_reaching_bounded(
        1,
        &[
            "the other thread's launch claimed it",
            "this thread's launch claimed it",
            "it had left: both spawned",
        ],
        |reach| {
            let launcher = Arc::new(leaving());
            let idle = launcher.launch(2, |_| thread::current().id())[1];
            // Each launch's rank 1 writes its launch's cell; its caller reads
            // it after the launch: ordered through the claimed slot's word
            // alone, whichever worker (or new thread) ran it.
            let cells = Arc::new(Slots::new(2));
            let racing = |launcher: &Launcher, cells: &Slots, which: usize| {
                let ran = launcher.launch(2, |block| {
                    if block.thread_rank() == 1 {
                        cells.set(which, 1);
                    }
                    thread::current().id()
                });
                assert_eq!(cells.get(which), 1);
                ran[1]
            };
            let other = {
                let (launcher, cells) = (Arc::clone(&launcher), Arc::clone(&cells));
                thread::spawn(move || racing(&launcher, &cells, 1))
            };
            let mine = racing(&launcher, &cells, 0);
            let other = other.join().unwrap();
            if other == idle {
                reach.case("the other thread's launch claimed it");
            } else if mine == idle {
                reach.case("this thread's launch claimed it");
            } else {
                reach.case("it had left: both spawned");
            }
        },
    );
}

#[test]
fn a_panic_in_the_kernel_reaches_the_launch_and_the_pool_goes_on() {
    quiet_expected_panics();
    // Bounded at 1: the poisoned block's unwinding adds the team's
    // operations to the hand-off; one preemption still races the worker's
    // exit against the second launch's claim (the last two cases).
    let cases = &[
        "rank 1 had panicked before rank 0's sync",
        "rank 0's sync began before rank 1 panicked",
        "claimed the idle worker",
        "the worker had left: spawned anew",
    ];
    model_reaching_bounded(1, cases, |reach| {
        let launcher = leaving();
        let cells = Slots::new(2);
        // Outside the model: the thread that ran rank 1, once it panics.
        let failed_on = std::sync::Mutex::new(None);
        // A loom atomic, so that the model orders rank 1's panic against
        // rank 0's look at it (the `Mutex` above is outside the model).
        let panicking = AtomicBool::new(false);
        let failed = catch_unwind(AssertUnwindSafe(|| {
            launcher.launch(2, |block| {
                cells.set(block.thread_rank(), 1);
                if block.thread_rank() == 1 {
                    *failed_on.lock().unwrap() = Some(thread::current().id());
                    // Relaxed: only whether it came first; nothing is read through it.
                    panicking.store(true, Ordering::Relaxed);
                    panic!("boom");
                }
                reach.either(
                    // Relaxed: as above.
                    panicking.load(Ordering::Relaxed),
                    "rank 1 had panicked before rank 0's sync",
                    "rank 0's sync began before rank 1 panicked",
                );
                block.sync(); // poisoned: rank 0 leaves quietly
            })
        }));
        assert_eq!(panic_message(&*failed.unwrap_err()), "boom");
        // Both ranks ended before the launch returned.
        assert_eq!((cells.get(0), cells.get(1)), (1, 1));
        let ran = launcher.launch(2, |block| (block.thread_rank(), thread::current().id()));
        assert_eq!((ran[0].0, ran[1].0), (0, 1));
        reach.either(
            *failed_on.lock().unwrap() == Some(ran[1].1),
            "claimed the idle worker",
            "the worker had left: spawned anew",
        );
    });
}

/// Cases: the second launch claimed the worker while it polled, or once it
/// slept (it must wake it: the worker's keep-alive never passes, so a
/// missing wake leaves it asleep and the launch waiting, a deadlock), and
/// the launch parked for its rank and was woken by the hand-back (on the
/// ticket's key: a wake on any other key leaves it asleep). Either way the
/// worker that never leaves runs both launches' rank 1: a claim that gave
/// up on a sleeping worker and spawned anew fails the model.
/// Capped at 1 preemption: each case needs at most one (the claim
/// between the worker's poll and its sleep), and bound 3 explores over half
/// a million executions.
#[test]
fn a_launch_claims_and_wakes_a_sleeping_worker() {
    model_reaching_bounded(
        1,
        &[
            "claimed while it polled",
            "event:pool-claimed-a-sleeper",
            "event:park-sleeps",
        ],
        |reach| {
            let launcher = Launcher::new().keep_alive(Duration::MAX).without_crew();
            let cells = Slots::new(2);
            let first = write_rank(&launcher, &cells);
            assert_eq!(cells.get(1), 11);
            let second = write_rank(&launcher, &cells);
            assert_eq!(
                first, second,
                "the worker that never leaves ran rank 1 again"
            );
            drop(launcher); // wakes the sleeping worker and joins it
            let events = reach.events();
            if !events.contains("pool-claimed-a-sleeper") {
                reach.case("claimed while it polled");
            }
        },
    );
}

/// Two launches on one pool, from two threads, with one worker whose
/// keep-alive (zero) passes between them. Cases: the second launch to
/// claim reused the slot of the worker that left (a new thread takes its
/// place), and the first launch's wait read the word after that (the
/// second launch's ticket in it, not its own, nor `IDLE`): its `Acquire`
/// load synchronizes with the worker's hand-back only because each change
/// of the word since was an RMW (a release sequence), which loom's cells
/// check on the rank's result. Capped at 1 preemption (four threads: two
/// callers, the worker and the one that replaces it).
#[test]
fn two_launches_share_a_pool_whose_worker_leaves_between_them() {
    model_reaching_bounded(
        1,
        &[
            "event:pool-reused-a-slot",
            "event:pool-wait-read-a-later-ticket",
        ],
        |reach| {
            let launcher = Arc::new(leaving());
            let cells = Arc::new(Slots::new(2));
            let other = {
                let (launcher, cells) = (Arc::clone(&launcher), Arc::clone(&cells));
                thread::spawn(move || {
                    launcher.launch(2, |block| {
                        if block.thread_rank() == 1 {
                            cells.set(1, 1);
                        }
                    });
                    // Rank 1's write, read through the slot word alone.
                    assert_eq!(cells.get(1), 1);
                })
            };
            launcher.launch(2, |block| {
                if block.thread_rank() == 1 {
                    cells.set(0, 1);
                }
            });
            assert_eq!(cells.get(0), 1);
            other.join().unwrap();
            reach.events();
        },
    );
}

/// The slot word alone (`SlotProbe`: the pool's own steps on one slot):
/// the worker writes its rank's result, hands the ticket back and leaves;
/// a later launch reuses the slot; the first launch's wait for its ticket
/// may read the later ticket. Case: that read, without a wake from the
/// worker (`pool-wait-read-a-later-ticket`): the result reaches the wait
/// only through the release sequence of the worker's `Release` hand-back,
/// which the reuse continues by being an RMW (a plain store would cut it,
/// and loom's cell fails the model). The whole pool reaches this read only
/// past the preemption bound its models can afford.
#[test]
fn a_wait_that_reads_a_reused_slots_ticket_sees_the_rank() {
    // Bounded at 2: at 1 the later ticket is read only after the worker's
    // wake, which orders its writes anyway (the plain-store mutant passes);
    // the read without a wake needs a second preemption.
    model_reaching_bounded(
        2,
        &[
            "event:pool-reused-a-slot",
            "event:pool-wait-read-a-later-ticket",
        ],
        |reach| {
            let probe = Arc::new(SlotProbe::new());
            let cells = Arc::new(Slots::new(1));
            let worker = {
                let (probe, cells) = (Arc::clone(&probe), Arc::clone(&cells));
                thread::spawn(move || {
                    cells.set(0, 1);
                    probe.hand_back();
                    assert!(probe.leave(), "nothing else claims the slot");
                })
            };
            let reuser = {
                let probe = Arc::clone(&probe);
                thread::spawn(move || {
                    while !probe.reuse_if_left() {
                        thread::yield_now();
                    }
                })
            };
            probe.wait_for_the_first();
            assert_eq!(cells.get(0), 1);
            worker.join().unwrap();
            reuser.join().unwrap();
            reach.events();
        },
    );
}

/// A worker leaves (keep-alive zero) and, in its thread-local destructor,
/// blocks until the launch that comes after it has returned. Cases: that
/// launch reused the leaving thread's slot while the destructor still ran
/// (the slot's word and the new thread's hand-off go on without the old
/// thread: a launch that waited for its destructor would deadlock with
/// it), or claimed the worker before it left (its destructor runs at the
/// launcher's drop, which joins it). A loom join does not wait for the
/// joined thread's thread-locals, so a launch that *joins* the leaving
/// thread is caught by tests/launch_pool_bugs.rs instead, on real threads.
#[test]
fn a_slot_is_reused_while_its_old_thread_runs_destructors() {
    /// A destructor that blocks until the later launch has returned.
    struct WaitsForLater(Arc<Notify>);
    impl Drop for WaitsForLater {
        fn drop(&mut self) {
            self.0.wait();
        }
    }
    loom::thread_local! {
        static EXIT: std::cell::RefCell<Option<WaitsForLater>> = std::cell::RefCell::new(None);
    }
    // Bounded at 1: either case needs at most one preemption (the
    // worker's exit against the second launch's claim).
    model_reaching_bounded(
        1,
        &[
            "reused the slot before its old thread's destructors ended",
            "claimed the worker before it left",
        ],
        |reach| {
            let launcher = leaving();
            let done = Arc::new(Notify::new());
            let first = launcher.launch(2, |block| {
                if block.thread_rank() == 1 {
                    let done = Arc::clone(&done);
                    EXIT.with(|e| *e.borrow_mut() = Some(WaitsForLater(done)));
                }
                thread::current().id()
            });
            let second = launcher.launch(2, |_| thread::current().id());
            done.notify();
            reach.either(
                first[1] != second[1],
                "reused the slot before its old thread's destructors ended",
                "claimed the worker before it left",
            );
        },
    );
}
