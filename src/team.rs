//! `Team` and `Seat`: a combining arrival tree in front of a [`Barrier`]'s
//! word, so that the word is updated about once per phase however many
//! threads arrive.
//!
//! Seat `r` belongs to leaf `r / fan_in`; every `fan_in` nodes of a level
//! have a parent on the next, up to one root (a grid's team, `Team::grid`,
//! instead gives each block's seats a subtree of their own below a tree
//! over the blocks: `tree::build_grid`). Each node is a countdown word
//! on its own cache line (`team/tree.rs`). A seat's arrival is one
//! `fetch_add` on its leaf; the last arrival of a round at a node re-arms
//! the node and climbs with the round's sums; the root's last arriver makes
//! one combined arrival on the word (`Engine::arrive_combined`). Waiters
//! poll the word only, so every semantic of a `Barrier` (tokens, parity,
//! tx, completion, `is_leader`, poisoning, retirement) stays on the word.
//! What an arrival passes through is the team's front (`tree::Front`): a
//! tree, or for a team of at most [`FLAT`] seats nothing, each seat's
//! arrival being one RMW of the word (`Seat::arrive_flat`).
//!
//! The tree is built for the team's capacity; ranks that do not take part
//! cost a phase nothing. A seat leaves (`arrive_and_drop`, or a drop) with a
//! contribution that may be folded into the round before; `Team::join`
//! marks a free rank in the per-rank table (`team/ranks.rs`) and attaches
//! its leaf from the next round on. The per-rank table is what `missing()`,
//! the progress in `Debug` and `join` read.
//!
//! The design, leaving, joining and a team's memory are argued in
//! [docs/design/team-tree.md](../docs/design/team-tree.md); the memory
//! ordering, point by point, in
//! [docs/design/orderings.md](../docs/design/orderings.md). The shape's
//! measurements: benches/RESULTS.md, "Team and block".

use crate::completion::Completion;
use crate::engine::Engine;
use crate::phase::Phase;
use crate::state::Snapshot;
use crate::sync::{Mutex, Ordering};
use crate::token::{ArrivalToken, BarrierWaitResult};
#[cfg(doc)]
use crate::Barrier;
use call::SeatCall;
use crossbeam_utils::CachePadded;
use std::fmt;

/// Default fan-in of the tree: the fastest of 2, 4, 8 and 16 at 8 and 16
/// threads, measured when the seats' contributions were CASes
/// and again with the single `fetch_add`, where it is the fastest or level
/// with 8 at every thread count from 4 to 16 (benches/RESULTS.md, "Shape and
/// crossover"). Fan-in 2 climbs a level
/// more per phase; 8 and 16 put that many seats' RMWs on one node's line.
pub(crate) const FAN_IN: usize = 4;
/// Teams of at most this many seats go flat: with two seats there is
/// nothing to combine and every tree shape was slower than the flat word,
/// while from four seats on one node already beats it (benches/RESULTS.md,
/// "Shape and crossover").
pub(crate) const FLAT: usize = 2;
mod call;
mod debug;
mod new;
mod ranks;
mod seat;
#[cfg(any(loom, shuttle, feature = "bench"))]
mod shape;
mod shared;
mod tree;

use ranks::{RankEntry, Ranks, LEFT, PART, UNHANDED};
pub use seat::Seat;
use tree::{Contribution, Front};

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
/// one while phases run (Java's `Phaser::register`), and a seat leaves with
/// [`arrive_and_drop`](Seat::arrive_and_drop) or by being dropped. A
/// joined seat takes part from the current phase on (the phase then waits
/// for it); a join in a completion window joins the next phase. A rank is
/// free again from the phase after its seat's leave, the leave being that
/// seat's arrival in its phase (for a seat that had already arrived in the
/// current phase, that is the next one). A retired team (every seat left
/// and the last phase completed) never comes back: a join on it panics, as
/// registering on a terminated `Phaser` fails. [`missing`](Team::missing)
/// and `Debug` tell who has not arrived in the current phase.
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
    /// On its own cache line: the seats read `front` and `fan_in` on every
    /// arrival, and they must not share a line with the word that the
    /// root's CAS and every waiter's poll bounce between cores.
    engine: CachePadded<Engine<F>>,
    /// What a seat's arrival passes through: nothing, or the tree.
    front: Front,
    /// The per-rank table (team/ranks.rs), one entry per rank of the
    /// capacity, each on a cache line that only its seat writes.
    ranks: Ranks,
    /// Held by a join from its first look at the table to its last change
    /// of the tree, so joins see each other's entries and revive empty
    /// nodes one at a time.
    joins: Mutex<()>,
    seats: u32,
    capacity: u32,
    fan_in: u32,
}

