//! The barriers the crew keeps between launches: a launch on the crew
//! syncs on barriers the crew kept from the last launch of its shape,
//! re-armed, instead of building its own, and learns that its ranks have
//! ended from those barriers instead of the done counters.
//!
//! - **Why keep them.** Barriers built for each launch put every line of
//!   them in a new place, written by the launching thread, so each rank's
//!   first look at them is a cache miss; the crew's members run the same
//!   ranks launch after launch, so a kept block's lines that a launch only
//!   reads (its sizes, its tree's shape) stay in their caches, and those
//!   it writes are the ones the ranks would write anyway (benches/RESULTS.md,
//!   "Launch").
//! - **How a launch ends.** Every rank leaves the barriers when its kernel
//!   returns (its seats' drops), after it wrote its outcome and after it
//!   read the post; the last leave retires them. The launching thread
//!   waits for that (`Kept::wait_retired`, `Acquire`), which is one word
//!   where the join reads a done counter per group. A poisoned launch ends
//!   through the join instead (a poisoned barrier never retires).
//! - **Late ranks.** A rank that made the last access to the barriers may
//!   still be returning from the leave's functions, which hold references
//!   to them, when the next launch starts. So the kept barriers are only
//!   ever shared: re-armed through atomic stores (which nothing of the
//!   late ranks reads or writes any more), and reached through a raw
//!   pointer, never a `Box` or a `&mut` (whose uniqueness those references
//!   would contradict). They are dropped, or replaced by barriers of
//!   another shape, only after a join of every group (every rank of every
//!   launch so far has returned), or with the crew itself (dropped with
//!   the pool, once its last member has left). A crew whose members all
//!   left on their keep-alive keeps them until its pool's next launch of
//!   another shape, or its end.

use super::{participants, Roster};
use crate::block::BlockBarrier;
use crate::launch::grid_job::Barriers;
use crate::launch::pool::{Crowd, Pool};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

/// What a launch's threads sync on, kept by the crew for the next launch
/// of the same shape.
// One per crew, behind one pointer: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub(in crate::launch) enum Kept {
    /// A plain launch's block.
    Block(BlockBarrier),
    /// A grid's blocks and the grid's barrier.
    Grid(Barriers),
}

impl Kept {
    /// Waits until every rank has left (true), or the barriers are
    /// poisoned (false); see the module docs.
    fn wait_retired(&self, participants: u32) -> bool {
        match self {
            Kept::Block(block) => block.wait_retired(participants),
            // Each rank's grid seat leaves after its block seat.
            Kept::Grid(grid) => grid.wait_retired(participants),
        }
    }

    /// Re-arms the retired barriers of the last launch for the next one;
    /// false if they cannot be (poisoned, or a block's tiles were made).
    fn rearm(&self) -> bool {
        match self {
            Kept::Block(block) => block.rearm(),
            Kept::Grid(grid) => grid.rearm(),
        }
    }
}

impl Roster {
    /// The kept barriers, re-armed, if `fits` accepts them; else new ones
    /// from `make` (replacing the kept ones after a join of every group).
    /// The re-arm is here, at the next launch, not at the end of the last:
    /// it is the same stores either way, made by the thread that holds the
    /// crew while the barriers are retired.
    fn kept_or(
        &mut self,
        fits: impl Fn(&Kept) -> bool,
        make: impl FnOnce() -> Kept,
        participants: u32,
    ) -> NonNull<Kept> {
        if let Some(kept) = self.kept {
            // SAFETY: kept barriers are only ever shared (module docs), and
            // live until a holder of the crew drops them: we hold it.
            let barriers = unsafe { kept.as_ref() };
            if fits(barriers) && barriers.rearm() {
                return kept;
            }
            self.drop_kept(participants);
        }
        let kept = NonNull::from(Box::leak(Box::new(make())));
        self.kept = Some(kept);
        kept
    }

    /// Drops the kept barriers, once every rank that used them has returned.
    fn drop_kept(&mut self, participants: u32) {
        if let Some(kept) = self.kept.take() {
            self.join(self.groups.len(), participants);
            // SAFETY: made by `Box::leak` in `kept_or`, and no rank is
            // inside any function of it any more (the join).
            drop(unsafe { Box::from_raw(kept.as_ptr()) });
        }
    }
}

impl Drop for Roster {
    fn drop(&mut self) {
        if let Some(kept) = self.kept.take() {
            // SAFETY: as in `drop_kept`: the crew goes when its last
            // member has left, after its last rank returned.
            drop(unsafe { Box::from_raw(kept.as_ptr()) });
        }
    }
}

impl Pool {
    /// Runs a launch of `threads` threads on the crew, on barriers it keeps
    /// there: the kept ones if `fits` accepts them, else new ones from
    /// `make`. `launch` makes the job on them and hands it to the runner
    /// it is given (as `Pool::run`'s `job` and `run`), which returns once
    /// every rank has ended; `launch`'s answer is returned. `None`, having
    /// called nothing, if the launch has one thread, the pool has no crew,
    /// or the crew is taken or lacks members it cannot get: then use
    /// [`Pool::run_by_slots`].
    ///
    /// # Safety
    ///
    /// As `Pool::run`'s for the job and rank function handed to the
    /// runner, whose ranks make their last access to the job before their
    /// last leave of the barriers.
    pub(in crate::launch) unsafe fn run_kept<T>(
        &self,
        threads: usize,
        fits: impl Fn(&Kept) -> bool,
        make: impl FnOnce() -> Kept,
        launch: impl FnOnce(&Kept, &mut dyn FnMut(*const (), unsafe fn(*const (), usize))) -> T,
    ) -> Option<T> {
        if threads < 2 || !self.config.crew {
            return None;
        }
        let crowd = Crowd::enter(threads);
        let Some(mut state) = self.crew.try_hold() else {
            crate::sync::model_event("crew-taken");
            return None;
        };
        if state.members.len() < threads - 1 && !self.enlist(&mut state, threads - 1) {
            return None;
        }
        let participants = participants(threads, crowd.crowded);
        let kept = state.kept_or(fits, make, participants);
        // SAFETY: as in `kept_or`; they live while we hold the crew.
        let barriers = unsafe { kept.as_ref() };
        let out = panic::catch_unwind(AssertUnwindSafe(|| {
            launch(barriers, &mut |job, run| {
                // SAFETY: the caller's promise; the crew has the members;
                // `wait_retired` returns true only once every rank has left,
                // after its last access to the job and the post.
                unsafe {
                    state.launch(threads, job, run, crowd.crowded, &|p| {
                        barriers.wait_retired(p)
                    })
                }
            })
        }));
        let out = out.unwrap_or_else(|payload| {
            // Whatever state the barriers were left in, they go.
            state.drop_kept(participants);
            panic::resume_unwind(payload)
        });
        Some(out)
    }
}
