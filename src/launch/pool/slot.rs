//! A worker's slot word: how a launch hands a worker a rank and the worker
//! hands it back.
//!
//! A slot's word is a pointer to a [`Ticket`] (one rank of one launch, held
//! by the launching thread until that launch returns) or one of four
//! sentinels, which no ticket's address can equal (a ticket is aligned to 8):
//!
//! - `IDLE`: the worker has nothing to do and polls the word;
//! - `SLEEPING`: the worker is parked (or about to park) on the word;
//! - `EXITED`: the worker stayed idle for the keep-alive and left, or its
//!   crew service ended (`pool/crew.rs`);
//! - `SHUTDOWN`: the pool was dropped; the worker leaves.
//!
//! Every change of the word is an RMW, so that a load which reads any later
//! value synchronizes with the `Release` change it follows (release
//! sequences):
//!
//! 1. A launch *claims* a worker by a CAS `IDLE`/`SLEEPING` → its ticket
//!    (`Release`: the ticket's fields and the job it points to were written
//!    before), and unparks it if it was `SLEEPING`. It never waits for a
//!    busy worker (a ticket in the word): it takes the next idle one, or
//!    spawns a thread. So a launch depends only on the threads it claimed,
//!    which run nothing but its kernel: concurrent and nested launches
//!    cannot wait for each other.
//! 2. The worker loads the ticket (`Acquire`), runs the rank, and hands it
//!    back by a swap of the word to `IDLE` (`Release`: the rank's outcome
//!    was written before). It reads nothing of the launch after that swap.
//! 3. The launch waits until the word no longer holds its ticket (`Acquire`
//!    load): the rank is done and its outcome visible. Before parking it
//!    tags the word (its ticket with `WAITED`), so that the worker's swap
//!    sees the tag and wakes it; the wake uses the ticket's address only as
//!    a key, never dereferencing it.
//! 4. An idle worker waits through `wait/` (spin, yield, park), the word's
//!    parked state being `SLEEPING` (set by a CAS from `IDLE`). When the
//!    keep-alive passes, it leaves by a CAS from `IDLE` or `SLEEPING` to
//!    `EXITED`: if a launch claimed it first, that CAS fails and the worker
//!    runs the ticket instead; if the worker's CAS comes first, the launch's
//!    CAS fails and it moves on. One word, one winner: no launch is ever
//!    handed to a thread that has left.
//! 5. A launch short of idle workers reuses an `EXITED` slot (once a word
//!    reads `EXITED`, only launches, under the pool's lock, change it) or
//!    adds a slot, and
//!    spawns its thread with the ticket already in the word.
//!
//! Why the scoped borrow is sound: every ticket and the job behind it live
//! in the frame of the launching thread, which returns only after the word
//! of every claimed slot has left its ticket (point 3), i.e. after each
//! worker's last access to them (point 2). That wait sits in a drop guard, so
//! it also happens if the launching thread unwinds; and a worker catches its
//! kernel's panic, so it always reaches point 2. This is the argument of
//! `std::thread::scope` (the scope waits for every thread it spawned) and of
//! rayon's `scope` (a latch that the scope's frame waits on).

use crate::park;
use crate::sync::{AtomicPtr, Ordering};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::ptr;

/// One rank of one launch, handed to a worker through its slot word.
pub(in crate::launch) struct Ticket {
    /// The launch's job, type-erased.
    pub(in crate::launch) job: *const (),
    /// Runs rank `rank` of `job` and records its outcome; never unwinds.
    pub(in crate::launch) run: unsafe fn(*const (), usize),
    /// The rank this worker takes.
    pub(in crate::launch) rank: usize,
    /// Whether the machine had more block threads than cores when the
    /// launch began: waiters then give the cores away at once.
    pub(super) crowded: bool,
    /// Whether the rank is a crew member's service (`pool/crew.rs`): the
    /// worker then leaves the pool when it ends.
    pub(super) enlists: bool,
    /// The slot this ticket was handed to, written by the launch before its
    /// claim and never after: the launch's own note of whom to wait for,
    /// which no worker reads.
    pub(super) slot: Cell<*const Slot>,
}

/// `IDLE`: the worker polls the word for a ticket.
pub(super) fn idle() -> *mut Ticket {
    ptr::null_mut()
}

/// `SLEEPING`: the worker is parked, or about to park, on the word.
pub(super) fn sleeping() -> *mut Ticket {
    ptr::without_provenance_mut(1)
}

