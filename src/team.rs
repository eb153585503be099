//! `Team` and `Seat`: a combining arrival tree in front of a [`Barrier`]'s
//! word, so that the word is updated about once per phase however many
//! threads arrive.
//!
//! # Shape
//!
//! Seat `r` belongs to leaf `r / fan_in`; every `fan_in` nodes of a level
//! have a parent on the next level, up to one root. Each node is a countdown
//! word on its own cache line ([`CachePadded`]). A seat's arrival is one
//! `fetch_add` on its leaf; the *last* arrival of a phase at a node re-arms
//! the node for the next phase and climbs: it arrives at the parent on
//! behalf of the whole subtree. The root's last arriver makes ONE combined
//! arrival on the word (`Barrier::arrive_combined`): every arrival of the
//! phase and every drop. Waiters poll the word only (the ordinary wait path:
//! `Barrier::wait`, parity and timed waits), so every semantic of a
//! `Barrier` (tokens, parity, tx, completion, `is_leader`, poisoning,
//! retirement) stays on the word, and `Seat::arrive` never waits for another
//! thread (except in a completion window, as `Barrier::arrive`).
//! The word's RMW that completes a phase is its release too: waiters
//! released through lines of their own (one per leaf or per seat, stored
//! by the completer after that RMW) were slower at every thread count,
//! since such a store is one more transfer on every episode's path, after
//! the RMW rather than instead of it (benches/RESULTS.md, "Release lines,
//! and the table again").
//!
//! A team of at most `flat` seats has no tree: its seats arrive on the word
//! directly (one seat, one arrival). A flat seat's plain arrival is the one
//! RMW, without the entry read below: the seat knows the phase it arrives
//! in, and the RMW refuses a word in any other (`Seat::arrive_flat`), so
//! the read of a line the other seats are writing is the RMW's own instead
//! of a miss of its own before it (benches/RESULTS.md, "Where a Team's
//! episode goes").
//!
//! The tree is built for the team's *capacity* (`Team::with_capacity`;
//! `Team::new(s)` has capacity `s`): ranks that do not take part are not
//! members of their leaf, and a node with no members is not a member of its
//! parent, so they cost a phase nothing.
//!
//! Cost per phase in a tree: each seat reads the word once (`Acquire`, for
//! the phase and the double-arrival check) and makes one `fetch_add` on its leaf,
//! which never retries however many of the `fan_in` seats hit the line at
//! once; a round's last arriver then re-arms the node with one CAS
//! (retried only when a leave or a join lands in between) and makes a
//! `fetch_add` and a re-arm per level it climbs; the root's last makes the
//! one RMW of the word; waiters only load the word. Leaves, and the climbs
//! that carry drops, are one CAS per node, retried under contention.
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
//! next round and climbs with the sums. A *plain* contribution (arrivals
//! without drops or leave: a seat's arrival, a child's round that nobody
//! left) always finds its node in its own round (memory ordering, point 3),
//! so it is one `fetch_add`; if it completes the round, the node is
//! re-armed by a second RMW, a CAS from the word found, and until then the
//! word is *completed*: the round's sums in, nothing owed, not yet
//! re-armed. Only two transitions can land in that window: a leave's fold
//! ("Leaving") and a join's attach ("Joining"); the re-arm counts them in
//! the completed round, as if they had come before its last contribution.
//! Every other contribution (a leave, a climb that carries drops) is one
//! CAS that counts, or folds, and re-arms at once. The word's layout and
//! its transitions are in `team/tree.rs`. An empty node is never touched
//! again but by a join: its parent no longer waits for it.
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
//!   not waited for in phase `last + 1` anywhere. The round may already be
//!   completed by a plain contribution and waiting for its re-arm ("A
//!   node's word"): the fold lands there the same way, and the re-arm,
//!   which reads it, climbs with its drop (and, if it took the node's last
//!   member, with the node's leave). The leaver's own climb ends at the
//!   fold; the re-arm's climber carries it on (memory ordering, point 1).
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
//! # Joining
//!
//! `Team::join` takes the team's join lock (joins are rare; arrivals and
//! leaves never take it), finds the lowest free rank in the per-rank table
//! (team/ranks.rs), and then, in this order:
//!
//! 1. joins the word: one `Acquire` RMW raising its pending and expected
//!    counts by one (`State::join`, as `Barrier::add_participants(1)`; in a
//!    completion window it waits for the next phase and joins that). The
//!    phase it joined, `p`, cannot complete now before the new seat arrives.
//! 2. marks the rank as taking part from phase `p` in the table.
//! 3. attaches the rank's leaf from round `p + 1` on (`Team::attach`): a
//!    leaf with members counts one more, in its re-arm for `p + 1` if it is
//!    still in round `p` (running, or completed and not yet re-armed), at
//!    once if it is in `p + 1` already (a node with members is in one of
//!    the two while `p` runs; a completed round is always `p`, since round
//!    `p + 1` completes by a plain contribution only after phase `p`); an
//!    empty leaf (no members, nothing owed, no sums), which its parent no
//!    longer waits for, is re-armed for round `p + 1` with the one member
//!    and attached to its parent the same way, up to the root (whose
//!    parent, the word, step 1 covered). A completed round whose members
//!    all left before its re-arm is not empty: its re-arm still climbs with
//!    its sums, and the member attached there keeps the node in its parent.
//!
//! The new seat's first arrival, in phase `p`, goes to the word directly
//! (one combined arrival of one seat), since its leaf may have completed
//! round `p` already; from phase `p + 1` on it arrives at its leaf like
//! every seat. If it leaves before that first arrival, it makes the arrival
//! and its drop on the word and a contribution that carries only its leave
//! (`(0, 0, leave)`) to its leaf's round `p + 1`. An empty node is touched
//! by nobody but a join: its members left, and its last climb went on to
//! its parent; a revival that lands before that climb does is counted with
//! it (the climb's `leave` lowers the members the revival raised), and the
//! rules above hold for either order. The lock keeps two joins from
//! reviving the same node, and makes each join see the table as the last
//! one left it.
//!
//! # Memory ordering
//!
//! 1. Every contribution is a `Release` RMW on its node (a plain one's
//!    `fetch_add`; the others' CAS is `AcqRel`, since it may complete the
//!    round). A node's word is only changed by RMWs, so each contribution
//!    continues the release sequences of the earlier ones, and the
//!    completer's acquire reads the value they left: the climber has
//!    everything every member did before its contribution (Acquire) and
//!    hands it on with its own (Release), up to the root. After a plain
//!    completion that acquire is the re-arm, a CAS that is `Acquire`: it
//!    reads the word the `fetch_add` left or a later one, so it
//!    synchronizes with every contribution of the round, and with a fold
//!    that landed after the `fetch_add` (a leaver's arrival in the next
//!    phase, whose own climb ends there), which the climber hands on with
//!    the rest. It needs no `Release`: it publishes nothing of its own, and
//!    as an RMW it continues the release sequences.
//! 2. The root's climber arrives on the word with an RMW that is `Release`,
//!    `AcqRel` if it completes the phase (`Barrier::update`, state.rs points
//!    1-3); waits read the word with `Acquire` (point 4). So everything a
//!    seat did before its arrival happens-before the completion function and
//!    every wait of that phase returning (as for a `Barrier`), through the chain
//!    seat → leaf → … → root → word → waiter.
//! 3. Every climb starts after its node's re-arm (in the same CAS, or in
//!    the CAS after a plain completion), so the root's climber, and the
//!    word's next phase, come after every node's re-arm. A seat's next
//!    arrival at the same node can only come after the phase completed: its
//!    arrive reads the word with `Acquire` and sees the next phase, which
//!    the root's climber wrote after its climb, which came after every
//!    node's re-arm (1). So that arrival's RMW happens-after the re-arm and
//!    reads it or a later value (coherence): it always finds its node in
//!    its own round, never completed (its round cannot complete without
//!    it), so it can be a plain `fetch_add`. A child's round that carries
//!    a seat's plain arrival climbs with that seat's ordering, and finds
//!    its parent in its round the same way. Only folds and attaches ever see
//!    a completed word. (With a
//!    `Relaxed` read of the word, C++ would allow the RMW to read the node's
//!    previous round, through a load-buffering cycle that loom does not
//!    model and hardware does not produce: loom-tests/README.md, Teeth.) A
//!    seat's arrival in a new phase therefore reads the word with `Acquire`,
//!    not only its waits.
//! 4. `Seat::arrive_tx(tx)` does `expect_tx(tx)` on the word before its
//!    tree arrival: the phase cannot complete in between, since this seat's
//!    arrival is still owed, and the expect_tx's `Release` is earlier in the
//!    seat's program order than its arrival, so it is ordered like the
//!    arrival (2).
//! 5. A join's changes of the nodes are `Release` RMWs that hand over no
//!    data: the counts are the words themselves, which every later
//!    contribution (an RMW) reads as the latest value, and an RMW continues
//!    the release sequences of the contributions before it, so 1 holds
//!    across it. The `Release` orders the one climb that carries no seat's
//!    arrival: a round whose owed members all left before their first
//!    arrival while the join attached a member completes with nothing but
//!    the member kept, and its climber, which read the attach, is ordered
//!    after the join's read of the word, and so after the parent's re-arm,
//!    as a seat is by its own read (3). Its change of the word is the
//!    `Acquire` RMW of state.rs (point 6); the new seat is handed to its
//!    thread with a happens-before edge (or used on the joining one).
//! 6. The phase a seat remembers (a `Cell`, the seat is `!Sync`) tells it
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
//! cache line, two boxed slices,
//! the join lock and a few counts: 256 bytes on x86_64 for `F = ()`, since a
//! 128-byte line is the alignment; the padding keeps the seats' reads of
//! the shape off the line that the root's CAS and every waiter's poll
//! bounce between cores, which shortens many seats' episodes:
//! benches/RESULTS.md, the section on the team's barrier on its own cache line)
//! plus on the heap `N * size_of::<CachePadded<Node>>()` (128 bytes on
//! x86_64 and aarch64, 64 elsewhere) for the `N` nodes, `N = ceil(c/f) +
//! ceil(c/f^2) + … + 1` for the capacity `c` (0 for a flat team), and the
//! per-rank table, one padded line a rank, `c * size_of::<CachePadded<AtomicU64>>()`
//! (team/ranks.rs says why a line each: a rank's arrival stores its entry,
//! and a line that no other thread writes costs that store nothing; next
//! to a thread's stack, a few megabytes, a line a rank is little).
//! Linear in the capacity and independent of joins:
//! `N < c / (f - 1) + log_f(c) + 1`. With the defaults (f = 4, flat up to
//! 2), on x86_64:
//!
//! | capacity | nodes | heap bytes (tree + table) | total with the `Team` |
//! |---:|---:|---:|---:|
//! | 2 | 0 | 256 | 512 |
//! | 4 | 1 | 640 | 896 |
//! | 16 | 5 | 2 688 | 2 944 |
//! | 64 | 21 | 10 880 | 11 136 |
//! | 1024 | 341 | 174 720 | 174 976 |
//!
//! (pinned by a unit test below).

