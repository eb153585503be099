//! The persistent threads behind `launch`: a pool of parked workers, each
//! with one slot word through which a launch hands it a rank and it hands
//! the rank back.
//!
//! The slot word and its protocol, point by point: `pool/slot.rs`.

use crate::park::{self, Parked};
use crate::sync::{self, Mutex, Ordering};
use std::cell::Cell;
use std::io;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(not(any(loom, shuttle)))]
use std::thread;

#[cfg(loom)]
use loom::thread;

#[cfg(shuttle)]
use shuttle::thread;

mod slot;

pub(super) use slot::Ticket;
use slot::{exited, idle, is_ticket, shutdown, sleeping, Slot, WAITED};

/// What a `Launcher` configures.
#[derive(Clone, Debug)]
pub(super) struct Config {
    pub(super) stack_size: Option<usize>,
    pub(super) name_prefix: String,
    pub(super) keep_alive: Duration,
}

/// The default pool's thread names: `syncthreads-1`, `-2`, ... (the OS
/// keeps 15 bytes of a name, enough for this prefix and three digits).
pub(super) const DEFAULT_NAME_PREFIX: &str = "syncthreads";

impl Default for Config {
    fn default() -> Config {
        Config {
            stack_size: None,
            name_prefix: DEFAULT_NAME_PREFIX.to_owned(),
            keep_alive: super::Launcher::DEFAULT_KEEP_ALIVE,
        }
    }
}

/// One slot of the pool and the thread that last served it.
struct Entry {
    slot: Arc<Slot>,
    thread: Option<thread::JoinHandle<()>>,
}

/// A pool of workers. Slots are never removed while the pool lives: a
/// worker that leaves marks its slot `EXITED`, and a later launch reuses it
/// (so a pool thread's name, `prefix-n` for slot `n - 1`, stays small).
pub(super) struct Pool {
    config: Config,
    entries: Mutex<Vec<Entry>>,
}

/// A launch that could not start all its ranks: the first rank without a
/// thread and why.
pub(super) struct SpawnFailed {
    pub(super) rank: usize,
    pub(super) error: io::Error,
}

