//! Misuse: a clear panic naming the operation and the numbers, and the
//! barrier left exactly as it was (SPEC §1, "Misuse").
//!
//! Each misuse has a `#[should_panic]` test pinning the message, and a
//! recovery test that catches the panic, checks the decoded word is unchanged
//! and that the barrier still completes phases afterwards.

mod common;

#[cfg(debug_assertions)]
use common::panic_of;
use common::{assert_misuse, dbg, running};
use std::hint::black_box;
use std::time::Duration;
#[cfg(debug_assertions)]
use std::time::Instant;
use syncthreads::Barrier;

// ---- construction ------------------------------------------------------

#[test]
#[should_panic(
    expected = "syncthreads: Barrier::new(0): expected must be in 1 ..= 1048575 (Barrier::MAX)"
)]
fn new_zero_panics() {
    let _ = Barrier::new(black_box(0));
}

#[test]
#[should_panic(
    expected = "syncthreads: Barrier::new(1048576): expected must be in 1 ..= 1048575 (Barrier::MAX)"
)]
fn new_above_max_panics() {
    let _ = Barrier::new(black_box(Barrier::MAX + 1));
}

#[test]
#[should_panic(
    expected = "syncthreads: Barrier::new(18446744073709551615): expected must be in 1 ..= 1048575 (Barrier::MAX)"
)]
#[cfg(target_pointer_width = "64")]
fn new_usize_max_panics() {
    let _ = Barrier::new(black_box(usize::MAX));
}

#[test]
#[should_panic(expected = "syncthreads: with_completion(0, _): expected must be in 1 ..= 1048575")]
fn with_completion_zero_panics() {
    let _ = Barrier::with_completion(black_box(0), || {});
}

#[test]
#[should_panic(
    expected = "syncthreads: with_completion(1048576, _): expected must be in 1 ..= 1048575"
)]
fn with_completion_above_max_panics() {
    let _ = Barrier::with_completion(black_box(Barrier::MAX + 1), || {});
}

// ---- zero counts -------------------------------------------------------

#[test]
#[should_panic(expected = "syncthreads: arrive_n(0): n must be at least 1")]
fn arrive_n_zero_panics() {
    let _ = Barrier::new(2).arrive_n(0);
}

#[test]
#[should_panic(expected = "syncthreads: arrive_and_drop_n(0): n must be at least 1")]
fn arrive_and_drop_n_zero_panics() {
    Barrier::new(2).arrive_and_drop_n(0);
}

#[test]
#[should_panic(expected = "syncthreads: arrive_tx(0, 5): n must be at least 1")]
fn arrive_tx_zero_arrivals_panics() {
    let _ = Barrier::new(2).arrive_tx(0, 5);
}

#[test]
fn zero_count_misuse_leaves_the_barrier_working() {
    let b = Barrier::new(2);
    let t = b.arrive();
    assert_misuse(&b, "arrive_n(0)", || b.arrive_n(0));
    assert_misuse(&b, "arrive_and_drop_n(0)", || b.arrive_and_drop_n(0));
    assert_misuse(&b, "arrive_tx(0, 5)", || b.arrive_tx(0, 5));
    assert_eq!(dbg(&b), running(false, 1, 2, 0));
    drop(b.arrive());
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

// ---- too many arrivals ----------------------------------------------------

#[test]
#[should_panic(
    expected = "syncthreads: arrive_n(3) but only 2 arrivals are pending in this phase (expected per phase: 4)"
)]
fn arrive_n_more_than_pending_panics() {
    let b = Barrier::new(4);
    let _ = b.arrive_n(2);
    let _ = b.arrive_n(3);
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive() but only 0 arrivals are pending in this phase (expected per phase: 1)"
)]
fn arrive_with_nothing_pending_panics() {
    let b = Barrier::new(1);
    b.expect_tx(5); // holds the phase open after its only arrival
    let _ = b.arrive();
    let _ = b.arrive();
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive_and_wait() but only 0 arrivals are pending in this phase (expected per phase: 1)"
)]
fn arrive_and_wait_with_nothing_pending_panics() {
    let b = Barrier::new(1);
    b.expect_tx(5);
    let _ = b.arrive();
    b.arrive_and_wait();
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive_tx(2, 1) but only 1 arrival is pending in this phase (expected per phase: 2)"
)]
fn arrive_tx_more_than_pending_panics() {
    let b = Barrier::new(2);
    let _ = b.arrive();
    let _ = b.arrive_tx(2, 1);
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive_and_drop_n(3) but only 2 arrivals are pending in this phase (expected per phase: 2)"
)]
fn arrive_and_drop_n_beyond_expected_panics() {
    Barrier::new(2).arrive_and_drop_n(3);
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive_and_drop() but only 0 arrivals are pending in this phase (expected per phase: 1)"
)]
fn arrive_and_drop_with_nothing_pending_panics() {
    let b = Barrier::new(1);
    b.expect_tx(1);
    let _ = b.arrive();
    b.arrive_and_drop();
}

