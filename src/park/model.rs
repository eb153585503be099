//! The model checkers' backend: one global `Mutex` + `Condvar` of loom (or
//! shuttle) stands in for the address-keyed queues, with the same
//! validate-under-the-lock contract, so a lost wakeup is a deadlock the model
//! checker reports. Every `unpark_all` wakes every parker (of any key): a
//! spurious wake-up that the callers' loops must, and do, tolerate.

use super::Parked;
use std::time::Instant;

#[cfg(loom)]
use loom::{
    lazy_static,
    sync::{Condvar, Mutex},
};
#[cfg(shuttle)]
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
    let guard = lock.lock().unwrap();
    if !validate() {
        return Parked::Invalid;
    }
    if deadline.is_some() {
        // Neither model checker has timed waits: a timed park gives up at once
        // and lets the caller read the (model) clock again. The completion can
        // still land at any point around it, which is the race that matters.
        drop(guard);
        return Parked::TimedOut;
    }
    drop(cond.wait(guard).unwrap());
    Parked::Woken
}

pub(crate) fn unpark_all(_key: usize) {
    let (lock, cond) = &*LOT;
    let _guard = lock.lock().unwrap();
    cond.notify_all();
}
