//! The warp collectives against `WarpBarrier::sync` of the same lanes: each
//! collective on 32, 8 and 4 lanes (or those of `--lanes`), a 32-lane sum
//! by five `shfl_down` steps against one `reduce_add`, and `tile.sync()` of
//! 32 against `WarpBarrier::sync` of 32. One thread per lane, on `launch`'s
//! threads; the kinds alternate within each pass, each pass starting one
//! kind later than the last (so that no kind always follows the same one),
//! and each row gives the median ns per call over the passes and the
//! per-pass ratio to its baseline (median, least, greatest). A call's time
//! is the slowest lane's: every lane's calls, from a common start.
//!
//! `sync + claim` is a sync with what a collective does around it on the
//! lane's own lines (an RMW that claims a flag before, stores that release
//! it after), without the values: it tells the cost of a collective's
//! reads of other lanes from the effect of that private work on how the
//! lanes' arrivals meet on each other's lines.
//!
//! ```text
//! cargo bench --bench warp -- [--passes N] [--scale F] [--lanes L1,L2,...]
//! ```
//! `--passes` (default 7) passes over every kind; `--scale` (default 1)
//! multiplies the calls per measurement (each about 10 ms on idle cores);
//! `--lanes` (default 32,8,4) the group sizes, each in 1 ..= 64 (the rows of
//! 32 only with 32).

#[path = "common/cli.rs"]
mod cli;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use syncthreads::{launch, WarpBarrier};

/// One measured kind: its name, its baseline's name, and how it runs
/// `iters` calls on lane `lane` of `warp` (or of the tile of 32).
struct Kind {
    name: &'static str,
    baseline: &'static str,
    run: fn(&Ctx<'_>, usize),
}

/// What a kind runs on: the warp, the thread's lane, the block (for tiles).
struct Ctx<'a> {
    warp: &'a WarpBarrier,
    lane: usize,
    block: &'a syncthreads::Block<'a>,
    /// A flag on a line of the lane's own (`sync + claim`).
    own: &'a Own,
}

/// A lane's own line.
#[repr(align(128))]
#[derive(Default)]
struct Own(AtomicBool, AtomicU64);

macro_rules! kind {
    ($name:literal, $baseline:literal, |$c:ident, $i:ident| $body:expr) => {
        Kind {
            name: $name,
            baseline: $baseline,
            run: |$c, iters| {
                for $i in 0..iters {
                    black_box($body);
                }
            },
        }
    };
}

/// Five `shfl_down` steps: the classic warp sum.
fn shfl_sum(c: &Ctx<'_>, mut v: u32) -> u32 {
    let full = c.warp.full_mask();
    for delta in [16, 8, 4, 2, 1] {
        v = v.wrapping_add(c.warp.shfl_down(c.lane, full, v, delta, 32));
    }
    v
}

fn kinds() -> Vec<Kind> {
    vec![
        kind!("sync", "sync", |c, _i| c
            .warp
            .sync(c.lane, c.warp.full_mask())),
        kind!("sync + claim", "sync", |c, i| {
            // As a collective's claim, record and done (episode.rs).
            let claimed = c.own.0.swap(true, Ordering::Acquire);
            c.warp.sync(c.lane, c.warp.full_mask());
            c.own.1.store(i as u64, Ordering::Relaxed);
            c.own.1.store(i as u64, Ordering::Release);
            c.own.0.store(false, Ordering::Release);
            claimed
        }),
        kind!("ballot", "sync", |c, i| c.warp.ballot(
            c.lane,
            c.warp.full_mask(),
            (i + c.lane) % 3 == 0
        )),
        kind!("any", "sync", |c, i| c.warp.any(
            c.lane,
            c.warp.full_mask(),
            (i + c.lane) % 3 == 0
        )),
        kind!("all", "sync", |c, i| c.warp.all(
            c.lane,
            c.warp.full_mask(),
            (i + c.lane) % 3 == 0
        )),
        kind!("shfl u32", "sync", |c, i| c.warp.shfl(
            c.lane,
            c.warp.full_mask(),
            i as u32,
            0,
            c.warp.lanes()
        )),
        kind!("shfl_up u32", "sync", |c, i| c.warp.shfl_up(
            c.lane,
            c.warp.full_mask(),
            i as u32,
            1,
            c.warp.lanes()
        )),
        kind!("shfl_down f32", "sync", |c, i| c.warp.shfl_down(
            c.lane,
            c.warp.full_mask(),
            i as f32,
            1,
            c.warp.lanes()
        )),
        kind!("shfl_xor u64", "sync", |c, i| c.warp.shfl_xor(
            c.lane,
            c.warp.full_mask(),
            i as u64,
            1,
            c.warp.lanes()
        )),
        kind!("shfl (u8, u32)", "sync", |c, i| c.warp.shfl_xor(
            c.lane,
            c.warp.full_mask(),
            (i as u8, i as u32),
            1,
            c.warp.lanes()
        )),
        kind!("match_any u32", "sync", |c, i| c.warp.match_any(
            c.lane,
            c.warp.full_mask(),
            ((i + c.lane) % 4) as u32
        )),
        kind!("match_all u32", "sync", |c, i| c.warp.match_all(
            c.lane,
            c.warp.full_mask(),
            i as u32
        )),
        kind!("reduce_add u32", "sync", |c, i| c.warp.reduce_add(
            c.lane,
            c.warp.full_mask(),
            i as u32
        )),
        kind!("reduce_max i64", "sync", |c, i| c.warp.reduce_max(
            c.lane,
            c.warp.full_mask(),
            i as i64
        )),
        kind!("reduce f64 +", "sync", |c, i| c.warp.reduce(
            c.lane,
            c.warp.full_mask(),
            i as f64,
            |a, b| a + b
        )),
    ]
}

