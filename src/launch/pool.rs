//! The persistent threads behind `launch`: a pool of workers, each with one
//! slot word through which a launch hands it a rank and it hands the rank
//! back. Most of them serve the pool's crew (`pool/crew.rs`), through
//! which a launch that finds it free hands out all its ranks at once; a
//! launch that finds it taken claims idle workers through their slots.
//! Every wait here (an idle worker's, a launch's for its ranks) goes
//! through `wait/`, the waits of the barriers.
//!
//! The slot word and its protocol, point by point: `pool/slot.rs`.

use crate::park;
use crate::sync::{Mutex, Ordering};
use crate::wait::{Stages, Word};
use std::any::Any;
use std::cell::Cell;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

#[cfg(not(any(loom, shuttle)))]
use std::thread;

#[cfg(loom)]
use loom::thread;

#[cfg(shuttle)]
use shuttle::thread;

mod crew;
#[cfg(loom)]
mod probe;
mod worker;
#[cfg(feature = "bench")]
pub use crew::set_crew_group;
mod slot;

use crew::Crew;
pub(super) use crew::Kept;
use worker::work;

#[cfg(loom)]
pub use probe::SlotProbe;
pub(super) use slot::Ticket;
use slot::{exited, is_ticket, shutdown, sleeping, Slot, WAITED};

/// What a `Launcher` configures.
#[derive(Clone, Debug)]
pub(super) struct Config {
    pub(super) stack_size: Option<usize>,
    pub(super) name_prefix: String,
    pub(super) keep_alive: Duration,
    /// Whether launches use the crew (`pool/crew.rs`); off only in the
    /// models and tests of the slot path.
    pub(super) crew: bool,
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
            crew: true,
        }
    }
}

/// One slot of the pool and the thread that serves it now.
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
    /// The threads that left a slot a later launch took over. A thread
    /// that left may still be running its thread-local destructors, which
    /// may launch on this pool (from that very thread) or wait for a later
    /// launch: so no launch joins it; [`Pool::shut_down`] does.
    leavers: Mutex<Vec<thread::JoinHandle<()>>>,
    /// The threads that stay with the pool's launches (`pool/crew.rs`).
    crew: Arc<Crew>,
}

/// A launch that could not start all its ranks: the first rank without a
/// thread and why.
pub(super) struct StartFailed {
    pub(super) rank: usize,
    pub(super) cause: StartCause,
}

/// Why a rank could not start.
pub(super) enum StartCause {
    /// Its thread could not be spawned.
    Spawn(io::Error),
    /// A panic between the first claim and the last hand-out (an
    /// allocation, a spawn that panics): its payload.
    Panic(Box<dyn Any + Send>),
}

/// The text of a panic payload (`&str` or `String`), or what it is not.
pub(super) fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "a panic with a payload that is not a string"
    }
}

