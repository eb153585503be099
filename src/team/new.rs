//! A [`Team`]'s constructors: with and without a completion function and a
//! capacity, each in the default shape; each checks its arguments and names
//! itself in its panics.

use super::ranks::Ranks;
use super::tree::{Front, MAX_FAN_IN};
use super::{Team, FAN_IN, FLAT};
use crate::engine::Engine;
use crate::sync::Mutex;
#[cfg(doc)]
use crate::Barrier;
use crossbeam_utils::CachePadded;
use std::fmt;

impl Team {
    /// Creates a team of `seats` seats, in phase 0, with no completion
    /// function, and the default shape.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(4);
    /// assert_eq!(team.seat_count(), 4);
    /// assert!(!team.phase_parity());
    /// ```
    #[track_caller]
    #[must_use]
    pub fn new(seats: usize) -> Team {
        Team::checked(
            &format_args!("Team::new({seats})"),
            seats,
            seats,
            FAN_IN,
            FLAT,
            || Engine::new(seats),
        )
    }

    /// Creates a team of `capacity` ranks of which `0 .. seats` take part
    /// from phase 0, as in [`Team::new(seats)`](Team::new); the others can
    /// [`join`](Team::join) later. The tree is shaped for the capacity; a
    /// rank that does not take part costs a phase nothing.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= capacity <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::with_capacity(2, 8);
    /// assert_eq!((team.seat_count(), team.capacity()), (2, 8));
    /// let late = team.join().expect("ranks 2 .. 8 are free");
    /// assert_eq!(late.rank(), 2);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_capacity(seats: usize, capacity: usize) -> Team {
        Team::checked(
            &format_args!("Team::with_capacity({seats}, {capacity})"),
            seats,
            capacity,
            FAN_IN,
            FLAT,
            || Engine::new(seats),
        )
    }
}

impl<F: FnMut() + Send> Team<F> {
    /// Creates a team of `seats` seats whose completion function `f` runs
    /// once per phase, as [`Barrier::with_completion`]'s does: on the thread
    /// whose arrival completed the phase, after every arrival of the phase
    /// and before any wait for it returns.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let phases = AtomicUsize::new(0);
    /// let team = syncthreads::Team::with_completion(6, || {
    ///     phases.fetch_add(1, Ordering::Relaxed);
    /// });
    /// std::thread::scope(|s| {
    ///     for seat in team.seats() {
    ///         s.spawn(move || {
    ///             for _ in 0..10 {
    ///                 seat.arrive_and_wait();
    ///             }
    ///         });
    ///     }
    /// });
    /// // Ten, and the one in which the seats left as their threads ended.
    /// assert_eq!(phases.load(Ordering::Relaxed), 11);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_completion(seats: usize, f: F) -> Team<F> {
        Team::checked(
            &format_args!("Team::with_completion({seats}, _)"),
            seats,
            seats,
            FAN_IN,
            FLAT,
            || Engine::with_completion(seats, f),
        )
    }

    /// [`Team::with_capacity`] with a completion function, as
    /// [`Team::with_completion`].
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= capacity <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let phases = AtomicUsize::new(0);
    /// let team = syncthreads::Team::with_completion_and_capacity(1, 4, || {
    ///     phases.fetch_add(1, Ordering::Relaxed);
    /// });
    /// let first = team.seat(0);
    /// first.arrive_and_wait(); // phase 0: rank 0 alone
    /// let second = team.join().unwrap();
    /// drop(second.arrive());
    /// first.arrive_and_wait(); // phase 1: both
    /// assert_eq!(phases.load(Ordering::Relaxed), 2);
    /// # drop(second);
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_completion_and_capacity(seats: usize, capacity: usize, f: F) -> Team<F> {
        Team::checked(
            &format_args!("Team::with_completion_and_capacity({seats}, {capacity}, _)"),
            seats,
            capacity,
            FAN_IN,
            FLAT,
            || Engine::with_completion(seats, f),
        )
    }
}

impl Team {
    /// The team of a grid of `blocks` blocks of `threads` seats each, in
    /// the default fan-in: each block's seats combine in a subtree of their
    /// own before one arrival per block meets the other blocks'
    /// (`Front::grid`). Seat `r` is thread `r % threads` of block
    /// `r / threads`. The caller has checked `1 <= blocks * threads <=
    /// Barrier::MAX`.
    pub(crate) fn grid(blocks: usize, threads: usize) -> Team {
        let seats = blocks * threads;
        let front = Front::grid(blocks, threads, FAN_IN, FLAT);
        Team::build(Engine::new(seats), front, seats, seats, FAN_IN)
    }
}

#[track_caller]
fn check_capacity(call: &dyn fmt::Display, seats: usize, capacity: usize) {
    crate::op::participants(format_args!("{call}"), "the seat count", seats);
    let max = crate::state::MAX as usize;
    if !(seats..=max).contains(&capacity) {
        panic!("syncthreads: {call}: the capacity must be in {seats} ..= {max} (the seat count ..= Barrier::MAX)");
    }
}

impl<F> Team<F> {
    /// A constructor's team: `call` names the constructor in its panics;
    /// `seats` and `capacity` are checked before `engine` makes the word.
    #[track_caller]
    pub(super) fn checked(
        call: &dyn fmt::Display,
        seats: usize,
        capacity: usize,
        fan_in: usize,
        flat: usize,
        engine: impl FnOnce() -> Engine<F>,
    ) -> Team<F> {
        check_capacity(call, seats, capacity);
        assert!(
            (2..=MAX_FAN_IN).contains(&fan_in),
            "syncthreads: {call}: the fan-in must be in 2 ..= {MAX_FAN_IN}"
        );
        let front = Front::new(seats, capacity, fan_in, flat);
        Team::build(engine(), front, seats, capacity, fan_in)
    }

    /// The team of checked arguments, with its front.
    fn build(
        engine: Engine<F>,
        front: Front,
        seats: usize,
        capacity: usize,
        fan_in: usize,
    ) -> Team<F> {
        Team {
            engine: CachePadded::new(engine),
            front,
            ranks: Ranks::new(seats, capacity),
            joins: Mutex::new(()),
            seats: seats as u32,
            capacity: capacity as u32,
            fan_in: fan_in as u32,
        }
    }
}
