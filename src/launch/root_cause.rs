//! Which of a block's panics `launch` re-raises, and why the others are
//! not reported.
//!
//! # One report per root cause
//!
//! A `panic!` goes through the panic hook (which prints it) before it
//! unwinds; [`std::panic::resume_unwind`] does not. So a thread that finds
//! the block's barrier poisoned in a `Block`'s `sync*` does not panic: the
//! sync runs under an `op::PoisonedQuietly` guard, where a poisoned-barrier
//! panic becomes a `resume_unwind` of the private payload `BlockPoisoned`. (Only the block's own barrier is touched inside a
//! `Block::sync*`, so no other barrier's panic is silenced.) The payload's
//! type is what tells such a consequence from a root cause. The root cause
//! went through the hook when it happened; `launch` re-raises it with
//! `resume_unwind`, so it is reported once. Panics of the user's own
//! barriers, and misuse of the block's barrier through `Block::barrier`,
//! are ordinary panics of the user's and are reported as usual. If no
//! thread panicked of its own (someone called `block.barrier().poison()`),
//! `launch` raises one ordinary panic saying so.

use crate::op::POISONED;
use std::any::Any;
use std::panic;

/// The payload with which a thread leaves a `Block::sync*` that found the
/// block's barrier poisoned: a consequence of another thread's failure, not
/// a root cause, and not reported.
struct BlockPoisoned;

/// The payload of a quiet leave of the poisoned block (`op::PoisonedQuietly`).
pub(super) fn block_poisoned() -> Box<dyn Any + Send> {
    Box::new(BlockPoisoned)
}

/// How one thread's kernel ended.
pub(super) enum Outcome<R> {
    Returned(R),
    /// The kernel panicked; the number orders the panics as they were caught.
    Panicked(u64, Box<dyn Any + Send>),
}

/// The kernels' results in rank order if none panicked; otherwise resumes
/// the root cause: the earliest panic that is not a quiet leave of the
/// poisoned block, else (nobody panicked of their own) one ordinary panic
/// saying that the block was poisoned by hand.
pub(super) fn results_or_resume<R>(outcomes: Vec<Outcome<R>>) -> Vec<R> {
    let mut results = Vec::with_capacity(outcomes.len());
    let mut root: Option<(bool, u64, Box<dyn Any + Send>)> = None;
    for outcome in outcomes {
        match outcome {
            Outcome::Returned(r) => results.push(r),
            Outcome::Panicked(order, payload) => {
                let secondary = payload.is::<BlockPoisoned>();
                // Prefer a root cause over a quiet leave, then the earliest.
                if root
                    .as_ref()
                    .map_or(true, |&(s, o, _)| (secondary, order) < (s, o))
                {
                    root = Some((secondary, order, payload));
                }
            }
        }
    }
    let Some((secondary, _, payload)) = root else {
        return results;
    };
    drop(results);
    if secondary {
        // Nobody panicked of their own: the barrier was poisoned by hand.
        panic!("{POISONED} by poison() (seen by the block's sync)");
    }
    panic::resume_unwind(payload)
}