// `Team<F>: Send + Sync` when `F: Send`, as its barrier; the tree and the
// per-rank table are atomics.
crate::assert::assert_impl_all!(Team: Send, Sync);
crate::assert::assert_impl_all!(Seat<'static>: Send);
crate::assert::assert_not_impl_any!(Seat<'static>: Sync, Clone);

impl<F> Team<F> {
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

    /// The team's heap bytes (the tree and the per-rank table), for the
    /// memory table.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        self.front.heap_bytes() + self.ranks.heap_bytes()
    }

    /// The number of tree nodes (0 for a flat team).
    #[cfg(test)]
    fn nodes(&self) -> usize {
        self.front.nodes().len()
    }

    /// The team's word, decoded as a `Barrier`'s `Debug`: for the crate's
    /// own tests (feature `bench`), not a stable API.
    #[cfg(feature = "bench")]
    #[doc(hidden)]
    #[must_use]
    pub fn bench_word(&self) -> String {
        format!("{:?}", *self.engine)
    }

    /// The team's barrier, for `Debug` output only.
    pub(crate) fn barrier_debug(&self) -> &(dyn fmt::Debug + '_) {
        &*self.engine
    }

    /// One load of the team's word, for the queries of what is built on it.
    #[inline]
    pub(crate) fn word(&self, order: Ordering) -> Snapshot {
        self.engine.word(order)
    }
}

impl<F: Completion> Team<F> {
    /// Claims `rank`, taking part since construction and not handed out
    /// yet; what its entry said otherwise.
    fn claim(&self, rank: usize) -> Result<(), RankEntry> {
        let entry = self.ranks.entry(rank);
        // Relaxed: the CAS's atomicity alone hands the rank out; it publishes nothing (orderings.md).
        let mut e = RankEntry(entry.load(Ordering::Relaxed));
        loop {
            if e.state() != UNHANDED {
                return Err(e);
            }
            let part = RankEntry::new(PART, e.wide());
            // Relaxed: as above.
            match entry.compare_exchange_weak(e.0, part.0, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(found) => e = RankEntry(found),
            }
        }
    }

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
        match self.claim(rank) {
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
        self.claim(rank)
            .ok()
            .map(|()| Seat::new(self, rank, u64::MAX, false))
    }

    /// Hands out a seat for the lowest free rank, taking part from the
    /// current phase on (Java's `Phaser::register`); `None` if no rank is
    /// free.
    ///
    /// A rank is free when it does not take part and nothing of it is owed
    /// or counted in the current phase: the ranks `seat_count() ..
    /// capacity()` from the start, and the rank of a seat that left from
    /// the phase after its leave (a leave is that seat's arrival in its
    /// phase; for a seat that had arrived in the current phase, that is the
    /// next one). The current phase then also waits for the new seat's
    /// arrival, and its first arrival belongs to it, as for
    /// [`Barrier::add_participants`]. Called while the completion function
    /// of a phase runs, it blocks until the next phase has started and
    /// joins that one. A join allocates nothing.
    ///
    /// # When a left rank is free again
    ///
    /// The contract leaves one case open: a seat that arrived in phase `p`
    /// and then left while `p` still ran. Its rank is free from phase
    /// `p + 2`, not `p + 1`: its leave counts as its arrival in `p + 1`
    /// (in `missing()` and `Debug` too), so in `p + 1` the rank is still
    /// counted, and a seat joined there would be a second participant of
    /// one rank in one phase. The crate also could not promise `p + 1`:
    /// whether such a leave is folded into `p` or lands in `p + 1` at its
    /// tree node depends on whether that node's round `p` had completed, a
    /// race that no caller sees, so the rank would be free in `p + 1` on
    /// some runs and not on others. A seat that leaves without having
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
        // A first look, to refuse a full team without touching the word:
        // only its refusal counts (team-tree.md, "The first look").
        // Relaxed: a stale word answers as a join a moment earlier would,
        // a wrong "free" is caught below, and nothing read is handed on.
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
        // The phase may have moved on since the look above. Now it cannot
        // complete before this participant arrives, so the table reads
        // exactly (orderings.md, "Reading the per-rank table").
        let wide = self.ranks.wide_phase(joined);
        let Some(rank) = self.ranks.lowest_free(wide) else {
            // The first look straddled a completion: leave again at once,
            // as a joined seat dropped before its first arrival would
            // (team-tree.md, "The first look"), outside the join lock.
            crate::sync::model_event("team-join-leaves-again");
            drop(joins);
            let _left = engine.arrive_combined(call.combined(1, 1, 0, true));
            return None;
        };
        // Relaxed: the seat is handed to its thread with a happens-before
        // edge, and later joins read it under the lock.
        self.ranks
            .entry(rank)
            .store(RankEntry::new(PART, wide).0, Ordering::Relaxed);
        let in_tree = match &self.front {
            Front::Flat => false,
            Front::Tree(tree) => {
                tree.attach(tree.leaf(rank as u32, self.fan_in), joined);
                true
            }
        };
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

    /// One seat-less arrival and wait on the team's word, bypassing the
    /// tree: only for a caller that never hands out a seat of this team
    /// (a `BlockBarrier` used seat-less), for which the team is a plain
    /// barrier of `seat_count()` participants. `name` is the call the user
    /// made, for the messages.
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
}

// The methods shared with a `Barrier` (the waits, tx, poisoning), after
// the team's own (team/shared.rs).
shared::shared_methods!();

impl<F: Completion> Team<F> {
    /// The root's climber: one combined arrival of round `round` on the word.
    #[track_caller]
    #[inline]
    fn arrive_root(
        &self,
        round: Phase,
        sums: Contribution,
        call: SeatCall,
        quiet: bool,
    ) -> (ArrivalToken, bool) {
        if sums.arrivals == 0 {
            // Nothing for the word: every seat this round counts is a joined
            // seat that left before its first arrival, which it makes on the
            // word itself, after this climb (`Seat::leave`). An RMW here
            // would change nothing; without it, no leave can meet a word
            // that such an arrival already retired.
            return (self.engine.token_for(round), false);
        }
        let op = if sums.arrivals == sums.drops {
            // A round of leavers only, which may be early: every seat left
            // while phase `round - 1` was still running (team-tree.md,
            // "Leaving"). The word decides, in the RMW: drops folded into
            // that phase if it still runs, arrivals and drops of `round`
            // otherwise. Never a wait (the last leaver may be the thread
            // that would end phase `round - 1`, e.g. by `complete_tx`).
            call.leave_after(round.prev(), sums.drops, quiet)
        } else {
            call.combined(sums.arrivals, sums.drops, 0, quiet)
        };
        self.engine.arrive_combined(op)
    }
}

/// The iterator of [`Team::seats`].
///
/// # Examples
///
/// ```
/// let team = syncthreads::Team::new(3);
/// assert_eq!(team.seats().count(), 3);
/// assert_eq!(team.seats().count(), 0); // all handed out
/// ```
pub struct Seats<'a, F: Completion = ()> {
    team: &'a Team<F>,
    next: usize,
}

