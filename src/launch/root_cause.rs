//! Which of a block's panics `launch` re-raises, and why the others are
//! not reported.
//!
//! # One report per root cause
//!
//! A `panic!` goes through the panic hook (which prints it) before it
//! unwinds; [`std::panic::resume_unwind`] does not. So a thread that finds
//! the block's barrier poisoned in a `Block`'s `sync*` does not panic: the
//! sync runs under an `op::PoisonedQuietly` guard, where a poisoned-barrier
//! panic becomes a `resume_unwind` of the private payload `BlockPoisoned`.
//! (Only the block's own barrier is touched inside a `Block::sync*`, so no other barrier's panic is silenced.) The payload's
//! type is what tells such a consequence from a root cause. The root cause
//! went through the hook when it happened; `launch` re-raises it with
//! `resume_unwind`, so it is reported once. Panics of the user's own
//! barriers, and misuse of the block's barrier through `Block::barrier`,
//! are ordinary panics of the user's and are reported as usual; a
//! poisoned-barrier panic among them is still a consequence (of a seat
//! dropped while unwinding, of a `poison()`), so it is re-raised only when
//! no thread panicked of its own. It is recognized by identity
//! (`op::is_poisoned_panic`: the very message the crate raised on that
//! thread), not by its text. If no
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
    /// The kernel panicked: the number orders the panics as they were
    /// caught, the flag says whether the payload is a poisoned-barrier panic
    /// (`op::is_poisoned_panic`, which must be asked on the catching thread).
    Panicked(u64, bool, Box<dyn Any + Send>),
}

/// How likely a panic is to be the root cause, most likely first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// Any panic of the kernel's own.
    Cause,
    /// A poisoned-barrier panic of one of the user's own barriers: reported
    /// as usual, but a consequence of a failure elsewhere (a dropped seat,
    /// a `poison()`), which may be caught before that failure's own panic.
    Poisoned,
    /// A quiet leave of the poisoned block.
    QuietLeave,
}

impl Rank {
    fn of(payload: &(dyn Any + Send), poisoned: bool) -> Rank {
        if payload.is::<BlockPoisoned>() {
            Rank::QuietLeave
        } else if poisoned {
            Rank::Poisoned
        } else {
            Rank::Cause
        }
    }
}

/// The kernels' results in rank order if none panicked; otherwise resumes
/// the root cause: the earliest panic that is not a poisoned-barrier panic,
/// else the earliest poisoned-barrier panic of a user's barrier, else
/// (nobody panicked of their own) one ordinary panic saying that the block
/// was poisoned by hand.
pub(super) fn results_or_resume<R>(outcomes: Vec<Outcome<R>>) -> Vec<R> {
    let mut results = Vec::with_capacity(outcomes.len());
    let mut root: Option<(Rank, u64, Box<dyn Any + Send>)> = None;
    for outcome in outcomes {
        match outcome {
            Outcome::Returned(r) => results.push(r),
            Outcome::Panicked(order, poisoned, payload) => {
                let rank = Rank::of(&*payload, poisoned);
                // Prefer a root cause over a consequence, then the earliest.
                if root
                    .as_ref()
                    .is_none_or(|&(r, o, _)| (rank, order) < (r, o))
                {
                    root = Some((rank, order, payload));
                }
            }
        }
    }
    let Some((rank, _, payload)) = root else {
        return results;
    };
    drop(results);
    if rank == Rank::QuietLeave {
        // Nobody panicked of their own: the barrier was poisoned by hand.
        panic!("{POISONED} by poison() (seen by the block's sync)");
    }
    panic::resume_unwind(payload)
}
