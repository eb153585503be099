//! Every duration a user can pass works, from `ZERO` to `Duration::MAX`:
//! the timed waits of a `Team` (one engine with `Barrier`'s, whose own are
//! in tests/timeouts.rs) and a deadline at the far end of the clock.

mod common;

use common::watchdog;
use std::time::{Duration, Instant};
use syncthreads::Team;

#[test]
fn a_teams_timed_waits_take_zero_and_duration_max() {
    let team = Team::new(2);
    let (a, b) = (team.seat(0), team.seat(1));
    watchdog(
        60,
        || format!("{team:?}"),
        || {
            let token = team.wait_timeout(a.arrive(), Duration::ZERO).unwrap_err();
            assert!(!team.wait_parity_timeout(false, Duration::ZERO));
            std::thread::scope(|s| {
                let waiter = s.spawn(|| team.wait_timeout(token, Duration::MAX).is_ok());
                let observer = s.spawn(|| team.wait_parity_timeout(false, Duration::MAX));
                drop(b.arrive());
                assert!(waiter.join().unwrap());
                assert!(observer.join().unwrap());
            });
            // A completed phase: at once, whatever the timeout.
            assert!(team.wait_parity_timeout(false, Duration::MAX));
            assert!(team.wait_parity_timeout(false, Duration::ZERO));
        },
    );
}

#[test]
fn a_deadline_centuries_away_waits_until_the_phase_completes() {
    // As far as the clock reaches (about a century past now on every
    // platform the crate runs on).
    let far = Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600);
    let team = Team::new(2);
    let (a, b) = (team.seat(0), team.seat(1));
    watchdog(
        60,
        || format!("{team:?}"),
        || {
            let token = a.arrive();
            std::thread::scope(|s| {
                let waiter = s.spawn(|| team.wait_deadline(token, far).is_ok());
                drop(b.arrive());
                assert!(waiter.join().unwrap());
            });
        },
    );
}
