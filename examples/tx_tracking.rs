//! CUDA C++ Programming Guide, 4.9.6 "Tracking Asynchronous Memory
//! Operations": a transaction count, the CPU way.
//!
//! On the GPU, a copy engine (TMA) moves bytes into shared memory and signals
//! the barrier with `complete_tx(bytes)`; the block waits until every thread
//! has arrived *and* every expected byte has landed. Here a small pool of
//! "copy engine" threads plays the TMA: thread 0 of the consuming block
//! declares the bytes it expects for the phase (`arrive_tx` / `expect_tx`),
//! hands the chunks of a tile to the engines, and every thread of the block
//! waits on the barrier. When the wait returns the whole tile is there; each
//! thread checks its share word for word and folds it into a checksum, which
//! must match the checksum of the source.
//!
//! ```text
//! cargo run --release --example tx_tracking -- [consumers] [tiles]
//! ```

mod args;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use syncthreads::{launch, Barrier};

/// Words per tile (a tile is 64 KiB, well below `Barrier::MAX_TX` bytes).
const TILE_WORDS: usize = 8 * 1024;
/// Bytes per tile: the transaction count of one phase.
const TILE_BYTES: u32 = (TILE_WORDS * 8) as u32;
/// Copy engines, and chunks per tile (spread over the engines).
const ENGINES: usize = 2;
const CHUNKS: usize = 8;

/// One asynchronous copy: `src` into `dst`, then `bar.complete_tx(bytes)`.
struct CopyJob<'a> {
    src: &'a [u64],
    dst: &'a [AtomicU64],
    bar: &'a Barrier,
}

/// A copy engine: copies each chunk it is handed, then reports the bytes to
/// the barrier, the way the TMA's `mbarrier.complete_tx` does.
fn copy_engine(jobs: mpsc::Receiver<CopyJob<'_>>) {
    for CopyJob { src, dst, bar } in jobs {
        for (d, &s) in dst.iter().zip(src) {
            // Relaxed: `complete_tx` below is a release, the consumers'
            // wait an acquire.
            d.store(s, Ordering::Relaxed);
        }
        // `mbarrier.complete_tx` with the chunk's bytes.
        bar.complete_tx((src.len() * 8) as u32);
    }
}

/// Where tile `t`'s words come from.
fn source_tile(src: &[u64], t: usize) -> &[u64] {
    &src[t * TILE_WORDS..(t + 1) * TILE_WORDS]
}

const CLI: args::Cli<2> = args::Cli {
    program: "tx_tracking",
    counts: [
        args::count("consumers", 4, 1..=256),
        // 64 KiB of input per tile.
        args::count("tiles", 256, 1..=1024),
    ],
    note: "",
};

