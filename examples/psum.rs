//! CUDA C++ Programming Guide, 4.9.5 "Completion Function". Every phase, after the last
//! thread has arrived and before any thread leaves its wait, the completion
//! function sums the block's shared array into an accumulator that all
//! threads read in the next iteration. The result is checked against the same
//! computation done sequentially.
//!
//! The kernel is the guide's `psum(int *data, int n, int *acc)`, with 64-bit
//! wrapping integers instead of C's `int` (the accumulator grows by a factor
//! of `BlockSize + 1` per phase, so it overflows quickly; wrapping keeps the
//! result defined and every term still counts).
//!
//! ```text
//! cargo run --release --example psum -- [block_size] [phases]
//! ```

mod args;

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use syncthreads::{launch, Barrier};

/// `__global__ void psum(int *data, int n, int *acc)`. Returns how many times
/// the completion function ran.
fn psum(block_size: usize, data: &[i64], n: usize, acc: &AtomicI64) -> usize {
    // `constexpr int BlockSize = 128; __shared__ int smem[BlockSize];`
    let smem: Vec<AtomicI64> = (0..block_size).map(|_| AtomicI64::new(0)).collect();
    // `assert(n % BlockSize == 0);`
    assert_eq!(n % block_size, 0);
    let completions = AtomicUsize::new(0);

    // `auto completion_fn = [&] { int sum = 0; for (...) sum += smem[i]; *acc += sum; };`
    // Relaxed throughout: the barrier orders every arrival's `smem` store
    // before this function, and this function before every wait returning.
    let completion_fn = || {
        let sum = smem
            .iter()
            .fold(0i64, |sum, x| sum.wrapping_add(x.load(Ordering::Relaxed)));
        acc.store(
            acc.load(Ordering::Relaxed).wrapping_add(sum),
            Ordering::Relaxed,
        );
        completions.fetch_add(1, Ordering::Relaxed);
    };

    // `__shared__ std::aligned_storage<sizeof(barrier_t), alignof(barrier_t)> bar_storage;`
    let bar_storage = OnceLock::new();

    launch(block_size, |block| {
        // `auto block = cg::this_thread_block();` is `block`.
        // `assert(BlockSize == block.size());`
        assert_eq!(block.size(), block_size);
        if block.thread_rank() == 0 {
            // `assert(*acc == 0);`
            assert_eq!(acc.load(Ordering::Relaxed), 0);
            // `new (bar) barrier_t{block.size(), completion_fn};`
            // (`completion_fn` only borrows, so it is `Copy`, like the C++ lambda.)
            let fresh = Barrier::with_completion(block.size(), completion_fn);
            assert!(bar_storage.set(fresh).is_ok(), "initialized once");
        }
        // `block.sync();` — nobody touches the barrier before it exists.
        block.sync();
        let bar = bar_storage.get().expect("thread 0 initialized the barrier");

        // `for (int i = 0; i < n; i += block.size())`
        for i in (0..n).step_by(block.size()) {
            // `smem[block.thread_rank()] = data[i] + *acc;` (our data element
            // of this chunk: `data[i + rank]`, as the guide's indexing intends)
            let rank = block.thread_rank();
            let value = data[i + rank].wrapping_add(acc.load(Ordering::Relaxed));
            smem[rank].store(value, Ordering::Relaxed);
            // `auto token = bar->arrive();`
            let token = bar.arrive();
            // `// We can do independent computation here.`
            // `bar->wait(std::move(token));`
            bar.wait(token);
            // `// Shared-memory is safe to re-use in the next iteration since
            //  all threads are done with it, including the one that did the
            //  reduction.` (the completion ran before any wait returned)
        }
    });
    completions.into_inner()
}

/// The same, one element at a time: each chunk adds its elements, each plus
/// the accumulator as it was before the chunk.
fn sequential(block_size: usize, data: &[i64]) -> i64 {
    data.chunks(block_size).fold(0i64, |acc, chunk| {
        let sum = chunk
            .iter()
            .fold(0i64, |sum, &x| sum.wrapping_add(x.wrapping_add(acc)));
        acc.wrapping_add(sum)
    })
}

const CLI: args::Cli<2> = args::Cli {
    program: "psum",
    counts: [
        // 128: the guide's `BlockSize`; 1024: CUDA's largest block.
        args::count("block_size", 128, 1..=1024),
        args::count("phases", 200, 1..=10_000),
    ],
    note: "block_size * phases <= 1000000 (the run short: a minute at most on two cores)",
};
/// What the bound on the run's work keeps in check.
const WHY: &str = "the run short: a minute at most on two cores";

fn main() {
    let [block_size, phases] = CLI.parse();
    CLI.at_most("block_size * phases", block_size * phases, 1_000_000, WHY);

    let n = block_size * phases;
    // Some data with a pattern that a lost or doubled term would change.
    let data: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000 - 500).collect();
    let acc = AtomicI64::new(0);

    let start = std::time::Instant::now();
    let completions = psum(block_size, &data, n, &acc);
    let elapsed = start.elapsed();
    let got = acc.into_inner();
    let want = sequential(block_size, &data);
    println!(
        "psum: {}, {}, {}, {:.3} s: acc = {got}",
        args::counted(block_size, "thread"),
        args::counted(n, "element"),
        args::counted(completions, "phase"),
        elapsed.as_secs_f64()
    );
    if completions != phases || got != want {
        eprintln!("psum: MISMATCH: {completions} completions (want {phases}), acc {got} (sequential {want})");
        std::process::exit(1);
    }
    println!(
        "  the completion function ran once per phase; acc matches the sequential computation"
    );
}
