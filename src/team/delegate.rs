//! Every operation of a [`Team`] that is not an arrival: the waits, the
//! queries, the transaction counts and poisoning, each delegated to the
//! team's barrier. Arrivals go through seats only, so the team offers no
//! `arrive*` of its own and does not dereference to its barrier.

use super::Team;
use crate::completion::Completion;
use crate::engine::{ParityWaitFuture, WaitFuture};
use crate::phase::Phase;
use crate::state::Snapshot;
use crate::sync::Ordering;
use crate::token::{ArrivalToken, BarrierWaitResult};
#[cfg(doc)]
use crate::Barrier;
use std::fmt;
use std::time::{Duration, Instant};

impl<F: Completion> Team<F> {
    /// Blocks until the phase of `token` (from a seat's arrival) has
    /// completed; see [`Barrier::wait`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let token = team.seat(0).arrive();
    /// team.wait(token);
    /// ```
    #[track_caller]
    pub fn wait(&self, token: ArrivalToken) {
        let _as = self.describe_wait(std::panic::Location::caller());
        self.barrier.wait(token);
    }

    /// Whether the phase of `token` has completed; never blocks. See
    /// [`Barrier::try_wait`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::try_wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(2);
    /// let (a, b) = (team.seat(0), team.seat(1));
    /// let token = a.arrive();
    /// assert!(!team.try_wait(&token));
    /// drop(b.arrive());
    /// assert!(team.try_wait(&token));
    /// ```
    #[track_caller]
    #[must_use]
    pub fn try_wait(&self, token: &ArrivalToken) -> bool {
        self.barrier.try_wait(token)
    }

    /// Waits at most `timeout` for the phase of `token`; `Err` hands the
    /// token back. See [`Barrier::wait_timeout`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (a, b) = (team.seat(0), team.seat(1));
    /// let token = team.wait_timeout(a.arrive(), Duration::from_millis(1)).unwrap_err();
    /// drop(b.arrive());
    /// assert!(team.wait_timeout(token, Duration::ZERO).is_ok());
    /// ```
    #[track_caller]
    pub fn wait_timeout(&self, token: ArrivalToken, timeout: Duration) -> Result<(), ArrivalToken> {
        let _as = self.describe_wait(std::panic::Location::caller());
        self.barrier.wait_timeout(token, timeout)
    }

    /// Waits until `deadline` at the latest for the phase of `token`; `Err`
    /// hands the token back. See [`Barrier::wait_deadline`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let team = syncthreads::Team::new(2);
    /// let seat = team.seat(0);
    /// let at = Instant::now() + Duration::from_millis(1);
    /// assert!(team.wait_deadline(seat.arrive(), at).is_err());
    /// ```
    #[track_caller]
    pub fn wait_deadline(
        &self,
        token: ArrivalToken,
        deadline: Instant,
    ) -> Result<(), ArrivalToken> {
        let _as = self.describe_wait(std::panic::Location::caller());
        self.barrier.wait_deadline(token, deadline)
    }

    /// Parity of the current phase: `false` for phases 0, 2, 4, … See
    /// [`Barrier::phase_parity`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let seat = team.seat(0);
    /// assert!(!team.phase_parity());
    /// seat.arrive_and_wait();
    /// assert!(team.phase_parity());
    /// ```
    #[must_use]
    pub fn phase_parity(&self) -> bool {
        self.barrier.phase_parity()
    }

    /// Whether the phase of parity `parity` has completed; never blocks.
    /// See [`Barrier::try_wait_parity`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let seat = team.seat(0);
    /// assert!(!team.try_wait_parity(false));
    /// seat.arrive_and_wait();
    /// assert!(team.try_wait_parity(false));
    /// ```
    #[must_use]
    pub fn try_wait_parity(&self, parity: bool) -> bool {
        self.barrier.try_wait_parity(parity)
    }

    /// Blocks until the phase of parity `parity` has completed, without
    /// arriving. See [`Barrier::wait_parity`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::wait_parity`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let seat = team.seat(0);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| team.wait_parity(false)); // an observer: takes no seat
    ///     seat.arrive_and_wait();
    /// });
    /// ```
    #[track_caller]
    pub fn wait_parity(&self, parity: bool) {
        let _as = self.describe_wait(std::panic::Location::caller());
        self.barrier.wait_parity(parity);
    }

