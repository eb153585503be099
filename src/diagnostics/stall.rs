//! [`Stall`] and [`Waiter`]: what [`stalls`](super::stalls) finds, and the
//! report a person reads (`Display`).

use super::slot::About;
use super::slots::{self, Found};
use super::subject::Who;
use std::fmt;
use std::panic::Location;
use std::time::{Duration, Instant};

/// A phase on which some thread or task has been waiting for a while: one
/// entry of [`stalls`](super::stalls).
///
/// Its `Display` is the report to print: the barrier's kind and `Debug`,
/// the phase, every waiter (name, call site, how long) and the missing
/// ranks where the barrier knows them, e.g.
///
/// ```text
/// syncthreads: WarpBarrier stalled in phase 1 (mask 0xf): 3 waiting, the longest for 2.001s
///     barrier: WarpBarrier { synced: [1, 1, 1, 0] }
///     waiting: lane 0 at src/main.rs:40:18, for 2.001s
///              lane 1 at src/main.rs:40:18, for 2.000s
///              lane 2 at src/main.rs:40:18, for 2.000s
///     missing: lane 3
/// ```
///
/// (`docs/debugging.md` shows a real one.)
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let barrier = syncthreads::Barrier::new(2);
/// std::thread::scope(|s| {
///     let token = barrier.arrive();
///     let waiter = s.spawn(|| barrier.wait(token));
///     // Give the waiter time to block, then look.
///     let stall = loop {
///         let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
///         if let Some(stall) = found.into_iter().find(|s| s.barrier().starts_with("Barrier")) {
///             break stall;
///         }
///         std::thread::sleep(Duration::from_millis(10));
///     };
///     assert_eq!(stall.phase(), 0);
///     assert_eq!(stall.waiting().len(), 1);
///     assert_eq!(stall.missing(), None); // a Barrier knows no ranks
///     println!("{stall}");
///     drop(barrier.arrive()); // the missing arrival: the waiter returns
///     waiter.join().unwrap();
/// });
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "diagnostics")))]
#[derive(Clone, Debug)]
pub struct Stall {
    kind: &'static str,
    barrier: String,
    /// Whether `barrier` and `missing` were taken when the latest task
    /// began waiting (only tasks wait in the phase), not now.
    taken: bool,
    phase: u8,
    mask: Option<u64>,
    waiting: Vec<Waiter>,
    missing: Option<Vec<usize>>,
    /// A grid's threads per block (its missing ranks are grid ranks).
    block_threads: Option<usize>,
}

/// One thread or task waiting in a [`Stall`]'s phase.
///
/// # Examples
///
/// ```
/// # use std::time::Duration;
/// # let barrier = syncthreads::Barrier::new(2);
/// # std::thread::scope(|s| {
/// #     let token = barrier.arrive();
/// #     let handle = s.spawn(|| barrier.wait(token));
/// #     let stall = loop {
/// #         let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
/// #         if let Some(stall) = found.into_iter().find(|s| s.barrier().starts_with("Barrier")) {
/// #             break stall;
/// #         }
/// #         std::thread::sleep(Duration::from_millis(10));
/// #     };
/// let waiter: &syncthreads::diagnostics::Waiter = &stall.waiting()[0];
/// assert!(waiter.name().starts_with("ThreadId(")); // an unnamed scoped thread
/// assert!(waiter.location().file().ends_with(".rs"));
/// assert!(waiter.waited() > Duration::from_millis(10));
/// #     drop(barrier.arrive());
/// #     handle.join().unwrap();
/// # });
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "diagnostics")))]
#[derive(Clone, Debug)]
pub struct Waiter {
    name: String,
    /// The thread's given name, when `name` is its rank or lane.
    thread: Option<String>,
    /// Whether `name` is a name given to the thread (quoted in the report).
    named: bool,
    /// The rank or lane in `name`, by which the report lists the waiter.
    number: Option<usize>,
    location: &'static Location<'static>,
    waited: Duration,
}

impl Stall {
    /// The stalled phase, modulo 4 (as in every message of the crate); for
    /// a `WarpBarrier`, the waiting lanes' sync count modulo 4.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     assert_eq!(stall.phase(), 0); // the team's first phase
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn phase(&self) -> u8 {
        self.phase
    }

    /// Every thread and task waiting in this phase, the longest waiting
    /// first.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     assert_eq!(stall.waiting().len(), 1); // rank 0
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn waiting(&self) -> &[Waiter] {
        &self.waiting
    }

