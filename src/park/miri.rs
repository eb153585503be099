//! The backend under Miri: one global std `Mutex` + `Condvar` stand in for
//! `parking_lot_core`'s address-keyed queues, with the same
//! validate-under-the-lock contract. Miri rejects `parking_lot_core`'s own
//! futex call (it hands the futex word to `syscall` as a reference where
//! the kernel's argument is a `*mut u32`), so under Miri the crate parks
//! here; std's `Mutex` and `Condvar` are what Miri models natively. Every
//! `unpark_all` wakes every parker (of any key): a spurious wake-up that the
//! callers' loops tolerate.

use super::Parked;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

static LOT: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());

pub(crate) fn park(
    _key: usize,
    validate: &mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
) -> Parked {
    let (lock, cond) = &LOT;
    // The lock guards no data: a guard dropped by an unwinding thread
    // poisons it for nothing.
    let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    if !validate() {
        return Parked::Invalid;
    }
    match deadline {
        None => drop(cond.wait(guard).unwrap_or_else(|e| e.into_inner())),
        Some(deadline) => {
            let left = deadline.saturating_duration_since(Instant::now());
            let (_guard, timeout) = cond
                .wait_timeout(guard, left)
                .unwrap_or_else(|e| e.into_inner());
            if timeout.timed_out() {
                return Parked::TimedOut;
            }
        }
    }
    Parked::Woken
}

pub(crate) fn unpark_all(_key: usize) {
    let (lock, cond) = &LOT;
    // As in `park`: the lock orders this wake after a parker's validate.
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    cond.notify_all();
}
