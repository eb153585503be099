//! A [`Team`]'s [`Seat`]: arriving, leaving, and the checks of a seat
//! (the design: docs/design/team-tree.md; the orderings:
//! docs/design/orderings.md).

use super::call::SeatCall;
use super::ranks::RankEntry;
use super::tree::{Contribution, Front, Tree};
use super::Team;
use crate::completion::Completion;
use crate::diagnostics::TokenRank;
use crate::engine::Target;
use crate::engine::{ArriveAndWaitFuture, Engine};
use crate::op::poisoned_panic;
use crate::phase::Phase;
use crate::state::Poison;
use crate::sync::{AtomicU64, Ordering};
use crate::token::{ArrivalToken, BarrierWaitResult};
#[cfg(doc)]
use crate::Barrier;
use std::cell::Cell;
use std::fmt;

/// One participant's place in a [`Team`]: it arrives through its seat.
///
/// Taken once per rank ([`Team::seat`], [`Team::seats`]); `Send` (hand it to
/// the thread that uses it), not `Sync`, not `Clone`. Its arrivals are those
/// of a [`Barrier`] (the tokens are waited on the team, `team.wait(token)`),
/// plus: a seat arriving twice in one phase panics and changes nothing.
///
/// Dropping a seat leaves the team, as [`arrive_and_drop`](Seat::arrive_and_drop)
/// does; if the thread is unwinding from a panic, the drop poisons the team
/// instead, so that nobody waits for a dead participant. A drop never panics
/// on a poisoned or retired team (it does nothing there); a completion
/// function run by a drop's arrival may still panic out of it. Dropping a
/// seat inside its own team's completion function poisons the team: it
/// could only leave once that function returned.
///
/// # Examples
///
/// ```
/// let team = syncthreads::Team::new(3);
/// let seats: Vec<_> = team.seats().collect();
/// let tokens: Vec<_> = seats.iter().map(|seat| seat.arrive()).collect();
/// for token in tokens {
///     team.wait(token); // the phase completed with the third arrival
/// }
/// ```
pub struct Seat<'a, F: Completion = ()> {
    pub(super) team: &'a Team<F>,
    pub(super) rank: u32,
    /// The wide number (team/ranks.rs) of the phase of this seat's last
    /// arrival; the one before the phase it joined ("phase -1", `u64::MAX`,
    /// for a seat taking part from phase 0, which cannot complete before
    /// every seat arrived once).
    pub(super) last: Cell<u64>,
    /// A joined seat's first arrival goes to the word, not to its leaf: its
    /// leaf counts it from the next round on (`Team::join`).
    pub(super) direct: Cell<bool>,
    /// This rank's entry in the team's table.
    pub(super) entry: &'a AtomicU64,
}

