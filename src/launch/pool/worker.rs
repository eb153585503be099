//! A pool thread's side of the slot word (`pool/slot.rs`): its wait for
//! a ticket, through `wait/`, and its loop over the tickets it is handed.

use super::slot::{exited, idle, is_ticket, sleeping, Slot, Ticket, WAITED};
use crate::sync::Ordering;
use crate::wait::{self, Stages, Word};
use std::time::Duration;

/// A worker: runs the tickets handed to its slot until it leaves.
pub(super) fn work(slot: &Slot, keep_alive: Duration) {
    let mut crowded = false;
    while let Some(ticket) = next_ticket(slot, keep_alive, crowded) {
        // SAFETY: a ticket in the word lives until the word leaves it
        // (module docs, the scoped borrow), and the word holds it until the
        // swap below; its fields are read before that swap.
        let (job, run, rank) = unsafe { ((*ticket).job, (*ticket).run, (*ticket).rank) };
        // SAFETY: as above.
        let enlists = unsafe { (*ticket).enlists };
        // SAFETY: as above.
        crowded = unsafe { (*ticket).crowded };
        let abort = AbortOnUnwind;
        // SAFETY: the launch promised (`Pool::run`) that each rank may run
        // on any thread while it waits, and we hold this rank's ticket.
        unsafe { run(job, rank) };
        std::mem::forget(abort);
        if enlists {
            // The crew's service ended: its keep-alive passed, or the pool
            // shuts down. Relaxed: nobody waits for this ticket, and a
            // launch that reuses the slot reads nothing this thread wrote.
            slot.swap(exited(), Ordering::Relaxed);
            return;
        }
        slot.hand_back(ticket);
    }
}

/// Aborts the process if a rank unwinds out of its job, which `run`
/// promises it does not: the launch would otherwise wait for it forever.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        std::process::abort();
    }
}

/// The worker's wait for its next ticket, through `wait/` (spin, yield,
/// park), until the keep-alive passes; `None` once it leaves (keep-alive
/// passed, or the pool shut down).
fn next_ticket(slot: &Slot, keep_alive: Duration, crowded: bool) -> Option<*mut Ticket> {
    let idle_word = Idle(slot);
    // A ticket or `SHUTDOWN`: anything but the two idle sentinels.
    let check = |word: *mut Ticket| (word != idle() && word != sleeping()).then_some(word);
    // The keep-alive counts from the end of the spin and yield stages
    // (`None`, no deadline, when it reaches past what an `Instant` holds:
    // `Duration::MAX` keeps the worker until woken).
    let deadline = wait::deadline_after(keep_alive.saturating_add(wait::IDLE_POLL));
    let mut waiter = Stages::idle(!crowded, deadline);
    loop {
        // Acquire: the claim's `Release` CAS published the ticket.
        let word = slot.load(Ordering::Acquire);
        let word = match check(word) {
            Some(word) => word,
            None => match waiter.wait(&idle_word, word, check) {
                Ok(word) => word,
                Err(word) => {
                    // The keep-alive passed.
                    if slot.leave(word) {
                        return None;
                    }
                    // A claim came first: its ticket is read above.
                    waiter = Stages::asleep(deadline);
                    continue;
                }
            },
        };
        if is_ticket(word) {
            // Without the tag: the launch may have tagged the word already.
            return Some(word.map_addr(|a| a & !WAITED));
        }
        // `SHUTDOWN`.
        return None;
    }
}

/// A slot's word as its idle worker waits on it: parked is `SLEEPING`,
/// which a launch's claim sees and wakes the slot's key for.
struct Idle<'a>(&'a Slot);

impl Word for Idle<'_> {
    type Snapshot = *mut Ticket;

    fn load(&self, order: Ordering) -> *mut Ticket {
        self.0.load(order)
    }

    fn parked(word: *mut Ticket) -> bool {
        word == sleeping()
    }

    fn mark_parked(&self, word: *mut Ticket) -> Result<(), *mut Ticket> {
        // Relaxed (both): only the sentinel changes; the worker re-reads
        // with Acquire before it takes a ticket (`wait/`).
        self.0
            .compare_exchange(word, sleeping(), Ordering::Relaxed, Ordering::Relaxed)
            .map(drop)
    }

    fn park_key(&self) -> usize {
        self.0.key()
    }
}
