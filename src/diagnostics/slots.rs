//! The list of waiter slots: every [`WaiterSlot`] ever made, each owned by a
//! thread (for its life) or by a pending async wait (for that wait), and the
//! one reader that walks them ([`scan`]).
//!
//! Slots are never freed: they live in a `static` list, leaked on purpose,
//! so a reader can walk them without caring who owns them. The slot list's lock
//! is taken only to hand out or return a slot and by the reader, never by a
//! blocking wait.

use super::slot::{Wait, WaiterSlot};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A slot of the slot list, and who owns it.
struct Owned {
    slot: &'static WaiterSlot,
    /// Whether a thread or an async wait owns it.
    owned: bool,
    /// The owner, for the report: the thread's name (or its id as Rust
    /// writes it, `ThreadId(7)`), or `task`.
    name: String,
    /// Whether `name` is a name the thread was given.
    named: bool,
}

/// Every slot ever made. Locked to hand out or return a slot and by the
/// reader; never by a blocking wait.
static SLOTS: Mutex<Vec<Owned>> = Mutex::new(Vec::new());

fn slots() -> MutexGuard<'static, Vec<Owned>> {
    // A panic under the lock leaves the slot list consistent (each step is one
    // assignment), so a poisoned lock is used as is.
    SLOTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes a free slot (or makes one) for `name` (`named`: a name given to
/// the thread).
pub(super) fn claim((name, named): (String, bool)) -> &'static WaiterSlot {
    let mut slots = slots();
    if let Some(e) = slots.iter_mut().find(|e| !e.owned) {
        e.owned = true;
        e.name = name;
        e.named = named;
        return e.slot;
    }
    let slot: &'static WaiterSlot = Box::leak(Box::new(WaiterSlot::new()));
    slots.push(Owned {
        slot,
        owned: true,
        name,
        named,
    });
    slot
}

/// Gives a slot back (its owner's wait has ended).
pub(super) fn unclaim(slot: &'static WaiterSlot) {
    let mut slots = slots();
    if let Some(e) = slots.iter_mut().find(|e| std::ptr::eq(e.slot, slot)) {
        e.owned = false;
    }
}

/// One recorded wait as the reader found it.
pub(crate) struct Found {
    pub(crate) wait: Wait,
    pub(crate) name: String,
    /// Whether `name` is a name given to the thread.
    pub(crate) named: bool,
}

/// Calls `f` with every wait recorded now; while `f` runs, each of those
/// waits lasts (and a blocking wait's borrow of its subject with it), so `f`
/// may describe their [`About::Live`] subjects. One reader at a time (the
/// slot list's lock).
pub(crate) fn scan<R>(f: impl FnOnce(&[Found]) -> R) -> R {
    let slots = slots();
    let mut held = Vec::new();
    let mut found = Vec::new();
    for e in slots.iter() {
        if let Some(wait) = e.slot.read() {
            held.push(e.slot);
            found.push(Found {
                wait,
                name: e.name.clone(),
                named: e.named,
            });
        }
    }
    /// Lets go of the records, also if `f` unwinds (a `Debug` that panics).
    struct Release(Vec<&'static WaiterSlot>);
    impl Drop for Release {
        fn drop(&mut self) {
            for slot in &self.0 {
                slot.release();
            }
        }
    }
    let _release = Release(held);
    let r = f(&found);
    drop(_release);
    drop(slots);
    r
}
