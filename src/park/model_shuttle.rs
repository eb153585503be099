//! The shuttle backend: one shuttle `Mutex` stands in for the buckets'
//! locks, with the same validate-under-the-lock contract, over a queue per
//! key (each sleeper notes its key and thread): an `unpark_all` wakes the
//! sleepers of its key and no other, so a wake sent to the wrong key is a
//! lost wakeup, which shuttle reports as a deadlock.
//!
//! Timed parks: shuttle has no timed waits. A park whose deadline has passed
//! when it validates times out at once; one whose deadline lies ahead sleeps
//! until woken (its timeout never fires), so a missing wake is a deadlock,
//! not a late timeout.

use super::Parked;
use std::time::Instant;

use shuttle::{
    lazy_static,
    sync::Mutex,
    thread::{self, Thread, ThreadId},
};

/// A parked thread: its key, and how to wake it.
struct Sleeper {
    key: usize,
    id: ThreadId,
    thread: Thread,
}

lazy_static! {
    static ref LOT: Mutex<Vec<Sleeper>> = Mutex::new(Vec::new());
}

/// The lot, locked. The lock guards only the queue, which every holder
/// leaves consistent: a guard dropped by an unwinding thread (a seat's drop
/// poisoning its team) poisons it for nothing.
fn lot() -> shuttle::sync::MutexGuard<'static, Vec<Sleeper>> {
    LOT.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn park(
    key: usize,
    validate: &mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
) -> Parked {
    let me = thread::current();
    let id = me.id();
    {
        let mut lot = lot();
        if !validate() {
            return Parked::Invalid;
        }
        if deadline.is_some_and(|d| crate::sync::now() >= d) {
            return Parked::TimedOut;
        }
        lot.push(Sleeper {
            key,
            id,
            thread: me,
        });
    }
    // Until an `unpark_all` of `key` took this sleeper off the queue; a
    // park that returns before (an unpark meant for something else) sleeps
    // again.
    loop {
        thread::park();
        if !lot().iter().any(|s| s.id == id) {
            return Parked::Woken;
        }
    }
}

pub(crate) fn unpark_all(key: usize) {
    let woken: Vec<Thread> = {
        let mut lot = lot();
        let mut woken = Vec::new();
        lot.retain(|s| {
            let stays = s.key != key;
            if !stays {
                woken.push(s.thread.clone());
            }
            stays
        });
        woken
    };
    for thread in woken {
        thread.unpark();
    }
}
