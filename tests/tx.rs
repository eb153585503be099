//! Transaction counts, single-threaded: a phase completes at the first
//! operation after which pending == 0 and tx == 0 (SPEC §1, "Completing a
//! phase"), and `arrive_tx` is one step.

mod common;

use common::{dbg, running};
use std::sync::atomic::{AtomicUsize, Ordering};
use syncthreads::Barrier;

const MAX_TX: i64 = Barrier::MAX_TX as i64;

#[test]
fn expect_tx_holds_the_phase_open_until_complete_tx_brings_it_to_zero() {
    let b = Barrier::new(1);
    b.expect_tx(10);
    assert_eq!(dbg(&b), running(false, 1, 1, 10));
    let t = b.arrive();
    assert_eq!(dbg(&b), running(false, 0, 1, 10));
    assert!(!b.try_wait(&t), "pending is 0 but tx is not: no completion");
    b.complete_tx(4);
    assert_eq!(dbg(&b), running(false, 0, 1, 6));
    assert!(!b.try_wait(&t));
    b.complete_tx(6);
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
    b.wait(t);
}

#[test]
fn complete_tx_before_expect_tx_completes_the_phase_at_the_expect_tx() {
    // Measured on an H200: init(1), complete_tx(100), arrive(1),
    // expect_tx(100) completes phase 0 at the expect_tx.
    let b = Barrier::new(1);
    b.complete_tx(100);
    assert_eq!(dbg(&b), running(false, 1, 1, -100));
    let t = b.arrive();
    assert_eq!(dbg(&b), running(false, 0, 1, -100));
    assert!(!b.try_wait(&t));
    assert!(!b.phase_parity());
    b.expect_tx(100);
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
}

#[test]
fn tx_back_at_zero_with_arrivals_pending_does_not_complete() {
    let b = Barrier::new(2);
    b.expect_tx(5);
    b.complete_tx(5);
    assert_eq!(dbg(&b), running(false, 2, 2, 0));
    b.complete_tx(3);
    b.expect_tx(3);
    assert_eq!(dbg(&b), running(false, 2, 2, 0));
    let t = b.arrive();
    assert!(!b.try_wait(&t));
    drop(b.arrive());
    assert!(b.try_wait(&t));
}

#[test]
fn arrive_tx_adds_tx_and_arrives_in_one_step() {
    let b = Barrier::new(2);
    let t = b.arrive_tx(1, 50);
    assert_eq!(dbg(&b), running(false, 1, 2, 50));
    let t2 = b.arrive_tx(1, 0);
    assert_eq!(dbg(&b), running(false, 0, 2, 50));
    assert!(!b.try_wait(&t) && !b.try_wait(&t2));
    b.complete_tx(50);
    assert!(b.try_wait(&t) && b.try_wait(&t2));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

#[test]
fn arrive_tx_that_cancels_a_negative_tx_completes_the_phase_itself() {
    let runs = AtomicUsize::new(0);
    let b = Barrier::with_completion(2, || {
        runs.fetch_add(1, Ordering::Relaxed);
    });
    b.complete_tx(30);
    let t = b.arrive_n(1);
    assert_eq!(dbg(&b), running(false, 1, 2, -30));
    // tx -30 + 30 = 0 and pending 1 - 1 = 0 in the same step.
    let t2 = b.arrive_tx(1, 30);
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    assert!(b.try_wait(&t) && b.try_wait(&t2));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

#[test]
fn arrive_tx_with_n_arrivals() {
    let b = Barrier::new(4);
    let t = b.arrive_tx(3, 7);
    assert_eq!(dbg(&b), running(false, 1, 4, 7));
    drop(b.arrive());
    assert!(!b.try_wait(&t));
    b.complete_tx(7);
    assert!(b.try_wait(&t));
}

#[test]
fn complete_tx_can_complete_the_phase_and_runs_the_completion_there() {
    let completer = std::sync::Mutex::new(None);
    let b = Barrier::with_completion(1, || {
        *completer.lock().unwrap() = Some(std::thread::current().id());
    });
    b.expect_tx(8);
    let t = b.arrive();
    assert!(completer.lock().unwrap().is_none());
    std::thread::scope(|s| {
        s.spawn(|| b.complete_tx(8)).join().unwrap();
    });
    let by = completer.lock().unwrap().take().expect("completion ran");
    assert_ne!(
        by,
        std::thread::current().id(),
        "the complete_tx caller completed it"
    );
    assert!(b.try_wait(&t));
}

#[test]
fn expect_tx_can_complete_the_phase_and_runs_the_completion() {
    let runs = AtomicUsize::new(0);
    let b = Barrier::with_completion(1, || {
        runs.fetch_add(1, Ordering::Relaxed);
    });
    b.complete_tx(9);
    let t = b.arrive();
    assert_eq!(runs.load(Ordering::Relaxed), 0);
    b.expect_tx(9);
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    assert!(b.try_wait(&t));
}

#[test]
fn tx_reaches_both_limits_exactly() {
    let b = Barrier::new(1);
    b.expect_tx(Barrier::MAX_TX);
    assert_eq!(dbg(&b), running(false, 1, 1, MAX_TX));
    b.complete_tx(Barrier::MAX_TX);
    b.complete_tx(Barrier::MAX_TX);
    assert_eq!(dbg(&b), running(false, 1, 1, -MAX_TX));
    let t = b.arrive();
    assert!(!b.try_wait(&t));
    b.expect_tx(Barrier::MAX_TX);
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
}

#[test]
fn zero_tx_operations_change_nothing() {
    let b = Barrier::new(1);
    b.expect_tx(0);
    b.complete_tx(0);
    assert_eq!(dbg(&b), running(false, 1, 1, 0));
}

#[test]
fn each_phase_starts_with_tx_zero_and_tx_works_every_phase() {
    let b = Barrier::new(1);
    for phase in 0..8u32 {
        let parity = phase % 2 == 1;
        assert_eq!(dbg(&b), running(parity, 1, 1, 0));
        let t = b.arrive_tx(1, 3);
        b.complete_tx(1);
        assert!(!b.try_wait(&t));
        b.complete_tx(2);
        b.wait(t);
    }
}
