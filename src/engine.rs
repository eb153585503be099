//! The phase engine that a `Barrier<F>` and a `Team<F>` are built on, and
//! what they share: construction, joins, tx counts, poisoning. The update
//! path (recording an operation) lives in `engine/update.rs`, the entry
//! points of a combining front (a `Team`'s seats) in `engine/front.rs`,
//! the waits in `engine/wait.rs` and `engine/wait_async.rs`; the
//! operations and their misuse in `op.rs`, the word in `state.rs` and its
//! transitions in `state/transitions.rs`, running the completion function
//! in `completion.rs`, the tokens in `token.rs`.

use crate::completion::{self, Completion};
use crate::op::{self, Op};
use crate::phase::Phase;
use crate::state::{self, Joined, Poison, Snapshot, State};
use crate::sync::{Ordering, UnsafeCell};
use crate::token::ArrivalToken;
use crate::wait::wake;
use std::fmt;

pub use future::{ArriveAndWaitFuture, ParityWaitFuture, WaitFuture};
pub(crate) use methods::engine_methods;
pub(crate) use wait::Target;

mod front;
mod future;
mod methods;
mod update;
mod wait;
mod wait_async;

/// The phase engine under a [`Barrier`](crate::Barrier) and a
/// [`Team`](crate::Team): the word, the completion function, the waits,
/// parity, tx and poisoning, written once. Its methods that a `Barrier`
/// offers are documented there.
pub(crate) struct Engine<F = ()> {
    state: State,
    completion: UnsafeCell<F>,
}

// SAFETY: the completion function is only touched by the thread that moved the
// word into the completing state, and only until it moves it out again (with
// Release; the next completer's move in is Acquire), so accesses never overlap
// and each happens-after the previous one. `F: Send` because that thread can
// be any participant.
unsafe impl<F: Send> Sync for Engine<F> {}

// Like std's barrier, a `Barrier` is safe to use across `catch_unwind`: every
// operation checks before it mutates, and a completion function that unwinds
// poisons the barrier, so it is never run (or observed) in a broken state.
impl<F> std::panic::RefUnwindSafe for Engine<F> {}
impl<F> std::panic::UnwindSafe for Engine<F> {}

crate::assert::assert_impl_all!(ArrivalToken: Send, Sync, fmt::Debug);
crate::assert::assert_not_impl_any!(ArrivalToken: Clone);

/// The result of one recorded arrival or tx operation.
#[derive(Clone, Copy)]
pub(crate) struct Arrival {
    /// The phase the operation belongs to (modulo the 4 phases the word keeps).
    pub(crate) phase: Phase,
    /// Whether this operation completed that phase.
    pub(crate) completed: bool,
}

impl Engine {
    crate::sync::const_unless_model! {
        /// As `Barrier::new`.
        #[track_caller]
        #[must_use]
        pub(crate) fn new(expected: usize) -> Engine {
            Engine {
                state: State::new(Snapshot::initial(expected_const(expected))),
                completion: UnsafeCell::new(()),
            }
        }
    }

    /// Back to phase 0 expecting `expected`, as new (`Team::rearm`).
    pub(crate) fn rearm(&self, expected: usize) {
        self.state.rearm(Snapshot::initial(expected as u32));
    }
}

impl<F: FnMut() + Send> Engine<F> {
    /// As `Barrier::with_completion`.
    #[track_caller]
    #[must_use]
    pub(crate) fn with_completion(expected: usize, f: F) -> Engine<F> {
        let expected = op::participants(
            format_args!("with_completion({expected}, _)"),
            "expected",
            expected,
        );
        Engine {
            state: State::new(Snapshot::initial(expected)),
            completion: UnsafeCell::new(f),
        }
    }
}

impl<F: Completion> Engine<F> {
    /// `add_participants(n)` as `op` names it in its messages: returns the
    /// phase the participants joined (`None` for `n == 0`, which changes
    /// nothing and never blocks).
    #[track_caller]
    pub(crate) fn join(&self, op: Op<'_>, n: usize) -> Option<Phase> {
        completion::check_not_running(self.key(), &op);
        // Relaxed: seeds the join's Acquire RMW; a stale word only fails its CAS (orderings.md).
        let mut s = self.state.load(Ordering::Relaxed);
        if n == 0 {
            if let Err(misuse) = op::check_join(s, 0) {
                misuse.panic(op);
            }
            return None;
        }
        loop {
            match self.state.join(s, |s| op::join(s, n)) {
                Ok(Joined::Added(prior)) => return Some(prior.phase()),
                Ok(Joined::Busy) => s = self.wait_for_next_phase(op),
                Err(misuse) => misuse.panic(op),
            }
        }
    }

