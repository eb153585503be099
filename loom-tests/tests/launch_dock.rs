//! `launch` through the pool's dock (launch/pool/dock.rs): the workers of
//! a launch wait together on one word, and the next launch of the same size
//! claims them all at once. Under loom a member's poll window passes at
//! once, so every model races the dock's expiry (a member closing it)
//! against the next launch's claim. Each model checks that a rank's writes
//! reach the launching thread, and the next launch's rank, through the
//! dock alone: loom's cells fail the model on an unordered access. The
//! claim racing the expiry is `launch.rs`'s first model.

mod common;
use common::{model_reaching_bounded, panic_message, quiet_expected_panics, Slots};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::Launcher;

/// Case: a launch of another size closes the open dock and waits (parked)
/// for its member to go back to its slot, then claims it there or, if the
/// member left the pool meanwhile (under loom the keep-alive passes at
/// once), spawns anew. Bounded at 0 preemptions: the launch parks while
/// the member is on its way without one, and at 1 the four threads (the
/// caller, the member, up to two spawned) explore for many minutes. The
/// kernels only write: the hand-offs are the first model's.
#[test]
fn a_launch_of_another_size_vacates_the_dock() {
    model_reaching_bounded(0, &["event:dock-vacate-sleeps"], |reach| {
        let launcher = Launcher::new();
        let cells = Slots::new(3);
        launcher.launch(2, |block| cells.set(block.thread_rank(), 1));
        launcher.launch(3, |block| cells.set(block.thread_rank(), 2));
        assert_eq!((cells.get(1), cells.get(2)), (2, 2));
        let _ = reach.events();
    });
}

/// Cases: the panicking kernel ran on the dock (claimed), and rank 0's
/// sync found the block poisoned, or began before the panic; the launch
/// re-raises the panic either way, having waited for both ranks.
#[test]
fn a_panic_in_a_docked_kernel_reaches_the_launch() {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    quiet_expected_panics();
    let cases = &[
        "on the dock: rank 1 had panicked before rank 0's sync",
        "on the dock: rank 0's sync began before rank 1 panicked",
    ];
    model_reaching_bounded(1, cases, |reach| {
        let launcher = Launcher::new();
        let cells = Slots::new(2);
        launcher.launch(2, |block| cells.set(block.thread_rank(), 1));
        // Outside the model: whether rank 1 panicked before rank 0's sync.
        let (panicked, panicked_first) = (AtomicBool::new(false), AtomicBool::new(false));
        let failed = catch_unwind(AssertUnwindSafe(|| {
            launcher.launch(2, |block| {
                cells.set(block.thread_rank(), 2);
                if block.thread_rank() == 1 {
                    panicked.store(true, Relaxed);
                    panic!("boom");
                }
                panicked_first.store(panicked.load(Relaxed), Relaxed);
                block.sync(); // poisoned: rank 0 leaves quietly
            })
        }));
        assert_eq!(panic_message(&*failed.unwrap_err()), "boom");
        // Both ranks ended before the launch returned.
        assert_eq!((cells.get(0), cells.get(1)), (2, 2));
        if reach.events().contains("dock-claimed") {
            reach.either(
                panicked_first.load(Relaxed),
                "on the dock: rank 1 had panicked before rank 0's sync",
                "on the dock: rank 0's sync began before rank 1 panicked",
            );
        }
    });
}
