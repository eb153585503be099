//! The demo: 2-D heat diffusion (a Jacobi stencil) on row bands, one thread
//! per band, synchronized once per step with `std::sync::Barrier`, with
//! `syncthreads::Barrier`'s split arrive/wait, and with the same split on a
//! `syncthreads::Team`'s seats, and when a barrier matters.
//!
//! ```text
//! cargo run --release --example heat
//! cargo run --release --example heat -- --size 4096 --steps 50 --threads 4 --reps 3
//! ```
//!
//! By default it runs two cases. A barrier-bound one: a small grid and many
//! steps, so that a step is a few microseconds of work per thread and the
//! barrier's cost per phase decides the time (there `std::sync::Barrier`'s
//! mutex, condition variable and wake-up cost microseconds per step, and
//! `syncthreads` a fraction of one). And a memory-bound one: a large grid and
//! few steps, where a step streams the grid through memory and any barrier
//! is a rounding error. With `--size` or `--steps` it runs that one case.
//!
//! Each step reads grid `t % 2` and writes grid `(t + 1) % 2`. A band's first
//! and last rows read a neighbour's rows; its other rows ("interior") read only
//! the band's own rows. So with syncthreads each band computes its two boundary
//! rows first, `arrive`s, computes its interior while the others catch up, and
//! `wait`s only before the next step reads the neighbours' rows. With
//! `std::sync::Barrier` (one blocking `wait` per step) every band waits for the
//! slowest band to finish its whole step; with the split it waits only for the
//! slowest band to have *started* the step (done its two boundary rows), so a
//! band can run up to a full step ahead and a late neighbour (a preemption, a
//! slower core, more threads than cores) costs far less idle time.
//!
//! The grids of all runs must agree bit for bit, and, on small problems, with
//! a sequential reference; otherwise the program exits with status 1.

mod args;

use std::cell::UnsafeCell;
use std::process::exit;
use std::time::{Duration, Instant};

/// Diffusion number `alpha = k * dt / dx^2`; the explicit scheme is stable for
/// `alpha <= 0.25`.
const ALPHA: f64 = 0.2;

/// Largest problem (cells × steps) checked against the sequential reference
/// by default: a fraction of a second on one core.
const REFERENCE_LIMIT: usize = 1 << 27;

// ---- the grids --------------------------------------------------------------

/// The two `n × n` grids the bands share. Rows are handed out as plain slices;
/// who may touch which row when is decided by the barrier phases (see
/// [`Band::step_split`] and [`Band::step_std`]), which is why the accessors are
/// `unsafe`.
struct Grids {
    n: usize,
    cells: [Box<[UnsafeCell<f64>]>; 2],
}

// SAFETY: `Grids` only hands out row slices through the `unsafe` accessors,
// whose callers guarantee that no row is written while another thread reads or
// writes it (the barrier phases order every such pair of accesses).
unsafe impl Sync for Grids {}

impl Grids {
    fn new(initial: &[f64], n: usize) -> Grids {
        let grid = || initial.iter().map(|&x| UnsafeCell::new(x)).collect();
        Grids {
            n,
            cells: [grid(), grid()],
        }
    }

    /// Row `r` of grid `g`, to read.
    ///
    /// # Safety
    ///
    /// No thread writes that row while the returned slice is alive.
    unsafe fn row(&self, g: usize, r: usize) -> &[f64] {
        let cells = &self.cells[g][r * self.n..(r + 1) * self.n];
        // SAFETY: `UnsafeCell<f64>` has the layout of `f64`; the caller
        // guarantees that nobody writes these cells meanwhile.
        unsafe { std::slice::from_raw_parts(UnsafeCell::raw_get(cells.as_ptr()), self.n) }
    }

    /// Row `r` of grid `g`, to write.
    ///
    /// # Safety
    ///
    /// No other thread reads or writes that row while the returned slice is
    /// alive.
    #[allow(clippy::mut_from_ref)]
    unsafe fn row_mut(&self, g: usize, r: usize) -> &mut [f64] {
        let cells = &self.cells[g][r * self.n..(r + 1) * self.n];
        // SAFETY: as in `row`, and the caller guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), self.n) }
    }

