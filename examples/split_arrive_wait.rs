//! CUDA C++ Programming Guide, 4.9.2 "A Barrier's Phase: Arrival, Countdown,
//! Completion, and Reset" and 4.9.3 "Explicit Phase Tracking": split
//! arrive/wait, with a token and with explicit phase (parity) tracking.
//!
//! The kernel `split_arrive_wait(iteration_count, data)` runs three times, once
//! per form the guide shows: `cuda::barrier` (token), `cuda::ptx`
//! (`mbarrier_try_wait_parity` loop) and the C primitive
//! (`__mbarrier_try_wait_parity(&bar, parity, 1000)` loop). Each iteration a
//! thread publishes a value ("code before arrive"), arrives, computes on its
//! own data while the others catch up ("compute(data, i)"), waits, then reads
//! every thread's value of that iteration ("code after wait") and checks it.
//!
//! ```text
//! cargo run --release --example split_arrive_wait -- [threads] [iterations]
//! ```

mod args;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use syncthreads::Barrier;

/// The three ways of waiting that the guide shows (4.9.3).
#[derive(Clone, Copy, Debug)]
enum Form {
    /// `auto token = bar.arrive(); ... bar.wait(std::move(token));`
    Token,
    /// `while (!cuda::ptx::mbarrier_try_wait_parity(&bar, parity)) {}`
    TryWaitParity,
    /// `while (!__mbarrier_try_wait_parity(&bar, parity, 1000)) {}`
    WaitParityTimeout,
}

/// `__device__ void compute(float *data, int iteration);` — work that needs
/// nobody else's data: here a few rounds of an integer hash of our own value.
fn compute(x: u64, iteration: u64) -> u64 {
    (0..1000).fold(x ^ iteration, |h, k| {
        (h ^ k).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
    })
}

/// The value thread `rank` publishes in iteration `i`.
fn value(rank: usize, i: usize) -> u64 {
    (i as u64) << 32 | rank as u64
}

/// `__global__ void split_arrive_wait(int iteration_count, float *data)`.
/// Returns the number of values checked after the waits.
fn split_arrive_wait(form: Form, threads: usize, iteration_count: usize) -> usize {
    // `__shared__ barrier_t bar;` ... `if (block.thread_rank() == 0) init(&bar, block.size());`
    // `block.sync();` — on the CPU the barrier is made before the threads
    // start, which solves the bootstrap problem (see examples/init.rs).
    let bar = Barrier::new(threads);
    // The "shared memory" the threads exchange values through, double
    // buffered by iteration parity: a thread may start writing iteration i+1
    // while a slower one still reads iteration i, but it cannot reach
    // iteration i+2 before everyone has arrived in i+1, i.e. finished reading i.
    let slots: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(0)).collect());
    let checked = AtomicU64::new(0);

    std::thread::scope(|s| {
        for rank in 0..threads {
            let (bar, slots, checked) = (&bar, &slots, &checked);
            s.spawn(move || {
                // `int parity = 0; // Initial phase parity is 0.`
                let mut parity = false;
                let mut mine = rank as u64;
                for i in 0..iteration_count {
                    // `/* code before arrive */`. Relaxed: the barrier orders
                    // this store before every read after the wait.
                    slots[i % 2][rank].store(value(rank, i), Ordering::Relaxed);

                    match form {
                        Form::Token => {
                            // `auto token = bar.arrive();` — arrival does not block.
                            let token = bar.arrive();
                            // `compute(data, i);`
                            mine = compute(mine, i as u64);
                            // `bar.wait(std::move(token));`
                            bar.wait(token);
                        }
                        Form::TryWaitParity => {
                            // `(void)cuda::ptx::mbarrier_arrive(&bar);`
                            drop(bar.arrive());
                            mine = compute(mine, i as u64);
                            // `while (!cuda::ptx::mbarrier_try_wait_parity(&bar, parity)) {}`
                            // A CPU thread yields instead of burning the core
                            // a late thread may need.
                            while !bar.try_wait_parity(parity) {
                                std::thread::yield_now();
                            }
                        }
                        Form::WaitParityTimeout => {
                            // `(void)__mbarrier_arrive(&bar);`
                            drop(bar.arrive());
                            mine = compute(mine, i as u64);
                            // `while(!__mbarrier_try_wait_parity(&bar, parity, 1000)) {}`
                            // (the hint is in ns; the loop is what guarantees the wait)
                            while !bar.wait_parity_timeout(parity, Duration::from_nanos(1000)) {}
                        }
                    }
                    // `parity ^= 1;` — the parity of the next phase.
                    parity = !parity;
                    assert_eq!(bar.phase_parity(), parity, "phase i+1 has parity (i+1) % 2");

                    // `/* code after wait */`: every thread's value of this
                    // iteration is visible (Relaxed suffices: the wait is an
                    // acquire of every arrival).
                    for (other, slot) in slots[i % 2].iter().enumerate() {
                        let got = slot.load(Ordering::Relaxed);
                        assert_eq!(
                            got,
                            value(other, i),
                            "{form:?}: thread {rank}, iteration {i}: thread {other}'s value is stale"
                        );
                    }
                    checked.fetch_add(threads as u64, Ordering::Relaxed);
                }
                // `compute` ran between arrive and wait; its result is ours.
                std::hint::black_box(mine);
            });
        }
    });
    checked.into_inner() as usize
}

const CLI: args::Cli<2> = args::Cli {
    program: "split_arrive_wait",
    counts: [
        args::count("threads", 4, 1..=256),
        args::count("iterations", 1000, 1..=100_000),
    ],
    note: "threads * iterations <= 250000 (the run short: a minute at most on two cores)",
};
/// What the bound on the run's work keeps in check.
const WHY: &str = "the run short: a minute at most on two cores";

fn main() {
    let [threads, iterations] = CLI.parse();
    CLI.at_most("threads * iterations", threads * iterations, 250_000, WHY);

    for form in [Form::Token, Form::TryWaitParity, Form::WaitParityTimeout] {
        let start = std::time::Instant::now();
        let checked = split_arrive_wait(form, threads, iterations);
        let expected = threads * threads * iterations;
        if checked != expected {
            eprintln!("{form:?}: checked {checked} values, expected {expected}");
            std::process::exit(1);
        }
        println!(
            "split_arrive_wait ({form:?}): {} x {}, \
             {} seen after the waits, all current ({:.3} s)",
            args::counted(threads, "thread"),
            args::counted(iterations, "phase"),
            args::counted(checked, "value"),
            start.elapsed().as_secs_f64()
        );
    }
}
