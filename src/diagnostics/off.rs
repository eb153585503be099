//! The build without the `diagnostics` feature: the same names as the
//! feature's, doing nothing, so that the call sites carry no `cfg`. Each is
//! empty or inlined away; nothing here touches an atomic.

use super::subject::{Subject, WaitInfo, Who};
use std::panic::Location;

/// A blocking wait's record: none.
#[derive(Default)]
pub(crate) struct Record;

impl Record {
    #[inline(always)]
    pub(crate) fn new(_: WaitInfo) -> Record {
        Record
    }

    #[inline(always)]
    pub(crate) fn begin(&mut self) {}
}

/// A higher layer's description of a wait: none.
#[must_use]
pub(crate) struct DescribeAs;

#[derive(Clone, Copy)]
pub(crate) struct TokenRank;

impl TokenRank {
    pub(crate) const NONE: TokenRank = TokenRank;

    #[inline(always)]
    pub(crate) fn of(_: usize) -> TokenRank {
        TokenRank
    }

    #[inline(always)]
    pub(crate) fn who(self) -> Option<Who> {
        None
    }
}

#[inline(always)]
pub(crate) fn describe_as(
    _: usize,
    _: Subject,
    _: &'static Location<'static>,
    _: Option<Who>,
) -> DescribeAs {
    DescribeAs
}

/// A future's record: none.
#[derive(Debug)]
pub(crate) struct FutureWait;

impl FutureWait {
    #[inline(always)]
    pub(crate) fn here(_: Subject) -> FutureWait {
        FutureWait
    }

    /// # Safety
    ///
    /// None needed; the same contract as the feature's, for the same call.
    #[inline(always)]
    pub(crate) unsafe fn polled(&self, _: bool, _: usize, _: impl FnOnce() -> u64) {}
}

/// A thread is about to park: a build without the feature makes no stall
/// reports, so if `SYNCTHREADS_STALL_REPORT` asks for them, the first park
/// says so, once per process (a hang would otherwise stay silent). Parks
/// only, never arrivals.
pub(crate) fn parking() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if crate::sync::MODEL {
        return;
    }
    ONCE.call_once(|| {
        if std::env::var_os("SYNCTHREADS_STALL_REPORT").is_some_and(|v| !v.is_empty()) {
            eprintln!(
                "syncthreads: SYNCTHREADS_STALL_REPORT is set, but stall reports need the \
                 `diagnostics` feature (e.g. `cargo run --features syncthreads/diagnostics`); \
                 none will be printed"
            );
        }
    });
}

/// The divergent-sync check: none.
pub(crate) mod sites {
    use std::convert::Infallible;
    use std::panic::Location;

    /// Which sync of the family was called.
    #[derive(Clone, Copy)]
    pub(crate) enum Kind {
        Sync,
        Count,
        And,
        Or,
    }

    /// One sync: where, which, and by which rank (if known).
    #[allow(dead_code)] // read only by the feature's check
    #[derive(Clone, Copy)]
    pub(crate) struct Site {
        pub(crate) location: &'static Location<'static>,
        pub(crate) kind: Kind,
        pub(crate) rank: Option<usize>,
    }

    /// No record of a phase's first sync.
    pub(crate) struct Sites;

    impl Sites {
        /// Whether phases' first syncs are recorded (and must be cleared).
        pub(crate) const RECORDS: bool = false;

        #[inline(always)]
        pub(crate) fn new() -> Sites {
            Sites
        }

        #[inline(always)]
        pub(crate) fn check(&self, _: usize, _: Site) -> Result<(), Infallible> {
            Ok(())
        }

        #[inline(always)]
        pub(crate) fn clear(&self, _: usize) {}
    }
}