    fn into_grid(self, g: usize) -> Vec<f64> {
        let [a, b] = self.cells;
        let cells = if g == 0 { a } else { b };
        cells
            .into_vec()
            .into_iter()
            .map(UnsafeCell::into_inner)
            .collect()
    }
}

/// One Jacobi update of a row: `out[j]` from `mid[j]` and its four neighbours.
/// The first and last cells are the fixed boundary and are copied.
#[inline]
fn update_row(up: &[f64], mid: &[f64], down: &[f64], out: &mut [f64]) {
    let n = mid.len();
    let (up, down, out) = (&up[..n], &down[..n], &mut out[..n]);
    out[0] = mid[0];
    out[n - 1] = mid[n - 1];
    for j in 1..n - 1 {
        out[j] = mid[j] + ALPHA * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0 * mid[j]);
    }
}

/// The starting grid: the top edge held at 100 degrees, the left edge at 50,
/// a hot disc in the middle, everything else at 0.
fn initial_grid(n: usize) -> Vec<f64> {
    let mut g = vec![0.0; n * n];
    let (c, r2) = (n as f64 / 2.0, (n as f64 / 8.0).powi(2));
    for i in 0..n {
        for j in 0..n {
            let (di, dj) = (i as f64 - c, j as f64 - c);
            g[i * n + j] = if i == 0 {
                100.0
            } else if j == 0 {
                50.0
            } else if di * di + dj * dj < r2 {
                80.0
            } else {
                0.0
            };
        }
    }
    g
}

