//! What a waiter says about its wait, for the stall reports: the object it
//! waits on ([`Subject`]) and what that object says of itself
//! ([`Described`]), who waits ([`Who`]), and the whole of a blocking wait
//! ([`WaitInfo`]). Plain data, built in every build: without the feature
//! nothing records it, and the call sites stay the same.

// Without the feature, built and never read.
#![cfg_attr(not(feature = "diagnostics"), allow(dead_code))]

use std::panic::Location;

/// How a higher layer describes what a waiter waits on, for the report: a
/// type-erased pointer and the function that reads it.
#[derive(Clone, Copy)]
pub(crate) struct Subject {
    /// The object waited on (a `Barrier`, a `Team`, ...).
    pub(crate) ptr: *const (),
    /// Describes `ptr`'s object; `tag` and `phase` are the wait's.
    ///
    /// Safety contract: called only while the object is alive.
    pub(crate) describe: unsafe fn(ptr: *const (), tag: u64, phase: u64) -> Described,
    /// When waiters of one phase describe it differently (a seat's wait
    /// says `Team`, an observer's parity wait on the same word `Barrier`),
    /// the highest level wins (among the threads' live descriptions, or
    /// else among the tasks' taken ones).
    pub(crate) level: u8,
}

// SAFETY: a `Subject` is a pointer to a barrier (`Barrier`, `Team`,
// `BlockBarrier`, `WarpBarrier`) and a function that only reads its atomics
// and its immutable fields (its `Debug`, its missing ranks), never its
// completion function: that reading is sound from any thread, whatever `F`.
// The pointer is dereferenced only while a blocking wait that borrows the
// barrier lasts, or during a poll of a future that borrows it (module docs).
unsafe impl Send for Subject {}
// SAFETY: as for `Send`: shared, it is only copied and read.
unsafe impl Sync for Subject {}

impl std::fmt::Debug for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subject")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

/// What a [`Subject`] says about itself: taken when the report is made for
/// a blocking wait, when the wait began for an async one.
#[derive(Clone)]
pub(crate) struct Described {
    pub(crate) kind: &'static str,
    pub(crate) debug: String,
    pub(crate) missing: Option<Vec<usize>>,
    /// A `WarpBarrier`'s mask.
    pub(crate) mask: Option<u64>,
    /// A grid's threads per block: its missing ranks are grid ranks, named
    /// as (block, thread) pairs.
    pub(crate) block_threads: Option<usize>,
}

/// Who waits, where the object waited on numbers its participants: the
/// report names the waiter by it rather than by its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Who {
    /// A `Team`'s seat, or a block's (a seat of a `BlockBarrier`, a
    /// `launch` thread).
    Rank(usize),
    /// A `WarpBarrier`'s lane.
    Lane(usize),
}

/// The rank of the seat whose arrival made a token, carried to the wait
/// the token is handed to, so that a split `arrive` / `wait` is reported by
/// rank as an `arrive_and_wait` is. (Without the feature: nothing.)
#[cfg(feature = "diagnostics")]
#[derive(Clone, Copy)]
pub(crate) struct TokenRank(Option<usize>);

#[cfg(feature = "diagnostics")]
impl TokenRank {
    /// A token of no seat's (a `Barrier`'s, say).
    pub(crate) const NONE: TokenRank = TokenRank(None);

    #[inline]
    pub(crate) fn of(rank: usize) -> TokenRank {
        TokenRank(Some(rank))
    }

    /// Whom a report names for the wait, if not its thread.
    #[inline]
    pub(crate) fn who(self) -> Option<Who> {
        self.0.map(Who::Rank)
    }
}

/// A blocking wait to record if it stops spinning: what the waiter knows of
/// it. Making one costs nothing but the copy.
#[derive(Clone, Copy)]
pub(crate) struct WaitInfo {
    /// The word's key (its address), shared by the phase's waiters.
    pub(crate) key: usize,
    /// Also shared by a phase's waiters: a `WarpBarrier`'s mask, else 0.
    pub(crate) tag: u64,
    /// The phase waited for (mod 4), or a `WarpBarrier`'s round.
    pub(crate) phase: u64,
    /// The waiter's lane (a `WarpBarrier`'s), where the lower layer knows it.
    pub(crate) who: Option<Who>,
    pub(crate) subject: Subject,
    pub(crate) location: &'static Location<'static>,
}
