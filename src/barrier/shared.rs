//! The methods a `Barrier` shares with a `Team` (the waits, the
//! transaction counts, poisoning), emitted by `engine::engine_methods!`
//! with the barrier's examples. `barrier.rs` invokes this after the
//! barrier's own methods: rustdoc lists impl blocks in the order they are
//! expanded, so the page opens with construction and arrivals.

/// `engine_methods!` for `Barrier`, with its examples.
macro_rules! shared_methods {
    () => {
        crate::engine::engine_methods! {
            Barrier, "barrier",
            arrive: "[`arrive`](Barrier::arrive)",
            arrive_and_wait: "[`arrive_and_wait`](Barrier::arrive_and_wait)",
            engine: engine,
            subject: subject,
            wait {
                /// ```
                /// let barrier = syncthreads::Barrier::new(2);
                /// std::thread::scope(|s| {
                ///     s.spawn(|| barrier.wait(barrier.arrive()));
                ///     let token = barrier.arrive();
                ///     barrier.wait(token);
                /// });
                /// ```
            }
            try_wait {
                /// ```
                /// let barrier = syncthreads::Barrier::new(2);
                /// let token = barrier.arrive();
                /// assert!(!barrier.try_wait(&token));
                /// drop(barrier.arrive());
                /// assert!(barrier.try_wait(&token));
                /// ```
            }
            wait_timeout {
                /// ```
                /// use std::time::Duration;
                /// let barrier = syncthreads::Barrier::new(2);
                /// let token = barrier.arrive();
                /// let token = barrier.wait_timeout(token, Duration::from_millis(1)).unwrap_err();
                /// drop(barrier.arrive());
                /// assert!(barrier.wait_timeout(token, Duration::ZERO).is_ok());
                /// ```
            }
            wait_deadline {
                /// ```
                /// use std::time::{Duration, Instant};
                /// let barrier = syncthreads::Barrier::new(2);
                /// let token = barrier.arrive();
                /// let at = Instant::now() + Duration::from_millis(1);
                /// assert!(barrier.wait_deadline(token, at).is_err());
                /// ```
            }
            phase_parity {
                /// ```
                /// let barrier = syncthreads::Barrier::new(1);
                /// assert!(!barrier.phase_parity());
                /// barrier.arrive_and_wait();
                /// assert!(barrier.phase_parity());
                /// ```
            }
            try_wait_parity {
                /// ```
                /// let barrier = syncthreads::Barrier::new(1);
                /// let parity = barrier.phase_parity();
                /// assert!(!barrier.try_wait_parity(parity));
                /// barrier.arrive_and_wait();
                /// assert!(barrier.try_wait_parity(parity));
                /// ```
            }
            wait_parity {
                /// ```
                /// let barrier = syncthreads::Barrier::new(1);
                /// std::thread::scope(|s| {
                ///     s.spawn(|| barrier.wait_parity(false)); // an observer: does not arrive
                ///     drop(barrier.arrive());
                /// });
                /// ```
            }
            wait_parity_timeout {
                /// ```
                /// use std::time::Duration;
                /// let barrier = syncthreads::Barrier::new(1);
                /// assert!(!barrier.wait_parity_timeout(false, Duration::from_millis(1)));
                /// assert!(barrier.wait_parity_timeout(true, Duration::ZERO)); // phase -1 "completed"
                /// ```
            }
            wait_async {
                /// A thread completes the phase that a task waits for:
                ///
                /// ```
                /// use syncthreads::Barrier;
                ///
                /// let barrier = Barrier::new(2);
                /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
                /// std::thread::scope(|s| {
                ///     let token = barrier.arrive();
                ///     s.spawn(|| barrier.arrive_and_wait());
                ///     rt.block_on(barrier.wait_async(token));
                /// });
                /// ```
            }
            wait_parity_async {
                /// ```
                /// use syncthreads::Barrier;
                ///
                /// let barrier = Barrier::new(1);
                /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
                /// std::thread::scope(|s| {
                ///     s.spawn(|| barrier.arrive_and_wait()); // completes phase 0
                ///     rt.block_on(barrier.wait_parity_async(false));
                /// });
                /// assert!(barrier.phase_parity());
                /// ```
            }
            expect_tx {
                /// ```
                /// let barrier = syncthreads::Barrier::new(1);
                /// barrier.expect_tx(64);
                /// let token = barrier.arrive();
                /// assert!(!barrier.try_wait(&token)); // the 64 bytes are still owed
                /// barrier.complete_tx(64);
                /// assert!(barrier.try_wait(&token));
                /// ```
            }
            complete_tx {
                /// ```
                /// let barrier = syncthreads::Barrier::new(1);
                /// barrier.complete_tx(100); // before the matching expect_tx: tx = -100
                /// drop(barrier.arrive());
                /// assert!(!barrier.phase_parity());
                /// barrier.expect_tx(100); // back to 0: phase 0 completes here
                /// assert!(barrier.phase_parity());
                /// ```
            }
            poison {
                /// ```
                /// let barrier = syncthreads::Barrier::new(2);
                /// barrier.poison();
                /// assert!(barrier.is_poisoned());
                /// let result = std::panic::catch_unwind(|| barrier.arrive_and_wait());
                /// assert!(result.is_err());
                /// ```
            }
            is_poisoned {
                /// ```
                /// let barrier = syncthreads::Barrier::new(1);
                /// assert!(!barrier.is_poisoned());
                /// ```
            }
        }
    };
}
pub(super) use shared_methods;
