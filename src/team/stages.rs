//! Where a seat's `arrive_and_wait` spends its time, for the benches
//! (feature `bench`): the clock read at each stage boundary of the plain
//! path, kept per thread, so that a bench can say stage by stage where an
//! episode goes (the entry read, the tree's RMWs, the word's RMW, the
//! release reaching the waiters) instead of guessing it.
//!
//! Off unless the thread calls [`record_stages`]; without the feature every
//! mark is an empty inline function. Nothing here is shared between
//! threads: each thread's records are its own until it takes them.

/// The stage boundaries of one `Seat::arrive_and_wait`.
#[derive(Clone, Copy)]
pub(crate) enum Mark {
    /// The call began.
    Start,
    /// The entry read decided the phase.
    Entered,
    /// The seat's contribution is in the tree (and in every node it
    /// completed, re-armed); for a flat team, in the word.
    Counted,
    /// The root's climber made its arrival on the word.
    Rooted,
}

#[cfg(feature = "bench")]
pub use imp::{record_stages, take_stages, StageRecord};

/// Notes the clock at `mark` for this thread's current episode. Inlined
/// down to one load of a flag nobody writes until a bench records, so that
/// the other benches of a `bench` build time the same arrival as a normal
/// build (the recording itself is a call).
#[inline(always)]
pub(crate) fn mark(_mark: Mark) {
    #[cfg(feature = "bench")]
    if imp::recording() {
        imp::mark(_mark);
    }
}

/// Ends this thread's current episode: it returned from its wait;
/// `leader` if its arrival completed the phase.
#[inline(always)]
pub(crate) fn released(_leader: bool) {
    #[cfg(feature = "bench")]
    if imp::recording() {
        imp::released(_leader);
    }
}

#[cfg(feature = "bench")]
mod imp {
    use super::Mark;
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::OnceLock;
    use std::time::Instant;

    /// Whether any thread ever recorded: until then a mark is one load of
    /// a line nobody writes, so that the other benches of a `bench` build
    /// measure the same arrivals as a normal build. Relaxed: it only skips
    /// work for threads that never called `record_stages` (a thread that
    /// did reads its own store).
    static EVER: AtomicBool = AtomicBool::new(false);

    /// One episode of one seat: nanoseconds since a process-wide origin at
    /// each stage boundary (a stage the episode skipped repeats the one
    /// before: `rooted == counted` unless this seat climbed to the word).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct StageRecord {
        /// The call began.
        pub start: u64,
        /// The entry read decided the phase.
        pub entered: u64,
        /// The contribution was in the tree (flat: in the word).
        pub counted: u64,
        /// The word's RMW was made (only by the root's climber).
        pub rooted: u64,
        /// The wait returned (the leader's at once).
        pub released: u64,
        /// This seat climbed to the word (`rooted` is its RMW's end).
        pub climbed: bool,
        /// This seat's arrival completed the phase.
        pub leader: bool,
    }

    struct Recorder {
        records: Vec<StageRecord>,
        current: StageRecord,
    }

    thread_local! {
        static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
    }

    /// The origin of every thread's clock readings, so that records of
    /// different threads compare (`Instant` is monotonic across threads).
    fn now() -> u64 {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }

    /// Starts recording this thread's next `episodes` calls of
    /// `Seat::arrive_and_wait` (later ones are not recorded); replaces
    /// anything recorded before.
    pub fn record_stages(episodes: usize) {
        now(); // the origin, before the first mark
        EVER.store(true, Relaxed);
        RECORDER.with(|r| {
            *r.borrow_mut() = Some(Recorder {
                records: Vec::with_capacity(episodes),
                current: StageRecord::default(),
            })
        });
    }

    /// This thread's records, in call order; recording stops.
    pub fn take_stages() -> Vec<StageRecord> {
        RECORDER.with(|r| r.borrow_mut().take().map(|r| r.records).unwrap_or_default())
    }

    /// Whether any thread ever called [`record_stages`].
    #[inline(always)]
    pub(super) fn recording() -> bool {
        EVER.load(Relaxed)
    }

    fn with(f: impl FnOnce(&mut Recorder)) {
        RECORDER.with(|r| {
            if let Some(r) = r.borrow_mut().as_mut() {
                if r.records.len() < r.records.capacity() {
                    f(r)
                }
            }
        })
    }

    #[inline(never)]
    pub(super) fn mark(mark: Mark) {
        with(|r| {
            let t = now();
            let c = &mut r.current;
            match mark {
                Mark::Start => {
                    *c = StageRecord {
                        start: t,
                        entered: t,
                        counted: t,
                        rooted: t,
                        ..StageRecord::default()
                    }
                }
                Mark::Entered => (c.entered, c.counted, c.rooted) = (t, t, t),
                Mark::Counted => (c.counted, c.rooted) = (t, t),
                Mark::Rooted => (c.rooted, c.climbed) = (t, true),
            }
        })
    }

    #[inline(never)]
    pub(super) fn released(leader: bool) {
        with(|r| {
            r.current.released = now();
            r.current.leader = leader;
            let c = r.current;
            r.records.push(c);
        })
    }
}
