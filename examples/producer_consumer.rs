//! CUDA C++ Programming Guide, 4.9.7 "Producer-Consumer Pattern Using
//! Barriers". One group of threads (the guide's first warp) fills a double
//! buffer; the other threads
//! consume it. `ready[b]` says buffer `b` may be filled, `filled[b]` that it
//! has been; every thread of the block takes part in all four barriers, so
//! each is initialized with `block.size()`.
//!
//! The producers copy `in` into the buffers, the consumers transform each
//! element into `out`; at the end `out` must equal the transform of `in`, and
//! the checksums must agree.
//!
//! ```text
//! cargo run --release --example producer_consumer -- [producers] [consumers] [buffer_len] [rounds]
//! ```

mod args;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use syncthreads::{launch, Barrier};

/// What a consumer does to an element.
fn transform(x: u64) -> u64 {
    x.wrapping_mul(0x2545_f491_4f6c_dd1d).rotate_left(17) ^ 0xa5a5
}

/// The buffers and the data, shared by the block.
struct Shared<'a> {
    /// `__shared__ extern float buffer[];` of size `2 * buffer_len`.
    buffer: &'a [AtomicU64],
    buffer_len: usize,
    input: &'a [u64],
    output: &'a [AtomicU64],
}

/// `__device__ void produce(barrier_t ready[], barrier_t filled[], float *buffer, int buffer_len, float *in, int N)`.
/// Producer `p` of `producers` fills the elements `j` with `j % producers == p`.
fn produce(
    ready: [&Barrier; 2],
    filled: [&Barrier; 2],
    sh: &Shared<'_>,
    p: usize,
    producers: usize,
) {
    let n = sh.input.len();
    // `for (int i = 0; i < N / buffer_len; ++i)`
    for i in 0..n / sh.buffer_len {
        // `ready[i % 2].arrive_and_wait(); /* wait for buffer_(i%2) to be ready to be filled */`
        ready[i % 2].arrive_and_wait();
        // `/* produce, i.e., fill in, buffer_(i%2) */`
        let buf = &sh.buffer[(i % 2) * sh.buffer_len..][..sh.buffer_len];
        for j in (p..sh.buffer_len).step_by(producers) {
            // Relaxed: `filled[i % 2].arrive()` below releases it to the consumers.
            buf[j].store(sh.input[i * sh.buffer_len + j], Ordering::Relaxed);
        }
        // `barrier_t::arrival_token token = filled[i % 2].arrive(); /* buffer_(i%2) is filled */`
        let _token = filled[i % 2].arrive();
    }
}

/// `__device__ void consume(barrier_t ready[], barrier_t filled[], float *buffer, int buffer_len, float *out, int N)`.
/// Consumer `c` of `consumers` handles the elements `j` with `j % consumers == c`.
fn consume(
    ready: [&Barrier; 2],
    filled: [&Barrier; 2],
    sh: &Shared<'_>,
    c: usize,
    consumers: usize,
) {
    let n = sh.input.len();
    // `barrier_t::arrival_token token1 = ready[0].arrive(); /* buffer_0 is ready for initial fill */`
    let _token1 = ready[0].arrive();
    // `barrier_t::arrival_token token2 = ready[1].arrive(); /* buffer_1 is ready for initial fill */`
    let _token2 = ready[1].arrive();
    for i in 0..n / sh.buffer_len {
        // `filled[i % 2].arrive_and_wait(); /* wait for buffer_(i%2) to be filled */`
        filled[i % 2].arrive_and_wait();
        // `/* consume buffer_(i%2) */`
        let buf = &sh.buffer[(i % 2) * sh.buffer_len..][..sh.buffer_len];
        for j in (c..sh.buffer_len).step_by(consumers) {
            // Relaxed: the wait above acquired the producers' stores; our
            // reads come before `ready[i % 2].arrive()` below, which the
            // producers' next fill of this buffer waits for.
            let x = buf[j].load(Ordering::Relaxed);
            sh.output[i * sh.buffer_len + j].store(transform(x), Ordering::Relaxed);
        }
        // `barrier_t::arrival_token token3 = ready[i % 2].arrive(); /* buffer_(i%2) is ready to be re-filled */`
        let _token3 = ready[i % 2].arrive();
    }
}