/// The sequential reference: the same updates, in the same order per cell.
fn reference(n: usize, steps: usize) -> Vec<f64> {
    let mut cur = initial_grid(n);
    let mut next = cur.clone();
    for _ in 0..steps {
        for r in 1..n - 1 {
            update_row(
                &cur[(r - 1) * n..r * n],
                &cur[r * n..(r + 1) * n],
                &cur[(r + 1) * n..(r + 2) * n],
                &mut next[r * n..(r + 1) * n],
            );
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur
}

// ---- one band ---------------------------------------------------------------

/// Rows `first..end` of the grids, owned by one thread. Rows `0` and `n - 1`
/// are the fixed boundary and belong to nobody.
struct Band<'a> {
    grids: &'a Grids,
    first: usize,
    end: usize,
}

impl Band<'_> {
    /// Updates row `r` for step `t`: reads rows `r - 1 ..= r + 1` of grid
    /// `t % 2`, writes row `r` of grid `(t + 1) % 2`.
    ///
    /// # Safety
    ///
    /// `r` is a row of this band, and during this call no thread writes rows
    /// `r - 1 ..= r + 1` of grid `t % 2` or touches row `r` of grid
    /// `(t + 1) % 2`.
    unsafe fn update(&self, t: usize, r: usize) {
        let (cur, next) = (t % 2, (t + 1) % 2);
        let g = self.grids;
        // SAFETY: the caller's guarantee, row by row.
        unsafe {
            update_row(
                g.row(cur, r - 1),
                g.row(cur, r),
                g.row(cur, r + 1),
                g.row_mut(next, r),
            )
        }
    }

    /// The band's boundary rows: the only ones that read a neighbour's rows.
    fn boundary_rows(&self) -> impl Iterator<Item = usize> {
        let last = self.end - 1;
        std::iter::once(self.first).chain((last != self.first).then_some(last))
    }

    /// Rows that read only this band's own rows.
    fn interior_rows(&self) -> std::ops::Range<usize> {
        self.first + 1..(self.end - 1).max(self.first + 1)
    }

    /// All steps with `std::sync::Barrier`: update every row, then block
    /// until every band has finished the step.
    fn run_std(&self, steps: usize, barrier: &std::sync::Barrier, progress: Option<&Progress>) {
        for t in 0..steps {
            for r in self.first..self.end {
                // SAFETY: in step t, row r of grid (t+1)%2 is written only by
                // its owner (us). Rows of grid t%2 are written only in step
                // t+1 (by their owners), and every thread starts step t+1 only
                // after the step-t `wait` below, which every thread reaches
                // only after all its step-t reads. Conversely, the rows of
                // grid t%2 we read were written in step t-1, before their
                // owners' step-(t-1) `wait`, which our step-t start follows.
                unsafe { self.update(t, r) };
            }
            barrier.wait();
            if let Some(p) = progress {
                p.tick(t + 1);
            }
        }
    }

    /// All steps with `syncthreads` (a `Barrier`, or a `Team` seat): boundary
    /// rows, `arrive`, interior rows, `wait`.
    fn run_split(
        &self,
        steps: usize,
        arrive: &dyn Fn() -> syncthreads::ArrivalToken,
        wait: &dyn Fn(syncthreads::ArrivalToken),
        progress: Option<&Progress>,
    ) {
        for t in 0..steps {
            for r in self.boundary_rows() {
                // SAFETY: the only rows of another band that this step reads
                // are the neighbours' rows `first - 1` and `end` of grid t%2.
                // Their owners wrote them in step t-1 before their step-(t-1)
                // `arrive`, and we start step t after our step-(t-1) `wait`
                // returned, so those writes happen-before this read. Their
                // next writes to grid t%2 are in step t+1, which they start
                // only after their step-t `wait`, and that needs our step-t
                // `arrive` below, which follows this read. Row r of grid
                // (t+1)%2 is ours: the neighbours' step-t reads touch grid t%2
                // only, and their step-(t+1) reads of it wait for our step-t
                // `arrive`, made after this write.
                unsafe { self.update(t, r) };
            }
            // Our boundary rows for step t+1 are published: nothing else we
            // do in step t is read by another band in step t+1.
            let token = arrive();
            for r in self.interior_rows() {
                // SAFETY: interior rows read only rows first..end of grid t%2
                // (ours, written by us in step t-1) and write only our own row
                // of grid (t+1)%2; no other band reads our interior rows at
                // all, so this work needs no ordering with the neighbours and
                // runs while they catch up.
                unsafe { self.update(t, r) };
            }
            // Before step t+1 reads the neighbours' rows of grid (t+1)%2 (and
            // overwrites our rows of grid t%2, which they read in step t), all
            // bands must have arrived in step t.
            wait(token);
            if let Some(p) = progress {
                p.tick(t + 1);
            }
        }
    }
}

/// Progress on long runs: rank 0 prints a line at most once a second.
struct Progress {
    label: &'static str,
    steps: usize,
    start: Instant,
    last: std::cell::Cell<Instant>,
}

impl Progress {
    fn tick(&self, done: usize) {
        let now = Instant::now();
        if now - self.last.get() >= Duration::from_secs(1) {
            self.last.set(now);
            eprintln!(
                "  {}: step {done}/{} after {:.1} s",
                self.label,
                self.steps,
                (now - self.start).as_secs_f64()
            );
        }
    }
}

// ---- the runs ---------------------------------------------------------------

#[derive(Clone, Copy)]
enum Method {
    Std,
    Split,
    /// The split run through a `Team`'s seats.
    Team,
}