impl Pool {
    pub(super) fn new(config: Config) -> Pool {
        Pool {
            config,
            entries: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    pub(super) fn config(&self) -> &Config {
        &self.config
    }

    fn entries(&self) -> impl std::ops::DerefMut<Target = Vec<Entry>> + '_ {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs ranks `0 .. threads` of `job`: rank 0 on the calling thread,
    /// the others on pool threads, and returns once every rank has ended.
    /// If a thread cannot be spawned, calls `abort` (which must make the
    /// started ranks end), runs no rank 0, waits for the started ranks and
    /// returns the failure.
    ///
    /// # Safety
    ///
    /// `run(job, rank)` must be sound to call for each rank on any thread,
    /// at once with the other ranks, for as long as this call lasts, and
    /// must not unwind.
    pub(super) unsafe fn run(
        &self,
        threads: usize,
        job: *const (),
        run: unsafe fn(*const (), usize),
        abort: &dyn Fn(),
    ) -> Result<(), SpawnFailed> {
        let crowded = Crowd::enter(threads);
        let tickets: Vec<Ticket> = (1..threads)
            .map(|rank| Ticket {
                job,
                run,
                rank,
                crowded: crowded.crowded,
                slot: Cell::new(ptr::null()),
            })
            .collect();
        // From here on the claimed slots hold pointers into `tickets`: the
        // guard waits for them however this frame is left.
        let mut guard = WaitAll {
            tickets: &tickets,
            claimed: 0,
        };
        let failed = self.claim_or_spawn(&tickets, &mut guard.claimed);
        if failed.is_some() {
            abort();
        } else {
            // SAFETY: the caller's promise, for rank 0 on this thread.
            unsafe { run(job, 0) };
        }
        drop(guard);
        failed.map_or(Ok(()), Err)
    }

    /// Hands every ticket to a worker: idle ones first, then new threads.
    /// Counts the tickets handed, in order, in `claimed`, each noting its
    /// slot first.
    fn claim_or_spawn(&self, tickets: &[Ticket], claimed: &mut usize) -> Option<SpawnFailed> {
        let ticket = |i: usize| ptr::from_ref(&tickets[i]).cast_mut();
        let mut entries = self.entries();
        for entry in entries.iter() {
            if *claimed == tickets.len() {
                return None;
            }
            // Noted before the claim, which hands the ticket over.
            tickets[*claimed].slot.set(Arc::as_ptr(&entry.slot));
            if entry.slot.claim(ticket(*claimed)) {
                *claimed += 1;
            }
        }
        let mut reuse = 0;
        while *claimed < tickets.len() {
            let next = ticket(*claimed);
            // A slot whose worker left: only launches under this lock
            // write an `EXITED` word, so the load is stable.
            while reuse < entries.len()
                // Relaxed: the word is stable (above); no data is read.
                && entries[reuse].slot.word.load(Ordering::Relaxed) != exited()
            {
                reuse += 1;
            }
            let (index, slot) = if reuse < entries.len() {
                let entry = &mut entries[reuse];
                if let Some(old) = entry.thread.take() {
                    // The old thread is past its last access of the slot:
                    // join it, so that no thread of the pool goes unjoined.
                    let _ = old.join();
                }
                tickets[*claimed].slot.set(Arc::as_ptr(&entry.slot));
                // Release: as a claim's (the new thread also learns it at
                // its spawn). The previous value is `EXITED` (above).
                entry.slot.word.swap(next, Ordering::Release);
                (reuse, Arc::clone(&entry.slot))
            } else {
                let slot = Arc::new(Slot::new(next));
                tickets[*claimed].slot.set(Arc::as_ptr(&slot));
                (entries.len(), slot)
            };
            match self.spawn(index, Arc::clone(&slot)) {
                Ok(handle) => {
                    if index == entries.len() {
                        entries.push(Entry {
                            slot,
                            thread: Some(handle),
                        });
                    } else {
                        entries[index].thread = Some(handle);
                    }
                    *claimed += 1;
                }
                Err(error) => {
                    if index < entries.len() {
                        // Relaxed: no thread reads this slot's word now.
                        entries[index].slot.word.swap(exited(), Ordering::Relaxed);
                    }
                    return Some(SpawnFailed {
                        rank: tickets[*claimed].rank,
                        error,
                    });
                }
            }
        }
        None
    }

    /// Spawns the worker of slot `index`.
    fn spawn(&self, index: usize, slot: Arc<Slot>) -> io::Result<thread::JoinHandle<()>> {
        let mut builder =
            thread::Builder::new().name(format!("{}-{}", self.config.name_prefix, index + 1));
        if let Some(bytes) = self.config.stack_size {
            builder = builder.stack_size(bytes);
        }
        let keep_alive = self.config.keep_alive;
        builder.spawn(move || work(&slot, keep_alive))
    }

    /// How many workers are alive (idle or running a rank).
    pub(super) fn live(&self) -> usize {
        self.entries()
            .iter()
            // Relaxed: a count for the caller, no data read.
            .filter(|e| {
                let word = e.slot.word.load(Ordering::Relaxed);
                word != exited() && word != shutdown()
            })
            .count()
    }

    /// Tells every worker to leave and joins them all.
    pub(super) fn shut_down(&self) {
        let mut entries = self.entries();
        for entry in entries.iter() {
            // Relaxed: the worker reads nothing but the sentinel. No launch
            // is running (they borrow the pool), so no ticket is lost.
            if entry.slot.word.swap(shutdown(), Ordering::Relaxed) == sleeping() {
                park::unpark_all(entry.slot.key());
            }
        }
        for entry in entries.iter_mut() {
            if let Some(handle) = entry.thread.take() {
                let _ = handle.join();
            }
        }
    }
}

/// Waits, on drop, for every claimed worker to hand its ticket back.
struct WaitAll<'a> {
    tickets: &'a [Ticket],
    /// How many of `tickets`, from the first, were handed to a worker.
    claimed: usize,
}

impl Drop for WaitAll<'_> {
    fn drop(&mut self) {
        for ticket in &self.tickets[..self.claimed] {
            // SAFETY: a handed ticket notes its slot (`claim_or_spawn`), and
            // a pool never frees a slot: `entries` only grows and its `Arc`s
            // live as long as the pool, which outlives this launch.
            let slot = unsafe { &*ticket.slot.get() };
            wait_done(slot, ptr::from_ref(ticket).cast_mut(), ticket.crowded);
        }
    }
}

