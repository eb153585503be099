//! CUDA C++ Programming Guide, 4.9.4 "Early Exit": a thread that leaves a sequence of
//! barrier phases early calls `arrive_and_drop` first; the others go on with
//! their normal arrive/wait, and the barrier expects one arrival fewer from
//! the next phase on.
//!
//! Thread `r` of `threads` leaves at iteration `exit_at(r)` (some threads never
//! leave). After each wait a thread checks that exactly the threads still in
//! the loop arrived in that phase. The guide's two forms both run: the
//! `cuda::barrier` one (`bar.wait(std::move(token))`) and the C primitive one
//! (`while (!__mbarrier_try_wait(&bar, token, 1000)) {}`).
//!
//! ```text
//! cargo run --release --example early_exit -- [threads] [iterations]
//! ```

mod args;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use syncthreads::Barrier;

/// The iteration at which thread `rank` leaves (`>= n` = never): thread 0
/// stays, the others leave one after another, the last few stay too.
fn exit_at(rank: usize, threads: usize, n: usize) -> usize {
    if rank == 0 || rank + 2 >= threads {
        usize::MAX
    } else {
        rank * n / threads
    }
}

/// How many threads are still in the loop at iteration `i`.
fn live(i: usize, threads: usize, n: usize) -> usize {
    (0..threads).filter(|&r| exit_at(r, threads, n) > i).count()
}

/// `__global__ void early_exit_kernel(int N)`; `primitive` picks the C
/// primitive form of the wait. Returns the barrier's final `Debug` line.
fn early_exit_kernel(threads: usize, n: usize, primitive: bool) -> String {
    // `if (block.thread_rank() == 0) init(&bar, block.size()); block.sync();`
    let bar = Barrier::new(threads);
    // How many threads arrived (not dropped) in each iteration.
    let arrivals: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();

    std::thread::scope(|s| {
        for rank in 0..threads {
            let (bar, arrivals) = (&bar, &arrivals);
            s.spawn(move || {
                for (i, arrived) in arrivals.iter().enumerate() {
                    // `if (condition_check())`
                    if i == exit_at(rank, threads, n) {
                        // `bar.arrive_and_drop(); return;`
                        // `__mbarrier_token_t token = __mbarrier_arrive_and_drop(&bar); return;`
                        bar.arrive_and_drop();
                        return;
                    }
                    // Relaxed: published by the arrival below.
                    arrived.fetch_add(1, Ordering::Relaxed);
                    // `// Other threads can proceed normally.`
                    // `auto token = bar.arrive();`
                    let token = bar.arrive();
                    // `/* code between arrive and wait */`
                    if primitive {
                        // `while (!__mbarrier_try_wait(&bar, token, 1000)) {}`
                        let mut token = token;
                        while let Err(t) = bar.wait_timeout(token, Duration::from_nanos(1000)) {
                            token = t; // the arrival stands: wait again
                        }
                    } else {
                        // `bar.wait(std::move(token));`
                        bar.wait(token);
                    }
                    // `/* code after wait */`: the phase completed with exactly
                    // the threads still in the loop (the droppers of this
                    // iteration arrived too, by dropping, without counting).
                    let got = arrived.load(Ordering::Relaxed);
                    let want = live(i, threads, n);
                    assert_eq!(
                        got, want,
                        "iteration {i}: {got} threads arrived, {want} expected"
                    );
                }
            });
        }
    });
    format!("{bar:?}")
}

const CLI: args::Cli<2> = args::Cli {
    program: "early_exit",
    counts: [
        args::count("threads", 6, 1..=256),
        args::count("iterations", 500, 1..=100_000),
    ],
    note: "threads * iterations <= 1000000 (the run short: a minute at most on two cores)",
};
/// What the bound on the run's work keeps in check.
const WHY: &str = "the run short: a minute at most on two cores";

fn main() {
    let [threads, n] = CLI.parse();
    CLI.at_most("threads * iterations", threads * n, 1_000_000, WHY);

    let stay = live(n, threads, n);
    for primitive in [false, true] {
        let start = std::time::Instant::now();
        let debug = early_exit_kernel(threads, n, primitive);
        // The drops lowered the expected count for good.
        let want = format!("expected: {stay},");
        if !debug.contains(&want) {
            eprintln!(
                "early_exit: the barrier should expect {stay} arrivals per phase now: {debug}"
            );
            std::process::exit(1);
        }
        println!(
            "early_exit ({}): {}, {} left early (arrive_and_drop), {stay} ran all {}; \
             each phase counted exactly its live threads ({:.3} s)\n  final state: {debug}",
            if primitive {
                "__mbarrier_try_wait loop"
            } else {
                "bar.wait"
            },
            args::counted(threads, "thread"),
            threads - stay,
            args::counted(n, "phase"),
            start.elapsed().as_secs_f64()
        );
    }
}
