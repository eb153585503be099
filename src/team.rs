//! `Team` and `Seat`: a combining arrival tree in front of a [`Barrier`]'s
//! word, so that the word is updated about once per phase however many
//! threads arrive.
//!
//! # Shape
//!
//! Seat `r` belongs to leaf `r / fan_in`; every `fan_in` nodes of a level
//! have a parent on the next level, up to one root. Each node is a countdown
//! word on its own cache line ([`CachePadded`]). A seat's arrival is one CAS
//! on its leaf; the *last* arrival of a phase at a node re-arms the node for
//! the next phase in that same CAS and climbs: it arrives at the parent on
//! behalf of the whole subtree. The root's last arriver makes ONE combined
//! arrival on the word (`Barrier::arrive_combined`): every arrival of the
//! phase and every drop. Waiters poll the word only (the ordinary wait path:
//! `Barrier::wait`, parity and timed waits), so every semantic of a
//! `Barrier` (tokens, parity, tx, completion, `is_leader`, poisoning,
//! retirement) stays on the word, and `Seat::arrive` never waits for another
//! thread (except in a completion window, as `Barrier::arrive`).
//!
//! A team of at most `flat` seats has no tree: its seats arrive on the word
//! directly (one seat, one arrival).
//!
//! Cost per phase: each seat reads the word once (`Acquire`, for the phase
//! and the double-arrival check) and makes one CAS on its leaf, retried
//! while up to `fan_in - 1` others hit the same line; a round's last
//! arriver makes one CAS per level it climbs; the root's last makes the one
//! RMW of the word; waiters only load the word. (A `fetch_add` fast path at
//! the nodes would save the retries, but the re-arm and the fold would then
//! need a second step that a concurrent leave can observe half done; not
//! done until measured to matter.)
//!
//! The defaults, fan-in [`FAN_IN`] and flat up to [`FLAT`] seats, were
//! chosen by sweeping [`Team::with_shape`] (fan-in 2, 4, 8, 16 and flat,
//! beside the flat `Barrier` and the peers in the same run; the reasons
//! beside the constants, the measurements in benches/RESULTS.md, "Team:
//! episode latency").
//!
//! # A node's word
//!
//! Each node counts down the members (seats of a leaf, child nodes of an
//! inner node) still owed in its round, and sums the arrivals and drops of
//! its subtree; the last contribution of a round re-arms the node for the
//! next round in the same CAS and climbs with the sums. The word's layout
//! and its transitions are in `team/tree.rs`. An empty node is never
//! touched again: its parent no longer waits for it.
//!
//! # Leaving
//!
//! A seat that leaves (`arrive_and_drop`, or a normal drop) contributes
//! `(1, 1, leave)` to round `last + 1`, `last` being the phase of its own
//! last arrival. If it has not arrived in the current phase, that is the
//! current phase and an ordinary contribution. If it has ("leave from the
//! next phase on"), its leaf is either still in round `last` (the round
//! has not completed there) or already in round `last + 1`:
//!
//! - in round `last`: the contribution is *folded* into that round: no
//!   `pending` change (its arrival is in already), `drops += 1`,
//!   `members -= 1`. The drop goes up with round `last`'s sums, so the word
//!   lowers its expected count when phase `last` completes, and the seat is
//!   not waited for in phase `last + 1` anywhere.
//! - in round `last + 1`: an ordinary contribution to that round (an arrival
//!   and a drop, made early). If it brings the leaf's `pending` to 0 while
//!   phase `last` is still running elsewhere, every other member of the leaf
//!   left in the same way (a *real* arrival in round `last + 1` comes from a
//!   seat that saw the word in phase `last + 1`), so the leaf is empty and
//!   its sums are all early drops (`a == d`). Its climb then finds the parent
//!   either in round `last + 1` (ordinary) or still in round `last`: folded
//!   there, as above. So a contribution to round `r` always finds its node in
//!   round `r` or, folded, in round `r - 1`, and only a climb of leavers
//!   (`a == d`) can be early.
//! - At the root, a climb of round `r` with `a == d` (the whole team left)
//!   may be early, and the word decides with the RMW that applies it
//!   (`Op::SeatLeave`): if the word is still in phase `r - 1` (held open by
//!   a tx count, or its combined arrival not yet made), the `d` leaves are
//!   drops without an arrival there, folded into phase `r - 1` as at a node:
//!   their arrivals in it are counted by the root's climber of round `r - 1`,
//!   and the team retires as that phase completes. If the word is in phase
//!   `r`, they are `d` arrivals and drops of phase `r`. No leave waits for a
//!   phase to end: the last leaver may be the very thread that would end
//!   phase `r - 1` (its `complete_tx`). Only a completion window is waited
//!   out, as by every arrival.
//!
//! A flat team's word plays the leaf: `Op::SeatLeave` of one seat is a drop
//! without an arrival in phase `last` if that phase is still running, an
//! arrival and a drop in the next one otherwise.
//!
//! # Memory ordering
//!
//! 1. Every contribution is an `AcqRel` CAS on its node. A node's word is
//!    only changed by RMWs, so each contribution continues the release
//!    sequences of the earlier ones, and the contribution that completes a
//!    round reads the value they left: the climber has everything every
//!    member did before its contribution (Acquire) and hands it on with its
//!    own (Release), up to the root.
//! 2. The root's climber arrives on the word with an RMW that is `Release`,
//!    `AcqRel` if it completes the phase (`Barrier::update`, state.rs points
//!    1-3); waits read the word with `Acquire` (point 4). So everything a
//!    seat did before its arrival happens-before the completion function and
//!    every wait of that phase returning (as for a `Barrier`), through the chain
//!    seat → leaf → … → root → word → waiter.
//! 3. The re-arm is part of the CAS that completes the round, so no node is
//!    ever seen completed but not re-armed. A seat's next arrival at the same
//!    node can only come after the phase completed: its arrive reads the word
//!    with `Acquire` and sees the next phase, which the root's climber wrote
//!    after its climb, which came after every node's re-arm (1). So that
//!    arrival's CAS happens-after the re-arm and reads it or a later value
//!    (coherence): it always finds its node in its own round. (With a
//!    `Relaxed` read of the word, C++ would allow the CAS to read the node's
//!    previous round, through a load-buffering cycle that loom does not
//!    model and hardware does not produce: loom-tests/README.md, Teeth.) A
//!    seat's arrival in a new phase therefore reads the word with `Acquire`,
//!    not only its waits.
//! 4. `Seat::arrive_tx(tx)` does `expect_tx(tx)` on the word before its
//!    tree arrival: the phase cannot complete in between, since this seat's
//!    arrival is still owed, and the expect_tx's `Release` is earlier in the
//!    seat's program order than its arrival, so it is ordered like the
//!    arrival (2).
//! 5. The phase a seat remembers (a `Cell`, the seat is `!Sync`) tells it
//!    whether it arrives twice: a word in that same phase, still running.
//!    A load can return an older value, so before it panics the seat reads
//!    the word again with an RMW (`Barrier::latest`), which reads the latest
//!    value: a phase that completed without this seat waiting is never
//!    mistaken for a double arrival. A word *completing* that phase is the
//!    completion window: the seat waits for the next phase and arrives there.
//!
//! # Memory per team
//!
//! `size_of::<Team<F>>()` (a [`Barrier`] of 8 bytes plus `F` on its own
//! cache line, two boxed slices and two counts: 256 bytes on x86_64 for
//! `F = ()`, since a 128-byte line is the alignment; the padding keeps the
//! seats' reads of the shape off the line that the root's CAS and every
//! waiter's poll bounce between cores, which shortens many seats' episodes:
//! benches/RESULTS.md, the section on the team's barrier on its own cache line)
//! plus on the
//! heap `N * size_of::<CachePadded<Node>>()` (128 bytes on x86_64 and
//! aarch64, 64 elsewhere) for the `N` nodes, `N = ceil(s/f) + ceil(s/f^2) +
//! … + 1` (0 for a flat team), and `8 * ceil(s/64)` bytes for the seats
//! handed out. Linear in `s`: `N < s / (f - 1) + log_f(s) + 1`.
//! With the defaults (f = 4, flat up to 2), on x86_64:
//!
//! | seats | nodes | heap bytes | total with the `Team` |
//! |---:|---:|---:|---:|
//! | 4 | 1 | 136 | 392 |
//! | 16 | 5 | 648 | 904 |
//! | 64 | 21 | 2 696 | 2 952 |
//! | 1024 | 341 | 43 776 | 44 032 |
//!
//! (pinned by a unit test below).