/// Locks `mutex`, whose data every holder leaves consistent at each point
/// a panic can leave it (a poisoned lock is taken as it is).
fn lock<T>(mutex: &Mutex<T>) -> impl std::ops::DerefMut<Target = T> + '_ {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Pool {
    pub(super) fn new(config: Config) -> Pool {
        Pool {
            config,
            entries: Mutex::new(Vec::new()),
            leavers: Mutex::new(Vec::new()),
            crew: Arc::new(Crew::new()),
        }
    }

    pub(super) fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    pub(super) fn config(&self) -> &Config {
        &self.config
    }

    /// Runs ranks `0 .. threads` of `job`: rank 0 on the calling thread,
    /// the others on pool threads, and returns once every rank has ended.
    /// If a rank cannot be started (a thread cannot be spawned, or anything
    /// panics while the ranks are handed out), calls `abort` (which must
    /// make the started ranks end), runs no rank 0, waits for the started
    /// ranks and returns the failure.
    ///
    /// # Safety
    ///
    /// `run(job, rank)` must be sound to call for each rank on any thread,
    /// at once with the other ranks, for as long as this call lasts, and
    /// must not unwind.
    ///
    /// (Launches run through [`Pool::run_kept`], or [`Pool::run_by_slots`];
    /// this is the pool's bare hand-off, for the bench and the tests.)
    #[cfg(any(test, feature = "bench"))]
    pub(super) unsafe fn run(
        &self,
        threads: usize,
        job: *const (),
        run: unsafe fn(*const (), usize),
        abort: &dyn Fn(),
    ) -> Result<(), StartFailed> {
        if threads > 1 && self.config.crew {
            let crowd = Crowd::enter(threads);
            // SAFETY: the caller's promise.
            if unsafe { self.run_on_crew(threads, job, run, crowd.crowded) } {
                return Ok(());
            }
        }
        // SAFETY: the caller's promise.
        unsafe { self.run_by_slots(threads, job, run, abort) }
    }

    /// `run` without trying the crew: the ranks are handed to idle workers
    /// one by one (spawning the ones it lacks), and it returns once every
    /// rank has ended. For a launch that `Pool::run_kept` could not run on
    /// the crew. A rank that cannot be started fails the launch as `run`
    /// says.
    ///
    /// # Safety
    ///
    /// `run(job, rank)` must be sound to call for each rank on any thread,
    /// at once with the other ranks, for as long as this call lasts, and
    /// must not unwind.
    pub(super) unsafe fn run_by_slots(
        &self,
        threads: usize,
        job: *const (),
        run: unsafe fn(*const (), usize),
        abort: &dyn Fn(),
    ) -> Result<(), StartFailed> {
        let crowded = Crowd::enter(threads);
        let tickets: Vec<Ticket> = (1..threads)
            .map(|rank| Ticket {
                job,
                run,
                rank,
                crowded: crowded.crowded,
                enlists: false,
                slot: Cell::new(ptr::null()),
            })
            .collect();
        // From here on the claimed slots hold pointers into `tickets`: the
        // guard waits for them however this frame is left.
        let mut guard = WaitAll {
            tickets: &tickets,
            claimed: 0,
        };
        // A panic while the ranks are handed out takes the path of a failed
        // spawn: the ranks already started end through `abort`, are waited
        // for, and the launch reports it (unwinding past them instead would
        // leave them waiting in the block for ranks that never start).
        let handed = panic::catch_unwind(AssertUnwindSafe(|| {
            self.claim_or_spawn(tickets.len(), |i| &tickets[i], &mut guard.claimed)
        }));
        let failed = handed.unwrap_or_else(|payload| {
            Some(StartFailed {
                rank: guard.claimed + 1,
                cause: StartCause::Panic(payload),
            })
        });
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
    /// slot first. A panic here leaves every slot either handed (counted)
    /// or as it was.
    fn claim_or_spawn<'t>(
        &self,
        count: usize,
        tickets: impl Fn(usize) -> &'t Ticket,
        claimed: &mut usize,
    ) -> Option<StartFailed> {
        let ticket = |i: usize| ptr::from_ref(tickets(i)).cast_mut();
        let mut entries = lock(&self.entries);
        for entry in entries.iter() {
            if *claimed == count {
                return None;
            }
            #[cfg(all(test, not(any(loom, shuttle))))]
            tests::fail_point(*claimed);
            // Noted before the claim, which hands the ticket over.
            tickets(*claimed).slot.set(Arc::as_ptr(&entry.slot));
            if entry.slot.claim(ticket(*claimed)) {
                *claimed += 1;
            }
        }
        let mut reuse = 0;
        while *claimed < count {
            #[cfg(all(test, not(any(loom, shuttle))))]
            tests::fail_point(*claimed);
            let next = ticket(*claimed);
            // A slot whose worker left: only launches under this lock
            // write an `EXITED` word, so the load is stable.
            while reuse < entries.len()
                // Relaxed: the word is stable (above); no data is read.
                && entries[reuse].slot.load(Ordering::Relaxed) != exited()
            {
                reuse += 1;
            }
            let (index, slot) = if reuse < entries.len() {
                let entry = &mut entries[reuse];
                if let Some(old) = entry.thread.take() {
                    // Past its last access of the slot, but maybe still in
                    // its thread-local destructors: joined at shut-down.
                    self.retire(old);
                }
                tickets(*claimed).slot.set(Arc::as_ptr(&entry.slot));
                entry.slot.reuse(next);
                (reuse, Arc::clone(&entry.slot))
            } else {
                let slot = Arc::new(Slot::new(next));
                tickets(*claimed).slot.set(Arc::as_ptr(&slot));
                (entries.len(), slot)
            };
            // Until its thread runs, a reused slot holds a ticket nobody
            // serves: it reads `EXITED` again if the spawn fails or panics.
            let unserved = Unserved((index < entries.len()).then_some(&*slot));
            let spawned = self.spawn(index, Arc::clone(&slot));
            let handle = match spawned {
                Ok(handle) => handle,
                Err(error) => {
                    return Some(StartFailed {
                        rank: tickets(*claimed).rank,
                        cause: StartCause::Spawn(error),
                    });
                }
            };
            std::mem::forget(unserved);
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
        None
    }

    /// Keeps the handle of a thread that left a slot now taken over, for
    /// [`Pool::shut_down`]; lets go of those that have finished their work,
    /// so that a pool whose threads come and go keeps a handful.
    fn retire(&self, old: thread::JoinHandle<()>) {
        let mut leavers = lock(&self.leavers);
        // A finished thread's handle is dropped, which detaches it: joining
        // it here could wait on its thread-local destructors.
        leavers.retain(|handle| !finished(handle));
        leavers.push(old);
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
        lock(&self.entries)
            .iter()
            // Relaxed: a count for the caller, no data read.
            .filter(|e| {
                let word = e.slot.load(Ordering::Relaxed);
                word != exited() && word != shutdown()
            })
            .count()
    }

    /// Tells every worker to leave and joins them all, with no lock held,
    /// except the calling thread itself (a pool thread's thread-local
    /// destructor may drop the last owner of its own pool).
    pub(super) fn shut_down(&self) {
        let me = thread::current().id();
        // A thread's thread-local destructors may launch on this pool while
        // it is joined: such a launch ends before the join returns, but may
        // have spawned threads (and enlisted them in the crew), so passes
        // repeat until one finds none.
        loop {
            // The crew's members leave first: their slots hold their service.
            self.crew.disband();
            let mut threads = Vec::new();
            for entry in lock(&self.entries).iter_mut() {
                // Relaxed: the worker reads nothing but the sentinel. No
                // launch is running: they borrow the pool, and one made by a
                // destructor of a thread joined in an earlier pass ended
                // with that join.
                if entry.slot.swap(shutdown(), Ordering::Relaxed) == sleeping() {
                    park::unpark_all(entry.slot.key());
                }
                threads.extend(entry.thread.take());
            }
            threads.append(&mut lock(&self.leavers));
            threads.retain(|handle| handle.thread().id() != me);
            if threads.is_empty() {
                return;
            }
            for handle in threads {
                let _ = handle.join();
            }
        }
    }
}

