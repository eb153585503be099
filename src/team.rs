//! `Team` and `Seat`: a combining arrival tree (the team's front) in front
//! of a [`Barrier`]'s word, so that the word is updated about once per
//! phase however many threads arrive. `Team` and its own methods are here;
//! its `Debug` in `team/debug.rs`, the waits it shares with a `Barrier` in
//! `team/shared.rs`, its seats in `team/seat.rs`, the per-rank table in
//! `team/ranks.rs`, the tree in `team/tree.rs`, the bench-only `TeamShape`
//! in `team/shape.rs`. The design: [docs/design/team-tree.md](../docs/design/team-tree.md).

use crate::completion::Completion;
use crate::engine::Engine;
use crate::phase::Phase;
use crate::sync::{Mutex, Ordering};
use crate::token::BarrierWaitResult;
#[cfg(doc)]
use crate::Barrier;
use call::SeatCall;
use crossbeam_utils::CachePadded;
use std::fmt;

mod call;
pub(crate) mod debug;
mod ranks;
mod seat;
mod seats;
#[cfg(any(loom, shuttle, feature = "bench"))]
pub(crate) mod shape;
mod shared;
mod tree;

use ranks::{RankEntry, Ranks, LEFT, PART};
pub use seat::Seat;
pub use seats::Seats;
use tree::{Front, FAN_IN, FLAT};

/// A [`Barrier`] with a combining tree in front of its word, for many
/// threads: its participants arrive through [`Seat`]s, and the word is
/// updated about once per phase however many seats arrive.
///
/// A team of `seats` seats behaves as a `Barrier` expecting `seats`
/// arrivals per phase, with the same phases, tokens, parity and timed waits,
/// transaction counts, completion function, `is_leader`, poisoning and
/// retirement; only the arrivals differ. Each participant takes its seat once
/// ([`seat`](Team::seat) or [`seats`](Team::seats)) and arrives through it.
/// Every other operation of [`Barrier`] works on the team itself, delegated
/// to its barrier ([`wait`](Team::wait), [`phase_parity`](Team::phase_parity),
/// [`complete_tx`](Team::complete_tx), [`poison`](Team::poison), …); the
/// team has no `arrive*` of its own, so no arrival bypasses the seats.
///
/// # When to pick a `Team`
///
/// A `Barrier`'s arrivals all update one word, so with many threads they
/// serialize on one cache line. A team's seats arrive on a tree of
/// counters, a few seats per cache line, and only the last arrival of a
/// phase touches the word. Pick it when about 4 threads or more share a
/// barrier and know their rank: the more threads, the larger its lead over
/// a `Barrier`, oversubscribed too (the package's benches/RESULTS.md has the
/// measurements). Two threads gain nothing from it: a team of two is a
/// flat word like a `Barrier`, and as fast, but a `Barrier` needs no seats
/// and is 8 bytes (a team's memory is in the package's
/// docs/design/team-tree.md: a few cache lines per 4 seats).
///
/// # Joining and leaving
///
/// A team made [`with_capacity`](Team::with_capacity) has ranks beyond its
/// first seats; [`join`](Team::join) hands out a seat for the lowest free
/// one while phases run (Java's `Phaser::register`; it says when a rank is
/// free again), and a seat leaves with [`arrive_and_drop`](Seat::arrive_and_drop)
/// or by being dropped. A retired team (every seat left and the last phase
/// completed) never comes back: a join on it panics, as registering on a
/// terminated `Phaser` fails. [`missing`](Team::missing) and `Debug` tell
/// who has not arrived in the current phase.
///
/// # Misuse
///
/// A seat arriving twice in one phase panics and changes nothing.
///
/// # Examples
///
/// ```
/// use syncthreads::Team;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let team = Team::new(8);
/// let sum = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for seat in team.seats() {
///         let sum = &sum;
///         s.spawn(move || {
///             for phase in 1..=3 {
///                 sum.fetch_add(seat.rank(), Ordering::Relaxed);
///                 seat.arrive_and_wait();
///                 assert_eq!(sum.load(Ordering::Relaxed), phase * 28);
///                 seat.arrive_and_wait(); // nobody adds before all have read
///             }
///         });
///     }
/// });
/// ```
pub struct Team<F = ()> {
    /// On its own cache line, away from `front` and `fan_in`, which every
    /// arrival reads: the root's CAS and every waiter's poll bounce it.
    engine: CachePadded<Engine<F>>,
    /// What a seat's arrival passes through: nothing, or the tree.
    front: Front,
    /// The per-rank table (team/ranks.rs), one line per rank.
    ranks: Ranks,
    /// Held by a join from its first look to its last change of the tree:
    /// joins see each other's entries and revive empty nodes one at a time.
    joins: Mutex<()>,
    seats: u32,
    capacity: u32,
    fan_in: u32,
}