// A seat is its team, its rank, the phase of its last arrival, where its next
// arrival goes and its rank's entry: nothing that only the benches read (four
// words on 64-bit targets).
#[cfg(target_pointer_width = "64")]
crate::assert::assert_eq_size!(Seat<'static, ()>, [u64; 4]);
crate::assert::assert_impl_all!(Seat<'static>: Send);
crate::assert::assert_not_impl_any!(Seat<'static>: Sync, Clone);

// Like a `Barrier`, a seat is safe to use across `catch_unwind`: its
// operations check before they mutate, and its `Cell` (the phase of its last
// arrival) is only set once an arrival is recorded.
impl<F: Completion> std::panic::RefUnwindSafe for Seat<'_, F> {}
impl<F: Completion> std::panic::UnwindSafe for Seat<'_, F> {}

impl<'a, F: Completion> Seat<'a, F> {
    /// The seat of `rank`, whose last arrival was in (wide) phase `last`.
    pub(super) fn new(team: &'a Team<F>, rank: usize, last: u64, direct: bool) -> Seat<'a, F> {
        // The wide "phase -1" is `Phase::BEFORE_ZERO` modulo 4.
        debug_assert!(last != u64::MAX || Phase::of_wide(last) == Phase::BEFORE_ZERO);
        Seat {
            team,
            rank: rank as u32,
            last: Cell::new(last),
            direct: Cell::new(direct),
            entry: team.ranks.entry(rank),
        }
    }

    /// The phase (mod 4) of this seat's next arrival (or leave).
    pub(crate) fn next_phase(&self) -> Phase {
        Phase::of_wide(self.last.get().wrapping_add(1))
    }

    /// Stores this rank's entry, before the arrival or leave it describes
    /// (team/ranks.rs). Relaxed: that arrival's `Release` carries it.
    #[inline]
    fn publish(&self, e: RankEntry) {
        self.entry.store(e.0, Ordering::Relaxed);
    }

    /// This seat's rank, `0 .. seat_count()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(5);
    /// assert_eq!(team.seat(3).rank(), 3);
    /// ```
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank as usize
    }
}

impl<F: Completion> Seat<'_, F> {
    /// Arrives once in the current phase, without blocking (unless the
    /// completion function of this seat's previous phase is still running),
    /// and returns a token to wait on the team.
    ///
    /// # Panics
    ///
    /// If this seat already arrived in the current phase, if the team is
    /// poisoned, or inside the team's completion function.
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
    #[inline]
    pub fn arrive(&self) -> ArrivalToken {
        let mut token = self.arrive_as(SeatCall::Arrive, 0).0;
        token.rank = TokenRank::of(self.rank as usize);
        token
    }

    /// Arrives and waits for the phase to complete; `is_leader()` is true
    /// for the seat whose arrival completed the phase (exactly one per phase
    /// when every seat uses this).
    ///
    /// # Panics
    ///
    /// As [`arrive`](Seat::arrive) and [`Barrier::wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(4);
    /// let leaders: usize = std::thread::scope(|s| {
    ///     let handles: Vec<_> = team
    ///         .seats()
    ///         .map(|seat| s.spawn(move || seat.arrive_and_wait().is_leader() as usize))
    ///         .collect();
    ///     handles.into_iter().map(|h| h.join().unwrap()).sum()
    /// });
    /// assert_eq!(leaders, 1);
    /// ```
    #[track_caller]
    #[inline]
    pub fn arrive_and_wait(&self) -> BarrierWaitResult {
        self.arrive_and_wait_named(SeatCall::ArriveAndWait, "Seat::arrive_and_wait()")
    }

    /// [`arrive_and_wait`](Seat::arrive_and_wait) for a handle built on
    /// the seat (a block's sync): its messages name `name`, the call the
    /// user made.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_and_wait_as(&self, name: &'static str) -> BarrierWaitResult {
        self.arrive_and_wait_named(SeatCall::Named(name), name)
    }

    /// An arrival for a handle built on the seat (a grid's split
    /// arrive), whose panics name `name`, the call the user made; whether
    /// it completed the phase.
    #[track_caller]
    #[inline]
    pub(crate) fn arrive_named(&self, name: &'static str) -> (ArrivalToken, bool) {
        let (mut token, completed) = self.arrive_as(SeatCall::Named(name), 0);
        token.rank = TokenRank::of(self.rank as usize);
        (token, completed)
    }

    /// One arrival as `call` and the wait for its phase, whose panics name
    /// `wait_name` (the call the user made).
    #[track_caller]
    #[inline]
    fn arrive_and_wait_named(&self, call: SeatCall, wait_name: &'static str) -> BarrierWaitResult {
        let (token, completed) = self.arrive_as(call, 0);
        if !completed {
            let target = Target::Token(token.phase);
            let who = Some(crate::diagnostics::Who::Rank(self.rank as usize));
            let done = self
                .team
                .engine
                .wait_for(wait_name, target, None, self.team.subject(), who);
            debug_assert!(done);
        }
        BarrierWaitResult {
            is_leader: completed,
        }
    }

    /// Arrives now (the arrival happens at the call, not at the first poll;
    /// its misuse panics here) and returns a future that waits for the
    /// phase: [`arrive_and_wait`](Seat::arrive_and_wait) for async code.
    /// Its output's `is_leader()` is true for the seat whose arrival
    /// completed the phase.
    ///
    /// # Panics
    ///
    /// As [`arrive`](Seat::arrive) at the call; the future panics when
    /// polled as [`Barrier::wait_async`]'s does.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    /// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    /// # }
    /// let team = syncthreads::Team::new(1);
    /// let seat = team.seat(0);
    /// let result = block_on(seat.arrive_and_wait_async());
    /// assert!(result.is_leader());
    /// ```
    #[track_caller]
    pub fn arrive_and_wait_async(&self) -> ArriveAndWaitFuture<'_, F> {
        let (token, completed) = self.arrive_as(SeatCall::ArriveAndWaitAsync, 0);
        ArriveAndWaitFuture::arrived(
            &self.team.engine,
            "Seat::arrive_and_wait_async()",
            token.phase,
            completed,
            self.team.subject(),
        )
    }

    /// Arrives once and adds `tx` to the phase's transaction count, as one
    /// step of this phase: the phase does not complete before as much was
    /// completed with [`complete_tx`](Barrier::complete_tx).
    ///
    /// # Panics
    ///
    /// As [`arrive`](Seat::arrive), and if the count would leave
    /// `-MAX_TX ..= MAX_TX` (checked before the arrival).
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(1);
    /// let token = team.seat(0).arrive_tx(64);
    /// assert!(!team.try_wait(&token));
    /// team.complete_tx(64);
    /// assert!(team.try_wait(&token));
    /// ```
    #[track_caller]
    pub fn arrive_tx(&self, tx: u32) -> ArrivalToken {
        let mut token = self.arrive_as(SeatCall::ArriveTx(tx), tx).0;
        token.rank = TokenRank::of(self.rank as usize);
        token
    }

    /// Arrives once and leaves the team: every later phase owes one arrival
    /// fewer. On a seat that already arrived in the current phase it means
    /// "leave from the next phase on". When the last seat leaves, the team
    /// is retired once that phase completes.
    ///
    /// # Panics
    ///
    /// If the team is poisoned, or inside its completion function.
    ///
    /// # Examples
    ///
    /// ```
    /// let team = syncthreads::Team::new(2);
    /// let (a, b) = (team.seat(0), team.seat(1));
    /// a.arrive_and_drop();
    /// b.arrive_and_wait(); // phase 0: both arrived
    /// b.arrive_and_wait(); // phase 1 needs only b
    /// assert!(!team.phase_parity());
    /// ```
    #[track_caller]
    pub fn arrive_and_drop(self) {
        let engine = &self.team.engine;
        // Relaxed: only a reason to panic; a stale word leads to the RMW, which decides (orderings.md).
        let s = engine.word(Ordering::Relaxed);
        if s.poison().is_some() {
            poisoned_panic(SeatCall::ArriveAndDrop, s);
        }
        engine.check_not_in_completion(&SeatCall::ArriveAndDrop);
        let seat = std::mem::ManuallyDrop::new(self);
        seat.leave(SeatCall::ArriveAndDrop, false);
    }

    /// The phase a new arrival belongs to: the one after this seat's last
    /// arrival, once the word is there (the engine's entry check: a double
    /// arrival or a poisoned team panics, changing nothing; the completion
    /// window of the last phase is waited out).
    #[track_caller]
    #[inline]
    pub(super) fn enter(&self, call: SeatCall) -> Phase {
        let phase = self.next_phase();
        self.team.engine.enter(call.seat_arrival(phase, self.rank));
        phase
    }

    /// One arrival (plus `tx`): the token and whether it completed the phase.
    ///
    /// Always inlined, and so is a flat team's arrival: the RMW is then the
    /// caller's own code with its op a constant. Out of line it was a call
    /// with the seat's call passed through memory, and a team of two lost to
    /// a `Barrier` of two: its seats' RMWs met and retried far more often
    /// (benches/RESULTS.md, "The arrival inlined").
    #[track_caller]
    #[inline(always)]
    pub(super) fn arrive_as(&self, call: SeatCall, tx: u32) -> (ArrivalToken, bool) {
        // The one look at the front: each path below knows its own.
        match &self.team.front {
            Front::Flat if tx == 0 => self.arrive_flat(call),
            Front::Flat => self.arrive_flat_tx(call, tx),
            Front::Tree(tree) => self.arrive_tree(tree, call, tx),
        }
    }

    /// [`arrive_as`](Self::arrive_as) through the tree (plus `tx`).
    #[track_caller]
    fn arrive_tree(&self, tree: &Tree, call: SeatCall, tx: u32) -> (ArrivalToken, bool) {
        let (phase, wide) = self.counted_arrival(call, tx);
        let arrival = Contribution {
            arrivals: 1,
            drops: 0,
            leave: false,
        };
        let result = self.contribute(tree, phase, arrival, call, false);
        self.last.set(wide);
        result
    }

    /// A flat team's arrival with `tx`: checked as a tree seat's, then one
    /// arrival on the word.
    #[track_caller]
    fn arrive_flat_tx(&self, call: SeatCall, tx: u32) -> (ArrivalToken, bool) {
        let (_, wide) = self.counted_arrival(call, tx);
        let result = self
            .team
            .engine
            .arrive_combined(call.combined(1, 0, 0, false));
        self.last.set(wide);
        result
    }

    /// What precedes an arrival that the word does not check in its own
    /// RMW: the entry check, the `tx` (before the arrival: the phase cannot
    /// complete until that arrival, and a range misuse panics with nothing
    /// changed, point 4) and the entry. Returns the arrival's phase and its
    /// wide number, for the caller to store once the arrival is made.
    #[track_caller]
    #[inline(always)]
    fn counted_arrival(&self, call: SeatCall, tx: u32) -> (Phase, u64) {
        let phase = self.enter(call);
        if tx > 0 {
            let _expect_tx = self
                .team
                .engine
                .arrive_combined(call.combined(0, 0, tx, false));
        }
        let wide = self.last.get().wrapping_add(1);
        debug_assert_eq!(Phase::of_wide(wide), phase);
        self.publish(RankEntry::new(super::PART, wide.wrapping_add(1)));
        (phase, wide)
    }

    /// A flat team's plain arrival: one RMW of the word, whose own read is
    /// the entry check ([`PhaseOf::Exactly`]), with no load before it. The
    /// entry is published first and put back if the arrival is refused
    /// ([`Unpublish`]) (team-tree.md, "A flat seat's arrival").
    ///
    /// [`PhaseOf::Exactly`]: crate::op::PhaseOf::Exactly
    #[track_caller]
    #[inline(always)]
    fn arrive_flat(&self, call: SeatCall) -> (ArrivalToken, bool) {
        let engine = &self.team.engine;
        let wide = self.last.get().wrapping_add(1);
        let unpublish = Unpublish {
            engine,
            // Relaxed: this seat's own entry, which only this thread writes.
            entry: (self.entry, self.entry.load(Ordering::Relaxed)),
        };
        self.publish(RankEntry::new(super::PART, wide.wrapping_add(1)));
        match engine.try_arrive_combined(call.seat_arrival(Phase::of_wide(wide), self.rank)) {
            Ok(arrived) => {
                std::mem::forget(unpublish);
                self.last.set(wide);
                arrived
            }
            Err(misuse) => {
                unpublish.restore();
                misuse.panic(call)
            }
        }
    }

    /// Hands a contribution to round `round` to this seat's leaf of `tree`
    /// and climbs as far as it completes rounds; to the word instead if
    /// this seat's first arrival is owed there (`direct`).
    #[track_caller]
    #[inline]
    fn contribute(
        &self,
        tree: &Tree,
        round: Phase,
        c: Contribution,
        call: SeatCall,
        quiet: bool,
    ) -> (ArrivalToken, bool) {
        let team = self.team;
        if self.direct.replace(false) {
            return team
                .engine
                .arrive_combined(call.combined(c.arrivals, c.drops, 0, quiet));
        }
        let leaf = tree.leaf(self.rank, team.fan_in);
        match tree.climb(leaf, round, c) {
            None => (team.engine.token_for(round), false),
            Some(sums) => self.arrive_root(round, sums, call, quiet),
        }
    }

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
        let engine = &self.team.engine;
        if sums.arrivals == 0 {
            // Nothing for the word: every seat counted left before its first
            // arrival, which it makes on the word after this climb
            // (`Seat::leave`; team-tree.md, "Joining").
            return (engine.token_for(round), false);
        }
        let op = if sums.arrivals == sums.drops {
            // Leavers only, maybe early: the RMW folds the drops into phase
            // `round - 1` if it still runs, else counts them in `round`;
            // never a wait (team-tree.md, "Leaving").
            call.leave_after(round.prev(), sums.drops, quiet)
        } else {
            call.combined(sums.arrivals, sums.drops, 0, quiet)
        };
        engine.arrive_combined(op)
    }

    /// Leaves: a contribution `(1, 1, leave)` to round `last + 1` (module
    /// docs, "Leaving").
    ///
    /// A joined seat that leaves before its first arrival, in the phase
    /// `p` it joined, leaves its leaf from round `p + 1` with a
    /// contribution that carries nothing but the leave, and then makes its
    /// arrival and its drop on the word, where its first arrival was owed.
    /// In that order: while that arrival is owed, phase `p` cannot
    /// complete, so a round `p + 1` that the leave completes (every other
    /// member of the leaf left early too) finds the word still in phase `p`
    /// and folds its drops into it (`Op::Arrival`, `PhaseOf::After`). The other order
    /// could complete phase `p` first and turn those drops into arrivals of
    /// phase `p + 1`: a phase that nobody takes part in, completed anyway.
    #[track_caller]
    pub(super) fn leave(&self, call: SeatCall, quiet: bool) {
        let last = self.last.get();
        // Its leave counts as its arrival in the phase after its last one.
        self.publish(RankEntry::new(super::LEFT, last.wrapping_add(1)));
        let last = Phase::of_wide(last);
        let tree = match &self.team.front {
            Front::Flat => {
                let _left = self
                    .team
                    .engine
                    .arrive_combined(call.leave_after(last, 1, true));
                return;
            }
            Front::Tree(tree) => tree,
        };
        let c = Contribution {
            arrivals: 1,
            drops: 1,
            leave: true,
        };
        if self.direct.replace(false) {
            let only_leave = Contribution {
                arrivals: 0,
                drops: 0,
                leave: true,
            };
            let _ = self.contribute(tree, last.next().next(), only_leave, call, quiet);
            let _first = self
                .team
                .engine
                .arrive_combined(call.combined(1, 1, 0, quiet));
            return;
        }
        let _ = self.contribute(tree, last.next(), c, call, quiet);
    }
}

