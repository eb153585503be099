//! Single-threaded phase bookkeeping: construction, arrivals, parity, tokens,
//! arrive_and_drop, retirement, `Debug`, constants and layout (SPEC §1).

mod common;

use common::{dbg, running};
use syncthreads::{ArrivalToken, Barrier, BarrierWaitResult};

#[test]
fn max_and_max_tx_are_two_to_the_twenty_minus_one() {
    assert_eq!(Barrier::MAX, (1 << 20) - 1);
    assert_eq!(Barrier::MAX_TX, (1 << 20) - 1);
}

#[test]
fn barrier_is_one_u64_and_shareable() {
    assert_eq!(std::mem::size_of::<Barrier>(), 8);
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Barrier>();
    send_sync::<ArrivalToken>();
    // A completion that is Send but not Sync still gives a Sync barrier.
    let cell = std::cell::Cell::new(0);
    let b = Barrier::with_completion(1, move || cell.set(cell.get() + 1));
    fn is_sync<T: Sync>(_: &T) {}
    is_sync(&b);
}

#[test]
fn new_starts_in_phase_zero_owing_expected_arrivals() {
    let b = Barrier::new(4);
    assert_eq!(
        dbg(&b),
        "Barrier { phase_parity: false, pending: 4, expected: 4, tx: 0, poisoned: false }"
    );
    assert!(!b.phase_parity());
    assert!(!b.is_poisoned());
}

#[test]
fn new_is_const_and_usable_as_a_static() {
    static B: Barrier = Barrier::new(1);
    assert!(B.arrive_and_wait().is_leader());
    assert!(B.phase_parity());
}

#[test]
fn new_accepts_max_and_arrive_n_max_completes_the_phase() {
    let b = Barrier::new(Barrier::MAX);
    assert_eq!(dbg(&b), running(false, Barrier::MAX, Barrier::MAX, 0));
    let t = b.arrive_n(Barrier::MAX - 1);
    assert!(!b.try_wait(&t));
    assert_eq!(dbg(&b), running(false, 1, Barrier::MAX, 0));
    let t2 = b.arrive();
    assert!(b.try_wait(&t) && b.try_wait(&t2));
    assert_eq!(dbg(&b), running(true, Barrier::MAX, Barrier::MAX, 0));
}

#[test]
fn single_participant_completes_one_phase_per_arrival() {
    let b = Barrier::new(1);
    for phase in 0..10u32 {
        assert_eq!(b.phase_parity(), phase % 2 == 1);
        let t = b.arrive();
        assert!(b.try_wait(&t), "phase {phase} should be complete");
        assert_eq!(b.phase_parity(), phase % 2 == 0);
        b.wait(t);
    }
    assert_eq!(dbg(&b), running(false, 1, 1, 0));
}

#[test]
fn parity_flips_only_when_the_last_arrival_lands() {
    let b = Barrier::new(3);
    for phase in 0..6u32 {
        let parity = phase % 2 == 1;
        let t1 = b.arrive();
        assert_eq!(dbg(&b), running(parity, 2, 3, 0));
        let t2 = b.arrive();
        assert_eq!(dbg(&b), running(parity, 1, 3, 0));
        assert!(!b.try_wait(&t1) && !b.try_wait(&t2));
        assert!(!b.try_wait_parity(parity));
        let t3 = b.arrive();
        assert_eq!(dbg(&b), running(!parity, 3, 3, 0));
        assert!(b.try_wait(&t1) && b.try_wait(&t2) && b.try_wait(&t3));
        assert!(b.try_wait_parity(parity));
        assert!(!b.try_wait_parity(!parity));
        b.wait(t1);
        b.wait(t2);
        b.wait(t3);
    }
}

#[test]
fn arrive_n_counts_n_arrivals() {
    let b = Barrier::new(5);
    let t = b.arrive_n(2);
    assert_eq!(dbg(&b), running(false, 3, 5, 0));
    assert!(!b.try_wait(&t));
    let t2 = b.arrive_n(3);
    assert!(b.try_wait(&t) && b.try_wait(&t2));
    assert_eq!(dbg(&b), running(true, 5, 5, 0));
}

