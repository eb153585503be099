//! The dock: the pool threads of a launch stay together for a moment after
//! it, waiting on one word, so that a next launch of the same size hands
//! them all their ranks with one claim and one bump, and counts them back
//! on one counter, instead of one slot word per rank each way.
//!
//! The dock word (one per pool) packs, low to high: a status (`OPEN`,
//! `CLAIMED`, `FORMING`, `CLOSED`), a `SLEEPERS` bit, the size of the block
//! it serves, its members (the pool threads docked) and a generation. A
//! `CLOSED` dock with no members is empty. Every change is an RMW.
//!
//! 1. *Forming.* A launch through the slots (`pool.rs`) that finds the dock
//!    empty makes it `FORMING` at its size, with `size - 1` members, by a
//!    CAS, and tells each of its tickets to dock. A worker that ran such a
//!    rank hands it back by marking its slot `DOCKED` (no launch claims a
//!    slot there) and waits on the dock word as the member of that rank,
//!    from the generation its ticket names. Once every rank ended, the
//!    launch opens the dock, or closes it if a thread could not be spawned
//!    (the members it lacks leave with it).
//! 2. *Claiming.* A launch of the dock's size claims it by a CAS `OPEN` →
//!    `CLAIMED` (one winner; a loser goes through the slots), puts its
//!    ticket in the hand-out, sets the counter to `size - 1` and bumps the
//!    generation (`Release`). Every member sees the new generation
//!    (`Acquire`), runs its rank of the ticket's job and counts itself back
//!    (`Release`). The launch runs rank 0, waits until the counter reads
//!    zero (`Acquire`: every rank's outcome is visible), and reopens the
//!    dock (`Release`, to the next claim's `Acquire`).
//! 3. *Closing.* A member that polled its window without a new generation
//!    closes an `OPEN` dock by a CAS (`CLOSED`, the generation bumped): the
//!    claim's word, so one of the two wins; a close that loses finds the
//!    job. A member that sees `CLOSED` goes back to its slot (`IDLE`, where
//!    launches claim it again), then takes itself off the members
//!    (`Release`).
//! 4. *Vacating.* A launch that cannot claim the dock and finds it idle
//!    (open at another size, or closed with members on their way back)
//!    closes it and waits until its members are gone (`Acquire`: their
//!    slots are `IDLE` again), so that it claims them through their slots
//!    rather than spawn threads beside them. Members leaving a closed dock
//!    wait for nothing, so this wait is short and cannot deadlock. A launch
//!    that finds the dock held by another (`FORMING`, `CLAIMED`) goes
//!    through the slots at once: docks are never waited for.
//! 5. *Sleeping.* A member whose window passes while a launch holds the
//!    dock at its generation (`FORMING`, or `CLAIMED` before the bump or
//!    before the reopening) cannot close it: it sets `SLEEPERS` and parks on
//!    the word, and the launch's next transition of the word wakes it. A
//!    vacating launch parks the same way, and the last member out wakes it.
//!    A launch that waits long for its counter tags it `WAITED` and parks;
//!    the member that counts it to zero wakes it.
//!
//! Why the scoped borrow stays sound: a member reads the hand-out and the
//! job behind it only between the bump that published them and its count
//! back, and the launch leaves its frame only once the counter reads zero.
//! A member that reads a generation reads that generation's hand-out: the
//! next claim comes after the reopening, which comes after its count back.

use super::slot::Ticket;
use super::{poll, AbortOnUnwind};
use crate::park;
use crate::sync::{AtomicPtr, AtomicU64, Ordering};
use crossbeam_utils::CachePadded;
use std::fmt;
use std::ptr;

/// The status field: a launch may claim the dock.
const OPEN: u64 = 0;
/// The status field: a launch holds the dock (it is publishing, running,
/// or waiting for its members).
const CLAIMED: u64 = 1;
/// The status field: the launch through the slots that forms the dock has
/// not yet seen all its ranks end.
const FORMING: u64 = 2;
/// The status field: no launch may claim the dock; its members are leaving
/// (empty once none is left).
const CLOSED: u64 = 3;
/// The status field's mask.
const STATUS: u64 = 0b11;
/// Some member parks on the word until the launch holding the dock moves it.
const SLEEPERS: u64 = 1 << 2;
/// Where the size field begins.
const SIZE_SHIFT: u32 = 3;
/// The width of the size and members fields.
const FIELD_BITS: u32 = 12;
/// A field's mask, once shifted down.
const FIELD: u64 = (1 << FIELD_BITS) - 1;
/// Where the members field begins.
const MEMBERS_SHIFT: u32 = SIZE_SHIFT + FIELD_BITS;
/// One member.
const MEMBER_ONE: u64 = 1 << MEMBERS_SHIFT;
/// Where the generation begins: it takes every bit left, and wraps.
const GENERATION_SHIFT: u32 = MEMBERS_SHIFT + FIELD_BITS;
/// One generation.
const GENERATION_ONE: u64 = 1 << GENERATION_SHIFT;