use crate::barrier::ArriveAndWaitFuture;
use crate::barrier::Barrier;
use crate::completion::Completion;
use crate::op::poisoned_panic;
use crate::phase::Phase;
use crate::sync::{AtomicU64, Mutex, Ordering};
use crate::token::{ArrivalToken, BarrierWaitResult};
use call::SeatCall;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::fmt;

/// Default fan-in of the tree: the fastest of 2, 4, 8 and 16 at 8 and 16
/// threads, measured when the seats' contributions were CASes
/// (benches/RESULTS.md, "Team: episode latency") and again with the single
/// `fetch_add`, where it is the fastest or level with 8 at every thread
/// count from 4 to 16 ("Small and mid-size teams"). Fan-in 2 climbs a level
/// more per phase; 8 and 16 put that many seats' RMWs on one node's line.
pub(crate) const FAN_IN: usize = 4;
/// Teams of at most this many seats go flat: with two seats there is
/// nothing to combine and every tree shape was slower than the flat word,
/// while from four seats on one node already beats it (benches/RESULTS.md,
/// "Team: episode latency").
pub(crate) const FLAT: usize = 2;
mod call;
mod delegate;
mod ranks;
mod seat;
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub(crate) mod stages;
mod tree;

#[cfg(feature = "bench")]
pub use ranks::set_rank_table;
use ranks::{Entry, LEFT, PART, UNHANDED};
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
    /// On its own cache line: the seats read `nodes` and `fan_in` on every
    /// arrival, and they must not share a line with the word that the
    /// root's CAS and every waiter's poll bounce between cores.
    barrier: CachePadded<Barrier<F>>,
    /// The tree, leaves first, the root last; empty for a flat team.
    nodes: Box<[CachePadded<Node>]>,
    /// The per-rank table (team/ranks.rs), one entry per rank of the
    /// capacity, each on a cache line that only its seat writes.
    ranks: Box<[CachePadded<AtomicU64>]>,
    /// Held by a join from its first look at the table to its last change
    /// of the tree, so joins see each other's entries and revive empty
    /// nodes one at a time.
    joins: Mutex<()>,
    seats: u32,
    capacity: u32,
    fan_in: u32,
    /// Whether the seats keep the per-rank table (always, except in the
    /// benches' side-by-side runs without it).
    bookkeeping: bool,
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
    /// let team = syncthreads::Team::new(4);
    /// assert_eq!(team.seat_count(), 4);
    /// assert!(!team.phase_parity());
    /// ```
    #[track_caller]
    #[must_use]
    pub fn new(seats: usize) -> Team {
        check_seats(format_args!("Team::new({seats})"), seats);
        Team::build(Barrier::new(seats), seats, seats, FAN_IN, FLAT)
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
        Team::with_capacity_and_shape(seats, capacity, FAN_IN, FLAT)
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
        check_seats(format_args!("Team::new({seats})"), seats);
        Team::build(Barrier::new(seats), seats, seats, fan_in, flat)
    }

    /// [`Team::with_capacity`] with a chosen shape, as [`Team::with_shape`].
    #[doc(hidden)]
    #[track_caller]
    #[must_use]
    pub fn with_capacity_and_shape(
        seats: usize,
        capacity: usize,
        fan_in: usize,
        flat: usize,
    ) -> Team {
        check_capacity(
            format_args!("Team::with_capacity({seats}, {capacity})"),
            seats,
            capacity,
        );
        Team::build(Barrier::new(seats), seats, capacity, fan_in, flat)
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
        check_seats(format_args!("Team::with_completion({seats})"), seats);
        Team::build(
            Barrier::with_completion(seats, f),
            seats,
            seats,
            fan_in,
            flat,
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
        Team::with_completion_and_capacity_and_shape(seats, capacity, f, FAN_IN, FLAT)
    }

    /// [`Team::with_completion_and_capacity`] with a chosen shape, as
    /// [`Team::with_shape`].
    #[doc(hidden)]
    #[track_caller]
    #[must_use]
    pub fn with_completion_and_capacity_and_shape(
        seats: usize,
        capacity: usize,
        f: F,
        fan_in: usize,
        flat: usize,
    ) -> Team<F> {
        check_capacity(
            format_args!("Team::with_completion_and_capacity({seats}, {capacity}, _)"),
            seats,
            capacity,
        );
        Team::build(
            Barrier::with_completion(seats, f),
            seats,
            capacity,
            fan_in,
            flat,
        )
    }
}

