//! `poison()` racing a task's registration: whether the poison lands before
//! the task's first poll, between its check and its registration, or after
//! it registered, the task is woken (or sees it at once) and panics when
//! polled, with the poisoned message.
//!
//! Cases: the task's first poll saw the poison (it came before the check,
//! or between the check and the registration: the registration's re-check
//! refuses), or the task was pending and the poison's wake-up brought it
//! back. One layout: the poisoner has one operation, which loom places
//! before, inside and after the task's poll from the spawned thread (the
//! cases).

mod common;
use common::{model_reaching, panic_message, quiet_expected_panics, Polls};
use loom::{future::block_on, sync::Arc, thread};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::Barrier;

#[test]
fn poison_racing_a_registration_wakes_the_task_which_panics() {
    quiet_expected_panics();
    let cases = &["the first poll saw the poison", "pending, then woken"];
    model_reaching(cases, |reach| {
        let barrier = Arc::new(Barrier::new(2));
        let token = barrier.arrive();
        let polls = Polls::default();
        let poisoner = {
            let barrier = barrier.clone();
            thread::spawn(move || barrier.poison())
        };
        let payload = catch_unwind(AssertUnwindSafe(|| {
            block_on(polls.count(barrier.wait_async(token)))
        }))
        .expect_err("a wait on a poisoned barrier panics");
        reach.either(
            polls.get() == 1,
            "the first poll saw the poison",
            "pending, then woken",
        );
        assert_eq!(
            panic_message(&*payload),
            "syncthreads: barrier poisoned by poison() (seen by wait_async)"
        );
        poisoner.join().unwrap();
    });
}
