//! A work pool that grows when its backlog is long and shrinks when it is
//! short, on one `Team` whose phases keep running: workers join with
//! `Team::join` (Java's `Phaser::register`) and leave with
//! `Seat::arrive_and_drop`.
//!
//! Rank 0 is the dispatcher. In each phase it adds a burst of jobs to a
//! queue (quiet stretches and busy ones), every worker takes up to `BATCH`
//! jobs and does them, and everyone arrives. The team's completion function
//! checks the phase: every job taken was done exactly once, by a worker that
//! takes part in the phase, and every participant reported once. Then it
//! sets the pool size the backlog calls for, and the dispatcher, between
//! two phases, makes the pool that size: it joins new seats for new worker
//! threads (they take part from the phase it is about to arrive in), or
//! asks workers to leave (each leaves at the start of its next phase, its
//! leave counting as its arrival there). At the end every job was done
//! exactly once.
//!
//! ```text
//! cargo run --release --example work_pool -- [max_workers] [phases]
//! ```

mod args;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use syncthreads::Team;

const CLI: args::Cli<2> = args::Cli {
    program: "work_pool",
    counts: [
        args::count("max_workers", 8, 3..=64),
        args::count("phases", 400, 50..=100_000),
    ],
    note: "the dispatcher and up to max_workers - 1 workers; the first burst of jobs comes \
           in phase 40, so fewer phases or workers would show no pool growing",
};
/// Jobs a worker takes per phase.
const BATCH: usize = 4;

/// The jobs of one phase and who did them.
#[derive(Default)]
struct Phase {
    /// The number of the phase now running.
    number: u64,
    /// Workers taking part in it (the dispatcher sets it between phases).
    workers: usize,
    /// Workers that reported in it.
    reported: usize,
    /// Jobs taken from the queue in it, and jobs done.
    taken: usize,
    done: usize,
    /// Workers that leave with their arrival in it.
    leaving: usize,
}

struct Pool {
    queue: Mutex<VecDeque<u64>>,
    phase: Mutex<Phase>,
    /// How often each job was done.
    done: Vec<AtomicUsize>,
    /// Workers asked to leave, not yet gone.
    leave: AtomicUsize,
    /// The pool size the backlog calls for (set by the completion function).
    target: AtomicUsize,
    max_workers: usize,
    /// Pool sizes seen, for the summary.
    smallest: AtomicUsize,
    largest: AtomicUsize,
}

impl Pool {
    /// The completion function: checks the phase that completes, then sizes
    /// the pool for the backlog.
    fn complete(&self) {
        let mut p = self.phase.lock().unwrap();
        assert_eq!(
            p.reported, p.workers,
            "phase {}: {} of {} workers reported",
            p.number, p.reported, p.workers
        );
        assert_eq!(
            p.done, p.taken,
            "phase {}: {} jobs taken, {} done",
            p.number, p.taken, p.done
        );
        p.workers -= p.leaving;
        p.number += 1;
        (p.reported, p.taken, p.done, p.leaving) = (0, 0, 0, 0);
        let backlog = self.queue.lock().unwrap().len();
        let want = backlog.div_ceil(BATCH).clamp(1, self.max_workers - 1);
        self.target.store(want, Ordering::Relaxed);
    }

    /// One worker on its seat until it is asked to leave.
    fn work(&self, seat: syncthreads::Seat<'_, impl FnMut() + Send>) {
        loop {
            // Asked to leave: this phase's arrival is the leave.
            let asked = self
                .leave
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok();
            let mut jobs = Vec::new();
            if !asked {
                let mut queue = self.queue.lock().unwrap();
                while jobs.len() < BATCH {
                    match queue.pop_front() {
                        Some(job) => jobs.push(job),
                        None => break,
                    }
                }
            }
            for &job in &jobs {
                self.done[job as usize].fetch_add(1, Ordering::Relaxed);
            }
            {
                let mut p = self.phase.lock().unwrap();
                p.reported += 1;
                p.taken += jobs.len();
                p.done += jobs.len();
                p.leaving += asked as usize;
            }
            if asked {
                seat.arrive_and_drop();
                return;
            }
            seat.arrive_and_wait();
        }
    }
}

