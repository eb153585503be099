//! The shuttle backend: one global `Mutex` + `Condvar` of shuttle's stand in
//! for the address-keyed queues, with the same validate-under-the-lock
//! contract, so a lost wakeup is a deadlock shuttle reports. Every
//! `unpark_all` wakes every parker (of any key): a spurious wake-up that the
//! callers' loops tolerate.

use super::Parked;
use std::time::Instant;

use shuttle::{
    lazy_static,
    sync::{Condvar, Mutex},
};

lazy_static! {
    static ref LOT: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
}

pub(crate) fn park(
    _key: usize,
    validate: &mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
) -> Parked {
    let (lock, cond) = &*LOT;
    // The lock guards no data: a guard dropped by an unwinding thread (a
    // seat's drop poisoning its team) poisons it for nothing.
    let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    if !validate() {
        return Parked::Invalid;
    }
    if deadline.is_some() {
        // shuttle has no timed waits: as under loom, give up at once.
        drop(guard);
        return Parked::TimedOut;
    }
    drop(cond.wait(guard).unwrap_or_else(|e| e.into_inner()));
    Parked::Woken
}

pub(crate) fn unpark_all(_key: usize) {
    let (lock, cond) = &*LOT;
    // As in `park`.
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    cond.notify_all();
}