/// The largest block the dock serves: its size field's range.
pub(super) const MAX_SIZE: usize = FIELD as usize;

/// The counter's tag: the launch is parked waiting for it to reach zero.
const WAITED: u64 = 1 << 63;

/// A copy of the dock word, decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Word(u64);

impl Word {
    fn status(self) -> u64 {
        self.0 & STATUS
    }

    fn sleepers(self) -> bool {
        self.0 & SLEEPERS != 0
    }

    fn size(self) -> usize {
        ((self.0 >> SIZE_SHIFT) & FIELD) as usize
    }

    fn members(self) -> usize {
        ((self.0 >> MEMBERS_SHIFT) & FIELD) as usize
    }

    fn generation(self) -> u64 {
        self.0 >> GENERATION_SHIFT
    }

    /// An empty dock: closed, and its last member gone.
    fn is_empty(self) -> bool {
        self.status() == CLOSED && self.members() == 0
    }
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = ["OPEN", "CLAIMED", "FORMING", "CLOSED"][self.status() as usize];
        f.debug_struct("Word")
            .field("status", &status)
            .field("sleepers", &self.sleepers())
            .field("size", &self.size())
            .field("members", &self.members())
            .field("generation", &self.generation())
            .finish()
    }
}

/// What a launch that could not claim the dock does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Vacated {
    /// The dock opened at this launch's size meanwhile: try it again.
    Retry,
    /// The dock is empty, or another launch holds it: go through the slots.
    Slots,
}

/// A pool's dock: its word with the hand-out beside it (one line, read by
/// every member at each launch), and the counter on a line of its own.
pub(super) struct Dock {
    line: CachePadded<Line>,
    /// The members of the current launch still running its ranks, and the
    /// `WAITED` tag.
    remaining: CachePadded<AtomicU64>,
}

struct Line {
    word: AtomicU64,
    /// The claiming launch's ticket (its job, run function and crowding;
    /// each member takes its own rank), published by the bump.
    handout: AtomicPtr<Ticket>,
}

