//! The `__syncthreads` family and `__syncwarp(mask)` (CUDA C++ Programming
//! Guide, B.6 "Synchronization Functions" in its older numbering), on a
//! [`launch`]ed block of CPU threads.
//!
//! - `__syncthreads()`: a block-wide inclusive prefix sum in "shared memory"
//!   (Hillis-Steele: read, sync, write, sync), checked against a sequential scan;
//! - `__syncthreads_count/and/or(pred)`: every thread tests its own value
//!   against a few predicates; each thread must get the count / all / any of
//!   the whole block, the same in every thread;
//! - `__syncwarp(mask)`: a warp-level tree reduction through shared memory,
//!   once over the full warp and once as two half-warps that synchronize on
//!   disjoint masks at the same time.
//!
//! ```text
//! cargo run --release --example syncthreads -- [block_threads] [warp_lanes]
//! ```

mod args;

use std::sync::atomic::{AtomicU64, Ordering};
use syncthreads::{launch, WarpBarrier};

/// The value thread `rank` starts with.
fn value(rank: usize) -> u64 {
    (rank as u64 * 37 + 11) % 101
}

/// `__syncthreads()`: inclusive prefix sum of `value(rank)` over the block.
fn prefix_sum(threads: usize) -> Vec<u64> {
    // `__shared__ int s[blockDim.x];` (Relaxed: each `block.sync()` orders the
    // accesses of one step before those of the next.)
    let s: Vec<AtomicU64> = (0..threads).map(|r| AtomicU64::new(value(r))).collect();
    launch(threads, |block| {
        let rank = block.thread_rank();
        let mut offset = 1;
        while offset < block.size() {
            // `int v = tid >= offset ? s[tid - offset] : 0;`
            let v = if rank >= offset {
                s[rank - offset].load(Ordering::Relaxed)
            } else {
                0
            };
            // `__syncthreads();` — every read of this step before any write.
            block.sync();
            // `s[tid] += v;`
            s[rank].fetch_add(v, Ordering::Relaxed);
            // `__syncthreads();` — every write before the next step's reads.
            block.sync();
            offset *= 2;
        }
        s[rank].load(Ordering::Relaxed)
    })
}

/// `__syncthreads_count`, `__syncthreads_and`, `__syncthreads_or` for the
/// predicate "my value is a multiple of `k`", for each `k`. Returns, per
/// thread, the (count, and, or) answers it got, `k` by `k`.
fn reductions(threads: usize, ks: &[u64]) -> Vec<Vec<(usize, bool, bool)>> {
    launch(threads, |block| {
        let mine = value(block.thread_rank());
        ks.iter()
            .map(|&k| {
                let pred = mine % k == 0;
                // `int n = __syncthreads_count(pred);`
                let count = block.sync_count(pred);
                // `int all = __syncthreads_and(pred);`
                let all = block.sync_and(pred);
                // `int any = __syncthreads_or(pred);`
                let any = block.sync_or(pred);
                (count, all, any)
            })
            .collect()
    })
}

/// `__syncwarp(mask)`: lanes `base .. base + len` (all named in `mask`)
/// reduce their values by a tree through `s`, as in CUDA's warp-synchronous
/// reduction:
///
/// ```text
/// v = s[tid] + s[tid + 4]; __syncwarp(mask); s[tid] = v; __syncwarp(mask);
/// v = s[tid] + s[tid + 2]; __syncwarp(mask); ...
/// ```
///
/// Returns `s[base]` as this lane sees it at the end.
fn warp_reduce(
    warp: &WarpBarrier,
    s: &[AtomicU64],
    lane: usize,
    base: usize,
    len: usize,
    mask: u64,
) -> u64 {
    let local = lane - base;
    let mut stride = len / 2;
    while stride > 0 {
        // Relaxed: `sync` orders the mask's writes before its reads.
        let v = (local < stride)
            .then(|| s[lane].load(Ordering::Relaxed) + s[lane + stride].load(Ordering::Relaxed));
        // `__syncwarp(mask);` — every read of this step before any write.
        warp.sync(lane, mask);
        if let Some(v) = v {
            s[lane].store(v, Ordering::Relaxed);
        }
        // `__syncwarp(mask);` — the writes before the next step's reads.
        warp.sync(lane, mask);
        stride /= 2;
    }
    s[base].load(Ordering::Relaxed)
}