/// A flat seat's entry as it was before its arrival published the next
/// one: put back by a refused arrival ([`restore`](Unpublish::restore)),
/// and by the drop of an arrival that unwinds inside the team's own
/// completion function. That unwinding is the refusal of
/// `Engine::wait_for_next_phase`: this thread's own completion holds the
/// word completing, so the RMW counted nothing. Any other unwinding out of
/// the RMW is a completion function that this arrival ran, after it
/// counted: its entry stays. A counted arrival forgets the guard.
struct Unpublish<'a, F: Completion> {
    engine: &'a Engine<F>,
    entry: (&'a AtomicU64, u64),
}

impl<F: Completion> Unpublish<'_, F> {
    fn restore(&self) {
        let (entry, before) = self.entry;
        // Relaxed: as `Seat::publish`; nothing was counted.
        entry.store(before, Ordering::Relaxed);
    }
}

impl<F: Completion> Drop for Unpublish<'_, F> {
    fn drop(&mut self) {
        if self.engine.in_own_completion() {
            self.restore();
        }
    }
}

impl<F: Completion> Drop for Seat<'_, F> {
    /// Leaves the team; poisons it if the thread is unwinding.
    fn drop(&mut self) {
        let engine = &self.team.engine;
        if std::thread::panicking() {
            engine.poison_because(Poison::Panic);
            return;
        }
        // Relaxed: only skips a leave that does nothing; the leave's RMW decides (orderings.md).
        let s = engine.word(Ordering::Relaxed);
        if s.poison().is_some() || s.is_retired() {
            return;
        }
        if engine.in_own_completion() {
            // It could only leave once that function has returned.
            engine.poison_because(Poison::DropInCompletion);
            return;
        }
        self.leave(SeatCall::Drop, true);
    }
}

impl<F: Completion> fmt::Debug for Seat<'_, F> {
    /// The rank and the team's progress in the current phase, e.g.
    /// `Seat { rank: 3, arrived: 5, expected: 16, .. }`. Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Seat");
        d.field("rank", &self.rank);
        self.team.debug_progress(&mut d);
        d.finish_non_exhaustive()
    }
}