impl Dock {
    pub(super) fn new() -> Dock {
        Dock {
            line: CachePadded::new(Line {
                word: AtomicU64::new(CLOSED),
                handout: AtomicPtr::new(ptr::null_mut()),
            }),
            remaining: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// The key members park on.
    fn key(&self) -> usize {
        ptr::from_ref(&self.line.word).addr()
    }

    /// The key the claiming launch parks on.
    fn remaining_key(&self) -> usize {
        ptr::from_ref(&*self.remaining).addr()
    }

    /// Forms the dock for a launch of `threads` if it is empty (point 1):
    /// the generation its members start from.
    pub(super) fn form(&self, threads: usize) -> Option<u64> {
        if !(2..=MAX_SIZE).contains(&threads) {
            return None;
        }
        // Relaxed: a first look; the CAS decides.
        let seen = Word(self.line.word.load(Ordering::Relaxed));
        if !seen.is_empty() {
            return None;
        }
        let size = threads as u64;
        // The generation stays; every other field is new.
        let forming = (seen.generation() << GENERATION_SHIFT)
            | FORMING
            | (size << SIZE_SHIFT)
            | ((size - 1) << MEMBERS_SHIFT);
        // Relaxed: the tickets' claims (Release) publish the generation to
        // the members; nothing is read here. Relaxed on failure: as above.
        self.line
            .word
            .compare_exchange(seen.0, forming, Ordering::Relaxed, Ordering::Relaxed)
            .ok()
            .map(|_| seen.generation())
    }

    /// Ends the forming once every rank of the forming launch ended
    /// (point 1): opens the dock, or, if `missing` members never got a
    /// thread, closes it and takes them off.
    pub(super) fn formed(&self, missing: usize) {
        let before = if missing == 0 {
            // Release: with the reopening's reason (the next claim's
            // Acquire); the members' writes are ordered by their slots.
            Word(
                self.line
                    .word
                    .fetch_and(!(STATUS | SLEEPERS), Ordering::Release),
            )
        } else {
            // FORMING + 1 is CLOSED; the fields do not borrow (members >=
            // missing). Relaxed: no data rides on a close.
            let change =
                (CLOSED - FORMING + GENERATION_ONE).wrapping_sub(missing as u64 * MEMBER_ONE);
            Word(self.line.word.fetch_add(change, Ordering::Relaxed))
        };
        debug_assert_eq!(before.status(), FORMING, "{before:?}");
        if before.sleepers() {
            park::unpark_all(self.key());
        }
    }

    /// Makes way for a launch of `threads` that could not claim the dock
    /// (point 4).
    pub(super) fn vacate(&self, threads: usize) -> Vacated {
        loop {
            // Acquire: a members field of zero was written by the last
            // member's Release leave, after its slot became `IDLE`.
            let seen = Word(self.line.word.load(Ordering::Acquire));
            match seen.status() {
                OPEN if seen.size() == threads => return Vacated::Retry,
                OPEN => {
                    self.close_from(seen);
                }
                CLOSED if seen.members() == 0 => return Vacated::Slots,
                CLOSED => {
                    let tagged = seen.0 | SLEEPERS;
                    // Relaxed: the tag only asks for a wake. Relaxed on
                    // failure: re-read above.
                    if seen.sleepers()
                        || self
                            .line
                            .word
                            .compare_exchange(seen.0, tagged, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                    {
                        crate::sync::model_event("dock-vacate-sleeps");
                        // Relaxed: the validation only decides whether to sleep.
                        park::park(
                            self.key(),
                            &mut || self.line.word.load(Ordering::Relaxed) == tagged,
                            None,
                        );
                    }
                }
                _ => return Vacated::Slots,
            }
        }
    }

    /// Closes the dock if it still reads `seen` (open); true if this call
    /// closed it.
    fn close_from(&self, seen: Word) -> bool {
        debug_assert_eq!(seen.status(), OPEN, "{seen:?}");
        // Relaxed: the winner of the word is all that matters (point 3); a
        // loser re-reads. An open dock has no sleepers to wake.
        self.line
            .word
            .compare_exchange(
                seen.0,
                seen.0 + (CLOSED - OPEN) + GENERATION_ONE,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Closes the dock if it is open (the pool is shutting down: no launch
    /// runs), so that its members go back to their slots.
    pub(super) fn close(&self) {
        // Relaxed: a first look; the CAS decides.
        let mut seen = Word(self.line.word.load(Ordering::Relaxed));
        while seen.status() == OPEN && !self.close_from(seen) {
            // Relaxed: as above.
            seen = Word(self.line.word.load(Ordering::Relaxed));
        }
    }

    /// Runs `ticket`'s job on the dock if it is open at `threads` (point
    /// 2): rank 0 on this thread, the others on the members; false, having
    /// run nothing, if it is not.
    ///
    /// # Safety
    ///
    /// As `Pool::run`'s, for `ticket.job` and `ticket.run`.
    pub(super) unsafe fn launch(&self, threads: usize, ticket: &Ticket) -> bool {
        // Relaxed: a first look; the CAS decides.
        let seen = Word(self.line.word.load(Ordering::Relaxed));
        if seen.status() != OPEN || seen.size() != threads {
            return false;
        }
        // Acquire: the last launch's reopening (Release) followed every
        // member's count back, so this hand-out comes after their reads of
        // the last one. Relaxed on failure: nothing is read.
        if self
            .line
            .word
            .compare_exchange(
                seen.0,
                seen.0 | CLAIMED,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            crate::sync::model_event("dock-claim-lost");
            return false;
        }
        crate::sync::model_event("dock-claimed");
        // Relaxed: the bump publishes them.
        self.line
            .handout
            .store(ptr::from_ref(ticket).cast_mut(), Ordering::Relaxed);
        // Relaxed: as the hand-out.
        self.remaining.swap(threads as u64 - 1, Ordering::Relaxed);
        // From the bump on, the members may read `ticket` and its job: the
        // guard waits for them however this frame is left.
        let guard = WaitMembers {
            dock: self,
            crowded: ticket.crowded,
        };
        // Release: publishes the hand-out, the counter and the job to the
        // members' Acquire load.
        let before = Word(self.line.word.fetch_add(GENERATION_ONE, Ordering::Release));
        if before.sleepers() {
            park::unpark_all(self.key());
        }
        // SAFETY: the caller's promise, for rank 0 on this thread.
        unsafe { (ticket.run)(ticket.job, 0) };
        drop(guard);
        true
    }

    /// A member's life in the dock (points 2, 3, 5): from generation
    /// `generation` on, runs rank `rank` of each launch that claims it,
    /// until the dock closes. The member then goes back to its slot and
    /// calls [`leave`](Dock::leave).
    pub(super) fn serve(&self, rank: usize, mut generation: u64, mut crowded: bool) {
        loop {
            // Acquire: the bump's Release published the hand-out and job.
            let now = Word(self.line.word.load(Ordering::Acquire));
            if now.generation() != generation {
                if now.status() == CLOSED {
                    return;
                }
                generation = now.generation();
                crowded = self.run(rank);
                continue;
            }
            // Relaxed: a change is re-read with Acquire above.
            if poll(crowded, || {
                Word(self.line.word.load(Ordering::Relaxed)).generation() != generation
            }) {
                continue;
            }
            // Relaxed: as above.
            let now = Word(self.line.word.load(Ordering::Relaxed));
            if now.generation() != generation {
                continue;
            }
            if now.status() == OPEN {
                if self.close_from(now) {
                    crate::sync::model_event("dock-expired");
                    return;
                }
                continue;
            }
            // A launch holds the dock at this generation (point 4).
            let tagged = now.0 | SLEEPERS;
            // Relaxed: the tag only asks for a wake. Relaxed on failure:
            // the word moved; re-read.
            if now.sleepers()
                || self
                    .line
                    .word
                    .compare_exchange(now.0, tagged, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                crate::sync::model_event("dock-member-sleeps");
                // Relaxed: the validation only decides whether to sleep.
                park::park(
                    self.key(),
                    &mut || self.line.word.load(Ordering::Relaxed) == tagged,
                    None,
                );
            }
        }
    }

    /// Runs this member's rank of the launch just published, counts it
    /// back, and returns the launch's crowding.
    fn run(&self, rank: usize) -> bool {
        // Relaxed: the Acquire load of the bumped generation ordered it.
        let ticket = self.line.handout.load(Ordering::Relaxed);
        // SAFETY: the launch that published the ticket waits for this
        // member's count back before it leaves the frame holding the ticket
        // and its job (module docs); the fields are read before it.
        let (job, run, crowded) = unsafe { ((*ticket).job, (*ticket).run, (*ticket).crowded) };
        let abort = AbortOnUnwind;
        // SAFETY: the launch promised (`Pool::run`) that each rank may run
        // on any thread while it waits, and the dock hands out each rank
        // once per generation.
        unsafe { run(job, rank) };
        std::mem::forget(abort);
        // Release: publishes the rank's outcome to the launch's Acquire.
        let before = self.remaining.fetch_sub(1, Ordering::Release);
        if before == WAITED | 1 {
            // The address only as a key: the launch may be gone already.
            park::unpark_all(self.remaining_key());
        }
        crowded
    }

    /// Takes a member that went back to its slot off the closed dock
    /// (point 3); the last one wakes the launches vacating it (point 4).
    pub(super) fn leave(&self) {
        // Release: a vacating launch that reads no members (Acquire) then
        // finds this member's slot `IDLE`.
        let before = Word(self.line.word.fetch_sub(MEMBER_ONE, Ordering::Release));
        if before.members() == 1 && before.sleepers() {
            park::unpark_all(self.key());
        }
    }

    /// Returns once the counter reads zero (point 2).
    fn wait_members(&self, crowded: bool) {
        // Acquire: each member's Release count back published its outcome.
        if poll(crowded, || self.remaining.load(Ordering::Acquire) == 0) {
            return;
        }
        loop {
            // Acquire: as above.
            let left = self.remaining.load(Ordering::Acquire);
            if left & !WAITED == 0 {
                return;
            }
            // Relaxed: the tag only asks for a wake. Relaxed on failure:
            // re-read above.
            if left & WAITED == 0
                && self
                    .remaining
                    .compare_exchange(left, left | WAITED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            crate::sync::model_event("dock-launch-sleeps");
            // Relaxed: the validation only decides whether to sleep.
            park::park(
                self.remaining_key(),
                &mut || self.remaining.load(Ordering::Relaxed) & !WAITED != 0,
                None,
            );
        }
    }
}

/// Waits, on drop, for the members of a claimed dock to count back, then
/// reopens it.
struct WaitMembers<'a> {
    dock: &'a Dock,
    crowded: bool,
}

impl Drop for WaitMembers<'_> {
    fn drop(&mut self) {
        self.dock.wait_members(self.crowded);
        // Release: the members' reads of this hand-out (ordered before
        // their count back, which the wait acquired) come before the next
        // claim's Acquire and its hand-out.
        let before = Word(
            self.dock
                .line
                .word
                .fetch_and(!(STATUS | SLEEPERS), Ordering::Release),
        );
        if before.sleepers() {
            park::unpark_all(self.dock.key());
        }
    }
}

impl fmt::Debug for Dock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display.
        f.debug_struct("Dock")
            .field("word", &Word(self.line.word.load(Ordering::Relaxed)))
            .field(
                "remaining",
                &(self.remaining.load(Ordering::Relaxed) & !WAITED),
            )
            .finish()
    }
}