use crate::barrier::ArriveAndWaitFuture;
use crate::barrier::Barrier;
use crate::completion::Completion;
use crate::op::poisoned_panic;
use crate::phase::Phase;
use crate::sync::{AtomicU64, ClaimU64, Ordering};
use crate::token::{ArrivalToken, BarrierWaitResult};
use call::SeatCall;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::fmt;

/// Default fan-in of the tree: the fastest of 2, 4, 8 and 16 at 8 and 16
/// threads. Fan-in 2 climbs a level more per phase; 8 and 16 put that many
/// seats' CASes on one node's cache line (benches/RESULTS.md, "Team: episode
/// latency").
pub(crate) const FAN_IN: usize = 4;
/// Teams of at most this many seats go flat: with two seats there is
/// nothing to combine and every tree shape was slower than the flat word,
/// while from four seats on one node already beats it (benches/RESULTS.md,
/// "Team: episode latency").
pub(crate) const FLAT: usize = 2;
mod call;
mod delegate;
mod seat;
mod tree;

pub use seat::Seat;
use tree::{Node, MAX_FAN_IN};

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
/// phase touches the word. Pick it when more than a few threads share a
/// barrier and know their rank: the more threads, the larger its lead over
/// a `Barrier`, oversubscribed too (the package's benches/RESULTS.md has the
/// measurements). For two threads use a `Barrier`: the seat's bookkeeping
/// costs more than a one-word barrier's arrival, and a `Barrier` needs no
/// seats and is 8 bytes (a team's memory is in the module docs of
/// `team.rs`: a few cache lines per 4 seats).
///
/// # Misuse
///
/// A seat arriving twice in one phase panics and changes nothing.
///
/// # Examples
///
/// ```
/// use mbarrier::Team;
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
    /// On its own cache line: the seats read `nodes` and `fan_in` on every
    /// arrival, and they must not share a line with the word that the
    /// root's CAS and every waiter's poll bounce between cores.
    barrier: CachePadded<Barrier<F>>,
    /// The tree, leaves first, the root last; empty for a flat team.
    nodes: Box<[CachePadded<Node>]>,
    /// One bit per seat: handed out.
    handed: Box<[ClaimU64]>,
    seats: u32,
    fan_in: u32,
}