#[test]
fn arrive_and_wait_of_a_sole_participant_leads_every_phase() {
    let b = Barrier::new(1);
    for _ in 0..5 {
        assert!(b.arrive_and_wait().is_leader());
    }
    assert!(b.phase_parity());
}

#[test]
fn arrive_and_wait_result_mirrors_std() {
    let b = Barrier::new(1);
    let r: BarrierWaitResult = b.arrive_and_wait();
    let copy = r;
    assert_eq!(r, copy);
    assert!(format!("{r:?}").contains("true"));
}

#[test]
fn try_wait_parity_treats_the_phase_before_zero_as_completed() {
    let b = Barrier::new(2);
    assert!(
        b.try_wait_parity(true),
        "phase -1 (odd) counts as completed"
    );
    assert!(!b.try_wait_parity(false));
    b.wait_parity(true); // returns at once
    assert!(b.wait_parity_timeout(true, std::time::Duration::ZERO));
}

#[test]
fn token_may_be_waited_on_in_the_next_phase() {
    let b = Barrier::new(2);
    let old = b.arrive();
    drop(b.arrive()); // phase 0 completes
    let newer = b.arrive(); // phase 1, still open
    assert!(b.try_wait(&old));
    assert!(!b.try_wait(&newer));
    b.wait(old);
    assert!(b.wait_timeout(newer, std::time::Duration::ZERO).is_err());
}

#[test]
fn tokens_stay_correct_as_the_phase_number_wraps() {
    // The word keeps only a few phase bits; tokens must still match across
    // many wraps, each waited on in its own phase and in the next one.
    let b = Barrier::new(2);
    let mut previous: Option<ArrivalToken> = None;
    for phase in 0..40u32 {
        let t = b.arrive();
        assert!(!b.try_wait(&t), "phase {phase}: token completed too early");
        if let Some(p) = previous.take() {
            assert!(b.try_wait(&p), "phase {phase}: previous token not complete");
            b.wait(p);
        }
        let u = b.arrive();
        assert!(b.try_wait(&t) && b.try_wait(&u));
        b.wait(u);
        previous = Some(t);
    }
}

#[test]
fn arrival_token_debug_names_the_type() {
    let b = Barrier::new(1);
    let t = b.arrive();
    assert!(format!("{t:?}").starts_with("ArrivalToken"));
    b.wait(t);
}

#[test]
fn arrive_and_drop_lowers_expected_for_this_and_later_phases() {
    let b = Barrier::new(3);
    b.arrive_and_drop();
    assert_eq!(dbg(&b), running(false, 2, 2, 0));
    let t = b.arrive_n(2);
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
    b.arrive_and_drop_n(2);
    // Expected dropped to 0: the barrier is retired once that phase completed.
    assert_eq!(dbg(&b), running(false, 0, 0, 0));
}

#[test]
fn arrive_and_drop_can_be_the_completing_arrival() {
    let b = Barrier::new(2);
    let t = b.arrive();
    b.arrive_and_drop();
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
    assert!(b.arrive_and_wait().is_leader());
    assert_eq!(dbg(&b), running(false, 1, 1, 0));
}

#[test]
fn arrive_and_drop_n_in_a_partly_arrived_phase() {
    let b = Barrier::new(5);
    let t = b.arrive_n(2);
    b.arrive_and_drop_n(2);
    assert_eq!(dbg(&b), running(false, 1, 3, 0));
    drop(b.arrive());
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 3, 3, 0));
}

#[test]
fn last_participant_leaving_retires_the_barrier_after_its_phase() {
    let b = Barrier::new(1);
    b.arrive_and_drop();
    assert_eq!(dbg(&b), running(true, 0, 0, 0));
    // The phase it arrived in completed; waiting for it is fine.
    assert!(b.try_wait_parity(false));
    b.wait_parity(false);
}

#[test]
fn debug_has_no_bound_on_the_completion_type() {
    struct NotDebug;
    let nd = NotDebug;
    let b = Barrier::with_completion(2, move || {
        let _ = &nd;
    });
    assert_eq!(dbg(&b), running(false, 2, 2, 0));
}

#[test]
fn with_completion_starts_like_new() {
    let b = Barrier::with_completion(Barrier::MAX, || {});
    assert_eq!(dbg(&b), running(false, Barrier::MAX, Barrier::MAX, 0));
}
