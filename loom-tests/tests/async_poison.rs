//! `poison()` racing a task's registration: whether the poison lands before
//! the task's first poll, between its check and its registration, or after
//! it registered, the task is woken (or sees it at once) and panics when
//! polled, with the poisoned message.

mod common;
use common::{model, panic_message, quiet_expected_panics};
use loom::{future::block_on, sync::Arc, thread};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::Barrier;

#[test]
fn poison_racing_a_registration_wakes_the_task_which_panics() {
    quiet_expected_panics();
    model(|| {
        let barrier = Arc::new(Barrier::new(2));
        let token = barrier.arrive();
        let poisoner = {
            let barrier = barrier.clone();
            thread::spawn(move || barrier.poison())
        };
        let payload = catch_unwind(AssertUnwindSafe(|| block_on(barrier.wait_async(token))))
            .expect_err("a wait on a poisoned barrier panics");
        assert_eq!(
            panic_message(&*payload),
            "syncthreads: barrier poisoned by poison() (seen by wait_async)"
        );
        poisoner.join().unwrap();
    });
}