// `Team<F>: Send + Sync` when `F: Send`, as its barrier; the tree and the
// bitmap are atomics.
static_assertions::assert_impl_all!(Team: Send, Sync);
static_assertions::assert_impl_all!(Seat<'static>: Send);
static_assertions::assert_not_impl_any!(Seat<'static>: Sync, Clone);

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
    /// let team = mbarrier::Team::new(4);
    /// assert_eq!(team.seat_count(), 4);
    /// assert!(!team.phase_parity());
    /// ```
    #[track_caller]
    #[must_use]
    pub fn new(seats: usize) -> Team {
        Team::with_shape(seats, FAN_IN, FLAT)
    }

    /// A team with a chosen tree shape: each node combines `fan_in`
    /// members (`2 ..= 64`), and a team of at most `flat` seats has no tree
    /// (its seats arrive on the word directly).
    ///
    /// The defaults of [`Team::new`] were measured on one machine (module
    /// docs of `team.rs`); on a machine whose cores share caches otherwise,
    /// sweep the shape with the benches and pick the fastest. The shape
    /// changes only the cost of an arrival, never what a team does.
    ///
    /// # Panics
    ///
    /// Unless `1 <= seats <= Barrier::MAX` and `2 <= fan_in <= 64`.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = mbarrier::Team::with_shape(8, 2, 0); // a binary tree
    /// std::thread::scope(|s| {
    ///     for seat in team.seats() {
    ///         s.spawn(move || seat.arrive_and_wait());
    ///     }
    /// });
    /// ```
    #[track_caller]
    #[must_use]
    pub fn with_shape(seats: usize, fan_in: usize, flat: usize) -> Team {
        check_seats("Team::new", seats);
        Team::build(Barrier::new(seats), seats, fan_in, flat)
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
    /// let team = mbarrier::Team::with_completion(6, || {
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
        Team::with_completion_and_shape(seats, f, FAN_IN, FLAT)
    }

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
    /// let team = mbarrier::Team::with_completion_and_shape(4, || {
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
        check_seats("Team::with_completion", seats);
        Team::build(Barrier::with_completion(seats, f), seats, fan_in, flat)
    }
}