// `Team<F>: Send + Sync` when `F: Send`, as its barrier; the tree and the
// per-rank table are atomics.
crate::assert::assert_impl_all!(Team: Send, Sync);

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

    /// The team of a grid of `blocks` blocks of `threads` seats each
    /// (`Front::grid`): seat `r` is thread `r % threads` of block
    /// `r / threads`. The caller checked `1 <= blocks * threads <= MAX`.
    pub(crate) fn grid(blocks: usize, threads: usize) -> Team {
        let seats = blocks * threads;
        let front = Front::grid(blocks, threads, FAN_IN, FLAT);
        Team::build(Engine::new(seats), front, seats, seats, FAN_IN)
    }

    /// Back to its state when new, in place, through atomic stores: a
    /// launch's block kept for the next launch of its size, once every seat
    /// has left (retired). Its threads may still be returning from their
    /// leaves, so it takes `&self`. Unlike a retired team, which never comes back.
    pub(crate) fn rearm(&self) {
        let (seats, capacity) = (self.seats as usize, self.capacity as usize);
        self.engine.rearm(seats);
        self.front.rearm(seats, capacity, self.fan_in as usize);
        self.ranks.rearm(seats);
    }

    /// Waits until every seat has left and the last phase completed (true),
    /// or the team is poisoned (false); `participants` sizes the wait.
    pub(crate) fn wait_retired(&self, participants: u32) -> bool {
        self.engine.wait_retired(participants)
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

impl<F> Team<F> {
    /// A constructor's team, checked (panics name `call`) before `engine` makes the word.
    #[track_caller]
    fn checked(
        call: &dyn fmt::Display,
        seats: usize,
        capacity: usize,
        fan_in: usize,
        flat: usize,
        engine: impl FnOnce() -> Engine<F>,
    ) -> Team<F> {
        crate::op::participants(format_args!("{call}"), "the seat count", seats);
        let max = crate::state::MAX as usize;
        if !(seats..=max).contains(&capacity) {
            panic!("syncthreads: {call}: the capacity must be in {seats} ..= {max} (the seat count ..= Barrier::MAX)");
        }
        let front = Front::new(call, seats, capacity, fan_in, flat);
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

    /// The number of seats the team was made with.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::Team::new(16).seat_count(), 16);
    /// ```
    #[must_use]
    pub fn seat_count(&self) -> usize {
        self.seats as usize
    }

    /// The number of ranks: the most seats that can take part at once
    /// (`seat_count()` for a team made with [`Team::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(syncthreads::Team::with_capacity(4, 64).capacity(), 64);
    /// assert_eq!(syncthreads::Team::new(4).capacity(), 4);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// The team's barrier, for `Debug` output only.
    pub(crate) fn barrier_debug(&self) -> &(dyn fmt::Debug + '_) {
        &*self.engine
    }

    /// `arrived: N, expected: M` of the current phase, for the `Debug` of
    /// the team and of what is built on it.
    pub(crate) fn debug_progress(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        // Acquire: as in `missing`; here it also keeps the largest entry
        // within what fixes the wide phase (team/ranks.rs).
        let s = self.engine.word(Ordering::Acquire);
        let p = self.ranks.progress_in(s.phase());
        f.field("arrived", &p.arrived)
            .field("expected", &p.expected);
    }
}

impl<F: Completion> Team<F> {
    /// Hands out the seat of `rank`, once per rank, for the ranks that take
    /// part since construction (`0 .. seat_count()`); the others are
    /// handed out by [`join`](Team::join).
    ///
    /// # Panics
    ///
    /// If `rank >= capacity()`, if this rank's seat was handed out before
    /// (by `seat`, [`seats`](Team::seats) or [`join`](Team::join)), or if
    /// the rank does not take part (it never did, or its seat left).
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(2);
    /// let (a, b) = (team.seat(0), team.seat(1));
    /// assert_eq!((a.rank(), b.rank()), (0, 1));
    /// drop(a.arrive());
    /// let token = b.arrive();
    /// team.wait(token);
    /// ```
    #[track_caller]
    pub fn seat(&self, rank: usize) -> Seat<'_, F> {
        let capacity = self.capacity;
        assert!(
            rank < self.capacity(),
            "syncthreads: Team::seat({rank}): rank out of range: the team has capacity {capacity} (ranks 0 ..= {})",
            capacity - 1
        );
        match self.ranks.claim(rank) {
            Ok(()) => Seat::new(self, rank, u64::MAX, false),
            Err(e) if e.state() == PART => {
                panic!("syncthreads: Team::seat({rank}): seat {rank} was already handed out (each rank once)")
            }
            Err(e) if e.state() == LEFT => panic!(
                "syncthreads: Team::seat({rank}): rank {rank} does not take part: its seat left (a seat for a free rank comes from Team::join)"
            ),
            Err(_) => panic!(
                "syncthreads: Team::seat({rank}): rank {rank} does not take part: ranks {} .. {capacity} take part once handed out by Team::join",
                self.seats
            ),
        }
    }

    /// The seat of `rank` if it was not handed out yet (`rank` in range).
    pub(crate) fn try_seat(&self, rank: usize) -> Option<Seat<'_, F>> {
        debug_assert!(rank < self.seat_count());
        self.ranks
            .claim(rank)
            .ok()
            .map(|()| Seat::new(self, rank, u64::MAX, false))
    }

    /// Hands out a seat for the lowest free rank, taking part from the
    /// current phase on (Java's `Phaser::register`); `None` if no rank is
    /// free: not taking part, nothing of it owed or counted in the current
    /// phase (the ranks `seat_count() .. capacity()` from the start, and
    /// the rank of a seat that left from the phase after its leave, the
    /// leave being its arrival: see below). The current phase then also
    /// waits for the new seat's arrival, and its first arrival belongs to
    /// it, as for [`Barrier::add_participants`]. Called while the completion
    /// function of a phase runs, it blocks until the next phase has started
    /// and joins that one. A join allocates nothing.
    ///
    /// # When a left rank is free again
    ///
    /// The contract leaves one case open: a seat that arrived in phase `p`
    /// and then left while `p` still ran. Its rank is free from phase
    /// `p + 2`, not `p + 1`: its leave counts as its arrival in `p + 1`
    /// (in `missing()` and `Debug` too), so in `p + 1` the rank is still
    /// counted, and a seat joined there would be a second participant of
    /// one rank in one phase (the package's docs/design/team-tree.md, "When
    /// a left rank is free again", says why `p + 1` could not be promised
    /// either). A seat that leaves without having
    /// arrived in the current phase `p` (its leave is its arrival there)
    /// frees its rank from `p + 1`.
    ///
    /// ```
    /// let team = syncthreads::Team::with_capacity(2, 2);
    /// let (stays, leaves) = (team.seat(0), team.seat(1));
    /// drop(leaves.arrive()); // phase 0
    /// leaves.arrive_and_drop(); // arrived in phase 0: its leave counts in phase 1
    /// team.wait(stays.arrive()); // phase 0 completes
    /// assert!(team.join().is_none()); // phase 1: rank 1 still counted
    /// team.wait(stays.arrive()); // phase 1 completes
    /// let again = team.join().expect("phase 2: rank 1 is free");
    /// assert_eq!(again.rank(), 1);
    /// # drop((stays, again));
    /// ```
    ///
    /// A join racing the completion of a phase may find, once it has
    /// joined, that the rank it counted on is not free yet (a seat's leave
    /// that counts in the phase it joined). It then leaves again at once,
    /// as a joined seat dropped before its first arrival would, and returns
    /// `None`: that arrival may complete the phase and run the completion
    /// function on this thread (a panic there poisons the team and comes
    /// out of this call, as from any arrival).
    ///
    /// # Panics
    ///
    /// If the team is poisoned or retired, or inside its own completion
    /// function. Nothing is changed then.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::with_capacity(1, 2);
    /// let first = team.seat(0);
    /// let token = first.arrive();
    /// assert!(team.try_wait(&token)); // phase 0: rank 0 alone
    /// let second = team.join().expect("rank 1 is free");
    /// let token = first.arrive();
    /// assert!(!team.try_wait(&token)); // phase 1 waits for the joined seat
    /// drop(second.arrive());
    /// assert!(team.try_wait(&token));
    /// assert!(team.join().is_none()); // full
    /// # drop((first, second));
    /// ```
    #[track_caller]
    pub fn join(&self) -> Option<Seat<'_, F>> {
        let call = SeatCall::Join;
        let engine = &self.engine;
        engine.check_not_in_completion(&call);
        // A join that panics changes nothing, so a poisoned lock is fine.
        let joins = self
            .joins
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A first look refuses a full team without touching the word
        // (team-tree.md, "The first look"). Relaxed: only its refusal
        // counts, a wrong "free" is caught below, nothing is handed on.
        let mut s = engine.word(Ordering::Relaxed);
        if s.is_completing() {
            s = engine.wait_for_next_phase(call.joining());
        }
        if let Err(misuse) = crate::op::check_join(s, 1) {
            misuse.panic(call);
        }
        // Full: nothing changed.
        self.ranks.lowest_free(self.ranks.wide_phase(s.phase()))?;
        let joined = engine
            .join(call.joining(), 1)
            .expect("one participant joins");
        // The phase cannot complete now before this participant arrives: the
        // table reads exactly (orderings.md, "Reading the per-rank table").
        let wide = self.ranks.wide_phase(joined);
        let Some(rank) = self.ranks.lowest_free(wide) else {
            // The first look straddled a completion: leave again, outside
            // the join lock (team-tree.md, "The first look").
            crate::sync::model_event("team-join-leaves-again");
            drop(joins);
            let _left = engine.arrive_combined(call.combined(1, 1, 0, true));
            return None;
        };
        // Relaxed: the seat reaches its thread by a happens-before edge;
        // later joins read it under the lock.
        self.ranks
            .entry(rank)
            .store(RankEntry::new(PART, wide).0, Ordering::Relaxed);
        let in_tree = self.front.attach(rank as u32, self.fan_in, joined);
        Some(Seat::new(self, rank, wide.wrapping_sub(1), in_tree))
    }

    /// An iterator over every seat not yet handed out, in rank order. Each
    /// is claimed as the iterator reaches it; a rank another thread takes
    /// meanwhile is skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(4);
    /// let first = team.seat(1);
    /// let rest: Vec<usize> = team.seats().map(|seat| seat.rank()).collect();
    /// assert_eq!(rest, [0, 2, 3]);
    /// # drop(first);
    /// ```
    pub fn seats(&self) -> Seats<'_, F> {
        Seats {
            team: self,
            next: 0,
        }
    }

    /// The ranks that take part in the current phase and have not arrived
    /// in it, ascending: a snapshot, exact while nobody arrives. Ranks
    /// taking part since construction whose seats were never handed out
    /// count as taking part; a seat whose leave counts in the current phase
    /// has arrived in it; a joined seat takes part from the phase it joined.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::with_capacity(3, 4);
    /// let seat = team.seat(1);
    /// drop(seat.arrive());
    /// assert_eq!(team.missing(), [0, 2]);
    /// let late = team.join().unwrap();
    /// assert_eq!(team.missing(), [0, 2, 3]);
    /// # drop((seat, late));
    /// ```
    #[must_use]
    pub fn missing(&self) -> Vec<usize> {
        // Acquire: every entry stored before this phase's start → the reader (orderings.md).
        let s = self.engine.word(Ordering::Acquire);
        self.ranks.missing_in(s.phase())
    }

    /// One seat-less arrival and wait on the word, bypassing the tree, for a
    /// caller that never hands out a seat (a `BlockBarrier` used seat-less);
    /// `name` is the call the user made, for the messages.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_and_wait_seatless(&self, name: &'static str) -> BarrierWaitResult {
        self.engine.arrive_and_wait_as(name)
    }

    /// The current phase modulo 4 (`Relaxed`); see `Engine::phase`.
    #[inline]
    pub(crate) fn phase(&self) -> Phase {
        self.engine.phase()
    }

    /// The key of the team's word, as its waits are recorded under.
    pub(crate) fn key(&self) -> usize {
        self.engine.key()
    }

    /// The ranks missing in `phase` (a stall's, the current phase or the one
    /// before it), ascending: a rank whose arrival in that phase returned is
    /// not missing, also once the phase has completed.
    pub(crate) fn missing_in_phase(&self, phase: u64) -> Vec<usize> {
        // Acquire: as in `missing`; a later phase read here also makes
        // every arrival in `phase` visible (they preceded its end).
        let _ = self.engine.word(Ordering::Acquire);
        self.ranks.missing_in(Phase::new(phase as u8))
    }

    /// This team, as a stall report describes it (team/debug.rs).
    pub(crate) fn subject(&self) -> crate::diagnostics::Subject {
        debug::subject(self)
    }
}

// The methods shared with a `Barrier` (team/shared.rs), after the team's
// own: rustdoc lists a child module's impl blocks before its parent's.
shared::shared_methods!();

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
