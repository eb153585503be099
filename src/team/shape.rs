//! [`TeamShape`]: a [`Team`] of a chosen tree shape, and its word decoded,
//! for the crate's own benches, tests and models only: built with the
//! `bench` feature (or `--cfg loom` / `--cfg shuttle`), never a part of the
//! stable API. The contract's constructors (`team.rs`) build the shape
//! measured fastest; these build any shape through the same checked
//! constructor.

use super::Team;
use crate::engine::Engine;
use std::fmt;

/// A team's tree shape, for the crate's own benches, tests and models
/// (feature `bench`): each node combines `fan_in` members (`2 ..= 64`), and
/// a team of at most `flat` seats has no tree (its seats arrive on the word
/// directly).
///
/// [`Team::new`] uses fan-in 4 and no tree up to 2 seats, the fastest
/// shape measured (the package's benches/RESULTS.md, "Shape and
/// crossover"). On a machine whose cores share caches otherwise, sweep
/// the shape with `cargo bench --features bench --bench bench_table --
/// --only team,team-f2,team-f8,team-flat` and pick the fastest. The
/// shape changes only the cost of an arrival, never what a team does.
///
/// # Examples
///
/// ```
/// let team = syncthreads::TeamShape::new(2, 0).team(8); // a binary tree
/// std::thread::scope(|s| {
///     for seat in team.seats() {
///         s.spawn(move || seat.arrive_and_wait());
///     }
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TeamShape {
    fan_in: usize,
    flat: usize,
}

impl TeamShape {
    /// The shape of `fan_in` members per node, no tree up to `flat` seats;
    /// checked when a team is built of it.
    #[must_use]
    pub const fn new(fan_in: usize, flat: usize) -> TeamShape {
        TeamShape { fan_in, flat }
    }

    /// [`Team::new`] of this shape.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= Barrier::MAX` and `2 <= fan_in <= 64`.
    #[track_caller]
    #[must_use]
    pub fn team(self, seats: usize) -> Team {
        self.build(format_args!("team({seats})"), seats, seats, || {
            Engine::new(seats)
        })
    }

    /// [`Team::with_capacity`] of this shape.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= capacity <= Barrier::MAX` and
    /// `2 <= fan_in <= 64`.
    #[track_caller]
    #[must_use]
    pub fn team_with_capacity(self, seats: usize, capacity: usize) -> Team {
        self.build(
            format_args!("team_with_capacity({seats}, {capacity})"),
            seats,
            capacity,
            || Engine::new(seats),
        )
    }

    /// [`Team::with_completion`] of this shape.
    ///
    /// # Panics
    ///
    /// As [`TeamShape::team`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let phases = AtomicUsize::new(0);
    /// let team = syncthreads::TeamShape::new(2, 0).team_with_completion(4, || {
    ///     phases.fetch_add(1, Ordering::Relaxed);
    /// });
    /// let seats: Vec<_> = team.seats().collect();
    /// for seat in &seats {
    ///     drop(seat.arrive());
    /// }
    /// assert_eq!(phases.load(Ordering::Relaxed), 1);
    /// # drop(seats);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn team_with_completion<F: FnMut() + Send>(self, seats: usize, f: F) -> Team<F> {
        self.build(
            format_args!("team_with_completion({seats}, _)"),
            seats,
            seats,
            || Engine::with_completion(seats, f),
        )
    }

    /// [`Team::with_completion_and_capacity`] of this shape.
    ///
    /// # Panics
    ///
    /// As [`TeamShape::team_with_capacity`].
    #[track_caller]
    #[must_use]
    pub fn team_with_completion_and_capacity<F: FnMut() + Send>(
        self,
        seats: usize,
        capacity: usize,
        f: F,
    ) -> Team<F> {
        self.build(
            format_args!("team_with_completion_and_capacity({seats}, {capacity}, _)"),
            seats,
            capacity,
            || Engine::with_completion(seats, f),
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
    /// let team = syncthreads::TeamShape::grid_team(2, 2);
    /// std::thread::scope(|s| {
    ///     for seat in team.seats() {
    ///         s.spawn(move || seat.arrive_and_wait());
    ///     }
    /// });
    /// ```
    #[track_caller]
    #[must_use]
    pub fn grid_team(blocks: usize, threads: usize) -> Team {
        crate::op::participants(
            format_args!("TeamShape::grid_team({blocks}, {threads})"),
            "the seat count",
            blocks.saturating_mul(threads),
        );
        Team::grid(blocks, threads)
    }

    /// A team of this shape through the contract's checked constructor;
    /// its panics name `TeamShape::new(..).{call}`.
    #[track_caller]
    fn build<F>(
        self,
        call: fmt::Arguments<'_>,
        seats: usize,
        capacity: usize,
        engine: impl FnOnce() -> Engine<F>,
    ) -> Team<F> {
        let TeamShape { fan_in, flat } = self;
        Team::checked(
            &format_args!("TeamShape::new({fan_in}, {flat}).{call}"),
            seats,
            capacity,
            fan_in,
            flat,
            engine,
        )
    }
}

/// The team's word, decoded as a `Barrier`'s `Debug`: for the crate's own
/// tests (feature `bench`), not a stable API.
#[cfg(feature = "bench")]
#[must_use]
pub fn team_word<F>(team: &Team<F>) -> String {
    format!("{:?}", *team.engine)
}