#[track_caller]
fn check_seats(op: &str, seats: usize) {
    crate::op::participants(format_args!("{op}({seats})"), "the seat count", seats);
}

impl<F> Team<F> {
    #[track_caller]
    fn build(barrier: Barrier<F>, seats: usize, fan_in: usize, flat: usize) -> Team<F> {
        assert!(
            (2..=MAX_FAN_IN).contains(&fan_in),
            "mbarrier: Team::with_shape({seats}, {fan_in}, {flat}): the fan-in must be in 2 ..= {MAX_FAN_IN}"
        );
        let nodes = if seats > flat {
            tree::build(seats, fan_in)
        } else {
            Vec::new()
        };
        Team {
            barrier: CachePadded::new(barrier),
            nodes: nodes.into_boxed_slice(),
            handed: (0..seats.div_ceil(64)).map(|_| ClaimU64::new(0)).collect(),
            seats: seats as u32,
            fan_in: fan_in as u32,
        }
    }

    /// The number of seats the team was made with.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mbarrier::Team::new(16).seat_count(), 16);
    /// ```
    #[must_use]
    pub fn seat_count(&self) -> usize {
        self.seats as usize
    }

    /// The team's heap bytes (tree and seat bitmap), for the memory table.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.nodes) + std::mem::size_of_val(&*self.handed)
    }

    /// The number of tree nodes (0 for a flat team).
    #[cfg(test)]
    fn nodes(&self) -> usize {
        self.nodes.len()
    }
}

impl<F: Completion> Team<F> {
    /// Claims `rank`'s bit; whether it was free.
    fn claim(&self, rank: usize) -> bool {
        let bit = 1u64 << (rank % 64);
        // Relaxed: the bit hands out the rank once, which the RMW's
        // atomicity alone decides (exactly one claimer finds it clear, under
        // any ordering); it publishes nothing, since a seat's data goes
        // through its arrivals.
        self.handed[rank / 64].fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    /// Hands out the seat of `rank`, once per rank.
    ///
    /// # Panics
    ///
    /// If `rank >= seat_count()`, or if this rank's seat was handed out
    /// before (by `seat` or [`seats`](Team::seats)).
    ///
    /// # Examples
    ///
    /// ```
    /// let team = mbarrier::Team::new(2);
    /// let (a, b) = (team.seat(0), team.seat(1));
    /// assert_eq!((a.rank(), b.rank()), (0, 1));
    /// drop(a.arrive());
    /// let token = b.arrive();
    /// team.wait(token);
    /// ```
    #[track_caller]
    pub fn seat(&self, rank: usize) -> Seat<'_, F> {
        assert!(
            rank < self.seat_count(),
            "mbarrier: Team::seat({rank}): rank out of range: the team has {} seats (ranks 0 ..= {})",
            self.seats,
            self.seats - 1
        );
        assert!(
            self.claim(rank),
            "mbarrier: Team::seat({rank}): seat {rank} was already handed out (each rank once)"
        );
        Seat::new(self, rank)
    }