#[test]
fn too_many_arrivals_leave_the_barrier_working() {
    let b = Barrier::new(3);
    let t = b.arrive();
    assert_misuse(&b, "arrive_n(3) but only 2 arrivals are pending", || {
        b.arrive_n(3)
    });
    assert_misuse(
        &b,
        "arrive_tx(3, 9) but only 2 arrivals are pending",
        || b.arrive_tx(3, 9),
    );
    assert_misuse(&b, "arrive_and_drop_n(4) but only 2 arrivals", || {
        b.arrive_and_drop_n(4)
    });
    assert_eq!(dbg(&b), running(false, 2, 3, 0));
    drop(b.arrive_n(2));
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 3, 3, 0));
}

#[test]
fn dropping_beyond_a_shrunken_expected_count_panics_and_changes_nothing() {
    let b = Barrier::new(2);
    b.arrive_and_drop(); // phase 0: pending 1; later phases expect 1
    drop(b.arrive()); // phase 0 completes
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
    assert_misuse(
        &b,
        "syncthreads: arrive_and_drop_n(2) but only 1 arrival is pending in this phase (expected per phase: 1)",
        || b.arrive_and_drop_n(2),
    );
    assert!(b.arrive_and_wait().is_leader());
    assert_eq!(dbg(&b), running(false, 1, 1, 0));
}

#[test]
fn arrival_beyond_pending_with_tx_open_leaves_the_barrier_working() {
    let b = Barrier::new(1);
    b.expect_tx(5);
    let t = b.arrive();
    assert_misuse(&b, "arrive() but only 0 arrivals are pending", || {
        b.arrive()
    });
    assert_misuse(&b, "arrive_and_wait() but only 0", || b.arrive_and_wait());
    assert_misuse(&b, "arrive_and_drop() but only 0", || b.arrive_and_drop());
    assert_eq!(dbg(&b), running(false, 0, 1, 5));
    b.complete_tx(5);
    assert!(b.try_wait(&t));
}

// ---- tx out of range ---------------------------------------------------------

#[test]
#[should_panic(
    expected = "syncthreads: expect_tx(1048576): the transaction count would go from 0 to 1048576, outside -1048575 ..= 1048575"
)]
fn expect_tx_above_max_tx_panics() {
    Barrier::new(1).expect_tx(Barrier::MAX_TX + 1);
}

#[test]
#[should_panic(
    expected = "syncthreads: expect_tx(4294967295): the transaction count would go from 0 to 4294967295"
)]
fn expect_tx_of_u32_max_panics_without_wrapping() {
    Barrier::new(1).expect_tx(u32::MAX);
}

#[test]
#[should_panic(
    expected = "syncthreads: expect_tx(1): the transaction count would go from 1048575 to 1048576"
)]
fn expect_tx_past_max_tx_panics() {
    let b = Barrier::new(1);
    b.expect_tx(Barrier::MAX_TX);
    b.expect_tx(1);
}

#[test]
#[should_panic(
    expected = "syncthreads: complete_tx(1048576): the transaction count would go from 0 to -1048576, outside -1048575 ..= 1048575"
)]
fn complete_tx_below_minus_max_tx_panics() {
    Barrier::new(1).complete_tx(Barrier::MAX_TX + 1);
}

#[test]
#[should_panic(
    expected = "syncthreads: complete_tx(4294967295): the transaction count would go from 0 to -4294967295"
)]
fn complete_tx_of_u32_max_panics_without_wrapping() {
    Barrier::new(1).complete_tx(u32::MAX);
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive_tx(1, 1048576): the transaction count would go from 0 to 1048576"
)]
fn arrive_tx_above_max_tx_panics() {
    let _ = Barrier::new(1).arrive_tx(1, Barrier::MAX_TX + 1);
}

#[test]
fn tx_out_of_range_leaves_the_barrier_working() {
    let b = Barrier::new(2);
    b.expect_tx(Barrier::MAX_TX - 1);
    assert_misuse(
        &b,
        "expect_tx(2): the transaction count would go from 1048574 to 1048576",
        || b.expect_tx(2),
    );
    assert_misuse(&b, "expect_tx(4294967295)", || b.expect_tx(u32::MAX));
    // The failed arrive_tx must not have arrived either: one atomic step.
    assert_misuse(
        &b,
        "arrive_tx(1, 2): the transaction count would go from 1048574 to 1048576",
        || b.arrive_tx(1, 2),
    );
    assert_eq!(dbg(&b), running(false, 2, 2, Barrier::MAX_TX as i64 - 1));
    b.complete_tx(Barrier::MAX_TX - 1);
    b.complete_tx(Barrier::MAX_TX);
    assert_misuse(
        &b,
        "complete_tx(1): the transaction count would go from -1048575 to -1048576",
        || b.complete_tx(1),
    );
    assert_misuse(&b, "complete_tx(4294967295)", || b.complete_tx(u32::MAX));
    let t = b.arrive_n(2);
    assert!(!b.try_wait(&t));
    b.expect_tx(Barrier::MAX_TX);
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

// ---- a token from another barrier (debug builds) -----------------------------

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "syncthreads: wait: the token comes from the barrier at")]
fn wait_with_a_token_from_another_barrier_panics() {
    let a = Barrier::new(1);
    let b = Barrier::new(1);
    b.wait(a.arrive());
}