    /// As `Barrier::expect_tx`.
    #[track_caller]
    pub(crate) fn expect_tx(&self, tx: u32) {
        self.update(Op::ExpectTx(tx));
    }

    /// As `Barrier::complete_tx`.
    #[track_caller]
    pub(crate) fn complete_tx(&self, tx: u32) {
        self.update(Op::CompleteTx(tx));
    }

    /// As `Barrier::poison`.
    pub(crate) fn poison(&self) {
        self.poison_because(Poison::Call);
    }

    /// Poisons the barrier for `why`, which its panic messages name; the
    /// first cause stays.
    pub(crate) fn poison_because(&self, why: Poison) {
        if let Some(prior) = self.state.poison(why) {
            // Also in a completion window: its waiters panic now (the word
            // says poisoned); the threads that wait the window out to arrive
            // park again until the completer ends it, and it wakes them.
            wake(&self.state, prior);
        }
    }

    /// As `Barrier::is_poisoned`.
    #[must_use]
    pub(crate) fn is_poisoned(&self) -> bool {
        // Relaxed: poisoning hands nothing over, word point 5 (orderings.md).
        self.state.load(Ordering::Relaxed).poison().is_some()
    }
}

// `Barrier::new`'s message cannot format `Barrier::MAX`: hence the pin.
crate::assert::const_assert_eq!(state::MAX, 1_048_575);

/// `Barrier::new`'s check, usable in a `const fn`: a `const fn` cannot
/// format, so the message is spelled into a buffer by hand, value included.
#[track_caller]
const fn expected_const(expected: usize) -> u32 {
    if !op::participants_in_range(expected) {
        let mut buf = [0u8; 128];
        let mut len = 0;
        len = push(&mut buf, len, b"syncthreads: Barrier::new(");
        // The value's decimal digits, most significant first.
        let mut digits = [0u8; 20];
        let (mut n, mut count) = (expected, 0);
        loop {
            digits[digits.len() - 1 - count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        len = push(&mut buf, len, digits.split_at(digits.len() - count).1);
        len = push(
            &mut buf,
            len,
            b"): expected must be in 1 ..= 1048575 (Barrier::MAX)",
        );
        match core::str::from_utf8(buf.split_at(len).0) {
            Ok(message) => panic!("{}", message),
            Err(_) => panic!("syncthreads: Barrier::new: expected must be in 1 ..= 1048575"),
        }
    }
    expected as u32
}

/// Copies `bytes` into `buf` from `at` on; returns the end (for
/// [`expected_const`]'s message, which fits the buffer).
const fn push(buf: &mut [u8; 128], at: usize, bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() {
        buf[at + i] = bytes[i];
        i += 1;
    }
    at + bytes.len()
}

impl<F> Engine<F> {
    /// The barrier's identity: its address.
    #[inline]
    pub(crate) fn key(&self) -> usize {
        (self as *const Self).addr()
    }

    /// One load of the word, for the queries of what is built on the
    /// barrier (whatever its completion function).
    #[inline]
    pub(crate) fn word(&self, order: Ordering) -> Snapshot {
        self.state.load(order)
    }

    /// The current phase modulo 4 (`Relaxed`: for a participant between its
    /// wait and its next arrival the phase cannot change), or the phase a
    /// diagnostic record names.
    #[inline]
    pub(crate) fn phase(&self) -> Phase {
        // Relaxed: coherence after the caller's own Acquire wait; nothing read through it (orderings.md).
        self.state.load(Ordering::Relaxed).phase()
    }
}

impl<F> fmt::Debug for Engine<F> {
    /// Decodes the word, e.g.
    /// `Barrier { phase_parity: false, pending: 3, expected: 4, tx: 0, poisoned: false }`.
    /// Never blocks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a diagnostic snapshot; no decision and no read of data
        // rests on it, so it needs to synchronize with nothing.
        self.state.load(Ordering::Relaxed).fmt(f)
    }
}