#[track_caller]
fn check_seats(call: fmt::Arguments<'_>, seats: usize) {
    crate::op::participants(call, "the seat count", seats);
}

#[track_caller]
fn check_capacity(call: fmt::Arguments<'_>, seats: usize, capacity: usize) {
    check_seats(call, seats);
    let max = crate::state::MAX as usize;
    if !(seats..=max).contains(&capacity) {
        panic!("syncthreads: {call}: the capacity must be in {seats} ..= {max} (the seat count ..= Barrier::MAX)");
    }
}

impl<F> Team<F> {
    #[track_caller]
    fn build(
        barrier: Barrier<F>,
        seats: usize,
        capacity: usize,
        fan_in: usize,
        flat: usize,
    ) -> Team<F> {
        assert!(
            (2..=MAX_FAN_IN).contains(&fan_in),
            "syncthreads: Team::with_shape({seats}, {fan_in}, {flat}): the fan-in must be in 2 ..= {MAX_FAN_IN}"
        );
        let nodes = if capacity > flat {
            tree::build(seats, capacity, fan_in)
        } else {
            Vec::new()
        };
        let team = Team {
            barrier: CachePadded::new(barrier),
            nodes: nodes.into_boxed_slice(),
            ranks: (0..capacity)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            joins: Mutex::new(()),
            seats: seats as u32,
            capacity: capacity as u32,
            fan_in: fan_in as u32,
            bookkeeping: ranks::bookkeeping(),
        };
        for rank in 0..seats {
            // Relaxed: construction; the team is handed to other threads
            // with a happens-before edge.
            team.entry(rank)
                .store(Entry::new(UNHANDED, 0).0, Ordering::Relaxed);
        }
        team
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

    /// The team's heap bytes (the tree and the per-rank table), for the
    /// memory table.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.nodes) + std::mem::size_of_val(&*self.ranks)
    }