    /// Who has not arrived, ascending, where the report can name them: a
    /// `Team`'s ranks ([`Team::missing`](crate::Team::missing)), a seated
    /// block's ([`BlockBarrier::missing`](crate::BlockBarrier::missing)),
    /// and for a `WarpBarrier` the lanes of the mask that have not reached
    /// this sync. `None` for a `Barrier` and a seat-less block, which know
    /// no ranks (their `Debug` shows how many arrivals are pending). Taken
    /// when [`barrier`](Stall::barrier) was.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     assert_eq!(stall.missing(), Some(&[1][..]));
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn missing(&self) -> Option<&[usize]> {
        self.missing.as_deref()
    }

    /// The barrier's `Debug`, taken when [`stalls`](super::stalls) was
    /// called (a `Team`'s and a block's with the phase's progress).
    ///
    /// Except where only tasks wait in the phase: then it was taken when
    /// the latest of them began waiting, and the report says so. A pending
    /// future may be leaked (`mem::forget` is safe), after which the
    /// barrier it borrowed may be moved or dropped, so an async wait's
    /// record keeps what the barrier said at the poll that found the phase
    /// incomplete, never the barrier itself.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     assert!(stall.barrier().starts_with("Team {"), "{}", stall.barrier());
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn barrier(&self) -> &str {
        &self.barrier
    }

    /// How long the longest waiter has waited.
    fn longest(&self) -> Duration {
        self.waiting.first().map_or(Duration::ZERO, Waiter::waited)
    }
}

impl Waiter {
    /// Who waits, the way the program knows it: `rank 2` for a seat of a
    /// `Team` or of a block (a `launch` thread included; also a
    /// `team.wait(token)` on the token of a seat's `arrive`), `lane 3` for a
    /// `WarpBarrier`'s lane; else the thread's name if it has one, else its
    /// id as Rust writes it (`ThreadId(7)`, as `thread::current().id()`
    /// prints it); `task` for an async wait.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     assert_eq!(stall.waiting()[0].name(), "rank 0");
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the wait was called (through `#[track_caller]`): the
    /// `wait*`, `arrive_and_wait*`, `sync*` call in the user's code.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     // The line of the `arrive_and_wait` call above, in this file:
    ///     assert_eq!(stall.waiting()[0].location().file(), file!());
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn location(&self) -> &'static Location<'static> {
        self.location
    }

    /// How long it had waited when [`stalls`](super::stalls) was called:
    /// for a thread, since its wait stopped spinning (at most a few
    /// microseconds after it began); for a task, since the first poll that
    /// found the phase incomplete.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// let team = syncthreads::Team::new(2);
    /// let (seat0, seat1) = (team.seat(0), team.seat(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(move || seat0.arrive_and_wait()); // rank 1 is late
    /// #   let stall = loop {
    /// #       let found = syncthreads::diagnostics::stalls(Duration::from_millis(10));
    /// #       match found.into_iter().find(|s| s.barrier().starts_with("Team")) {
    /// #           Some(stall) => break stall,
    /// #           None => std::thread::sleep(Duration::from_millis(10)),
    /// #       }
    /// #   };
    ///     assert!(stall.waiting()[0].waited() >= Duration::from_millis(10));
    ///     seat1.arrive_and_wait();
    /// });
    /// ```
    #[must_use]
    pub fn waited(&self) -> Duration {
        self.waited
    }
}

impl fmt::Display for Stall {
    /// The report: a headline, then the barrier, each waiter (ranks and
    /// lanes ascending, then the others, the longest waiting first) and the
    /// missing ranks on lines of their own, indented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "syncthreads: {} stalled in phase {}",
            self.kind, self.phase
        )?;
        if let Some(mask) = self.mask {
            write!(f, " (mask {mask:#x})")?;
        }
        writeln!(
            f,
            ": {} waiting, the longest for {:.3?}",
            self.waiting.len(),
            self.longest()
        )?;
        if self.taken {
            writeln!(
                f,
                "    barrier: {} (when the latest task began waiting)",
                self.barrier
            )?;
        } else {
            writeln!(f, "    barrier: {}", self.barrier)?;
        }
        let mut listed: Vec<&Waiter> = self.waiting.iter().collect();
        // Stable: the waiters without a number keep the longest-first order.
        listed.sort_by_key(|w| w.number.map_or((1, 0), |n| (0, n)));
        for (i, w) in listed.into_iter().enumerate() {
            let label = if i == 0 { "waiting:" } else { "" };
            // A name the program gave, quoted; a rank, a lane, an id or
            // `task` as is.
            let name = match &w.thread {
                Some(thread) => format!("{} (thread {thread:?})", w.name),
                None if w.named => format!("{:?}", w.name),
                None => w.name.clone(),
            };
            writeln!(
                f,
                "    {label:<8} {name} at {}, for {:.3?}",
                w.location, w.waited
            )?;
        }
        let what = if self.mask.is_some() { "lane" } else { "rank" };
        match self.missing.as_deref() {
            None if self.kind == "Barrier" => f.write_str(
                "    missing: unknown (a Barrier counts pending arrivals, shown in its Debug, but not whose; \
                 a Team's seats have ranks that this line names, and threads named with \
                 std::thread::Builder::name are listed by name)",
            ),
            None => f.write_str(
                "    missing: unknown (a block synced without seats counts pending arrivals, shown in its Debug, \
                 but not whose; through `BlockBarrier::seat` or `launch` this line names the missing ranks)",
            ),
            Some([]) => write!(
                f,
                "    missing: none (every {what} arrived: the phase completed and its waiters are returning, \
                 or it waits for something else, e.g. a transaction count)"
            ),
            Some(missing) if self.block_threads.is_some() => {
                // A grid's ranks, as (block, thread) pairs.
                let threads = self.block_threads.unwrap_or(1);
                let list: Vec<String> = missing
                    .iter()
                    .map(|r| format!("(block {}, thread {})", r / threads, r % threads))
                    .collect();
                write!(f, "    missing: {}", list.join(", "))
            }
            Some(missing) => {
                let list: Vec<String> = missing.iter().map(usize::to_string).collect();
                let s = if missing.len() == 1 { "" } else { "s" };
                write!(f, "    missing: {what}{s} {}", list.join(", "))
            }
        }
    }
}

