//! A waiter's record: one [`WaiterSlot`] per waiting thread (kept for the
//! thread's life) or per pending async wait (for that wait), readable by
//! [`stalls`](super::stalls) while the wait goes on.
//!
//! # The state word
//!
//! | `state` | meaning |
//! |---|---|
//! | [`IDLE`] | no wait; only the owner touches `wait` |
//! | [`ACTIVE`] | the owner waits; `wait` holds the wait, read-only |
//! | `ACTIVE \| READ` | a reader holds the record: the wait, and the subject a blocking wait's record points at, stay valid until the reader clears `READ` |
//!
//! The owner (the waiting thread, or the future) moves `IDLE → ACTIVE` with a
//! store after it filled `wait`, and `ACTIVE → IDLE` with a CAS, which fails
//! while a reader holds `READ`: the owner then yields until the reader is
//! done. A reader moves `ACTIVE → ACTIVE | READ` with a CAS and back with a
//! store. Only one reader at a time (the slot list's lock), and a reader never
//! touches an `IDLE` slot, so the owner's store cannot overwrite a reader's
//! bit, and the reader's store cannot overwrite an owner's `IDLE`.
//!
//! Why this is enough: a wait ends (and its subject, a barrier borrowed by
//! the waiter, may be dropped) only after the owner's CAS succeeded, and
//! while a reader holds `READ` it cannot. Orderings beside each access.
//!
//! That holds for a blocking wait, whose record lives in the waiting call
//! and ends when it returns or unwinds. A pending future's record ends when
//! the future completes or is dropped, and a future may also be leaked
//! (`mem::forget` is safe): its record then stays, while the barrier it
//! borrowed may be moved or dropped. So an async wait's record holds no
//! pointer to its barrier, only what the barrier said of itself when the
//! wait began ([`About::Taken`]).

use super::subject::{Described, Subject, Who};
use crate::sync::{yield_to_holder, AtomicU64, Ordering, UnsafeCell};
use std::panic::Location;
use std::time::Instant;

/// No wait recorded.
pub(crate) const IDLE: u64 = 0;
/// A wait is recorded.
pub(crate) const ACTIVE: u64 = 1;
/// A reader holds the record (only together with `ACTIVE`).
pub(crate) const READ: u64 = 2;

/// What a record says about the object waited on.
#[derive(Clone)]
pub(crate) enum About {
    /// A blocking wait's: the object itself, described when a report is
    /// made (the wait, and so the borrow of the object, lasts while a
    /// reader holds the record).
    Live(Subject),
    /// An async wait's: what the object said of itself at the poll that
    /// began the wait (module docs: a leaked future's record outlives the
    /// borrow), and its subject's level.
    Taken { level: u8, described: Described },
}

impl About {
    /// The subject's level (see [`Subject::level`]).
    pub(crate) fn level(&self) -> u8 {
        match self {
            About::Live(subject) => subject.level,
            About::Taken { level, .. } => *level,
        }
    }
}

/// One wait, as its owner recorded it.
#[derive(Clone)]
pub(crate) struct Wait {
    /// What the waiters of one phase share: the word's address (a
    /// `WarpBarrier`'s for a lane wait).
    pub(crate) key: usize,
    /// Also shared by a phase's waiters: a `WarpBarrier`'s mask, else 0.
    pub(crate) tag: u64,
    /// The phase waited for (mod 4), or a `WarpBarrier`'s round.
    pub(crate) phase: u64,
    /// The waiter's rank or lane, where known.
    pub(crate) who: Option<Who>,
    pub(crate) about: About,
    pub(crate) location: &'static Location<'static>,
    pub(crate) since: Instant,
}

/// A waiter's record (module docs).
pub(crate) struct WaiterSlot {
    state: AtomicU64,
    /// Written by the owner while `IDLE`; read by a reader holding `READ`.
    wait: UnsafeCell<Option<Wait>>,
}

