//! The loom backend: one global lock and queue stand in for the
//! address-keyed queues, with the same validate-under-the-lock contract, so a
//! lost wakeup is a deadlock the model checker reports. Every `unpark_all`
//! wakes every parker (of any key): a spurious wake-up that the callers'
//! loops must, and do, tolerate.
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
        /// Slots parked since the last `unpark_all`; only touched with the lot locked.
        sleepers: UnsafeCell<usize>,
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
            sleepers: UnsafeCell::new(0),
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

        /// Marks the current thread as parked; call with the lot locked.
        pub(super) fn enqueue(&self) {
            let me = SLOT.with(|s| *s);
            // SAFETY: the lot is locked (see `impl Sync`).
            self.sleepers.with_mut(|q| unsafe { *q |= bit(me) });
        }

        /// Takes every parked thread's bit; call with the lot locked.
        pub(super) fn take(&self) -> usize {
            // SAFETY: the lot is locked (see `impl Sync`).
            self.sleepers
                .with_mut(|q| unsafe { std::mem::take(&mut *q) })
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
        // A stray unpark meant for an earlier wait makes this return early:
        // a spurious wake-up, which every caller tolerates.
        thread::park();
    }
}

pub(crate) fn park(
    _key: usize,
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
    if deadline.is_some() {
        // loom has no timed waits: a timed park gives up at once and lets
        // the caller read the (model) clock again. The completion can still
        // land at any point around it, which is the race that matters.
        lot.unlock();
        return Parked::TimedOut;
    }
    lot.enqueue();
    lot.unlock();
    // An `unpark_all` between the unlock and here leaves loom's unpark token,
    // so the park returns at once: nothing is lost.
    crate::sync::model_event("park-sleeps");
    lot::sleep();
    Parked::Woken
}

pub(crate) fn unpark_all(_key: usize) {
    let lot = &*lot::LOT;
    lot.lock();
    let parked = lot.take();
    lot.unlock();
    lot.wake(parked);
}
