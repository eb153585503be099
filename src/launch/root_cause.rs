//! How a launch's ranks record how they ended (`Outcomes`), which of a
//! block's panics `launch` re-raises, and why the others are not reported.
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

use crate::lines::Lines;
use crate::op::{self, POISONED};
use crate::sync::{Mutex, UnsafeCell};
use std::any::Any;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::panic;

/// The payload with which a thread leaves a `Block::sync*` that found the
/// block's barrier poisoned: a consequence of another thread's failure, not
/// a root cause, and not reported.
struct BlockPoisoned;

/// The payload of a quiet leave of the poisoned block (`op::PoisonedQuietly`).
pub(super) fn block_poisoned() -> Box<dyn Any + Send> {
    Box::new(BlockPoisoned)
}

/// How a launch's kernels ended: each rank's result, or the panics caught.
///
/// A rank whose kernel returns writes its result into its own cell and
/// nothing else; a rank whose kernel panics leaves its cell empty and adds
/// the panic to a list. A zero-sized result (a kernel returning `()`)
/// takes no memory at all, so such a launch allocates no cells, its ranks
/// write nothing the launching thread must fetch back, and it reads
/// nothing back when nobody panicked. Sized results are a cache line
/// apart, so ranks that end together do not queue for one line.
pub(super) struct Outcomes<R> {
    /// Rank `r`'s result, written once by the thread running rank `r` if
    /// its kernel returned, read by the launching thread after every rank
    /// has ended.
    results: Cells<R>,
    /// The panics, in the order they were caught.
    panics: Mutex<Vec<Caught>>,
}

/// One kernel's panic: its rank, whether the payload is a poisoned-barrier
/// panic (`op::is_poisoned_panic`, which must be asked on the catching
/// thread), and the payload.
struct Caught {
    rank: usize,
    poisoned: bool,
    payload: Box<dyn Any + Send>,
}

/// One result cell per rank: zero-sized cells in a box that allocates
/// nothing, or sized ones a line apart (`Lines`, which allocates through
/// the ordinary path, where a box of `CachePadded` cells would take the
/// allocator's slower aligned one).
enum Cells<R> {
    Unit(Box<[UnsafeCell<MaybeUninit<R>>]>),
    Spaced(Lines<UnsafeCell<MaybeUninit<R>>>),
}

impl<R> Cells<R> {
    fn new(threads: usize) -> Cells<R> {
        let empty = || UnsafeCell::new(MaybeUninit::uninit());
        if std::mem::size_of::<R>() == 0 {
            Cells::Unit((0..threads).map(|_| empty()).collect())
        } else {
            Cells::Spaced(Lines::new((0..threads).map(|_| empty()), empty()))
        }
    }

    fn len(&self) -> usize {
        match self {
            Cells::Unit(cells) => cells.len(),
            Cells::Spaced(cells) => cells.len(),
        }
    }

    fn get(&self, rank: usize) -> &UnsafeCell<MaybeUninit<R>> {
        match self {
            Cells::Unit(cells) => &cells[rank],
            Cells::Spaced(cells) => &cells[rank],
        }
    }
}

impl<R> Outcomes<R> {
    pub(super) fn new(threads: usize) -> Outcomes<R> {
        Outcomes {
            results: Cells::new(threads),
            panics: Mutex::new(Vec::new()),
        }
    }

    /// Rank `rank`'s kernel returned `result`.
    ///
    /// # Safety
    ///
    /// Only the thread running rank `rank` calls this, at most once, and
    /// only if that kernel did not panic.
    pub(super) unsafe fn returned(&self, rank: usize, result: R) {
        // SAFETY: the caller's promise: this rank's cell has one writer,
        // and the launching thread reads it only after this rank ended.
        self.results
            .get(rank)
            .with_mut(|cell| unsafe { (*cell).write(result) });
    }

