//! Two classic warp-level CUDA kernels, ported line by line: a block sum
//! whose warps reduce with `__shfl_down_sync`, and a stream compaction whose
//! warps find their output places with `__ballot_sync` and `__popc`. Each
//! Rust line says the CUDA line it replaces; both results are checked
//! against a sequential computation.
//!
//! ```text
//! cargo run --release --example warp_reduce -- [threads] [elements]
//! ```

mod args;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use syncthreads::{launch, WarpBarrier};

/// `warpSize`.
const WARP_SIZE: usize = 32;
/// `0xffffffff`: every lane of a warp.
const FULL: u64 = 0xffff_ffff;

/// `__device__ unsigned long long warpReduceSum(unsigned long long val)`:
/// on return, lane 0 holds the sum of its warp's values.
fn warp_reduce_sum(warp: &WarpBarrier, lane: usize, mut val: u64) -> u64 {
    // `for (int offset = warpSize / 2; offset > 0; offset /= 2)`
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // `val += __shfl_down_sync(0xffffffff, val, offset);`
        val = val.wrapping_add(warp.shfl_down(lane, FULL, val, offset, WARP_SIZE));
        offset /= 2;
    }
    // `return val;`
    val
}

/// `__global__ void blockSum(const unsigned long long *in, unsigned long long *out, int n)`,
/// launched as `blockSum<<<1, threads>>>(in, out, n)`.
fn block_sum(threads: usize, input: &[u64], out: &AtomicU64) {
    // The warps of the block (implicit in CUDA: a warp is 32 threads in hardware).
    let warps: Vec<WarpBarrier> = (0..threads / WARP_SIZE)
        .map(|_| WarpBarrier::new(WARP_SIZE))
        .collect();
    launch(threads, |block| {
        let rank = block.thread_rank();
        // `int lane = threadIdx.x % warpSize;` (and the thread's warp)
        let (warp, lane) = (&warps[rank / WARP_SIZE], rank % WARP_SIZE);
        // `unsigned long long sum = 0;`
        let mut sum = 0u64;
        // `for (int i = threadIdx.x; i < n; i += blockDim.x) sum += in[i];`
        for i in (rank..input.len()).step_by(block.size()) {
            sum = sum.wrapping_add(input[i]);
        }
        // `sum = warpReduceSum(sum);`
        sum = warp_reduce_sum(warp, lane, sum);
        // `if (lane == 0) atomicAdd(out, sum);`
        if lane == 0 {
            out.fetch_add(sum, Ordering::Relaxed);
        }
    });
}

/// `__global__ void compact(const int *in, int *out, int *count, int n)`:
/// copies the positive elements of `in` to `out`, each warp's in order,
/// launched as `compact<<<1, threads>>>(in, out, count, n)`.
fn compact(threads: usize, input: &[i32], out: &[AtomicU64], count: &AtomicUsize) {
    launch(threads, |block| {
        // `auto warp = cg::tiled_partition<32>(cg::this_thread_block());`
        let warp = block.tiled_partition(WARP_SIZE);
        // `int lane = threadIdx.x % warpSize;`
        let lane = warp.thread_rank();
        // `for (int base = 0; base < n; base += blockDim.x) {`
        for base in (0..input.len()).step_by(block.size()) {
            // `int i = base + threadIdx.x;`
            let i = base + block.thread_rank();
            // `bool keep = i < n && in[i] > 0;`
            let keep = i < input.len() && input[i] > 0;
            // `unsigned ballot = __ballot_sync(0xffffffff, keep);`
            let ballot = warp.ballot(keep);
            // `int warp_count = __popc(ballot);`
            let warp_count = ballot.count_ones() as usize;
            // `int offset; if (lane == 0) offset = atomicAdd(count, warp_count);`
            let offset = if lane == 0 {
                count.fetch_add(warp_count, Ordering::Relaxed)
            } else {
                0
            };
            // `offset = __shfl_sync(0xffffffff, offset, 0);`
            let offset = warp.shfl(offset, 0);
            // `if (keep) out[offset + __popc(ballot & ((1u << lane) - 1))] = in[i];`
            if keep {
                let before = (ballot & ((1u64 << lane) - 1)).count_ones() as usize;
                out[offset + before].store(input[i] as u64, Ordering::Relaxed);
            }
        }
        // `}`
    });
}

const CLI: args::Cli<2> = args::Cli {
    program: "warp_reduce",
    counts: [
        // 1024: CUDA's largest block.
        args::count("threads", 256, WARP_SIZE..=1024),
        args::count("elements", 100_000, 1..=1_000_000),
    ],
    note: "threads must be a multiple of 32 (whole warps)",
};

fn main() {
    let [threads, elements] = CLI.parse();
    if threads % WARP_SIZE != 0 {
        CLI.bad(&format!(
            "threads must be a multiple of 32 (whole warps), not {threads}"
        ));
    }
    // Data with a pattern that a lost or doubled element would change.
    let input: Vec<i32> = (0..elements as i64)
        .map(|i| ((i * 7919) % 2001 - 1000) as i32)
        .collect();

    let start = std::time::Instant::now();
    let sum = AtomicU64::new(0);
    let as_u64: Vec<u64> = input.iter().map(|&x| x as i64 as u64).collect();
    block_sum(threads, &as_u64, &sum);
    let sum = sum.into_inner() as i64;
    let out: Vec<AtomicU64> = (0..elements).map(|_| AtomicU64::new(0)).collect();
    let count = AtomicUsize::new(0);
    compact(threads, &input, &out, &count);
    let elapsed = start.elapsed();

    let want_sum: i64 = input.iter().map(|&x| i64::from(x)).sum();
    let mut kept: Vec<i32> = out[..count.into_inner()]
        .iter()
        .map(|x| x.load(Ordering::Relaxed) as i32)
        .collect();
    let mut want_kept: Vec<i32> = input.iter().copied().filter(|&x| x > 0).collect();
    println!(
        "warp_reduce: {}, {}, {:.3} s: sum = {sum}, {} kept",
        args::counted(threads, "thread"),
        args::counted(elements, "element"),
        elapsed.as_secs_f64(),
        kept.len()
    );
    // Warps claim their output places in any order; within a chunk of a
    // warp the order is kept. Compare as multisets.
    kept.sort_unstable();
    want_kept.sort_unstable();
    if sum != want_sum || kept != want_kept {
        eprintln!(
            "warp_reduce: MISMATCH: sum {sum} (sequential {want_sum}), {} kept (sequential {})",
            kept.len(),
            want_kept.len()
        );
        std::process::exit(1);
    }
    println!("  the warp sum and the compaction match the sequential computation");
}
