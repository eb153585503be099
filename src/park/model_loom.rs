//! The loom backend: one global lock stands in for the buckets' locks, with
//! the same validate-under-the-lock contract, and a queue per key (each
//! sleeper notes its key): an `unpark_all` wakes the sleepers of its key and
//! no other, so a wake sent to the wrong key is a lost wakeup, which loom
//! reports as a deadlock.
//!
//! Timed parks: loom has no clock, and the model clock (`sync::now`) moves
//! only when read. A park whose deadline has passed on that clock when it
//! validates times out at once; one whose deadline lies ahead sleeps as an
//! untimed park does, until woken: its timeout never fires, so a missing
//! wake shows as a deadlock rather than as a late timeout. A model reaches
//! the timeout branch with a deadline the clock passes (a timeout of a few
//! readings, a keep-alive of zero), the sleeping one with a long deadline.
//!
//! The lock and the sleep are built from a loom atomic and loom's
//! `thread::park`, not from a loom `Mutex` + `Condvar`: loom runs every model
//! thread on one OS thread, so while one model thread unwinds (a completion
//! function that panics still ends its phase and wakes the parked threads)
//! `std::thread::panicking()` is true for all of them, and the std mutex
//! inside loom's `Mutex` gets poisoned by whichever guard is dropped then.
//! (A spin lock will not do either: loom cannot bound its schedules.)

use super::Parked;
use std::time::Instant;

pub(crate) use self::lot::Lock;

mod lot {
    use loom::{
        cell::UnsafeCell,
        lazy_static,
        sync::atomic::{AtomicUsize, Ordering},
        thread::{self, Thread},
    };

    /// Each model thread gets a slot, numbered in the order it first parks.
    const SLOTS: usize = loom::MAX_THREADS;
    /// `lock` bit 0: the lot is locked; bit `1 + i`: slot `i` waits for it.
    const LOCKED: usize = 1;

    fn bit(slot: usize) -> usize {
        2 << slot
    }

    /// A lock whose waiters sleep in loom's `thread::park`: the lot's, and
    /// the task table's (`tasks.rs`), each its own word.
    pub(crate) struct Lock(AtomicUsize);

    pub(super) struct Lot {
        lock: Lock,
        /// The key each slot sleeps on, if it does; only touched with the
        /// lot locked.
        sleepers: UnsafeCell<[Option<usize>; SLOTS]>,
        next_slot: AtomicUsize,
        /// Each slot's thread, written once by that thread before it first
        /// publishes its slot number (through `lock` or `sleepers`).
        threads: [UnsafeCell<Option<Thread>>; SLOTS],
    }

    // SAFETY: `sleepers` is only accessed with the lot locked (Acquire to
    // lock, Release to unlock); `threads[i]` is written once by its owner
    // before the Release that publishes `i`, and read only after an Acquire
    // of that. loom checks every access.
    unsafe impl Sync for Lot {}

    lazy_static! {
        pub(super) static ref LOT: Lot = Lot {
            lock: Lock::new(),
            sleepers: UnsafeCell::new([None; SLOTS]),
            next_slot: AtomicUsize::new(0),
            threads: std::array::from_fn(|_| UnsafeCell::new(None)),
        };
    }

    loom::thread_local! {
        static SLOT: usize = {
            let lot = &*LOT;
            // Relaxed: an RMW numbers the threads; the lock's Release publishes the slot (orderings.md).
            let slot = lot.next_slot.fetch_add(1, Ordering::Relaxed);
            assert!(slot < SLOTS, "more model threads than loom allows");
            // SAFETY: slot `slot` is ours alone, and nobody reads it before
            // we publish the number (see `impl Sync`).
            lot.threads[slot].with_mut(|t| unsafe { *t = Some(thread::current()) });
            slot
        };
    }

    impl Lock {
        pub(crate) fn new() -> Lock {
            Lock(AtomicUsize::new(0))
        }

