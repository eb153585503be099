//! The 2-D heat stencil of `examples/heat.rs` across MPI ranks, with threads
//! inside each rank, and MPI as the copy engine of an `syncthreads::Barrier`.
//!
//! ```text
//! cd mpi && cargo build --release
//! mpirun -np 2 target/release/heat_mpi --rows 10 --cols 8192 --steps 3000 --threads 1
//! ```
//!
//! The grid's interior rows are split into one band per rank, and each rank's
//! band into one sub-band per worker thread (scoped threads). A rank keeps its
//! rows plus one halo row above and below, in two grids (step `t` reads grid
//! `t % 2` and writes grid `(t + 1) % 2`). The rank's main thread is its
//! communication thread: it alone calls MPI (`Threading::Funneled`), and it
//! computes nothing.
//!
//! Two ways to run a step, timed in the same run:
//!
//! * **overlapped** (the CUDA pattern): every worker computes its boundary
//!   rows first; the workers holding the rank's edge rows then `arrive` on a
//!   small `ready` barrier; every worker `arrive`s on the `step` barrier and
//!   computes its interior rows. The communication thread has posted the
//!   receives of the neighbours' edge rows into the halo rows of grid
//!   `(t + 1) % 2`; it waits for `ready`, sends the rank's edge rows,
//!   `arrive_tx`s on `step` with the bytes it expects, and reports each
//!   receive's bytes with `complete_tx` as MPI completes it. Step `t + 1`
//!   starts when every arrival and every byte of step `t` is in, so the
//!   exchange runs while the interior rows are computed.
//! * **exchange, then compute** (bulk-synchronous): the communication thread
//!   exchanges the edge rows of grid `t % 2` (the same MPI calls) while the
//!   workers wait, then the workers compute every row, then all wait.
//!
//! Rank 0 gathers the final grid of every run and compares it, bit for bit,
//! with a single-process sequential computation of the same steps (the
//! `reference` below, which is `examples/heat.rs --reference`'s kernel);
//! on a mismatch the program exits with status 1.

use std::cell::UnsafeCell;
use std::process::exit;
use std::time::{Duration, Instant};

use mpi::request::{scope, LocalScope, Request};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use syncthreads::Barrier;

// ---- the kernel of examples/heat.rs -----------------------------------------
//
// `examples/heat.rs` is an example, so its functions cannot be imported; the
// arithmetic below is copied from it faithfully (same constant, same
// expression in the same order, same initial condition), so that this
// program's grids equal, bit for bit, those of
// `cargo run --release --example heat -- --size N --steps S --reference`
// (`.ci/mpi` checks the mean temperature both print). Only `initial_grid`
// is generalized to `rows x cols`; for `rows == cols == n` it is heat.rs's.

/// Diffusion number `alpha = k * dt / dx^2` (as in heat.rs).
const ALPHA: f64 = 0.2;

/// One Jacobi update of a row (heat.rs's `update_row`).
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