const CLI: args::Cli<4> = args::Cli {
    program: "producer_consumer",
    counts: [
        args::count("producers", 2, 1..=64),
        args::count("consumers", 4, 1..=64),
        args::count("buffer_len", 4096, 1..=65_536),
        args::count("rounds", 500, 1..=100_000),
    ],
    note: "and producers + consumers >= 4 (one thread initializes each of the 4 barriers), \
           buffer_len * rounds <= 4194304 (the input and output are that many words), \
           (producers + consumers) * rounds <= 1000000 (a short run)",
};

fn main() {
    let [producers, consumers, buffer_len, rounds] = CLI.parse();
    let threads = producers + consumers;
    if threads < 4 {
        CLI.bad(&format!(
            "producers + consumers must be at least 4 (one thread initializes each of the 4 barriers), not {threads}"
        ));
    }
    CLI.at_most(
        "buffer_len * rounds",
        buffer_len * rounds,
        1 << 22,
        "the input and output are that many words",
    );
    CLI.at_most(
        "(producers + consumers) * rounds",
        threads * rounds,
        1_000_000,
        "the run short: a minute at most on two cores",
    );

    // `float *in` of N elements, N a multiple of buffer_len.
    let n = buffer_len * rounds;
    let input: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3)
        .collect();
    let output: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let buffer: Vec<AtomicU64> = (0..2 * buffer_len).map(|_| AtomicU64::new(0)).collect();
    let sh = Shared {
        buffer: &buffer,
        buffer_len,
        input: &input,
        output: &output,
    };
    // `__shared__ barrier_t bar[4];` — bar[0], bar[1]: buffer_0/1 ready to be
    // filled; bar[2], bar[3]: buffer_0/1 filled.
    let bar: [OnceLock<Barrier>; 4] = Default::default();

    let start = std::time::Instant::now();
    // `producer_consumer_pattern<<<1, threads>>>(N, in, out, buffer_len)`
    launch(threads, |block| {
        let rank = block.thread_rank();
        // `if (threadIdx.x < 4) init(bar + threadIdx.x, blockDim.x);`
        if rank < 4 {
            assert!(bar[rank].set(Barrier::new(block.size())).is_ok());
        }
        // `__syncthreads();`
        block.sync();
        let bar: [&Barrier; 4] =
            std::array::from_fn(|k| bar[k].get().expect("initialized before the sync"));
        let (ready, filled) = ([bar[0], bar[1]], [bar[2], bar[3]]);
        // `if (threadIdx.x < warpSize) { produce(bar, bar + 2, ...); } else { consume(bar, bar + 2, ...); }`
        if rank < producers {
            produce(ready, filled, &sh, rank, producers);
        } else {
            consume(ready, filled, &sh, rank - producers, consumers);
        }
    });
    let elapsed = start.elapsed();

    let mismatches = input
        .iter()
        .zip(&output)
        .filter(|(&x, y)| transform(x) != y.load(Ordering::Relaxed))
        .count();
    let checksum = |xs: &mut dyn Iterator<Item = u64>| xs.fold(0u64, |a, x| a.rotate_left(5) ^ x);
    let got = checksum(&mut output.iter().map(|y| y.load(Ordering::Relaxed)));
    let want = checksum(&mut input.iter().map(|&x| transform(x)));
    println!(
        "producer_consumer: {}, {}, double buffer of 2 x {}, \
         {}, {} moved in {:.3} s",
        args::counted(producers, "producer"),
        args::counted(consumers, "consumer"),
        args::counted(buffer_len, "word"),
        args::counted(rounds, "fill"),
        args::counted(n, "word"),
        elapsed.as_secs_f64()
    );
    println!("  checksum {got:#018x} (sequential {want:#018x}), {mismatches} wrong elements");
    if mismatches != 0 || got != want {
        eprintln!("producer_consumer: MISMATCH");
        std::process::exit(1);
    }
    println!("  every element of in[] reached out[] through the double buffer, transformed");
}
