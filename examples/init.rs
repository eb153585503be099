//! CUDA C++ Programming Guide, 4.9.1 "Initialization": a barrier must be
//! initialized before any thread takes part in it, which is a bootstrap
//! problem: the threads would need to synchronize before they can use the
//! object that synchronizes them. The guide's example solves it with
//! `block.sync()`; on the CPU there are three ways:
//!
//! 1. the guide's way: thread 0 of a [`launch`]ed block initializes a
//!    `OnceLock<Barrier>` (the `__shared__` storage), then `block.sync()`;
//! 2. `OnceLock::get_or_init`: whichever thread comes first initializes, the
//!    others block inside `get_or_init` until it is done, no sync needed;
//! 3. no bootstrap at all: `Barrier::new` is a `const fn`, so the barrier can be
//!    a `static`, or be made before the threads are spawned.
//!
//! Each form then runs a few phases in which every thread checks that it sees
//! every other thread's write of the phase.
//!
//! ```text
//! cargo run --release --example init -- [threads] [phases]
//! ```

mod args;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use syncthreads::{launch, Barrier};

/// A few phases on an initialized barrier: everyone adds 1 to `count`,
/// arrives and waits, then checks that all `threads` additions are visible.
fn use_barrier(bar: &Barrier, count: &AtomicUsize, threads: usize, phases: usize) {
    for phase in 1..=phases {
        // Relaxed: the barrier orders it before every wait of the phase returning.
        count.fetch_add(1, Ordering::Relaxed);
        bar.arrive_and_wait();
        let seen = count.load(Ordering::Relaxed);
        // Nobody adds for the next phase before everyone has checked (the
        // second wait below), so exactly this many.
        assert_eq!(seen, phase * threads, "phase {phase}: saw {seen} additions");
        bar.arrive_and_wait();
    }
}

const CLI: args::Cli<2> = args::Cli {
    program: "init",
    counts: [
        args::count("threads", 8, 1..=1024),
        args::count("phases", 100, 1..=100_000),
    ],
    note: "threads * phases <= 1000000 (the run short: a minute at most on two cores)",
};
/// What the bound on the run's work keeps in check.
const WHY: &str = "the run short: a minute at most on two cores";

fn main() {
    let [threads, phases] = CLI.parse();
    CLI.at_most("threads * phases", threads * phases, 1_000_000, WHY);

    // 1. The guide's example (4.9.1), line by line.
    let bar: OnceLock<Barrier> = OnceLock::new(); // `__shared__ cuda::barrier<cuda::thread_scope_block> bar;`
    let count = AtomicUsize::new(0);
    let inits = AtomicUsize::new(0);
    launch(threads, |block| {
        // `auto block = cooperative_groups::this_thread_block();` is `block`.
        if block.thread_rank() == 0 {
            // `// A single thread initializes the total expected arrival count.`
            // `init(&bar, block.size());` / `cuda::ptx::mbarrier_init(&bar, block.size());`
            // / `__mbarrier_init(&bar, block.size());`
            assert!(bar.set(Barrier::new(block.size())).is_ok());
            inits.fetch_add(1, Ordering::Relaxed);
        }
        // `block.sync();` — after it, every thread sees the initialized barrier.
        block.sync();
        let bar = bar
            .get()
            .expect("block.sync() orders the initialization first");
        use_barrier(bar, &count, block.size(), phases);
    });
    assert_eq!(inits.into_inner(), 1);
    assert_eq!(count.into_inner(), threads * phases);
    println!(
        "init (thread 0 + block.sync()): {}, initialized once, {} checked",
        args::counted(threads, "thread"),
        args::counted(phases, "phase")
    );

    // 2. Whoever comes first initializes; no bootstrap sync.
    let bar: OnceLock<Barrier> = OnceLock::new();
    let count = AtomicUsize::new(0);
    let inits = AtomicUsize::new(0);
    launch(threads, |block| {
        let bar = bar.get_or_init(|| {
            inits.fetch_add(1, Ordering::Relaxed);
            Barrier::new(block.size())
        });
        use_barrier(bar, &count, block.size(), phases);
    });
    assert_eq!(inits.into_inner(), 1);
    assert_eq!(count.into_inner(), threads * phases);
    println!(
        "init (OnceLock::get_or_init): {}, initialized once, {} checked",
        args::counted(threads, "thread"),
        args::counted(phases, "phase")
    );

    // 3. No bootstrap: a `static` (const fn), or a barrier made before the threads.
    static FOUR: Barrier = Barrier::new(4);
    let count = AtomicUsize::new(0);
    launch(4, |_| use_barrier(&FOUR, &count, 4, phases));
    assert_eq!(count.into_inner(), 4 * phases);
    let bar = Barrier::new(threads);
    let count = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| use_barrier(&bar, &count, threads, phases));
        }
    });
    assert_eq!(count.into_inner(), threads * phases);
    println!(
        "init (static / made before spawning): 4 + {threads} threads, {} checked",
        args::counted(phases, "phase")
    );
    println!("  final state of the static: {FOUR:?}");
}