/// The starting grid (heat.rs's `initial_grid` for a square grid): the top
/// edge at 100 degrees, the left edge at 50, a hot disc in the middle.
fn initial_grid(rows: usize, cols: usize) -> Vec<f64> {
    let mut g = vec![0.0; rows * cols];
    let (ci, cj) = (rows as f64 / 2.0, cols as f64 / 2.0);
    let r2 = (rows.min(cols) as f64 / 8.0).powi(2);
    for i in 0..rows {
        for j in 0..cols {
            let (di, dj) = (i as f64 - ci, j as f64 - cj);
            g[i * cols + j] = if i == 0 {
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

/// The single-process sequential computation (heat.rs's `reference`).
fn reference(rows: usize, cols: usize, steps: usize) -> Vec<f64> {
    let n = cols;
    let mut cur = initial_grid(rows, cols);
    let mut next = cur.clone();
    for _ in 0..steps {
        for r in 1..rows - 1 {
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

// ---- one rank's rows ----------------------------------------------------------

/// Part `i` of `parts` of `first..first + len`, as heat.rs splits its bands.
fn split(first: usize, len: usize, parts: usize, i: usize) -> (usize, usize) {
    (first + i * len / parts, first + (i + 1) * len / parts)
}

/// A rank's two grids: local row 0 is the halo above (or the fixed top row on
/// rank 0), rows `1..=band` are the rank's own, row `band + 1` is the halo
/// below (or the fixed bottom row on the last rank). Who may touch which row
/// when is decided by the barrier phases, which is why the accessors are
/// `unsafe`.
struct Slab {
    cols: usize,
    band: usize,
    cells: [Box<[UnsafeCell<f64>]>; 2],
}

// SAFETY: `Slab` only hands out row slices through the `unsafe` accessors,
// whose callers guarantee that no row is written while another thread (or
// MPI) reads or writes it.
unsafe impl Sync for Slab {}

impl Slab {
    /// Global rows `first - 1 ..= first + band` of the initial grid.
    fn new(initial: &[f64], cols: usize, first: usize, band: usize) -> Slab {
        let rows = &initial[(first - 1) * cols..(first + band + 1) * cols];
        let grid = || rows.iter().map(|&x| UnsafeCell::new(x)).collect();
        Slab {
            cols,
            band,
            cells: [grid(), grid()],
        }
    }

    /// Local rows `r..r + count` of grid `g`, to read.
    ///
    /// # Safety
    ///
    /// Nobody writes those rows while the returned slice is alive.
    unsafe fn rows(&self, g: usize, r: usize, count: usize) -> &[f64] {
        let cells = &self.cells[g][r * self.cols..(r + count) * self.cols];
        // SAFETY: `UnsafeCell<f64>` has the layout of `f64`; the caller
        // guarantees that nobody writes these cells meanwhile.
        unsafe { std::slice::from_raw_parts(UnsafeCell::raw_get(cells.as_ptr()), cells.len()) }
    }

    /// Local row `r` of grid `g`, to read.
    ///
    /// # Safety
    ///
    /// As [`Slab::rows`].
    unsafe fn row(&self, g: usize, r: usize) -> &[f64] {
        // SAFETY: the caller's guarantee.
        unsafe { self.rows(g, r, 1) }
    }

    /// Local row `r` of grid `g`, to write.
    ///
    /// # Safety
    ///
    /// Nobody else reads or writes that row while the returned slice is alive.
    #[allow(clippy::mut_from_ref)]
    unsafe fn row_mut(&self, g: usize, r: usize) -> &mut [f64] {
        let cells = &self.cells[g][r * self.cols..(r + 1) * self.cols];
        // SAFETY: as in `rows`, and the caller guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), self.cols) }
    }

    /// Updates local row `r` for step `t`: reads rows `r - 1 ..= r + 1` of
    /// grid `t % 2`, writes row `r` of grid `(t + 1) % 2`.
    ///
    /// # Safety
    ///
    /// During this call nobody writes rows `r - 1 ..= r + 1` of grid `t % 2`
    /// or touches row `r` of grid `(t + 1) % 2`.
    unsafe fn update(&self, t: usize, r: usize) {
        let (cur, next) = (t % 2, (t + 1) % 2);
        // SAFETY: the caller's guarantee, row by row.
        unsafe {
            update_row(
                self.row(cur, r - 1),
                self.row(cur, r),
                self.row(cur, r + 1),
                self.row_mut(next, r),
            )
        }
    }
}

/// Local rows `first..end` of a slab, owned by one worker thread.
struct Worker<'a> {
    slab: &'a Slab,
    first: usize,
    end: usize,
}

impl Worker<'_> {
    /// The sub-band's boundary rows: the only ones that read rows another
    /// thread writes (a neighbour worker's, or a halo row that MPI fills).
    fn boundary_rows(&self) -> impl Iterator<Item = usize> {
        let last = self.end - 1;
        std::iter::once(self.first).chain((last != self.first).then_some(last))
    }

    /// Rows that read only this worker's own rows.
    fn interior_rows(&self) -> std::ops::Range<usize> {
        self.first + 1..(self.end - 1).max(self.first + 1)
    }

    /// Whether this worker holds one of the rank's edge rows (local rows 1
    /// and `band`), which the communication thread sends to the neighbours.
    fn holds_edge(&self) -> bool {
        self.first == 1 || self.end == self.slab.band + 1
    }

    /// Overlapped steps: boundary rows, `arrive` (on `ready` too if we hold
    /// an edge row), interior rows, `wait`.
    fn run_overlapped(&self, steps: usize, ready: &Barrier, step: &Barrier) {
        for t in 0..steps {
            for r in self.boundary_rows() {
                // SAFETY: the rows of grid t%2 read here that others write are
                // a neighbour worker's boundary rows (written in step t-1
                // before its step-(t-1) arrive) and the halo rows (received
                // in step t-1 before the communication thread's complete_tx);
                // we start step t after our step-(t-1) wait, which needs both.
                // Their next writes (step t+1, and the receives of step t+1)
                // begin only after step t completes, which needs our step-t
                // arrive below, after this read. Row r of grid (t+1)%2 is
                // ours; the others read it in step t+1, or send it in step t
                // after `ready` completes, both after our arrivals below.
                unsafe { self.slab.update(t, r) };
            }
            if self.holds_edge() {
                // Our edge rows of grid (t+1)%2 may be sent now.
                let _ = ready.arrive();
            }
            let token = step.arrive();
            for r in self.interior_rows() {
                // SAFETY: interior rows read only our own rows of grid t%2
                // and write only our own row of grid (t+1)%2, which nobody
                // else touches in step t.
                unsafe { self.slab.update(t, r) };
            }
            // Step t+1 reads the neighbours' rows and the halo rows of grid
            // (t+1)%2: every worker must have arrived and every byte be in.
            step.wait(token);
        }
    }

    /// Exchange-then-compute steps: wait for the exchange, update every row,
    /// wait for every worker.
    fn run_bulk(&self, steps: usize, step: &Barrier) {
        for t in 0..steps {
            // Phase 2t: the communication thread has filled the halo rows of
            // grid t%2 and sent our edge rows of it.
            step.arrive_and_wait();
            for r in self.first..self.end {
                // SAFETY: during phase 2t+1 nobody writes grid t%2 (MPI is
                // idle: the exchange finished before phase 2t completed), and
                // row r of grid (t+1)%2 is ours alone.
                unsafe { self.slab.update(t, r) };
            }
            // Phase 2t+1: every row of step t is written.
            step.arrive_and_wait();
        }
    }
}

/// Poisons the barriers if a worker unwinds, so that nobody waits for it.
struct PoisonOnUnwind<'a>(&'a [&'a Barrier]);

impl Drop for PoisonOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.iter().for_each(|b| b.poison());
        }
    }
}

// ---- the communication thread ------------------------------------------------

/// How the communication thread waits for MPI between two `test`s.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Poll {
    /// Test again at once (as `MPI_Wait` does): best with a core to spare.
    Spin,
    /// `yield_now` between tests: gives the core back to the workers when
    /// there are more threads than cores.
    Yield,
}

/// A pending send or receive of one row.
type RowRequest<'a, 'b> = Request<'a, [f64], &'b LocalScope<'a>>;

/// This rank's place among the others.
struct Rank<'w> {
    world: &'w SimpleCommunicator,
    up: Option<i32>,
    down: Option<i32>,
    poll: Poll,
}

impl Rank<'_> {
    /// Bytes this rank receives per exchange (one halo row per neighbour).
    fn recv_bytes(&self, slab: &Slab) -> u32 {
        let rows = self.up.is_some() as usize + self.down.is_some() as usize;
        (rows * slab.cols * size_of::<f64>()) as u32
    }

    /// Posts the receives of the halo rows of grid `g` and the sends of the
    /// edge rows of grid `g`; the sends only once `before_send` has returned.
    /// Calls `on_received(bytes)` as each receive completes, and returns once
    /// every request has completed.
    ///
    /// # Safety
    ///
    /// Until this returns, nobody else touches the halo rows of grid `g`,
    /// and nobody writes its edge rows once `before_send` has returned.
    unsafe fn exchange(
        &self,
        slab: &Slab,
        g: usize,
        before_send: impl FnOnce(),
        mut on_received: impl FnMut(u32),
    ) {
        let bytes = (slab.cols * size_of::<f64>()) as u32;
        let (top, bottom) = (1, slab.band);
        scope(|sc| {
            // Each request with the bytes it brings in (0 for a send).
            let mut requests: Vec<Option<(RowRequest<'_, '_>, u32)>> = Vec::with_capacity(4);
            for (peer, halo) in [(self.up, 0), (self.down, bottom + 1)] {
                if let Some(peer) = peer {
                    // SAFETY: the caller's guarantee on the halo rows.
                    let buf = unsafe { slab.row_mut(g, halo) };
                    let request = self
                        .world
                        .process_at_rank(peer)
                        .immediate_receive_into(sc, buf);
                    requests.push(Some((request, bytes)));
                }
            }
            before_send();
            for (peer, edge) in [(self.up, top), (self.down, bottom)] {
                if let Some(peer) = peer {
                    // SAFETY: the caller's guarantee on the edge rows.
                    let buf = unsafe { slab.row(g, edge) };
                    let request = self.world.process_at_rank(peer).immediate_send(sc, buf);
                    requests.push(Some((request, 0)));
                }
            }
            // Report each receive as MPI completes it, the way a copy engine
            // reports bytes: poll them all rather than wait in order (and
            // without `MPI_Wait`, which spins on the core).
            while requests.iter().any(Option::is_some) {
                for slot in &mut requests {
                    if let Some((request, received)) = slot.take() {
                        match request.test() {
                            Ok(_) if received > 0 => on_received(received),
                            Ok(_) => {}
                            Err(pending) => *slot = Some((pending, received)),
                        }
                    }
                }
                if self.poll == Poll::Yield {
                    std::thread::yield_now();
                }
            }
        });
    }

    /// The communication thread's overlapped steps.
    fn run_overlapped(&self, slab: &Slab, steps: usize, ready: &Barrier, step: &Barrier) {
        let expected = self.recv_bytes(slab);
        let mut parity = false;
        for t in 0..steps {
            let next = (t + 1) % 2;
            let mut token = None;
            // SAFETY: the halo rows of grid (t+1)%2 were last read in step
            // t-1 (as grid (t-1)%2) by workers before their step-(t-1)
            // arrive, and we waited for step t-1 to complete; workers read
            // them again in step t+1, which needs our complete_tx of step t.
            // The edge rows of grid (t+1)%2 are written in step t before the
            // `ready` arrivals that `before_send` waits for, and next in step
            // t+2, which needs our step-(t+1) arrival, made after this call.
            unsafe {
                self.exchange(
                    slab,
                    next,
                    || {
                        ready.wait_parity(parity);
                        // Our arrival and the bytes we expect, in one atomic
                        // step: phase t cannot complete before this (we are a
                        // participant), nor before the bytes are in.
                        token = Some(step.arrive_tx(1, expected));
                    },
                    |bytes| step.complete_tx(bytes),
                )
            };
            parity = !parity;
            step.wait(token.expect("before_send ran"));
        }
    }

    /// The communication thread's exchange-then-compute steps; returns the
    /// time spent in the exchanges.
    fn run_bulk(&self, slab: &Slab, steps: usize, step: &Barrier) -> Duration {
        let mut exchanging = Duration::ZERO;
        for t in 0..steps {
            let start = Instant::now();
            // SAFETY: the workers are between phases 2t-1 and 2t: they wrote
            // grid t%2 in step t-1, before phase 2t-1 completed, and touch
            // nothing until phase 2t completes, after this call.
            unsafe { self.exchange(slab, t % 2, || {}, |_| {}) };
            exchanging += start.elapsed();
            step.arrive_and_wait(); // Phase 2t: halos in, compute.
            step.arrive_and_wait(); // Phase 2t+1: computed.
        }
        exchanging
    }
}