fn fail(what: String) -> ! {
    eprintln!("syncthreads: MISMATCH: {what}");
    std::process::exit(1)
}

const CLI: args::Cli<2> = args::Cli {
    program: "syncthreads",
    counts: [
        args::count("block_threads", 16, 1..=1024),
        args::count("warp_lanes", 8, 2..=64),
    ],
    note: "warp_lanes a power of two",
};

fn main() {
    let [threads, lanes] = CLI.parse();
    if !lanes.is_power_of_two() {
        CLI.bad(&format!(
            "warp_lanes must be a power of two in 2..=64, not {lanes}"
        ));
    }

    // __syncthreads()
    let scan = prefix_sum(threads);
    let want: Vec<u64> = (0..threads)
        .scan(0, |acc, r| {
            *acc += value(r);
            Some(*acc)
        })
        .collect();
    if scan != want {
        fail(format!("prefix sum {scan:?}, sequential {want:?}"));
    }
    println!(
        "__syncthreads(): {threads}-thread prefix sum in shared memory matches the sequential scan (total {})",
        want[threads - 1]
    );

    // __syncthreads_count / _and / _or
    let ks = [1, 2, 3, 5, 7, 1000];
    let answers = reductions(threads, &ks);
    for (i, &k) in ks.iter().enumerate() {
        let count = (0..threads).filter(|&r| value(r) % k == 0).count();
        let want = (count, count == threads, count > 0);
        for (rank, got) in answers.iter().enumerate() {
            if got[i] != want {
                fail(format!(
                    "thread {rank}, k = {k}: got (count, and, or) = {:?}, want {want:?}",
                    got[i]
                ));
            }
        }
        println!(
            "__syncthreads_count/and/or(value % {k} == 0): {count} of {threads}, and = {}, or = {}, in every thread",
            want.1, want.2
        );
    }

    // __syncwarp(mask)
    let warp = WarpBarrier::new(lanes);
    let half = lanes / 2;
    let half_mask = |h: usize| (u64::MAX >> (64 - half)) << (h * half);
    let s: Vec<AtomicU64> = (0..lanes).map(|l| AtomicU64::new(value(l))).collect();
    let full = launch(lanes, |block| {
        let lane = block.thread_rank();
        // `__syncwarp()` = `__syncwarp(0xffffffff)`: the full mask.
        warp_reduce(&warp, &s, lane, 0, lanes, warp.full_mask())
    });
    let want_full: u64 = (0..lanes).map(value).sum();
    if full.iter().any(|&x| x != want_full) {
        fail(format!("full-warp reduction {full:?}, want {want_full}"));
    }
    let s: Vec<AtomicU64> = (0..lanes).map(|l| AtomicU64::new(value(l))).collect();
    let halves = launch(lanes, |block| {
        let lane = block.thread_rank();
        let h = lane / half;
        // `__syncwarp(0x0f)` for lanes 0-3, `__syncwarp(0xf0)` for lanes 4-7
        // (with 8 lanes): two groups synchronizing independently.
        warp_reduce(&warp, &s, lane, h * half, half, half_mask(h))
    });
    let want_half = |h: usize| (h * half..(h + 1) * half).map(value).sum::<u64>();
    for (lane, &got) in halves.iter().enumerate() {
        if got != want_half(lane / half) {
            fail(format!(
                "half-warp reduction: lane {lane} got {got}, want {}",
                want_half(lane / half)
            ));
        }
    }
    println!(
        "__syncwarp(mask): {lanes}-lane tree reduction = {want_full} (mask {:#x}); two half-warps on masks {:#x} / {:#x} = {} / {}",
        warp.full_mask(),
        half_mask(0),
        half_mask(1),
        want_half(0),
        want_half(1)
    );
}