    /// The seat of `rank` if it was not handed out yet (`rank` in range).
    pub(crate) fn try_seat(&self, rank: usize) -> Option<Seat<'_, F>> {
        debug_assert!(rank < self.seat_count());
        self.claim(rank).then(|| Seat::new(self, rank))
    }

    /// An iterator over every seat not yet handed out, in rank order. Each
    /// is claimed as the iterator reaches it; a rank another thread takes
    /// meanwhile is skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = mbarrier::Team::new(4);
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
}

impl<F> fmt::Debug for Team<F> {
    /// The seat count, the shape and the barrier's decoded word, e.g.
    /// `Team { seats: 16, fan_in: 4, nodes: 5, barrier: Barrier { phase_parity: false, pending: 16, expected: 16, tx: 0, poisoned: false } }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Team")
            .field("seats", &self.seats)
            .field("fan_in", &self.fan_in)
            .field("nodes", &self.nodes.len())
            .field("barrier", &*self.barrier)
            .finish()
    }
}

#[cfg(feature = "diagnostics")]
impl<F: Completion> Team<F> {
    /// The key of the team's word, as its waits are recorded under.
    pub(crate) fn key(&self) -> usize {
        self.barrier.key()
    }

    /// Until the guard drops, this thread's wait on the team's word is
    /// reported as a wait on the team, made at `location`.
    pub(crate) fn describe_wait(
        &self,
        location: &'static std::panic::Location<'static>,
    ) -> crate::diagnostics::DescribeAs {
        crate::diagnostics::describe_as(self.barrier.key(), self.subject(), location)
    }

    /// This team, as a stall report describes it.
    pub(crate) fn subject(&self) -> crate::diagnostics::Subject {
        crate::diagnostics::Subject {
            ptr: self as *const Self as *const (),
            describe: describe::<F>,
            level: 1,
        }
    }
}

/// A `Team<F>` for a stall report: its kind, `Debug` and missing ranks.
///
/// # Safety
///
/// `ptr` points to a live `Team<F>`.
#[cfg(feature = "diagnostics")]
unsafe fn describe<F: Completion>(ptr: *const (), _: u64, _: u64) -> crate::diagnostics::Described {
    // SAFETY: the caller's contract.
    let team = unsafe { &*(ptr as *const Team<F>) };
    crate::diagnostics::Described {
        kind: "Team",
        debug: format!("{team:?}"),
        missing: None,
        mask: None,
    }
}

/// The iterator of [`Team::seats`].
///
/// # Examples
///
/// ```
/// let team = mbarrier::Team::new(3);
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
            if self.team.claim(rank) {
                return Some(Seat::new(self.team, rank));
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

    #[test]
    fn tree_shape_and_memory_table() {
        let line = std::mem::size_of::<CachePadded<Node>>();
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
            let team = Team::new(seats);
            assert_eq!(team.nodes(), nodes, "{seats} seats");
            assert_eq!(team.heap_bytes(), nodes * line + 8 * seats.div_ceil(64));
        }
        if cfg!(target_arch = "x86_64") {
            assert_eq!(line, 128);
            assert_eq!(std::mem::size_of::<Team>(), 256);
            for (seats, heap) in [(4, 136), (16, 648), (64, 2696), (1024, 43_776)] {
                assert_eq!(Team::new(seats).heap_bytes(), heap, "{seats} seats");
            }
        }
    }
}