    /// The number of tree nodes (0 for a flat team).
    #[cfg(test)]
    fn nodes(&self) -> usize {
        self.nodes.len()
    }
}

impl<F: Completion> Team<F> {
    /// Claims `rank`, taking part since construction and not handed out
    /// yet; what its entry said otherwise.
    fn claim(&self, rank: usize) -> Result<(), Entry> {
        let entry = self.entry(rank);
        // Relaxed: the CAS hands the rank out once, which its atomicity
        // alone decides (exactly one claimer finds it unhanded, under any
        // ordering); it publishes nothing, since a seat's data goes through
        // its arrivals.
        let mut e = Entry(entry.load(Ordering::Relaxed));
        loop {
            if e.state() != UNHANDED {
                return Err(e);
            }
            let part = Entry::new(PART, e.wide());
            // Relaxed: as above.
            match entry.compare_exchange_weak(e.0, part.0, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(found) => e = Entry(found),
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
        let barrier = &self.barrier;
        barrier.check_not_in_completion(&call);
        // A join that panics changes nothing, so a poisoned lock is fine.
        let joins = self
            .joins
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A first look, to refuse a join on a full team without touching
        // the word. Only a refusal counts here: this load and the entries
        // read after it may straddle a phase's completion (the word of one
        // phase, the entries of the next), which can make a rank that is
        // not yet free look free; the look after the join's RMW below,
        // made while the joined phase cannot complete, is the one that
        // hands out a rank. Relaxed: a stale word or stale entries answer
        // as a join made a moment earlier would, and a wrong "free" is
        // caught below; nothing read here is handed on.
        let mut s = barrier.snapshot(Ordering::Relaxed);
        while s.is_completing() {
            barrier.wait_until(|s| (!s.is_completing()).then_some(()));
            // Relaxed: as above.
            s = barrier.snapshot(Ordering::Relaxed);
        }
        if let Err(misuse) = crate::op::check_join(s, 1) {
            misuse.panic(call);
        }
        // Full: nothing changed.
        self.lowest_free(self.wide_phase(s.phase()))?;
        let joined = barrier
            .join(call.joining(), 1)
            .expect("one participant joins");
        // The phase may have moved on since the look above. Now it cannot
        // complete before this participant arrives, so the table reads
        // exactly (team/ranks.rs, "Reading the table").
        let wide = self.wide_phase(joined);
        let Some(rank) = self.lowest_free(wide) else {
            // The first look saw a rank free that is not free yet (it
            // straddled a completion): the participant that joined leaves
            // again at once, as a joined seat that is dropped before its
            // first arrival would, with an arrival and its drop on the
            // word. That arrival may complete the phase, and run the
            // completion function here, outside the join lock.
            crate::sync::model_event("team-join-leaves-again");
            drop(joins);
            let _left = barrier.arrive_combined(call.combined(1, 1, 0, true));
            return None;
        };
        // Relaxed: the seat is handed to its thread with a happens-before
        // edge, and later joins read it under the lock.
        self.entry(rank)
            .store(Entry::new(PART, wide).0, Ordering::Relaxed);
        if !self.nodes.is_empty() {
            self.attach(rank as u32 / self.fan_in, joined);
        }
        Some(Seat::new(
            self,
            rank,
            wide.wrapping_sub(1),
            !self.nodes.is_empty(),
        ))
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
        // Acquire: the entries of every arrival before this phase's start
        // are visible (team/ranks.rs, "Reading the table"), so no rank that
        // arrived in the phase before is taken for one that arrived in this
        // one. No model tells this from a snapshot taken while a seat
        // arrives (its entry is stored before its RMW, so it may count
        // early): the argument, not a model, keeps this Acquire.
        let s = self.barrier.snapshot(Ordering::Acquire);
        self.missing_in(s.phase())
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
}

impl<F> Team<F> {
    /// `arrived: N, expected: M` of the current phase, for the `Debug` of
    /// the team and of what is built on it.
    pub(crate) fn debug_progress(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        // Acquire: as in `Team::missing`; here it also keeps the largest
        // entry within what fixes the wide phase (team/ranks.rs).
        let p = self.progress_in(self.barrier.word(Ordering::Acquire).phase());
        f.field("arrived", &p.arrived)
            .field("expected", &p.expected);
    }
}

impl<F> fmt::Debug for Team<F> {
    /// The current phase's progress (participants arrived, and expected;
    /// the tree's arrivals included), the shape and the barrier's decoded
    /// word, e.g.
    /// `Team { arrived: 3, expected: 16, capacity: 16, fan_in: 4, nodes: 5, barrier: Barrier { phase_parity: false, pending: 16, expected: 16, tx: 0, poisoned: false } }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Team");
        self.debug_progress(&mut d);
        d.field("capacity", &self.capacity)
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
        missing: Some(team.missing()),
        mask: None,
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
            assert_eq!(team.heap_bytes(), (nodes + seats) * line);
            // The shape is the capacity's, whoever takes part.
            assert_eq!(Team::with_capacity(1, seats).nodes(), nodes);
        }
        if cfg!(target_arch = "x86_64") {
            assert_eq!(line, 128);
            assert_eq!(std::mem::size_of::<Team>(), 256);
            for (seats, heap) in [
                (2, 256),
                (4, 640),
                (16, 2688),
                (64, 10_880),
                (1024, 174_720),
            ] {
                assert_eq!(Team::new(seats).heap_bytes(), heap, "{seats} seats");
            }
        }
    }
}
