//! [`Launcher`]: the configuration of the threads that run launches, and
//! a private pool of them.

use super::grid_job::run_grid_on;
use super::pool::{Config, Pool};
use super::{check_grid, run_on, Block};
#[cfg(doc)]
use super::{launch, launch_grid};
use crate::op;
use std::fmt;
use std::time::Duration;

/// Configures the threads that run [`launch`]es, as [`std::thread::Builder`]
/// configures one thread: their stack size and names, and how long they
/// stay idle before they leave. A `Launcher` owns a private pool; the free
/// function [`launch`] uses a process-wide default one.
///
/// # The pool
///
/// - **The crew.** The pool's threads stay with it between launches, as a
///   crew (OpenMP's "hot team"): a launch of `n` threads runs rank 0 on
///   the calling thread and ranks `1 .. n` on the crew's first `n - 1`
///   threads, handing them out with one store per four threads, where
///   claiming `n - 1` idle threads one by one would cost a round trip
///   each. The crew also keeps the block (or the grid's barriers) of its
///   last launch and re-arms it for the next launch of the same shape, so
///   a launch per time step builds nothing; the launch returns once its
///   threads' leaves of that block say that they have all ended. A launch larger
///   than the crew grows it (taking idle pool threads, then spawning the
///   rest); a smaller one leaves the rest of the crew asleep.
/// - **Launches at once.** A launch that finds the crew taken (another
///   launch runs on it, or this is a launch from inside a kernel) takes
///   idle pool threads one by one, spawning any it lacks. No launch ever
///   waits for a busy pool thread, so launches from several threads at
///   once, and launches from inside a kernel, each get threads of their
///   own.
/// - **Idle threads.** A pool thread whose rank ended spins briefly, then
///   yields its core for about two milliseconds while it watches for its
///   next rank (so a block launched per time step finds it awake; much
///   less when the blocks running hold more threads than there are cores),
///   then parks, burning no CPU. After [`keep_alive`] (by default
///   [`Launcher::DEFAULT_KEEP_ALIVE`], 5 s) without a rank, it leaves the
///   pool and its OS thread exits; a later launch spawns a new one. So a
///   program that launches at least every few seconds never pays the
///   spawn again, and an idle process holds no extra thread after a while.
///   (A crew thread that a smaller launch leaves asleep leaves too: the
///   crew shrinks to what the launches use.)
/// - **Names.** Pool threads are named `prefix-1`, `prefix-2`, ... (the
///   number is the thread's place in the pool; a thread that replaces one
///   that left gets its number). The default prefix is `syncthreads`, so
///   debuggers, `top -H` and the stall reports of the `diagnostics` feature
///   tell them apart: Linux keeps the first 15 bytes of a thread's name,
///   which holds `syncthreads-999`; keep a prefix of your own as short. Rank 0 runs on the
///   caller and reports under the caller's name.
/// - **Thread-locals.** A pool thread runs many launches' ranks, one after
///   another, so its thread-local variables keep their values from one
///   launch to the next, as on any thread pool (rayon, OpenMP); a kernel
///   must not assume they start fresh, nor that a rank lands on the same
///   thread twice.
/// - **Thread exit.** A pool thread's thread-local destructors run when it
///   leaves, and may `launch`, on any pool, its own included, as from any
///   thread's destructors: no launch waits for a leaving thread, and none
///   joins it.
/// - **Drop.** Dropping a `Launcher` tells its threads to leave and joins
///   them: no thread of its pool outlives it, except one that had left
///   after the keep-alive and finished before its place was taken again
///   (it may still be running its thread-local destructors), and the
///   dropping thread itself when a pool thread's destructor drops the
///   `Launcher`. (No launch can be running on it then: a launch borrows
///   the `Launcher`.)
///
/// A kernel that blocks forever blocks its launch, as on a GPU; its pool
/// threads stay busy, and other launches get other threads.
///
/// [`keep_alive`]: Launcher::keep_alive
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let launcher = syncthreads::Launcher::new()
///     .name_prefix("solver")
///     .stack_size(4 << 20)
///     .keep_alive(Duration::from_secs(1));
/// let names = launcher.launch(3, |block| {
///     block.sync();
///     std::thread::current().name().map(str::to_owned)
/// });
/// // Rank 0 ran on this thread; ranks 1 and 2 on the launcher's pool.
/// assert_eq!(names[0].as_deref(), std::thread::current().name());
/// assert!(names[1..].iter().all(|n| n.as_deref().unwrap().starts_with("solver-")));
/// drop(launcher); // joins the pool's threads
/// ```
pub struct Launcher {
    pool: Pool,
    /// The most threads one launch (a block, or a whole grid) may have.
    max_threads: usize,
}

