//! A [`Team`] of a chosen tree shape, and its word decoded, for the
//! crate's own benches, tests and models only: built with the `bench`
//! feature (or `--cfg loom` / `--cfg shuttle`), never a part of the stable
//! API. The contract's constructors (`team.rs`) build the shape measured
//! fastest.

use super::Team;
use crate::engine::Engine;

impl Team {
    /// A team with a chosen tree shape: each node combines `fan_in`
    /// members (`2 ..= 64`), and a team of at most `flat` seats has no tree
    /// (its seats arrive on the word directly).
    ///
    /// [`Team::new`] uses fan-in 4 and no tree up to 2 seats, the fastest
    /// shape measured (the package's benches/RESULTS.md, "Shape and
    /// crossover"). On a machine whose cores share caches otherwise, sweep
    /// the shape with `cargo bench --features bench --bench bench_table --
    /// --only team,team-f2,team-f8,team-flat` and pick the fastest. The
    /// shape changes only the cost of an arrival, never what a team does.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= Barrier::MAX` and `2 <= fan_in <= 64`.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::with_shape(8, 2, 0); // a binary tree
    /// std::thread::scope(|s| {
    ///     for seat in team.seats() {
    ///         s.spawn(move || seat.arrive_and_wait());
    ///     }
    /// });
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_shape(seats: usize, fan_in: usize, flat: usize) -> Team {
        Team::checked(
            &format_args!("Team::with_shape({seats}, {fan_in}, {flat})"),
            seats,
            seats,
            fan_in,
            flat,
            || Engine::new(seats),
        )
    }

    /// The team of a grid of `blocks` blocks of `threads` seats, shaped as
    /// `launch_grid` shapes its grid's barrier: each block's seats combine
    /// in a subtree of their own, then one arrival per block climbs the
    /// tree over the blocks. Seat `r` is thread `r % threads` of block
    /// `r / threads`. For the crate's models and benches of a grid's
    /// barrier without the pool.
    ///
    /// # Panics
    ///
    /// Unless `1 <= blocks * threads <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::with_grid_shape(2, 2);
    /// std::thread::scope(|s| {
    ///     for seat in team.seats() {
    ///         s.spawn(move || seat.arrive_and_wait());
    ///     }
    /// });
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_grid_shape(blocks: usize, threads: usize) -> Team {
        crate::op::participants(
            format_args!("Team::with_grid_shape({blocks}, {threads})"),
            "the seat count",
            blocks.saturating_mul(threads),
        );
        Team::grid(blocks, threads)
    }

    /// [`Team::with_capacity`] with a chosen shape, as [`Team::with_shape`].
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= capacity <= Barrier::MAX` and
    /// `2 <= fan_in <= 64`.
    #[track_caller]
    #[must_use]
    pub fn with_capacity_and_shape(
        seats: usize,
        capacity: usize,
        fan_in: usize,
        flat: usize,
    ) -> Team {
        Team::checked(
            &format_args!("Team::with_capacity_and_shape({seats}, {capacity}, {fan_in}, {flat})"),
            seats,
            capacity,
            fan_in,
            flat,
            || Engine::new(seats),
        )
    }
}

impl<F> Team<F> {
    /// The team's word, decoded as a `Barrier`'s `Debug`: for the crate's
    /// own tests (feature `bench`), not a stable API.
    #[cfg(feature = "bench")]
    #[doc(hidden)]
    #[must_use]
    pub fn bench_word(&self) -> String {
        format!("{:?}", *self.engine)
    }
}

impl<F: FnMut() + Send> Team<F> {
    /// [`Team::with_completion`] with a chosen shape, as [`Team::with_shape`].
    ///
    /// # Panics
    ///
    /// As [`Team::with_shape`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let phases = AtomicUsize::new(0);
    /// let team = syncthreads::Team::with_completion_and_shape(4, || {
    ///     phases.fetch_add(1, Ordering::Relaxed);
    /// }, 2, 0);
    /// let seats: Vec<_> = team.seats().collect();
    /// for seat in &seats {
    ///     drop(seat.arrive());
    /// }
    /// assert_eq!(phases.load(Ordering::Relaxed), 1);
    /// # drop(seats);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_completion_and_shape(seats: usize, f: F, fan_in: usize, flat: usize) -> Team<F> {
        Team::checked(
            &format_args!("Team::with_completion_and_shape({seats}, _, {fan_in}, {flat})"),
            seats,
            seats,
            fan_in,
            flat,
            || Engine::with_completion(seats, f),
        )
    }

    /// [`Team::with_completion_and_capacity`] with a chosen shape, as
    /// [`Team::with_shape`].
    ///
    /// # Panics
    ///
    /// As [`Team::with_capacity_and_shape`].
    #[track_caller]
    #[must_use]
    pub fn with_completion_and_capacity_and_shape(
        seats: usize,
        capacity: usize,
        f: F,
        fan_in: usize,
        flat: usize,
    ) -> Team<F> {
        Team::checked(
            &format_args!("Team::with_completion_and_capacity_and_shape({seats}, {capacity}, _, {fan_in}, {flat})"),
            seats,
            capacity,
            fan_in,
            flat,
            || Engine::with_completion(seats, f),
        )
    }
}