#[cfg(debug_assertions)]
#[test]
fn token_from_another_barrier_is_refused_by_every_wait_and_changes_nothing() {
    let a = Barrier::new(2);
    let b = Barrier::new(2);
    let t = a.arrive();
    let message = panic_of(|| b.try_wait(&t));
    assert!(
        message.contains("syncthreads: try_wait: the token comes from the barrier at"),
        "{message}"
    );
    // The timed waits consume the token; use a fresh one from `a` each time.
    for op in ["wait_timeout", "wait_deadline"] {
        let before = (dbg(&a), dbg(&b));
        let u = Barrier::new(1).arrive();
        let message = match op {
            "wait_timeout" => panic_of(|| b.wait_timeout(u, Duration::ZERO)),
            _ => panic_of(|| b.wait_deadline(u, Instant::now())),
        };
        assert!(
            message.contains(&format!(
                "syncthreads: {op}: the token comes from the barrier at"
            )),
            "{message}"
        );
        assert_eq!((dbg(&a), dbg(&b)), before);
    }
    assert_eq!(dbg(&b), running(false, 2, 2, 0));
    let u = b.arrive_n(2);
    assert!(b.try_wait(&u));
    b.wait(u);
    drop(a.arrive());
    a.wait(t);
}

// ---- a retired barrier -------------------------------------------------------

fn retired() -> Barrier {
    let b = Barrier::new(1);
    b.arrive_and_drop();
    assert_eq!(dbg(&b), running(true, 0, 0, 0));
    b
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive(): the barrier is retired: every participant dropped out and its last phase completed"
)]
fn arrive_on_a_retired_barrier_panics() {
    let _ = retired().arrive();
}

#[test]
#[should_panic(expected = "syncthreads: expect_tx(1): the barrier is retired")]
fn expect_tx_on_a_retired_barrier_panics() {
    retired().expect_tx(1);
}

#[test]
#[should_panic(expected = "syncthreads: complete_tx(1): the barrier is retired")]
fn complete_tx_on_a_retired_barrier_panics() {
    retired().complete_tx(1);
}

#[test]
#[should_panic(
    expected = "syncthreads: wait_parity: the phase of parity true can never complete: every participant dropped out and the barrier is retired in phase 1"
)]
fn wait_parity_for_the_retired_phase_panics() {
    retired().wait_parity(true);
}

#[test]
fn retired_barrier_refuses_every_arrive_and_tx_and_stays_retired() {
    let b = retired();
    assert_misuse(&b, "syncthreads: arrive(): the barrier is retired", || {
        b.arrive()
    });
    assert_misuse(
        &b,
        "syncthreads: arrive_n(1): the barrier is retired",
        || b.arrive_n(1),
    );
    assert_misuse(
        &b,
        "syncthreads: arrive_and_wait(): the barrier is retired",
        || b.arrive_and_wait(),
    );
    assert_misuse(
        &b,
        "syncthreads: arrive_and_drop(): the barrier is retired",
        || b.arrive_and_drop(),
    );
    assert_misuse(
        &b,
        "syncthreads: arrive_and_drop_n(1): the barrier is retired",
        || b.arrive_and_drop_n(1),
    );
    assert_misuse(
        &b,
        "syncthreads: arrive_tx(1, 1): the barrier is retired",
        || b.arrive_tx(1, 1),
    );
    assert_misuse(
        &b,
        "syncthreads: expect_tx(0): the barrier is retired",
        || b.expect_tx(0),
    );
    assert_misuse(
        &b,
        "syncthreads: complete_tx(0): the barrier is retired",
        || b.complete_tx(0),
    );
    assert_misuse(
        &b,
        "wait_parity: the phase of parity true can never complete",
        || b.wait_parity(true),
    );
    assert_misuse(
        &b,
        "wait_parity_timeout: the phase of parity true can never complete",
        || b.wait_parity_timeout(true, Duration::from_secs(3600)),
    );
    // The phase that did complete is still seen as completed, by every query.
    assert!(b.try_wait_parity(false));
    assert!(!b.try_wait_parity(true));
    b.wait_parity(false);
    assert!(b.wait_parity_timeout(false, Duration::ZERO));
    assert!(!b.is_poisoned());
    assert_eq!(dbg(&b), running(true, 0, 0, 0));
}

#[test]
fn retirement_waits_for_outstanding_tx() {
    let b = Barrier::new(1);
    b.expect_tx(4);
    b.arrive_and_drop();
    // expected and pending are 0, but tx is not: not retired yet.
    assert_eq!(dbg(&b), running(false, 0, 0, 4));
    assert!(!b.try_wait_parity(false));
    b.complete_tx(4);
    assert_eq!(dbg(&b), running(true, 0, 0, 0));
    assert_misuse(&b, "the barrier is retired", || b.complete_tx(1));
}