/// Whether a pool thread has finished its work (its thread-local
/// destructors may still be running). Under the model checkers, which
/// cannot tell: no (a model's handful of handles wait for the shut-down).
fn finished(handle: &thread::JoinHandle<()>) -> bool {
    #[cfg(any(loom, shuttle))]
    let done = {
        let _ = handle;
        false
    };
    #[cfg(not(any(loom, shuttle)))]
    let done = handle.is_finished();
    done
}

/// A reused slot whose new thread is not spawned yet: reads `EXITED` again
/// on drop, unless forgotten once the thread runs.
struct Unserved<'a>(Option<&'a Slot>);

impl Drop for Unserved<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            // Relaxed: no thread reads this slot's word now (the launch's
            // lock keeps other launches out; no worker serves it).
            slot.swap(exited(), Ordering::Relaxed);
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

/// Returns once `slot`'s word no longer holds `ticket` (point 3): a wait
/// through `wait/`, on the slot's word as the launch sees it.
fn wait_done(slot: &Slot, ticket: *mut Ticket, crowded: bool) {
    let handed = Handed { slot, ticket };
    let check = |word: *mut Ticket| left(word, ticket).then_some(());
    // Acquire: the worker's `Release` swap published the rank's outcome
    // (also through a later launch's claim or reuse of the slot: RMWs).
    let word = slot.load(Ordering::Acquire);
    if check(word).is_none() {
        let participants = if crowded { u32::MAX } else { 2 };
        let waited = Stages::new(participants, None).wait(&handed, word, check);
        debug_assert!(waited.is_ok(), "a wait without a deadline");
    }
}

/// A slot's word as the launch that handed it `ticket` waits on it: parked
/// is the ticket tagged `WAITED`, which the worker's hand-back sees and
/// wakes the ticket's address for.
struct Handed<'a> {
    slot: &'a Slot,
    ticket: *mut Ticket,
}

impl Word for Handed<'_> {
    type Snapshot = *mut Ticket;

    fn load(&self, order: Ordering) -> *mut Ticket {
        self.slot.load(order)
    }

    fn parked(word: *mut Ticket) -> bool {
        word.addr() & WAITED != 0
    }

    fn mark_parked(&self, word: *mut Ticket) -> Result<(), *mut Ticket> {
        // Relaxed (both): the tag only asks for a wake; the waiter re-reads
        // with Acquire before it returns (`wait/`).
        self.slot
            .compare_exchange(
                word,
                word.map_addr(|a| a | WAITED),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .map(drop)
    }

    /// The ticket's address, which the worker wakes (never dereferencing it).
    fn park_key(&self) -> usize {
        self.ticket.addr()
    }
}

/// Whether `word` no longer holds `mine` (the launch's ticket, tagged or
/// not): the worker handed it back.
fn left(word: *mut Ticket, mine: *mut Ticket) -> bool {
    let untagged = |w: *mut Ticket| w.map_addr(|a| a & !WAITED);
    if untagged(word) == untagged(mine) {
        return false;
    }
    if is_ticket(word) {
        // The case of a release sequence: a later launch's ticket, after
        // the worker handed this one back.
        crate::sync::model_event("pool-wait-read-a-later-ticket");
    }
    true
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
        let cores = crate::wait::cores() as usize;
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

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