fn main() {
    let [consumers, tiles] = CLI.parse();

    // "Global memory": the words to load, tile by tile.
    let src: Vec<u64> = (0..(tiles * TILE_WORDS) as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i >> 7))
        .collect();
    // "Shared memory": two tiles, so the engines fill tile t+1 while the
    // block may still read tile t. The engines write tile t+2 (same buffer as
    // t) only after thread 0's wait of phase t+1, which needs every thread's
    // arrival in phase t+1, made after its reads of tile t.
    let smem: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..TILE_WORDS).map(|_| AtomicU64::new(0)).collect());
    // `__shared__ cuda::barrier<cuda::thread_scope_block> bar;` ...
    // `if (block.thread_rank() == 0) init(&bar, block.size()); block.sync();`
    // (made before the threads start: see examples/init.rs)
    let bar = Barrier::new(consumers);
    let held = AtomicUsize::new(0);

    let start = std::time::Instant::now();
    let sums = std::thread::scope(|s| {
        let engines: Vec<mpsc::Sender<CopyJob<'_>>> = (0..ENGINES)
            .map(|_| {
                let (tx, rx) = mpsc::channel();
                s.spawn(move || copy_engine(rx));
                tx
            })
            .collect();

        let sums = launch(consumers, |block| {
            let mut sum = 0u64;
            for t in 0..tiles {
                let tile = &smem[t % 2];
                let token = if block.thread_rank() == 0 {
                    let issue_copies = || {
                        let chunk = TILE_WORDS / CHUNKS;
                        for c in 0..CHUNKS {
                            let range = c * chunk..(c + 1) * chunk;
                            let job = CopyJob {
                                src: &source_tile(&src, t)[range.clone()],
                                dst: &tile[range],
                                bar: &bar,
                            };
                            engines[c % ENGINES]
                                .send(job)
                                .expect("the copy engines run until the end");
                        }
                    };
                    // The guide's two ways of setting the transaction count,
                    // and a third order the hardware allows too.
                    match t % 3 {
                        0 => {
                            // `auto token = cuda::device::barrier_arrive_tx(bar, 1, bytes);`
                            // `cuda::ptx::mbarrier_arrive_expect_tx(..., &bar, 1, bytes)`:
                            // one arrival and the expected bytes, in one step.
                            let token = bar.arrive_tx(1, TILE_BYTES);
                            issue_copies();
                            token
                        }
                        1 => {
                            // `cuda::device::barrier_expect_tx(bar, bytes);` then `bar.arrive()`.
                            bar.expect_tx(TILE_BYTES);
                            issue_copies();
                            bar.arrive()
                        }
                        _ => {
                            // Copies first: some may complete before the bytes
                            // are declared (the count goes negative); the phase
                            // still cannot complete before our arrival below,
                            // which brings the count back up to what is owed.
                            issue_copies();
                            bar.arrive_tx(1, TILE_BYTES)
                        }
                    }
                } else {
                    // `auto token = cuda::device::barrier_arrive_tx(bar, 1, 0);`
                    // — the guide's line: arrive once, expect no bytes.
                    bar.arrive_tx(1, 0)
                };
                if !bar.try_wait(&token) {
                    // Relaxed: a statistic.
                    held.fetch_add(1, Ordering::Relaxed);
                }
                // `bar.wait(cuda::std::move(token));` /
                // `while (!cuda::ptx::mbarrier_try_wait(&bar, token)) {}`
                bar.wait(token);

                // The whole tile has landed: check our share and sum it.
                let want = source_tile(&src, t);
                for k in (block.thread_rank()..TILE_WORDS).step_by(block.size()) {
                    // Relaxed: the wait above is an acquire of every complete_tx.
                    let got = tile[k].load(Ordering::Relaxed);
                    assert_eq!(
                        got, want[k],
                        "tile {t}, word {k}: the wait returned before its bytes landed"
                    );
                    sum = sum.wrapping_add(got.rotate_left((k % 64) as u32));
                }
            }
            sum
        });
        drop(engines); // the engines' channels close; they finish
        sums
    });
    let elapsed = start.elapsed();

    let got = sums.iter().fold(0u64, |a, &b| a.wrapping_add(b));
    let want = src
        .chunks(TILE_WORDS)
        .flat_map(|tile| tile.iter().enumerate())
        .fold(0u64, |a, (k, &x)| {
            a.wrapping_add(x.rotate_left((k % 64) as u32))
        });
    println!(
        "tx_tracking: {} of {TILE_BYTES} bytes copied by {ENGINES} engine threads ({CHUNKS} complete_tx per tile), \
         {}, {:.3} s",
        args::counted(tiles, "tile"),
        args::counted(consumers, "consumer thread"),
        elapsed.as_secs_f64()
    );
    println!(
        "  checksum {got:#018x} (source {want:#018x}); a thread's phase was still open after its arrival {} of {} times",
        held.into_inner(),
        tiles * consumers
    );
    if got != want {
        eprintln!("tx_tracking: MISMATCH: the block read {got:#x}, the source sums to {want:#x}");
        std::process::exit(1);
    }
    println!("  every wait returned with its tile complete; checksums match");
}
