//! Timed waits: zero and `Duration::MAX` work, `Err` hands the token back and
//! only comes once the time has really elapsed, `Ok` comes as soon as the
//! phase completes, and a timeout never undoes the arrival (SPEC §1).

mod common;

use common::{dbg, eventually, running, watchdog};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};
use syncthreads::Barrier;

#[test]
fn zero_timeout_on_an_open_phase_hands_the_token_back_and_keeps_the_arrival() {
    let b = Barrier::new(2);
    let t = b.arrive();
    let t = b.wait_timeout(t, Duration::ZERO).unwrap_err();
    assert_eq!(dbg(&b), running(false, 1, 2, 0), "the arrival stands");
    assert!(!b.wait_parity_timeout(false, Duration::ZERO));
    drop(b.arrive());
    assert!(b.wait_timeout(t, Duration::ZERO).is_ok());
    assert!(b.wait_parity_timeout(false, Duration::ZERO));
}

#[test]
fn zero_timeout_on_a_completed_phase_is_ok() {
    let b = Barrier::new(1);
    let t = b.arrive();
    assert!(b.wait_timeout(t, Duration::ZERO).is_ok());
}

#[test]
fn duration_max_on_a_completed_phase_returns_at_once() {
    let b = Barrier::new(1);
    let t = b.arrive();
    watchdog(
        10,
        || dbg(&b),
        || {
            assert!(b.wait_timeout(t, Duration::MAX).is_ok());
            assert!(b.wait_parity_timeout(false, Duration::MAX));
            let t = b.arrive();
            // Large, but still representable as an `Instant`.
            assert!(b.wait_timeout(t, Duration::from_secs(1 << 40)).is_ok());
            assert!(b.wait_parity_timeout(true, Duration::from_secs(1 << 40)));
        },
    );
}

#[test]
fn duration_max_waits_until_the_phase_completes() {
    let b = Barrier::new(2);
    watchdog(
        20,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let waiter = s.spawn(|| b.wait_timeout(b.arrive(), Duration::MAX).is_ok());
                let observer = s.spawn(|| b.wait_parity_timeout(false, Duration::MAX));
                // A deadline far away but representable: the park must not
                // overflow converting it, nor time out early.
                let far = s.spawn(|| b.wait_parity_timeout(false, Duration::from_secs(1 << 40)));
                eventually("the waiters wait", || dbg(&b) == running(false, 1, 2, 0));
                // Let the waiters get past spinning into their parked sleep
                // (asserted the same either way).
                thread::sleep(Duration::from_millis(20));
                drop(b.arrive());
                assert!(waiter.join().unwrap());
                assert!(observer.join().unwrap());
                assert!(far.join().unwrap());
            });
        },
    );
}

#[test]
fn past_deadline_returns_err_at_once_on_an_open_phase() {
    let b = Barrier::new(2);
    let t = b.arrive();
    let past = Instant::now() - Duration::from_millis(10);
    let t = watchdog(10, || dbg(&b), || b.wait_deadline(t, past).unwrap_err());
    assert_eq!(dbg(&b), running(false, 1, 2, 0));
    drop(b.arrive());
    assert!(
        b.wait_deadline(t, past).is_ok(),
        "a completed phase is Ok even past the deadline"
    );
}

#[test]
fn timed_waits_err_only_after_the_timeout_has_elapsed() {
    let b = Barrier::new(2);
    let timeout = Duration::from_millis(30);
    let t = b.arrive();

    let start = Instant::now();
    let t = b.wait_timeout(t, timeout).unwrap_err();
    assert!(
        start.elapsed() >= timeout,
        "wait_timeout gave up after {:?}",
        start.elapsed()
    );

    let start = Instant::now();
    let deadline = start + timeout;
    let t = b.wait_deadline(t, deadline).unwrap_err();
    assert!(
        Instant::now() >= deadline,
        "wait_deadline gave up before its deadline"
    );

    let start = Instant::now();
    assert!(!b.wait_parity_timeout(false, timeout));
    assert!(
        start.elapsed() >= timeout,
        "wait_parity_timeout gave up after {:?}",
        start.elapsed()
    );

    assert_eq!(dbg(&b), running(false, 1, 2, 0));
    drop(t);
}

#[test]
fn timed_wait_returns_ok_as_soon_as_the_phase_completes() {
    const TIMEOUT: Duration = Duration::from_secs(60);
    let b = Barrier::new(2);
    let elapsed = watchdog(
        30,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let token_waiter = s.spawn(|| {
                    let t = b.arrive();
                    let start = Instant::now();
                    assert!(b.wait_timeout(t, TIMEOUT).is_ok());
                    start.elapsed()
                });
                let parity_waiter = s.spawn(|| {
                    let start = Instant::now();
                    assert!(b.wait_parity_timeout(false, TIMEOUT));
                    start.elapsed()
                });
                eventually("the waiters wait", || dbg(&b) == running(false, 1, 2, 0));
                // Let the waiters settle into their waits (parked).
                thread::sleep(Duration::from_millis(20));
                drop(b.arrive());
                (token_waiter.join().unwrap(), parity_waiter.join().unwrap())
            })
        },
    );
    assert!(
        elapsed.0 < TIMEOUT / 4,
        "wait_timeout returned after {:?}",
        elapsed.0
    );
    assert!(
        elapsed.1 < TIMEOUT / 4,
        "wait_parity_timeout returned after {:?}",
        elapsed.1
    );
}

#[test]
fn token_handed_back_by_a_timeout_completes_a_later_wait() {
    let b = Barrier::new(2);
    let timeouts = AtomicUsize::new(0);
    let timed_out_once = AtomicBool::new(false);
    watchdog(
        20,
        || format!("{b:?}, timeouts {}", timeouts.load(Ordering::Relaxed)),
        || {
            thread::scope(|s| {
                s.spawn(|| {
                    let mut t = b.arrive();
                    loop {
                        match b.wait_timeout(t, Duration::from_millis(1)) {
                            Ok(()) => break,
                            Err(back) => {
                                t = back;
                                timeouts.fetch_add(1, Ordering::Relaxed);
                                timed_out_once.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                    // The phase completed: a new arrival belongs to phase 1.
                    assert!(b.phase_parity());
                });
                eventually("a timeout", || timed_out_once.load(Ordering::Relaxed));
                let t = b.arrive();
                assert!(b.try_wait(&t));
                b.wait(t);
            });
        },
    );
    assert!(timeouts.load(Ordering::Relaxed) >= 1);
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}

#[test]
fn token_handed_back_by_a_timeout_can_be_waited_on_blocking() {
    let b = Barrier::new(2);
    watchdog(
        20,
        || dbg(&b),
        || {
            let t = b.arrive();
            let t = b.wait_timeout(t, Duration::from_millis(1)).unwrap_err();
            let t = b
                .wait_deadline(t, Instant::now() + Duration::from_millis(1))
                .unwrap_err();
            thread::scope(|s| {
                s.spawn(|| drop(b.arrive()));
                b.wait(t);
            });
        },
    );
    assert_eq!(dbg(&b), running(true, 2, 2, 0));
}