/// Runs `steps` steps on `threads` bands; returns the final grid and the time.
fn run(method: Method, n: usize, steps: usize, threads: usize) -> (Vec<f64>, Duration) {
    let grids = Grids::new(&initial_grid(n), n);
    let std_barrier = std::sync::Barrier::new(threads);
    let barrier = syncthreads::Barrier::new(threads);
    let team = syncthreads::Team::new(threads);
    let interior = n - 2;
    let label = match method {
        Method::Std => "std::sync::Barrier",
        Method::Split => "syncthreads",
        Method::Team => "syncthreads Team",
    };
    let start = Instant::now();
    std::thread::scope(|s| {
        for b in 0..threads {
            let band = Band {
                grids: &grids,
                first: 1 + b * interior / threads,
                end: 1 + (b + 1) * interior / threads,
            };
            let (std_barrier, barrier, team) = (&std_barrier, &barrier, &team);
            let seat = team.seat(b);
            s.spawn(move || {
                let progress = (b == 0).then(|| Progress {
                    label,
                    steps,
                    start,
                    last: std::cell::Cell::new(start),
                });
                match method {
                    Method::Std => band.run_std(steps, std_barrier, progress.as_ref()),
                    Method::Split => band.run_split(
                        steps,
                        &|| barrier.arrive(),
                        &|t| barrier.wait(t),
                        progress.as_ref(),
                    ),
                    Method::Team => band.run_split(
                        steps,
                        &|| seat.arrive(),
                        &|t| team.wait(t),
                        progress.as_ref(),
                    ),
                }
                // The seat stays (no leave phase after the last step).
                std::mem::forget(seat);
            });
        }
    });
    let elapsed = start.elapsed();
    (grids.into_grid(steps % 2), elapsed)
}

/// The first cell where two grids differ (bit for bit), if any.
fn first_difference(a: &[f64], b: &[f64], n: usize) -> Option<(usize, usize, f64, f64)> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x.to_bits() != y.to_bits())
        .map(|i| (i / n, i % n, a[i], b[i]))
}

fn check_same(what: &str, a: &[f64], b: &[f64], n: usize) {
    if let Some((r, c, x, y)) = first_difference(a, b, n) {
        let cells = a
            .iter()
            .zip(b)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .count();
        eprintln!(
            "MISMATCH {what}: {cells} cells differ, first at row {r}, column {c}: {x} vs {y}"
        );
        exit(1);
    }
}

// ---- arguments --------------------------------------------------------------

/// The largest grid side: two grids of `4096 x 4096` cells are 256 MiB.
const MAX_SIZE: usize = 4096;
/// The most steps, threads and repetitions a run takes.
const MAX_STEPS: usize = 10_000_000;
const MAX_THREADS: usize = 1024;
const MAX_REPS: usize = 100;
/// The longest the whole program may be expected to run (every case, every
/// kind, every repetition), by [`estimate`]: an example, not a batch job.
const MAX_TIME: Duration = Duration::from_secs(60);

/// The barrier-bound case: a step is a few microseconds of work per thread.
const SMALL: (usize, usize) = (64, 20_000);
/// The memory-bound case: a step streams 64 MiB through memory.
const LARGE: (usize, usize) = (2048, 30);

struct Args {
    /// The one case asked for (`--size`, `--steps`), else both defaults.
    case: Option<(usize, usize)>,
    threads: usize,
    reps: usize,
    reference: Option<bool>,
}