impl Launcher {
    /// How long an idle pool thread stays parked before it leaves the pool,
    /// unless [`keep_alive`](Launcher::keep_alive) says otherwise: long
    /// enough that a program launching every few seconds keeps its threads
    /// (a spawn costs far more than a launch on a warm pool), short enough
    /// that an idle process gives its threads back soon.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use syncthreads::Launcher;
    ///
    /// assert_eq!(Launcher::DEFAULT_KEEP_ALIVE, Duration::from_secs(5));
    /// // The same as a launcher built without `keep_alive`:
    /// let launcher = Launcher::new().keep_alive(Launcher::DEFAULT_KEEP_ALIVE);
    /// assert_eq!(launcher.launch(2, |b| b.sync_count(true)), [2, 2]);
    /// ```
    pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(5);

    /// A launcher with a private pool, no threads yet: default stack size
    /// (std's), names `syncthreads-N`, keep-alive
    /// [`DEFAULT_KEEP_ALIVE`](Launcher::DEFAULT_KEEP_ALIVE).
    ///
    /// # Examples
    ///
    /// ```
    /// let launcher = syncthreads::Launcher::new();
    /// assert_eq!(launcher.launch(2, |block| block.thread_rank()), [0, 1]);
    /// ```
    #[must_use]
    pub fn new() -> Launcher {
        Launcher {
            pool: Pool::new(Config::default()),
            max_threads: crate::state::MAX as usize,
        }
    }

    /// The stack size of the pool's threads, in bytes, as
    /// [`std::thread::Builder::stack_size`]. Rank 0 runs on the caller's
    /// stack.
    ///
    /// # Examples
    ///
    /// ```
    /// fn deep() -> usize {
    ///     let big = [1u8; 4 << 20]; // fits in the pool threads' 8 MiB
    ///     std::hint::black_box(&big).len()
    /// }
    ///
    /// let launcher = syncthreads::Launcher::new().stack_size(8 << 20);
    /// // Rank 0 is the caller, on its own stack: only the pool's ranks go deep.
    /// let sizes = launcher.launch(2, |block| if block.thread_rank() == 0 { 0 } else { deep() });
    /// assert_eq!(sizes, [0, 4 << 20]);
    /// ```
    #[must_use]
    pub fn stack_size(mut self, bytes: usize) -> Launcher {
        self.pool.config_mut().stack_size = Some(bytes);
        self
    }

    /// The prefix of the pool threads' names: they are `prefix-1`,
    /// `prefix-2`, ... (see [the pool](Launcher#the-pool)). Linux shows a
    /// debugger the first 15 bytes of a name: keep the prefix short enough
    /// that the number fits.
    ///
    /// # Panics
    ///
    /// If `prefix` holds a NUL byte, which no thread name can (as
    /// [`std::thread::Builder::name`]'s spawn would refuse it later).
    ///
    /// # Examples
    ///
    /// ```
    /// let launcher = syncthreads::Launcher::new().name_prefix("heat");
    /// let names = launcher.launch(2, |_| std::thread::current().name().map(str::to_owned));
    /// assert_eq!(names[1].as_deref(), Some("heat-1"));
    /// ```
    #[must_use]
    #[track_caller]
    pub fn name_prefix(mut self, prefix: impl Into<String>) -> Launcher {
        let prefix = prefix.into();
        if let Some(at) = prefix.bytes().position(|b| b == 0) {
            panic!(
                "syncthreads: Launcher::name_prefix({prefix:?}): a thread name cannot hold a NUL byte (byte {at})"
            );
        }
        self.pool.config_mut().name_prefix = prefix;
        self
    }

    /// How long an idle pool thread stays parked before it leaves the pool
    /// (see [the pool](Launcher#the-pool)); `Duration::ZERO` makes threads
    /// leave as soon as they have polled for a next launch, and
    /// `Duration::MAX` (or any keep-alive too long for the clock) keeps
    /// them until the `Launcher` is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let launcher = syncthreads::Launcher::new().keep_alive(Duration::from_millis(100));
    /// launcher.launch(4, |block| block.sync());
    /// assert!(launcher.live_threads() <= 3);
    /// ```
    #[must_use]
    pub fn keep_alive(mut self, idle: Duration) -> Launcher {
        self.pool.config_mut().keep_alive = idle;
        self
    }

    /// A launcher whose launches never use its crew, each claiming its
    /// threads one by one: for the models of that path only.
    #[cfg(any(loom, shuttle))]
    #[doc(hidden)]
    #[must_use]
    pub fn without_crew(mut self) -> Launcher {
        self.pool.config_mut().crew = false;
        self
    }