// ---- the runs -----------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Overlapped,
    Bulk,
}

/// The problem and this rank's share of it.
#[derive(Clone)]
struct Plan {
    rows: usize,
    cols: usize,
    steps: usize,
    threads: usize,
    /// Each rank's global rows `first..end`.
    bands: Vec<(usize, usize)>,
}

/// Runs `steps` steps on this rank; returns the rank's slab, the time from a
/// common start to the slowest rank's end, and (exchange-then-compute only)
/// the time this rank spent exchanging.
fn run(mode: Mode, plan: &Plan, me: &Rank<'_>, initial: &[f64]) -> (Slab, Duration, Duration) {
    let (first, end) = plan.bands[me.world.rank() as usize];
    let slab = Slab::new(initial, plan.cols, first, end - first);
    let workers = plan.threads;
    let edge_holders = if workers == 1 { 1 } else { 2 };
    let ready = Barrier::new(edge_holders);
    let step = Barrier::new(workers + 1);
    me.world.barrier();
    let start = Instant::now();
    let exchanging = std::thread::scope(|s| {
        for w in 0..workers {
            let (lo, hi) = split(1, slab.band, workers, w);
            let worker = Worker {
                slab: &slab,
                first: lo,
                end: hi,
            };
            let (ready, step) = (&ready, &step);
            s.spawn(move || {
                let _guard = PoisonOnUnwind(&[ready, step]);
                match mode {
                    Mode::Overlapped => worker.run_overlapped(plan.steps, ready, step),
                    Mode::Bulk => worker.run_bulk(plan.steps, step),
                }
            });
        }
        match mode {
            Mode::Overlapped => {
                me.run_overlapped(&slab, plan.steps, &ready, &step);
                Duration::ZERO
            }
            Mode::Bulk => me.run_bulk(&slab, plan.steps, &step),
        }
    });
    me.world.barrier();
    (slab, start.elapsed(), exchanging)
}