// SAFETY: `wait` is written only by the owner in `IDLE` and read only by a
// reader holding `READ`, and the state word orders the two (module docs);
// a `Subject` pointer in it (a blocking wait's) is only dereferenced by
// `describe` while the wait, and so the borrow of its object, lasts; the
// rest is owned data (`String`s, `Vec`s).
unsafe impl Sync for WaiterSlot {}
// SAFETY: as for `Sync`; the slot owns nothing thread-bound.
unsafe impl Send for WaiterSlot {}

impl WaiterSlot {
    pub(crate) fn new() -> WaiterSlot {
        WaiterSlot {
            state: AtomicU64::new(IDLE),
            wait: UnsafeCell::new(None),
        }
    }

    /// The owner records `wait`. The slot must be `IDLE` (its owner's
    /// previous wait ended).
    pub(crate) fn begin(&self, wait: Wait) {
        // SAFETY: `IDLE`, so no reader holds the record (module docs).
        self.wait.with_mut(|w| unsafe { *w = Some(wait) });
        // Release: a reader's Acquire CAS that sees ACTIVE sees `wait`.
        self.state.store(ACTIVE, Ordering::Release);
    }

    /// The owner's wait is over: waits for a reader to let go, then `IDLE`.
    pub(crate) fn end(&self) {
        // Acquire: the reader's reads → the owner's return; failure Relaxed (orderings.md).
        while self
            .state
            .compare_exchange(ACTIVE, IDLE, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            yield_to_holder();
        }
    }

    /// A reader takes the record, if there is one. The caller must be the
    /// only reader and must [`release`](WaiterSlot::release) it.
    pub(crate) fn read(&self) -> Option<Wait> {
        // Acquire: pairs with `begin`'s Release (the record is complete).
        // Relaxed on failure: an IDLE slot is not read.
        self.state
            .compare_exchange(ACTIVE, ACTIVE | READ, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // SAFETY: we hold READ: the owner neither writes `wait` nor ends.
        self.wait.with_mut(|w| unsafe { (*w).clone() })
    }

    /// The reader lets go of a record it [`read`](WaiterSlot::read).
    pub(crate) fn release(&self) {
        // Release: the reader's accesses happen-before the owner's `end`.
        self.state.store(ACTIVE, Ordering::Release);
    }
}

/// The loom model of the protocol (run by the source repository's loom
/// crate, which cannot name the crate's internals): an owner records two waits in
/// turn (its subject, a loom cell, is written before each and "freed" after
/// the last), while a reader reads the slot twice and reads the subject
/// while it holds the record. loom finds no read of a half-written record
/// and no read of the subject racing a write of the owner (the cell's
/// accesses would be unordered), and the owner never ends while the reader
/// holds the record. Call it inside `loom::model`.
#[cfg(loom)]
pub fn model_a_reader_never_outlives_the_wait() {
    use loom::sync::Arc;

    /// Never called: the model reads its subject itself.
    unsafe fn describe(_: *const (), _: u64, _: u64) -> Described {
        unreachable!()
    }

    let slot = Arc::new(WaiterSlot::new());
    let subject = Arc::new(UnsafeCell::new(0u64));
    let reader = {
        let (slot, subject) = (slot.clone(), subject.clone());
        loom::thread::spawn(move || {
            for _ in 0..2 {
                if let Some(wait) = slot.read() {
                    // SAFETY: a loom cell; loom checks the access.
                    let round = subject.with(|r| unsafe { *r });
                    assert_eq!(wait.phase, round, "the record and its subject agree");
                    slot.release();
                }
            }
        })
    };
    for round in 0..2 {
        // SAFETY: a loom cell; loom checks the access.
        subject.with_mut(|r| unsafe { *r = round });
        slot.begin(Wait {
            key: 7,
            tag: 0,
            phase: round,
            who: None,
            about: About::Live(Subject {
                ptr: std::ptr::null(),
                describe,
                level: 0,
            }),
            location: Location::caller(),
            since: Instant::now(),
        });
        slot.end();
    }
    // SAFETY: a loom cell; loom checks the access.
    subject.with_mut(|r| unsafe { *r = u64::MAX });
    reader.join().unwrap();
}