/// Returns once `slot`'s word no longer holds `ticket` (point 3).
fn wait_done(slot: &Slot, ticket: *mut Ticket, crowded: bool) {
    // Acquire: the worker's `Release` swap published the rank's outcome.
    if poll(crowded, || slot.word.load(Ordering::Acquire) != ticket) {
        return;
    }
    let tagged = ticket.map_addr(|a| a | WAITED);
    // Acquire on failure: the word left the ticket, as above. On success
    // nothing is read (the tag only asks for a wake).
    if slot
        .word
        .compare_exchange(ticket, tagged, Ordering::Relaxed, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    let key = ticket.addr();
    loop {
        // Relaxed: the validation only decides whether to sleep.
        park::park(
            key,
            &mut || slot.word.load(Ordering::Relaxed) == tagged,
            None,
        );
        // Acquire: as the first load.
        if slot.word.load(Ordering::Acquire) != tagged {
            return;
        }
    }
}

/// A worker: runs the tickets handed to its slot until it leaves.
fn work(slot: &Slot, keep_alive: Duration) {
    let mut crowded = false;
    while let Some(ticket) = next_ticket(slot, keep_alive, crowded) {
        // SAFETY: a ticket in the word lives until the word leaves it
        // (module docs, the scoped borrow), and the word holds it until the
        // swap below; its fields are read before that swap.
        let (job, run, rank) = unsafe { ((*ticket).job, (*ticket).run, (*ticket).rank) };
        // SAFETY: as above.
        crowded = unsafe { (*ticket).crowded };
        let abort = AbortOnUnwind;
        // SAFETY: the launch promised (`Pool::run`) that each rank may run
        // on any thread while it waits, and we hold this rank's ticket.
        unsafe { run(job, rank) };
        std::mem::forget(abort);
        // Release: publishes the rank's outcome to the launch's Acquire.
        let before = slot.word.swap(idle(), Ordering::Release);
        if before.addr() & WAITED != 0 {
            // The address only as a key: the launch may be gone already.
            park::unpark_all(ticket.addr());
        }
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

/// The worker's wait for its next ticket: it polls, then parks; `None`
/// once it leaves (keep-alive passed, or the pool shut down).
fn next_ticket(slot: &Slot, keep_alive: Duration, crowded: bool) -> Option<*mut Ticket> {
    loop {
        // Acquire: the claim's `Release` CAS published the ticket.
        let mut word = slot.word.load(Ordering::Acquire);
        if word == idle() {
            if poll(crowded, || slot.word.load(Ordering::Relaxed) != idle()) {
                continue;
            }
            // Relaxed: only the sentinel changes; a failure re-reads.
            if slot
                .word
                .compare_exchange(idle(), sleeping(), Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            word = sleeping();
        }
        if is_ticket(word) {
            // Without the tag: the launch may have tagged the word already.
            return Some(word.map_addr(|a| a & !WAITED));
        }
        if word != sleeping() {
            // `SHUTDOWN`.
            return None;
        }
        let deadline = sync::now() + keep_alive;
        loop {
            // Relaxed: the validation only decides whether to sleep.
            let parked = park::park(
                slot.key(),
                &mut || slot.word.load(Ordering::Relaxed) == sleeping(),
                Some(deadline),
            );
            // Relaxed: a changed word is re-read with Acquire above.
            if slot.word.load(Ordering::Relaxed) != sleeping() {
                break;
            }
            if parked == Parked::TimedOut || sync::now() >= deadline {
                // Relaxed: the winner of this word is all that matters
                // (point 4); a loser re-reads with Acquire above.
                if slot
                    .word
                    .compare_exchange(sleeping(), exited(), Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    return None;
                }
                break;
            }
        }
    }
}

/// How long a waiter (a worker for its next ticket, a launch for its ranks)
/// spins before it polls between yields: long enough for a partner that is
/// running to answer, short enough not to hold a core that a descheduled
/// partner needs (on a busy machine the yields give it the core).
const SPIN: Duration = Duration::from_micros(4);

/// How long a waiter polls in all (spinning, then yielding) before it parks:
/// a block launched per time step finds its workers polling, and a launch
/// waits for short kernels without a park; an idle pool burns the CPU for
/// this long after a launch, no longer.
const POLL: Duration = Duration::from_micros(1000);

/// How long a waiter polls, yielding between polls, when the launches
/// running hold more block threads than the machine has cores: a core
/// spent polling is one a runnable thread of some block lacks, so the
/// waiter only lets the threads it waits for run once, then parks.
const POLL_CROWDED: Duration = Duration::from_micros(50);

/// Polls `done` for up to [`POLL`] (or [`POLL_CROWDED`] if `crowded`):
/// true once it holds, false when it is time to park. Under the model
/// checkers, one poll.
fn poll(crowded: bool, mut done: impl FnMut() -> bool) -> bool {
    if done() {
        return true;
    }
    if sync::MODEL {
        return false;
    }
    let (spin, budget) = if crowded {
        (Duration::ZERO, POLL_CROWDED)
    } else {
        (SPIN, POLL)
    };
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            sync::spin_hint();
            if done() {
                return true;
            }
        }
        let waited = start.elapsed();
        if waited >= budget {
            return false;
        }
        if waited >= spin {
            sync::yield_now();
        }
    }
}

/// The block threads of the launches running now, in the whole process:
/// a hint for the waiters (whether polling pays), no part of any launch's
/// synchronization, so a plain std atomic under the model checkers too.
static RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One launch's share of [`RUNNING`], given back on drop.
struct Crowd {
    threads: usize,
    crowded: bool,
}

impl Crowd {
    fn enter(threads: usize) -> Crowd {
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cores = *CORES.get_or_init(thread_cores);
        // Relaxed: a hint; no data rides on it.
        let running = RUNNING.fetch_add(threads, std::sync::atomic::Ordering::Relaxed) + threads;
        Crowd {
            threads,
            crowded: running > cores,
        }
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        // Relaxed: as in `enter`.
        RUNNING.fetch_sub(self.threads, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The cores this process may run on.
fn thread_cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The default pool, behind the free function `launch`.
#[cfg(not(any(loom, shuttle)))]
pub(super) fn default_pool() -> &'static Pool {
    static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| Pool::new(Config::default()))
}

#[cfg(loom)]
loom::lazy_static! {
    static ref POOL: Pool = Pool::new(Config::default());
}

#[cfg(shuttle)]
shuttle::lazy_static! {
    static ref POOL: Pool = Pool::new(Config::default());
}

/// The default pool, behind the free function `launch` (one per model
/// execution).
#[cfg(any(loom, shuttle))]
pub(super) fn default_pool() -> &'static Pool {
    &POOL
}