impl<'a, F: Completion> Iterator for Seats<'a, F> {
    type Item = Seat<'a, F>;

    fn next(&mut self) -> Option<Seat<'a, F>> {
        while self.next < self.team.seat_count() {
            let rank = self.next;
            self.next += 1;
            if self.team.claim(rank).is_ok() {
                return Some(Seat::new(self.team, rank, u64::MAX, false));
            }
        }
        None
    }
}

impl<F: Completion> fmt::Debug for Seats<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Seats").field("next", &self.next).finish()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use tree::Node;

    #[test]
    fn tree_shape_and_memory_table() {
        let line = std::mem::size_of::<crate::lines::Line<Node>>();
        for (seats, nodes) in [
            (1, 0),
            (2, 0),
            (3, 1),
            (4, 1),
            (5, 3),
            (16, 5),
            (17, 8),
            (64, 21),
            (1024, 341),
        ] {
            // Miri takes minutes over a 1024-seat table; the smaller rows
            // run the same code under it.
            if cfg!(miri) && seats > 64 {
                continue;
            }
            let team = Team::new(seats);
            assert_eq!(team.nodes(), nodes, "{seats} seats");
            // Each array has one spare cell (lines.rs).
            let trees = usize::from(nodes > 0);
            assert_eq!(team.heap_bytes(), (nodes + trees + seats + 1) * line);
            // The shape is the capacity's, whoever takes part.
            assert_eq!(Team::with_capacity(1, seats).nodes(), nodes);
        }
        if cfg!(target_arch = "x86_64") {
            assert_eq!(line, 128);
            assert_eq!(std::mem::size_of::<Team>(), 256);
            for (seats, heap) in [
                (2, 384),
                (4, 896),
                (16, 2944),
                (64, 11_136),
                (1024, 174_976),
            ] {
                if cfg!(miri) && seats > 64 {
                    continue;
                }
                assert_eq!(Team::new(seats).heap_bytes(), heap, "{seats} seats");
            }
        }
    }
}