/// `EXITED`: the worker left after the keep-alive.
pub(super) fn exited() -> *mut Ticket {
    ptr::without_provenance_mut(2)
}

/// `SHUTDOWN`: the pool was dropped.
pub(super) fn shutdown() -> *mut Ticket {
    ptr::without_provenance_mut(3)
}

/// The tag of a ticket whose launch is parked waiting for it.
pub(super) const WAITED: usize = 4;

/// Whether a word holds a ticket (tagged or not), not a sentinel.
pub(super) fn is_ticket(word: *mut Ticket) -> bool {
    word.addr() >= 8
}

/// A worker's slot: its word, alone on its cache line (the launch that
/// claims it and the worker are the only threads that touch it).
///
/// The word is private, and the slot offers loads and RMWs of it, no
/// store: every change of the word is an RMW (module docs), so any load
/// that reads a later value still synchronizes with a `Release` change
/// before it (the release sequence a plain store would cut).
pub(super) struct Slot {
    word: CachePadded<AtomicPtr<Ticket>>,
}

impl Slot {
    pub(super) fn new(word: *mut Ticket) -> Slot {
        Slot {
            word: CachePadded::new(AtomicPtr::new(word)),
        }
    }

    /// The key the worker parks on.
    pub(super) fn key(&self) -> usize {
        ptr::from_ref(&*self.word).addr()
    }

    /// The word now.
    #[inline]
    pub(super) fn load(&self, order: Ordering) -> *mut Ticket {
        self.word.load(order)
    }

    /// Replaces the word, returning the one it held.
    #[inline]
    pub(super) fn swap(&self, new: *mut Ticket, order: Ordering) -> *mut Ticket {
        self.word.swap(new, order)
    }

    /// Hands `ticket` to a new thread of an `EXITED` slot (point 5): a swap,
    /// not a store, so that the word's release sequence goes on through it
    /// (a launch whose wait reads this ticket synchronizes with the
    /// previous worker's hand-back).
    pub(super) fn reuse(&self, ticket: *mut Ticket) {
        crate::sync::model_event("pool-reused-a-slot");
        // Relaxed: the new thread learns the ticket through its spawn, which
        // comes after this; a launch whose wait reads it dereferences
        // nothing. Being an RMW is what carries the release sequence.
        let prior = self.word.swap(ticket, Ordering::Relaxed);
        debug_assert_eq!(prior, exited(), "only an exited slot is reused");
    }

    /// Replaces the word if it holds `current`.
    #[inline]
    pub(super) fn compare_exchange(
        &self,
        current: *mut Ticket,
        new: *mut Ticket,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut Ticket, *mut Ticket> {
        self.word.compare_exchange(current, new, success, failure)
    }

    /// The worker hands `ticket` back (point 2) and wakes its launch if it
    /// parked; it reads nothing of the launch after this.
    pub(super) fn hand_back(&self, ticket: *mut Ticket) {
        // Release: publishes the rank's outcome to the launch's Acquire.
        let before = self.word.swap(idle(), Ordering::Release);
        if before.addr() & WAITED != 0 {
            // The address only as a key: the launch may be gone already.
            park::unpark_all(ticket.addr());
        }
    }

    /// The idle worker leaves if the word still reads `idle` (`IDLE` or
    /// `SLEEPING`) (point 4); false if a claim came first.
    pub(super) fn leave(&self, idle: *mut Ticket) -> bool {
        // Relaxed: the winner of this word is all that matters; a loser
        // re-reads with Acquire before it takes the ticket.
        self.word
            .compare_exchange(idle, exited(), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Claims the worker for `ticket` if it is idle or asleep (point 1).
    pub(super) fn claim(&self, ticket: *mut Ticket) -> bool {
        // A polling worker holds the line shared: a CAS from `IDLE` takes it
        // in one transfer, where a load first would take two.
        let mut seen = idle();
        while seen == idle() || seen == sleeping() {
            // Release: the worker's Acquire load of the ticket sees the
            // ticket and its job. Relaxed on failure: nothing is read.
            match self.compare_exchange(seen, ticket, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => {
                    if seen == sleeping() {
                        crate::sync::model_event("pool-claimed-a-sleeper");
                        park::unpark_all(self.key());
                    }
                    return true;
                }
                Err(now) => seen = now,
            }
        }
        false
    }
}