/// Gathers every rank's rows of the final grid on rank 0 (the fixed top and
/// bottom rows come from `initial`); `None` on the other ranks.
fn gather(plan: &Plan, me: &Rank<'_>, slab: &Slab, initial: &[f64]) -> Option<Vec<f64>> {
    let g = plan.steps % 2;
    // SAFETY: every thread of this rank has ended; MPI only reads the rows.
    let own = unsafe { slab.rows(g, 1, slab.band) };
    if me.world.rank() != 0 {
        me.world.process_at_rank(0).send(own);
        return None;
    }
    let cols = plan.cols;
    let mut grid = initial.to_vec();
    let (first, end) = plan.bands[0];
    grid[first * cols..end * cols].copy_from_slice(own);
    for (r, &(first, end)) in plan.bands.iter().enumerate().skip(1) {
        me.world
            .process_at_rank(r as i32)
            .receive_into(&mut grid[first * cols..end * cols]);
    }
    Some(grid)
}

/// The number of cells that differ bit for bit, and the first of them.
fn compare(a: &[f64], b: &[f64], cols: usize) -> Option<(usize, usize, usize, f64, f64)> {
    let diff = |(x, y): (&f64, &f64)| x.to_bits() != y.to_bits();
    let first = a.iter().zip(b).position(diff)?;
    let count = a.iter().zip(b).filter(|&p| diff(p)).count();
    Some((count, first / cols, first % cols, a[first], b[first]))
}