        /// Takes the lock, sleeping (not spinning: loom cannot bound a
        /// spin lock's schedules) while another thread holds it.
        pub(crate) fn lock(&self) {
            let me = SLOT.with(|s| *s);
            // Guess "unlocked, nobody waiting": one CAS when uncontended.
            let mut s = 0;
            loop {
                let (new, order) = if s & LOCKED == 0 {
                    // Acquire: the last holder's critical section → ours (orderings.md).
                    (s | LOCKED, Ordering::Acquire)
                } else {
                    // Release: our `threads[me]` → the unlocker's unpark of it (orderings.md).
                    (s | bit(me), Ordering::Release)
                };
                // Relaxed on failure: the value found only seeds the retry,
                // whose success ordering carries the argument.
                match self.0.compare_exchange(s, new, order, Ordering::Relaxed) {
                    Ok(_) if s & LOCKED == 0 => return,
                    Ok(_) => {
                        // The unlocker clears our bit and unparks us.
                        thread::park();
                        // The unlocker cleared the word: guess it is still clear.
                        s = 0;
                    }
                    Err(found) => s = found,
                }
            }
        }

        pub(crate) fn unlock(&self) {
            // AcqRel: our critical section → the next locker; each waiter's slot → us (orderings.md).
            let waiters = self.0.swap(0, Ordering::AcqRel) & !LOCKED;
            LOT.wake(waiters);
        }
    }

    impl Lot {
        pub(super) fn lock(&self) {
            self.lock.lock();
        }

        pub(super) fn unlock(&self) {
            self.lock.unlock();
        }

        /// Marks the current thread as parked on `key`; call with the lot
        /// locked.
        pub(super) fn enqueue(&self, key: usize) {
            let me = SLOT.with(|s| *s);
            // SAFETY: the lot is locked (see `impl Sync`).
            self.sleepers.with_mut(|q| unsafe { (*q)[me] = Some(key) });
        }

        /// Takes the bits of the threads parked on `key`; call with the lot
        /// locked.
        pub(super) fn take(&self, key: usize) -> usize {
            self.sleepers.with_mut(|q| {
                // SAFETY: the lot is locked (see `impl Sync`).
                let q = unsafe { &mut *q };
                let mut bits = 0;
                for (slot, sleeps) in q.iter_mut().enumerate() {
                    if *sleeps == Some(key) {
                        *sleeps = None;
                        bits |= bit(slot);
                    }
                }
                bits
            })
        }

        /// Unparks the threads whose bits are set in `bits`.
        pub(super) fn wake(&self, bits: usize) {
            for slot in (0..SLOTS).filter(|&slot| bits & bit(slot) != 0) {
                // SAFETY: the owner published this slot before `bits` reached
                // us through an Acquire (see `impl Sync`); it never writes again.
                self.threads[slot].with(|t| unsafe { (*t).as_ref().map(Thread::unpark) });
            }
        }
    }

    pub(super) fn sleep() {
        // Each unpark of a sleeper follows the removal of its key (`take`),
        // and each lock waiter's follows the clearing of its bit: no token
        // is left over for a later park.
        thread::park();
    }
}

pub(crate) fn park(
    key: usize,
    validate: &mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
) -> Parked {
    let lot = &*lot::LOT;
    lot.lock();
    if !validate() {
        crate::sync::model_event("park-refused");
        lot.unlock();
        return Parked::Invalid;
    }
    if deadline.is_some_and(|d| crate::sync::now() >= d) {
        // The model clock passed the deadline: the timeout fires (module
        // docs); one still ahead never does.
        crate::sync::model_event("park-timed-out");
        lot.unlock();
        return Parked::TimedOut;
    }
    lot.enqueue(key);
    lot.unlock();
    // An `unpark_all` between the unlock and here leaves loom's unpark token,
    // so the park returns at once: nothing is lost.
    crate::sync::model_event("park-sleeps");
    lot::sleep();
    Parked::Woken
}

pub(crate) fn unpark_all(key: usize) {
    let lot = &*lot::LOT;
    lot.lock();
    let parked = lot.take(key);
    lot.unlock();
    lot.wake(parked);
}