    /// Runs `kernel` on a block of `threads` threads, the caller as rank 0
    /// and this launcher's pool threads as the others: [`launch`], on this
    /// launcher's pool.
    ///
    /// # Panics
    ///
    /// As [`launch`].
    ///
    /// # Examples
    ///
    /// ```
    /// let launcher = syncthreads::Launcher::new();
    /// for step in 0..3 {
    ///     let sums = launcher.launch(4, |block| block.sync_count(block.thread_rank() < step));
    ///     assert_eq!(sums, [step; 4]);
    /// }
    /// ```
    #[track_caller]
    pub fn launch<R, F>(&self, threads: usize, kernel: F) -> Vec<R>
    where
        F: Fn(&Block<'_>) -> R + Sync,
        R: Send,
    {
        check_grid(
            format_args!("Launcher::launch({threads}, _)"),
            1,
            threads,
            Some(self.max_threads),
        );
        run_on(&self.pool, threads, &kernel)
    }

    /// The most threads one launch on this launcher may run, a block of
    /// [`launch`](Launcher::launch) or a whole grid of
    /// [`launch_grid`](Launcher::launch_grid) (by default `Barrier::MAX`,
    /// the most a barrier can count). Every thread of a launch runs at
    /// once, each on a thread of its own, so this bounds the threads the
    /// pool holds for it; a larger launch panics before any thread starts,
    /// as CUDA refuses a cooperative launch too large for the device.
    ///
    /// # Panics
    ///
    /// Unless `1 <= threads <= Barrier::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// let launcher = syncthreads::Launcher::new().max_threads(8);
    /// assert_eq!(launcher.launch_grid(2, 4, |block| block.grid().size()), [8; 8]);
    /// let too_large = std::panic::catch_unwind(|| launcher.launch_grid(3, 4, |_| ()));
    /// assert!(too_large.is_err()); // 12 threads: refused, none started
    /// ```
    #[track_caller]
    #[must_use]
    pub fn max_threads(mut self, threads: usize) -> Launcher {
        op::participants(
            format_args!("Launcher::max_threads({threads})"),
            "the thread limit",
            threads,
        );
        self.max_threads = threads;
        self
    }

    /// Runs `kernel` on a grid of `blocks` blocks of `threads` threads,
    /// the caller as thread 0 of block 0 and this launcher's pool threads
    /// as the others: [`launch_grid`], on this launcher's pool.
    ///
    /// # Panics
    ///
    /// As [`launch_grid`], and if the grid has more threads than
    /// [`max_threads`](Launcher::max_threads).
    ///
    /// # Examples
    ///
    /// ```
    /// let launcher = syncthreads::Launcher::new();
    /// let ranks = launcher.launch_grid(2, 3, |block| {
    ///     block.grid().sync();
    ///     (block.block_rank(), block.thread_rank())
    /// });
    /// assert_eq!(ranks, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
    /// ```
    #[track_caller]
    pub fn launch_grid<R, F>(&self, blocks: usize, threads: usize, kernel: F) -> Vec<R>
    where
        F: Fn(&Block<'_>) -> R + Sync,
        R: Send,
    {
        check_grid(
            format_args!("Launcher::launch_grid({blocks}, {threads}, _)"),
            blocks,
            threads,
            Some(self.max_threads),
        );
        run_grid_on(&self.pool, blocks, threads, &kernel)
    }

    /// How many threads this launcher's pool holds now, busy or idle (not
    /// counting callers running rank 0); threads that left after the
    /// keep-alive are not counted.
    ///
    /// # Examples
    ///
    /// ```
    /// let launcher = syncthreads::Launcher::new();
    /// assert_eq!(launcher.live_threads(), 0);
    /// launcher.launch(3, |block| block.sync());
    /// assert!(launcher.live_threads() <= 2); // 2, unless one left already
    /// ```
    #[must_use]
    pub fn live_threads(&self) -> usize {
        self.pool.live()
    }
}

impl Default for Launcher {
    fn default() -> Launcher {
        Launcher::new()
    }
}

impl fmt::Debug for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = self.pool.config();
        f.debug_struct("Launcher")
            .field("stack_size", &config.stack_size)
            .field("name_prefix", &config.name_prefix)
            .field("keep_alive", &config.keep_alive)
            .field("max_threads", &self.max_threads)
            .field("live_threads", &self.live_threads())
            .finish()
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        self.pool.shut_down();
    }
}

crate::assert::assert_impl_all!(Launcher: Send, Sync, std::panic::RefUnwindSafe);