/// What one phase's waiters share: the word, the mask, the phase.
pub(crate) type Key = (usize, u64, u64);

/// A scan's findings: the stalled phases older than the threshold (with
/// their keys and earliest start), and every phase with a waiter.
pub(crate) struct Scan {
    pub(crate) stalls: Vec<(Key, Instant, Stall)>,
    /// Every phase with a waiter, with its earliest start.
    pub(crate) waiting: Vec<(Key, Instant)>,
}

/// Groups the recorded waits by phase and describes the phases with a wait
/// older than `older_than`, the longest-stalled first.
pub(crate) fn collect(older_than: Duration) -> Scan {
    slots::scan(|found| {
        let now = Instant::now();
        let mut groups: Vec<(Key, Vec<&Found>)> = Vec::new();
        for w in found {
            let key = (w.wait.key, w.wait.tag, w.wait.phase);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(w),
                None => groups.push((key, vec![w])),
            }
        }
        let mut scan = Scan {
            stalls: Vec::new(),
            waiting: Vec::new(),
        };
        for (key, group) in groups {
            let first = group.iter().map(|w| w.wait.since).min().unwrap_or(now);
            scan.waiting.push((key, first));
            if now.saturating_duration_since(first) <= older_than {
                continue;
            }
            // A thread's live description over a task's taken one; then the
            // highest level; of taken ones, the latest.
            let about = group
                .iter()
                .max_by_key(|w| {
                    let live = matches!(w.wait.about, About::Live(_));
                    (live, w.wait.about.level(), w.wait.since)
                })
                .map(|w| &w.wait.about)
                .expect("a group has a waiter");
            let (d, taken) = match about {
                // SAFETY: `scan` holds every record of `found`, so each of
                // these waits lasts, and with it a blocking wait's borrow of
                // the object it waits on.
                About::Live(subject) => (
                    unsafe { (subject.describe)(subject.ptr, key.1, key.2) },
                    false,
                ),
                About::Taken { described, .. } => (described.clone(), true),
            };
            let mut waiting: Vec<Waiter> = group
                .iter()
                .map(|w| {
                    // Beside a rank, a name the program gave its thread
                    // (not one the crate gave a `launch` thread).
                    let given =
                        (w.named && !w.name.starts_with("syncthreads-")).then(|| w.name.clone());
                    let (name, thread, number) = match w.wait.who {
                        Some(Who::Rank(r)) => match d.block_threads {
                            // A grid's rank, as its block and thread.
                            Some(t) => {
                                (format!("block {}, thread {}", r / t, r % t), given, Some(r))
                            }
                            None => (format!("rank {r}"), given, Some(r)),
                        },
                        Some(Who::Lane(l)) => (format!("lane {l}"), given, Some(l)),
                        None => (w.name.clone(), None, None),
                    };
                    Waiter {
                        name,
                        thread,
                        named: w.named && w.wait.who.is_none(),
                        number,
                        location: w.wait.location,
                        waited: now.saturating_duration_since(w.wait.since),
                    }
                })
                .collect();
            waiting.sort_by_key(|w| std::cmp::Reverse(w.waited));
            scan.stalls.push((
                key,
                first,
                Stall {
                    kind: d.kind,
                    barrier: d.debug,
                    taken,
                    phase: (key.2 % 4) as u8,
                    mask: d.mask,
                    waiting,
                    missing: d.missing,
                    block_threads: d.block_threads,
                },
            ));
        }
        scan.stalls
            .sort_by_key(|s| std::cmp::Reverse(s.2.longest()));
        scan
    })
}