/// Jobs the dispatcher adds in phase `k`: quiet stretches and bursts.
fn burst(k: u64) -> usize {
    match (k / 40) % 4 {
        0 => 1,
        1 => 12 + (k % 7) as usize,
        2 => 3,
        _ => 30,
    }
}

fn main() {
    let [max_workers, phases] = CLI.parse();
    let jobs: usize = (0..phases as u64).map(burst).sum();
    let pool = Pool {
        queue: Mutex::new(VecDeque::new()),
        phase: Mutex::new(Phase::default()),
        done: (0..jobs).map(|_| AtomicUsize::new(0)).collect(),
        leave: AtomicUsize::new(0),
        target: AtomicUsize::new(1),
        max_workers,
        smallest: AtomicUsize::new(usize::MAX),
        largest: AtomicUsize::new(0),
    };
    // Rank 0 (the dispatcher) takes part from the start; ranks
    // 1 .. max_workers join as workers.
    let team = Team::with_completion_and_capacity(1, max_workers, || pool.complete());
    std::thread::scope(|s| {
        let dispatcher = team.seat(0);
        let (mut next_job, mut workers) = (0u64, 0usize);
        let mut k = 0;
        loop {
            // Between two phases: size the pool. A joined seat takes part
            // in the phase the dispatcher is about to arrive in.
            let target = if k < phases {
                pool.target.load(Ordering::Relaxed)
            } else {
                0
            };
            while workers < target {
                let seat = team.join().expect("the capacity holds the largest pool");
                pool.phase.lock().unwrap().workers += 1;
                workers += 1;
                let pool = &pool;
                s.spawn(move || pool.work(seat));
            }
            if workers > target {
                pool.leave.fetch_add(workers - target, Ordering::Relaxed);
                workers = target;
            }
            if k < phases {
                pool.smallest.fetch_min(workers, Ordering::Relaxed);
                pool.largest.fetch_max(workers, Ordering::Relaxed);
            }
            if k >= phases
                && pool.phase.lock().unwrap().workers == 0
                && pool.queue.lock().unwrap().is_empty()
            {
                break;
            }
            if k < phases {
                let mut queue = pool.queue.lock().unwrap();
                for _ in 0..burst(k as u64) {
                    queue.push_back(next_job);
                    next_job += 1;
                }
            }
            {
                let mut p = pool.phase.lock().unwrap();
                // The dispatcher works the queue too when no worker is left.
                if workers == 0 {
                    let mut queue = pool.queue.lock().unwrap();
                    while let Some(job) = queue.pop_front() {
                        pool.done[job as usize].fetch_add(1, Ordering::Relaxed);
                        p.taken += 1;
                        p.done += 1;
                    }
                }
            }
            dispatcher.arrive_and_wait();
            k += 1;
        }
        dispatcher.arrive_and_drop();
    });
    let twice = pool
        .done
        .iter()
        .filter(|d| d.load(Ordering::Relaxed) != 1)
        .count();
    let (smallest, largest) = (pool.smallest.into_inner(), pool.largest.into_inner());
    println!(
        "work_pool: {jobs} jobs in {} phases; pool of {smallest} to {largest} workers (capacity {})",
        pool.phase.lock().unwrap().number,
        max_workers - 1
    );
    if twice != 0 {
        eprintln!("work_pool: {twice} jobs not done exactly once");
        std::process::exit(1);
    }
    if largest < 2 || smallest > 1 || smallest == largest {
        eprintln!("work_pool: the pool never grew and shrank ({smallest} to {largest})");
        std::process::exit(1);
    }
}