// ---- arguments ----------------------------------------------------------------

const USAGE: &str = "usage: heat_mpi [--size N | --rows R --cols C] [--steps S] [--threads T] [--reps K] [--poll spin|yield]\n\
    \x20 (run under mpirun: -np P ranks, T worker threads per rank plus its communication thread)\n\
    \x20 defaults: --rows 10 --cols 8192 --steps 3000 --threads 1 --reps 5 --poll yield;\n\
    \x20 needs rows - 2 >= P * T and 3 <= cols <= 65535 (2 halo rows of bytes fit the barrier's tx count)";

struct Args {
    rows: usize,
    cols: usize,
    steps: usize,
    threads: usize,
    reps: usize,
    poll: Poll,
}

/// Parses the arguments; `Err` carries what was wrong.
fn parse_args(ranks: usize) -> Result<Args, String> {
    let mut args = Args {
        rows: 10,
        cols: 8192,
        steps: 3000,
        threads: 1,
        reps: 5,
        poll: Poll::Yield,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || -> Result<usize, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{flag} needs a number"))
        };
        match flag.as_str() {
            "--size" => {
                args.rows = value()?;
                args.cols = args.rows;
            }
            "--rows" => args.rows = value()?,
            "--cols" => args.cols = value()?,
            "--steps" => args.steps = value()?,
            "--threads" => args.threads = value()?,
            "--reps" => args.reps = value()?,
            "--poll" => {
                args.poll = match it.next().as_deref() {
                    Some("spin") => Poll::Spin,
                    Some("yield") => Poll::Yield,
                    _ => return Err("--poll needs spin or yield".into()),
                }
            }
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    let max_cols = Barrier::MAX_TX as usize / (2 * size_of::<f64>());
    if args.threads == 0 || args.reps == 0 {
        return Err("need --threads >= 1 and --reps >= 1".into());
    }
    if args.rows < 3 || args.rows - 2 < ranks * args.threads {
        return Err(format!(
            "{} rows leave {} interior rows for {ranks} ranks x {} threads; need at least one each",
            args.rows,
            args.rows.saturating_sub(2),
            args.threads
        ));
    }
    if args.cols < 3 || args.cols > max_cols {
        return Err(format!(
            "--cols {} is outside 3..={max_cols} (two halo rows of bytes must fit Barrier::MAX_TX = {})",
            args.cols,
            Barrier::MAX_TX
        ));
    }
    Ok(args)
}

// ---- main ---------------------------------------------------------------------

fn main() {
    let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Funneled) else {
        eprintln!("heat_mpi: MPI is already initialized");
        exit(1);
    };
    let world = universe.world();
    let (rank, ranks) = (world.rank(), world.size());
    if threading < Threading::Funneled {
        if rank == 0 {
            eprintln!("heat_mpi: MPI provides {threading:?}, need Funneled");
        }
        drop(universe);
        exit(1);
    }
    let args = match parse_args(ranks as usize) {
        Ok(args) => args,
        Err(why) => {
            if rank == 0 {
                eprintln!("heat_mpi: {why}\n{USAGE}");
            }
            drop(universe);
            exit(2);
        }
    };
    let plan = Plan {
        rows: args.rows,
        cols: args.cols,
        steps: args.steps,
        threads: args.threads,
        bands: (0..ranks as usize)
            .map(|r| split(1, args.rows - 2, ranks as usize, r))
            .collect(),
    };
    let me = Rank {
        world: &world,
        up: (rank > 0).then(|| rank - 1),
        down: (rank < ranks - 1).then(|| rank + 1),
        poll: args.poll,
    };
    let (rows, cols, steps) = (plan.rows, plan.cols, plan.steps);
    let initial = initial_grid(rows, cols);
    let expected = (rank == 0).then(|| reference(rows, cols, steps));
    if rank == 0 {
        let band = plan.bands[0].1 - plan.bands[0].0;
        println!(
            "heat_mpi: {rows} x {cols} grid, {steps} steps, {ranks} ranks x {} worker threads \
             (+ 1 communication thread each), ~{band} rows per rank, halo row {} KiB, best of {}",
            plan.threads,
            cols * size_of::<f64>() / 1024,
            args.reps
        );
    }

    // The two modes alternate, so that a burst of load from elsewhere does
    // not favour one; each keeps its best time. Every run is checked.
    let modes = [Mode::Overlapped, Mode::Bulk];
    // An untimed warm-up of both: MPI sets up its shared-memory channels on
    // the first messages, which would otherwise slow whichever mode ran first.
    let warm_up = Plan {
        steps: plan.steps.min(50),
        ..plan.clone()
    };
    for mode in modes {
        drop(run(mode, &warm_up, &me, &initial));
    }
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut exchange = Duration::MAX;
    let mut failed = false;
    let mut mean = 0.0;
    for _ in 0..args.reps {
        for (i, &mode) in modes.iter().enumerate() {
            let (slab, time, exchanging) = run(mode, &plan, &me, &initial);
            times[i].push(time);
            if mode == Mode::Bulk {
                exchange = exchange.min(exchanging);
            }
            if let (Some(grid), Some(expected)) = (gather(&plan, &me, &slab, &initial), &expected) {
                if let Some((count, r, c, x, y)) = compare(&grid, expected, cols) {
                    let what = if mode == Mode::Overlapped {
                        "overlapped"
                    } else {
                        "exchange-then-compute"
                    };
                    eprintln!(
                        "MISMATCH ({what}): {count} cells differ from the sequential reference, \
                         first at row {r}, column {c}: {x} vs {y}"
                    );
                    failed = true;
                }
                mean = grid.iter().sum::<f64>() / (rows * cols) as f64;
            }
        }
    }
    if rank == 0 {
        let per_step = |d: Duration| d.as_secs_f64() * 1e6 / steps.max(1) as f64;
        let best = |v: &[Duration]| per_step(*v.iter().min().expect("reps >= 1"));
        let all = |v: &[Duration]| {
            v.iter()
                .map(|&d| format!("{:.1}", per_step(d)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (over, bulk) = (best(&times[0]), best(&times[1]));
        println!("  overlapped (edge rows, arrive; MPI + complete_tx || interior)  {over:9.1} us/step  (runs: {})", all(&times[0]));
        println!("  exchange, then compute                                     {bulk:9.1} us/step  (runs: {})", all(&times[1]));
        println!(
            "    of which rank 0 exchanging (best run)                    {:9.1} us/step  ({:.0}% of a step)",
            per_step(exchange),
            100.0 * per_step(exchange) / bulk
        );
        println!("  exchange-then-compute / overlapped: {:.3}x", bulk / over);
        if failed {
            eprintln!("heat_mpi: results differ from the sequential reference");
        } else {
            println!("  every run agrees bit for bit with the single-process sequential reference");
        }
        println!("  mean temperature after {steps} steps: {mean:.6}");
    }
    drop(universe);
    if failed {
        exit(1);
    }
}