    /// Waits at most `timeout` for the phase of parity `parity`; returns
    /// whether it completed. See [`Barrier::wait_parity_timeout`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::wait_parity`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let team = syncthreads::Team::new(1);
    /// assert!(!team.wait_parity_timeout(false, Duration::from_millis(1)));
    /// ```
    #[track_caller]
    #[must_use = "false: the phase had not completed in time"]
    pub fn wait_parity_timeout(&self, parity: bool, timeout: Duration) -> bool {
        let _as = self.describe_wait(std::panic::Location::caller());
        self.barrier.wait_parity_timeout(parity, timeout)
    }

    /// Adds `tx` to the current phase's transaction count. See
    /// [`Barrier::expect_tx`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::expect_tx`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// team.expect_tx(8);
    /// let token = team.seat(0).arrive();
    /// assert!(!team.try_wait(&token));
    /// team.complete_tx(8);
    /// assert!(team.try_wait(&token));
    /// ```
    #[track_caller]
    pub fn expect_tx(&self, tx: u32) {
        self.barrier.expect_tx(tx);
    }

    /// Subtracts `tx` from the current phase's transaction count; this may
    /// complete the phase. See [`Barrier::complete_tx`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::expect_tx`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let token = team.seat(0).arrive_tx(16);
    /// team.complete_tx(16);
    /// assert!(team.try_wait(&token));
    /// ```
    #[track_caller]
    pub fn complete_tx(&self, tx: u32) {
        self.barrier.complete_tx(tx);
    }

    /// Poisons the team: every seat waiting in it, and every later arrival
    /// or wait, panics instead of hanging. See [`Barrier::poison`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(2);
    /// team.poison();
    /// assert!(team.is_poisoned());
    /// ```
    pub fn poison(&self) {
        self.barrier.poison();
    }

    /// Whether the team is poisoned. See [`Barrier::is_poisoned`].
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!syncthreads::Team::new(2).is_poisoned());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.barrier.is_poisoned()
    }

    /// Waits, as a future, until the phase of `token` has completed. See
    /// [`Barrier::wait_async`].
    ///
    /// # Panics
    ///
    /// As [`Barrier::wait_async`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let token = team.seat(0).arrive();
    /// tokio::runtime::Builder::new_current_thread()
    ///     .build()
    ///     .unwrap()
    ///     .block_on(team.wait_async(token));
    /// ```
    #[track_caller]
    pub fn wait_async(&self, token: ArrivalToken) -> WaitFuture<'_, F> {
        let future = self.barrier.wait_async(token);
        let future = future.described_as(self.subject());
        future
    }

    /// Waits, as a future, until the phase of parity `parity` has
    /// completed, without arriving. See [`Barrier::wait_parity_async`].
    ///
    /// # Panics
    ///
    /// The future panics when polled as [`Barrier::wait_parity`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let seat = team.seat(0);
    /// seat.arrive_and_wait(); // phase 0 completed
    /// tokio::runtime::Builder::new_current_thread()
    ///     .build()
    ///     .unwrap()
    ///     .block_on(team.wait_parity_async(false)); // returns at once
    /// ```
    #[track_caller]
    pub fn wait_parity_async(&self, parity: bool) -> ParityWaitFuture<'_, F> {
        let future = self.barrier.wait_parity_async(parity);
        let future = future.described_as(self.subject());
        future
    }

    /// One seat-less arrival and wait on the team's word, bypassing the
    /// tree: only for a caller that never hands out a seat of this team
    /// (a `BlockBarrier` used seat-less), for which the team is a plain
    /// barrier of `seat_count()` participants. `name` is the call the user
    /// made, for the messages.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_and_wait_seatless(&self, name: &'static str) -> BarrierWaitResult {
        self.barrier.arrive_and_wait_as(name)
    }

    /// The current phase modulo 4 (`Relaxed`); see `Engine::phase`.
    #[inline]
    pub(crate) fn phase(&self) -> Phase {
        self.barrier.phase()
    }
}

impl<F> Team<F> {
    /// The team's barrier, for `Debug` output only.
    pub(crate) fn barrier_debug(&self) -> &(dyn fmt::Debug + '_) {
        &*self.barrier
    }

    /// One load of the team's word, for the queries of what is built on it.
    #[inline]
    pub(crate) fn word(&self, order: Ordering) -> Snapshot {
        self.barrier.word(order)
    }
}
