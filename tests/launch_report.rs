//! `launch` reports one panic per root cause (SPEC §4): the other threads'
//! unwinding out of the block's poisoned barrier does not reach the panic
//! hook, the root cause does (once), and panics of the user's own barriers
//! inside the block are reported as usual.
//!
//! The panic hook is global to the process, so this file is its own test
//! binary with a single test that installs a counting hook and runs the
//! cases one after another.

mod common;

use common::{panic_message, watchdog};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use syncthreads::{launch, Barrier, Team};

/// The messages the panic hook saw since the last `take`.
static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn take_reported() -> Vec<String> {
    std::mem::take(&mut *REPORTED.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The root cause's payload type, so the test can tell it from any string.
#[derive(Debug, PartialEq)]
struct Boom(usize);

#[test]
fn launch_reports_one_panic_per_root_cause() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let text = match payload.downcast_ref::<Boom>() {
            Some(boom) => format!("{boom:?}"),
            None => panic_message(payload),
        };
        REPORTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text);
    }));

    // 1. Rank 5 of 16 panics once the 15 others wait in `sync()` (parked by
    //    then): they leave quietly, the hook sees Boom(5) only, and launch
    //    re-raises it without a second report.
    const THREADS: usize = 16;
    let left = AtomicUsize::new(0);
    let entering = AtomicUsize::new(0);
    let result = watchdog(
        60,
        || format!("case 1: {} threads left sync", left.load(Ordering::Relaxed)),
        || {
            catch_unwind(AssertUnwindSafe(|| {
                launch(THREADS, |block| {
                    if block.thread_rank() == 5 {
                        // (A block's seats arrive through a combining tree,
                        // so the word's pending count does not show them.)
                        while entering.load(Ordering::Relaxed) < THREADS - 1 {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        std::thread::sleep(Duration::from_millis(50));
                        std::panic::panic_any(Boom(5));
                    }
                    struct Left<'a>(&'a AtomicUsize);
                    impl Drop for Left<'_> {
                        fn drop(&mut self) {
                            self.0.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    let _left = Left(&left);
                    entering.fetch_add(1, Ordering::Relaxed);
                    block.sync();
                    unreachable!("rank 5 never arrives");
                })
            }))
        },
    );
    let payload = result.expect_err("launch must re-raise the root cause");
    assert_eq!(payload.downcast_ref::<Boom>(), Some(&Boom(5)));
    assert_eq!(left.load(Ordering::Relaxed), THREADS - 1);
    assert_eq!(take_reported(), ["Boom(5)"]);

    // 2. Threads that reach `sync*` after the poisoning (here: the reducing
    //    ones, in a later phase) leave quietly too.
    let result = watchdog(30, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(8, |block| {
                block.sync();
                if block.thread_rank() == 0 {
                    panic!("rank 0 failed after the first sync");
                }
                while !block.barrier().is_poisoned() {
                    std::thread::yield_now();
                }
                block.sync_count(true)
            })
        }))
    });
    let payload = result.expect_err("launch must re-raise the root cause");
    assert_eq!(
        panic_message(&*payload),
        "rank 0 failed after the first sync"
    );
    assert_eq!(take_reported(), ["rank 0 failed after the first sync"]);

    // 3. A user barrier inside the block is the user's: poisoned by rank 0,
    //    it makes ranks 1..4 panic, and each of those panics is reported.
    //    Rank 0 then leaves the block's (now poisoned) barrier quietly.
    let mine = Barrier::new(4);
    let result = watchdog(
        30,
        || format!("case 3: {mine:?}"),
        || {
            catch_unwind(AssertUnwindSafe(|| {
                launch(4, |block| {
                    if block.thread_rank() == 0 {
                        while !format!("{mine:?}").contains("pending: 1,") {
                            std::thread::yield_now();
                        }
                        mine.poison();
                        block.sync();
                    } else {
                        mine.arrive_and_wait();
                    }
                })
            }))
        },
    );
    let payload = result.expect_err("launch must re-raise a panic");
    assert!(panic_message(&*payload).starts_with("syncthreads: barrier poisoned by poison()"));
    let reported = take_reported();
    assert_eq!(reported.len(), 3, "{reported:?}");
    for m in &reported {
        assert!(
            m.starts_with("syncthreads: barrier poisoned by poison() (seen by arrive_and_wait())"),
            "{m}"
        );
    }

    // 4. Nobody panicked of their own: the block's barrier was poisoned by
    //    hand. launch raises one ordinary panic, the only report.
    let result = watchdog(30, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(4, |block| {
                if block.thread_rank() == 0 {
                    block.barrier().poison();
                }
                block.sync();
            })
        }))
    });
    let payload = result.expect_err("launch must panic");
    let m = panic_message(&*payload);
    assert!(
        m.starts_with("syncthreads: barrier poisoned by poison()"),
        "{m}"
    );
    assert_eq!(take_reported(), [m]);

    // 5. A poisoned-barrier panic of the user's own barrier is a consequence,
    //    not the root cause, even when it is caught first: rank 0 holds a
    //    seat of the user's team and panics; its seat's drop poisons the
    //    team, ranks 1..4 panic out of their waits on it (reported as usual),
    //    and only then does rank 0's unwinding end. launch re-raises Boom(0).
    let mine = Team::new(4);
    let waiting = AtomicUsize::new(0);
    let result = watchdog(
        30,
        || format!("case 5: {mine:?}"),
        || {
            catch_unwind(AssertUnwindSafe(|| {
                launch(4, |block| {
                    let rank = block.thread_rank();
                    if rank == 0 {
                        let _slow = UnwindsAfterReports(3);
                        let _seat = mine.seat(0);
                        while waiting.load(Ordering::Relaxed) < 3 {
                            std::thread::yield_now();
                        }
                        std::panic::panic_any(Boom(0));
                    }
                    let seat = mine.seat(rank);
                    waiting.fetch_add(1, Ordering::Relaxed);
                    seat.arrive_and_wait();
                })
            }))
        },
    );
    let payload = result.expect_err("launch must re-raise the root cause");
    assert_eq!(payload.downcast_ref::<Boom>(), Some(&Boom(0)));
    let reported = take_reported();
    assert_eq!(reported.len(), 4, "{reported:?}");
    assert_eq!(reported[0], "Boom(0)");
    for m in &reported[1..] {
        assert!(m.starts_with("syncthreads: barrier poisoned"), "{m}");
    }

    let _ = std::panic::take_hook();
}

/// Dropped while its thread unwinds, waits until the panic hook has seen
/// this many more reports, so that those panics are caught first.
struct UnwindsAfterReports(usize);

impl Drop for UnwindsAfterReports {
    fn drop(&mut self) {
        // Boom itself is the first report.
        while REPORTED.lock().unwrap_or_else(|e| e.into_inner()).len() < 1 + self.0 {
            std::thread::yield_now();
        }
    }
}