    /// Rank `rank`'s kernel panicked with `payload`; called on the thread
    /// that caught it.
    pub(super) fn panicked(&self, rank: usize, payload: Box<dyn Any + Send>) {
        let poisoned = op::is_poisoned_panic(&*payload);
        self.panics
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Caught {
                rank,
                poisoned,
                payload,
            });
    }

    /// The kernels' results in rank order if none panicked; otherwise
    /// resumes the root cause (module docs), dropping the results of the
    /// ranks that returned.
    ///
    /// # Safety
    ///
    /// Every rank has ended, each having called `returned` or `panicked`.
    pub(super) unsafe fn results_or_resume(self) -> Vec<R> {
        let threads = self.results.len();
        // SAFETY: the caller's promise.
        let (results, panics) = unsafe { self.take(0..threads) };
        let Some((rank, payload)) = root_cause(panics) else {
            return results;
        };
        drop(results);
        if rank == Rank::QuietLeave {
            // Nobody panicked of their own: the barrier was poisoned by hand.
            panic!("{POISONED} by poison() (seen by the block's sync)");
        }
        panic::resume_unwind(payload)
    }

    /// Drops the results of ranks `ran` (the others never ran) and forgets
    /// the panics: for a launch that could not start every rank.
    ///
    /// # Safety
    ///
    /// Every rank in `ran` has ended, each having called `returned` or
    /// `panicked`, and no other rank ran.
    pub(super) unsafe fn discard(self, ran: Range<usize>) {
        // SAFETY: the caller's promise.
        drop(unsafe { self.take(ran) });
    }

    /// The results of the ranks in `ran` that did not panic, and the panics.
    ///
    /// # Safety
    ///
    /// As `discard`'s.
    unsafe fn take(self, ran: Range<usize>) -> (Vec<R>, Vec<Caught>) {
        let panics = self
            .panics
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut panicked = vec![false; if panics.is_empty() { 0 } else { ran.end }];
        for caught in &panics {
            panicked[caught.rank] = true;
        }
        let mut results = Vec::with_capacity(ran.len().saturating_sub(panics.len()));
        for rank in ran {
            if panicked.get(rank) != Some(&true) {
                // SAFETY: rank `rank` ended and did not panic, so it wrote
                // its cell (the caller's promise), and nobody reads it again.
                results.push(
                    self.results
                        .get(rank)
                        .with_mut(|cell| unsafe { (*cell).assume_init_read() }),
                );
            }
        }
        (results, panics)
    }
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

/// The panic to resume, if any kernel panicked: the earliest that is not a
/// poisoned-barrier panic, else the earliest poisoned-barrier panic of a
/// user's barrier, else (nobody panicked of their own: the block was
/// poisoned by hand) the earliest quiet leave.
fn root_cause(panics: Vec<Caught>) -> Option<(Rank, Box<dyn Any + Send>)> {
    panics
        .into_iter()
        .map(|caught| (Rank::of(&*caught.payload, caught.poisoned), caught.payload))
        .enumerate()
        // Prefer a root cause over a consequence, then the earliest.
        .min_by_key(|&(order, (rank, _))| (rank, order))
        .map(|(_, cause)| cause)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::{Cells, Outcomes};

    #[test]
    fn unit_results_take_no_memory_and_sized_ones_a_line_each() {
        let unit = Outcomes::<()>::new(16);
        assert!(matches!(&unit.results, Cells::Unit(c) if std::mem::size_of_val(&**c) == 0));
        let words = Outcomes::<u64>::new(4);
        assert!(matches!(words.results, Cells::Spaced(_)));
        let at: Vec<usize> = (0..4)
            .map(|rank| std::ptr::from_ref(words.results.get(rank)).addr())
            .collect();
        assert!(at.windows(2).all(|w| w[1] - w[0] >= 64), "{at:?}");
    }

    /// Counts its drops in a shared cell.
    struct Counted<'a>(&'a std::cell::Cell<usize>);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    /// A zero-sized result that counts its drops.
    struct Unit;

    static UNIT_DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    impl Drop for Unit {
        fn drop(&mut self) {
            UNIT_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    // The path of a launch whose spawn failed (which a test can reach on
    // real threads only): ranks 1 ..= 3 ran, 2 panicked, 0 and 4 never ran.
    #[test]
    fn a_discard_drops_each_returned_result_once_and_reads_no_other_cell() {
        let drops = std::cell::Cell::new(0);
        let sized = Outcomes::new(5);
        let unit = Outcomes::new(5);
        for rank in [1, 3] {
            // SAFETY: each rank returns once, on this thread, and did not panic.
            unsafe {
                sized.returned(rank, Counted(&drops));
                unit.returned(rank, Unit);
            }
        }
        sized.panicked(2, Box::new("rank 2"));
        unit.panicked(2, Box::new("rank 2"));
        // SAFETY: ranks 1 ..= 3 ended, each having returned or panicked;
        // no other rank ran.
        unsafe {
            sized.discard(1..4);
            unit.discard(1..4);
        }
        assert_eq!(drops.get(), 2);
        assert_eq!(UNIT_DROPS.load(std::sync::atomic::Ordering::Relaxed), 2);
    }
}