const USAGE: &str =
    "usage: heat [--size N] [--steps N] [--threads N] [--reps N] [--reference | --no-reference]
  without --size and --steps: a barrier-bound case (--size 64 --steps 20000) and a
  memory-bound one (--size 2048 --steps 30); with either, that one case
  (without --size: 2048; without --steps: the barrier-bound case's cell updates, at least 30 steps)
  --size N     the grid's side, 3..=4096 (two grids of N x N f64)
  --steps N    time steps, 1..=10000000
  --threads N  row bands, one thread each, 1..=min(1024, size - 2); default: the available cores
  --reps N     runs of each kind, the best counts, 1..=100; default 5
  --reference  check against the sequential reference (by default when size^2 * steps <= 2^27)
  a run that would take more than about a minute (all kinds, all repetitions) is refused";

/// A bad command line: what is wrong, then the usage, on stderr; status 2.
fn bad(why: String) -> ! {
    eprintln!("heat: {why}\n{USAGE}");
    exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        case: None,
        threads: 0,
        reps: 5,
        reference: None,
    };
    let (mut size, mut steps, mut threads) = (None, None, None);
    // `--steps 10` or `--steps=10`.
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next().unwrap_or_else(|e| bad(e.to_string())) {
        use lexopt::Arg::{Long, Short, Value};
        match arg {
            Long("size") => size = Some(args::number_in(&mut parser, "--size", 3..=MAX_SIZE, bad)),
            Long("steps") => {
                steps = Some(args::number_in(&mut parser, "--steps", 1..=MAX_STEPS, bad))
            }
            Long("threads") => {
                threads = Some(args::number_in(
                    &mut parser,
                    "--threads",
                    1..=MAX_THREADS,
                    bad,
                ))
            }
            Long("reps") => args.reps = args::number_in(&mut parser, "--reps", 1..=MAX_REPS, bad),
            Short('h') | Long("help") => {
                println!("{USAGE}");
                exit(0)
            }
            Long("reference") => args.reference = Some(true),
            Long("no-reference") => args.reference = Some(false),
            Value(value) => bad(format!(
                "unexpected argument {value:?}: every value follows its flag, as in --steps 100"
            )),
            flag => bad(format!("unknown flag {:?}", args::flag_text(&flag))),
        }
    }
    if size.is_some() || steps.is_some() {
        let n = size.unwrap_or(LARGE.0);
        // As many cell updates as the barrier-bound case, in at least as many
        // steps as the memory-bound case.
        let steps = steps
            .unwrap_or_else(|| (SMALL.0 * SMALL.0 * SMALL.1 / (n * n)).clamp(LARGE.1, SMALL.1));
        args.case = Some((n, steps));
    }
    let smallest = args.case.map_or(SMALL.0, |c| c.0);
    // By default one band per available core, as many as the grid has rows for.
    args.threads = threads.unwrap_or_else(|| cores().min(smallest - 2).min(MAX_THREADS));
    if args.threads > smallest - 2 {
        bad(format!(
            "--threads must be in 1..={} for a grid of side {smallest} (one band of rows each), not {}",
            smallest - 2,
            args.threads
        ));
    }
    let cases = args.case.map_or(vec![SMALL, LARGE], |c| vec![c]);
    let time: Duration = cases
        .iter()
        .map(|&(n, steps)| estimate(n, steps, args.threads, args.reps))
        .sum();
    if time > MAX_TIME {
        bad(format!(
            "this run would take about {} s here ({} runs of {}, {} on {}), \
             more than a minute: ask for fewer --steps, --reps or --threads",
            time.as_secs(),
            3 * args.reps,
            if cases.len() == 1 {
                "the case"
            } else {
                "each case"
            },
            args::counted(args.threads, "thread"),
            args::counted(cores(), "core")
        ));
    }
    args
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A generous guess of how long a case takes: `3 * reps` runs (one per
/// kind) of `steps` steps, each step a band's share of the grid (about
/// 1.5 ns a cell, the bands sharing the cores) and a barrier phase (about
/// 10 µs for `std`'s, or 20 µs per thread once there are more threads than
/// cores and every phase waits for the scheduler).
fn estimate(n: usize, steps: usize, threads: usize, reps: usize) -> Duration {
    let cores = cores();
    let barrier_ns = if threads <= cores {
        10_000.0
    } else {
        20_000.0 * threads as f64
    };
    let work_ns = 1.5 * (n * n) as f64 / threads.min(cores) as f64;
    Duration::from_secs_f64(3.0 * reps as f64 * steps as f64 * (barrier_ns + work_ns) * 1e-9)
}

/// Roughly how long one thread's share of a step takes, from a sequential
/// pass over the grid: what each phase has to hide the barrier behind.
fn work_per_band_step(n: usize, threads: usize) -> Duration {
    let steps = ((1 << 24) / (n * n)).clamp(2, 1000);
    let mut cur = initial_grid(n);
    let mut next = cur.clone();
    let start = Instant::now();
    for _ in 0..steps {
        for r in 1..n - 1 {
            let (above, rest) = cur.split_at(r * n);
            update_row(
                &above[(r - 1) * n..],
                &rest[..n],
                &rest[n..],
                &mut next[r * n..(r + 1) * n],
            );
        }
        std::mem::swap(&mut cur, &mut next);
    }
    std::hint::black_box(&cur);
    start.elapsed() / (steps * threads) as u32
}

/// One case: every method `reps` times, alternating, so that a burst of load
/// from elsewhere on the machine does not favour one; prints each best time
/// and its speed-up over `std::sync::Barrier`, and checks the grids.
fn case(
    label: &str,
    n: usize,
    steps: usize,
    threads: usize,
    reps: usize,
    reference_asked: Option<bool>,
) {
    let work = work_per_band_step(n, threads);
    println!(
        "\n{label}: {n} x {n} grid, {}, {}, best of {} each: \
         about {work:.1?} of work per thread per step",
        args::counted(steps, "step"),
        args::counted(threads, "thread"),
        args::counted(reps, "run")
    );
    const METHODS: [(Method, &str); 3] = [
        (Method::Std, "std::sync::Barrier   (update all rows, wait)"),
        (
            Method::Split,
            "syncthreads::Barrier (boundary rows, arrive, interior, wait)",
        ),
        (
            Method::Team,
            "syncthreads::Team    (the same on a Team's seats)",
        ),
    ];
    let mut best = [Duration::MAX; 3];
    // The first run's grid; every later run is checked against it at once,
    // so memory stays at a few grids however many runs there are.
    let mut first: Option<Vec<f64>> = None;
    for rep in 0..reps {
        for (i, (method, name)) in METHODS.iter().enumerate() {
            let (grid, time) = run(*method, n, steps, threads);
            best[i] = best[i].min(time);
            match &first {
                None => first = Some(grid),
                Some(first) => check_same(
                    &format!(
                        "between {} (run {}) and the first run of {}",
                        name.trim_end(),
                        rep + 1,
                        METHODS[0].1
                    ),
                    &grid,
                    first,
                    n,
                ),
            }
        }
    }
    for (i, (_, name)) in METHODS.iter().enumerate() {
        let time = best[i].as_secs_f64();
        if i == 0 {
            println!("  {name:<62}{time:8.3} s");
        } else {
            let speedup = best[0].as_secs_f64() / time;
            println!("  {name:<62}{time:8.3} s  {speedup:5.2}x");
        }
    }
    let last = first.expect("at least one run");
    let check_reference =
        reference_asked.unwrap_or(n.saturating_mul(n).saturating_mul(steps) <= REFERENCE_LIMIT);
    if check_reference {
        check_same(
            "between the runs and the sequential reference",
            &last,
            &reference(n, steps),
            n,
        );
        println!("  grids agree bit for bit, with each other and with the sequential reference");
    } else {
        println!("  grids agree bit for bit (sequential reference skipped at this size; --reference forces it)");
    }
    // The MPI package's stencil prints the same line for the same grid.
    let mean = last.iter().sum::<f64>() / (n * n) as f64;
    println!(
        "  mean temperature after {}: {mean:.6}",
        args::counted(steps, "step")
    );
}

fn main() {
    args::end_quietly_when_stdout_closes();
    let Args {
        case: asked,
        threads,
        reps,
        reference,
    } = parse_args();
    println!("heat: 2-D heat diffusion, one band of rows per thread, one barrier phase per step");
    match asked {
        Some((n, steps)) => case("asked", n, steps, threads, reps, reference),
        None => {
            case("barrier-bound", SMALL.0, SMALL.1, threads, reps, reference);
            case("memory-bound", LARGE.0, LARGE.1, threads, reps, reference);
            println!(
                "\nWhy they differ: a small grid's step is microseconds of work, so each phase's barrier\n\
                 cost decides the time (std's mutex, condvar and wake-up cost microseconds, syncthreads's\n\
                 arrive and spinning wait a fraction of one); a large grid's step streams the grid through\n\
                 memory for milliseconds and the barrier's own cost is a rounding error: what differences\n\
                 remain come from memory, scheduling and waiting for a late neighbour (which the split\n\
                 arrive shortens: a thread does its interior rows before it waits)."
            );
        }
    }
}
