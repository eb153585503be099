//! The methods a `Team` shares with a `Barrier` (the waits, the
//! transaction counts, poisoning), emitted by `engine::engine_methods!`
//! with the team's examples; its waits are the team's in the stall
//! reports (`Team::subject`). Arrivals go through seats
//! only, so the team offers no `arrive*` of its own and does not
//! dereference to its engine. `team.rs` invokes this after the team's own
//! methods: rustdoc lists impl blocks in the order they are expanded, so
//! the page opens with construction, seats and joins.

/// `engine_methods!` for `Team`, with its examples.
macro_rules! shared_methods {
    () => {
        crate::engine::engine_methods! {
            Team, "team",
            arrive: "[`Seat::arrive`](crate::Seat::arrive)",
            arrive_and_wait: "[`Seat::arrive_and_wait`](crate::Seat::arrive_and_wait)",
            engine: engine,
            subject: subject,
            wait {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let token = team.seat(0).arrive();
                /// team.wait(token);
                /// ```
            }
            try_wait {
                /// ```
                /// let team = syncthreads::Team::new(2);
                /// let (a, b) = (team.seat(0), team.seat(1));
                /// let token = a.arrive();
                /// assert!(!team.try_wait(&token));
                /// drop(b.arrive());
                /// assert!(team.try_wait(&token));
                /// ```
            }
            wait_timeout {
                /// ```
                /// use std::time::Duration;
                /// let team = syncthreads::Team::new(2);
                /// let (a, b) = (team.seat(0), team.seat(1));
                /// let token = team.wait_timeout(a.arrive(), Duration::from_millis(1)).unwrap_err();
                /// drop(b.arrive());
                /// assert!(team.wait_timeout(token, Duration::ZERO).is_ok());
                /// ```
            }
            wait_deadline {
                /// ```
                /// use std::time::{Duration, Instant};
                /// let team = syncthreads::Team::new(2);
                /// let seat = team.seat(0);
                /// let at = Instant::now() + Duration::from_millis(1);
                /// assert!(team.wait_deadline(seat.arrive(), at).is_err());
                /// ```
            }
            phase_parity {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let seat = team.seat(0);
                /// assert!(!team.phase_parity());
                /// seat.arrive_and_wait();
                /// assert!(team.phase_parity());
                /// ```
            }
            try_wait_parity {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let seat = team.seat(0);
                /// assert!(!team.try_wait_parity(false));
                /// seat.arrive_and_wait();
                /// assert!(team.try_wait_parity(false));
                /// ```
            }
            wait_parity {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let seat = team.seat(0);
                /// std::thread::scope(|s| {
                ///     s.spawn(|| team.wait_parity(false)); // an observer: takes no seat
                ///     seat.arrive_and_wait();
                /// });
                /// ```
            }
            wait_parity_timeout {
                /// ```
                /// use std::time::Duration;
                /// let team = syncthreads::Team::new(1);
                /// assert!(!team.wait_parity_timeout(false, Duration::from_millis(1)));
                /// ```
            }
            wait_async {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let token = team.seat(0).arrive();
                /// tokio::runtime::Builder::new_current_thread()
                ///     .build()
                ///     .unwrap()
                ///     .block_on(team.wait_async(token));
                /// ```
            }
            wait_parity_async {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let seat = team.seat(0);
                /// seat.arrive_and_wait(); // phase 0 completed
                /// tokio::runtime::Builder::new_current_thread()
                ///     .build()
                ///     .unwrap()
                ///     .block_on(team.wait_parity_async(false)); // returns at once
                /// ```
            }
            expect_tx {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// team.expect_tx(8);
                /// let token = team.seat(0).arrive();
                /// assert!(!team.try_wait(&token));
                /// team.complete_tx(8);
                /// assert!(team.try_wait(&token));
                /// ```
            }
            complete_tx {
                /// ```
                /// let team = syncthreads::Team::new(1);
                /// let token = team.seat(0).arrive_tx(16);
                /// team.complete_tx(16);
                /// assert!(team.try_wait(&token));
                /// ```
            }
            poison {
                /// ```
                /// let team = syncthreads::Team::new(2);
                /// team.poison();
                /// assert!(team.is_poisoned());
                /// ```
            }
            is_poisoned {
                /// ```
                /// assert!(!syncthreads::Team::new(2).is_poisoned());
                /// ```
            }
        }
    };
}
pub(super) use shared_methods;