/// The 32-lane rows beside the per-collective ones.
fn kinds_of_32() -> Vec<Kind> {
    vec![
        kind!("sum: 5 shfl_down", "sum: 5 shfl_down", |c, i| shfl_sum(
            c, i as u32
        )),
        kind!("sum: reduce_add", "sum: 5 shfl_down", |c, i| c
            .warp
            .reduce_add(c.lane, c.warp.full_mask(), i as u32)),
        Kind {
            name: "tile.sync",
            baseline: "sync",
            run: |c, iters| {
                let tile = c.block.tiled_partition(32);
                for _ in 0..iters {
                    tile.sync();
                }
            },
        },
    ]
}

/// ns per call of `kind` on `lanes` lanes: the slowest lane's time for
/// `iters` calls after the lanes started together.
fn measure(lanes: usize, kind: &Kind, iters: usize) -> f64 {
    let warp = WarpBarrier::new(lanes);
    let own: Vec<Own> = (0..lanes).map(|_| Own::default()).collect();
    let times = launch(lanes, |block| {
        let ctx = Ctx {
            warp: &warp,
            lane: block.thread_rank(),
            block,
            own: &own[block.thread_rank()],
        };
        // Warm up (and the tile's warps made), then start together.
        (kind.run)(&ctx, 8);
        block.sync();
        let start = Instant::now();
        (kind.run)(&ctx, iters);
        start.elapsed()
    });
    let slowest = times.iter().max().expect("at least one lane");
    slowest.as_nanos() as f64 / iters as f64
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

const CLI: cli::Cli = cli::Cli {
    program: "warp",
    usage: || {
        "usage: cargo bench --bench warp -- [--passes N] [--scale F] [--lanes L1,L2,...]\n\
         --passes: passes over every kind (default 7)\n\
         --scale: multiplies the calls per measurement (default 1; each about 10 ms on idle cores)\n\
         --lanes: the group sizes, each in 1 ..= 64 (default 32,8,4)"
            .to_owned()
    },
};

fn main() {
    let mut passes = 7usize;
    let mut scale = 1.0f64;
    let mut sizes = vec![32usize, 8, 4];
    let mut parser = cli::parser();
    while let Some(arg) = CLI.next(&mut parser) {
        use lexopt::Arg::{Long, Short};
        match arg {
            Long("passes") => {
                passes = match CLI.number(&mut parser, "--passes") {
                    0 => CLI.bad("--passes: at least 1"),
                    n => n,
                }
            }
            Long("scale") => {
                scale = CLI.number(&mut parser, "--scale");
                if !(scale > 0.0 && scale.is_finite()) {
                    CLI.bad(format!("--scale: {scale} is not a positive number"));
                }
            }
            Long("lanes") => {
                let text = CLI.text(&mut parser, "--lanes");
                sizes = text
                    .split(',')
                    .map(|n| match CLI.parse::<usize>("--lanes", n.trim()) {
                        n @ 1..=64 => n,
                        n => CLI.bad(format!("--lanes: {n} is not in 1 ..= 64")),
                    })
                    .collect();
            }
            Short('h') | Long("help") => CLI.help(),
            other => CLI.unexpected(other),
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("warp collectives: {passes} passes, {cores} cores; ns per call (median over passes), ratio to the baseline in the same pass");
    println!(
        "{:>5}  {:<18} {:>10}  {:<18} {:>7} {:>15}",
        "lanes", "call", "ns", "baseline", "ratio", "ratio min..max"
    );
    for lanes in sizes {
        let mut rows = kinds();
        if lanes == 32 {
            rows.extend(kinds_of_32());
        }
        // Calls per measurement: about 10 ms of syncs on idle cores.
        let iters = ((if lanes > cores { 2_000.0 } else { 20_000.0 }) * scale).max(1.0) as usize;
        let mut ns: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
        for pass in 0..passes {
            for j in 0..rows.len() {
                let k = (pass + j) % rows.len();
                ns[k].push(measure(lanes, &rows[k], iters));
            }
        }
        for (k, kind) in rows.iter().enumerate() {
            let b = rows
                .iter()
                .position(|r| r.name == kind.baseline)
                .expect("a baseline row");
            let mut ratios: Vec<f64> = ns[k].iter().zip(&ns[b]).map(|(x, y)| x / y).collect();
            let (lo, hi) = ratios
                .iter()
                .fold((f64::MAX, 0.0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
            let ratio = median(&mut ratios);
            let mut mine = ns[k].clone();
            println!(
                "{lanes:>5}  {:<18} {:>10.0}  {:<18} {ratio:>7.2} {:>15}",
                kind.name,
                median(&mut mine),
                kind.baseline,
                format!("{lo:.2}..{hi:.2}")
            );
        }
    }
}
