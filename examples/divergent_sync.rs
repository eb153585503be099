//! A kernel that hangs on purpose: a `__syncthreads()` inside a branch that
//! depends on the rank, the bug CUDA calls undefined.
//!
//! ```text
//! cargo run --release --example divergent_sync --features diagnostics   # panics, naming both syncs
//! cargo run --release --example divergent_sync                          # hangs (stop it with Ctrl-C)
//! ```
//!
//! Two "warps" of four threads each. The first lane of each warp loads its
//! warp's tile and syncs *inside* its `if`; the other lanes skip that sync
//! and sync below it, so phase 0 gets its eight arrivals from two call
//! sites. Without the feature nothing notices: phase 0 completes, lanes 1-3
//! go on to the warp-level step and wait there for their lane 0, while each
//! lane 0 waits in the next `block.sync()` for lanes 1-3. Nobody ever
//! returns.
//!
//! With `--features diagnostics` the second call site of phase 0 panics
//! (`syncthreads: divergent __syncthreads in phase 0: rank 1 synced at ...
//! (sync), rank 0 at ... (sync)`), the block is poisoned, and `launch`
//! re-raises that panic; this example catches it, prints it again and exits
//! with status 0. Any other outcome exits with status 1.

mod args;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use syncthreads::{launch, WarpBarrier};

const WARPS: usize = 2;
const LANES: usize = 4;

const CLI: args::Cli<0> = args::Cli {
    program: "divergent_sync",
    counts: [],
    note: "no arguments; build it with --features diagnostics, or it hangs",
};

fn main() {
    let [] = CLI.parse();
    if !cfg!(feature = "diagnostics") {
        eprintln!("divergent_sync: built without --features diagnostics, this hangs (by design)");
    }
    // `__shared__ u64 tile[WARPS][LANES];` (Relaxed: the syncs order it.)
    let tiles: Vec<AtomicU64> = (0..WARPS * LANES).map(|_| AtomicU64::new(0)).collect();
    let warps: Vec<WarpBarrier> = (0..WARPS).map(|_| WarpBarrier::new(LANES)).collect();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        launch(WARPS * LANES, |block| {
            let rank = block.thread_rank();
            let (warp, lane) = (rank / LANES, rank % LANES);
            if lane == 0 {
                // The first lane loads its warp's tile ...
                for (i, t) in tiles[warp * LANES..][..LANES].iter().enumerate() {
                    t.store((warp * LANES + i) as u64, Ordering::Relaxed);
                }
                block.sync(); // BUG: only lane 0 of each warp gets here
            }
            block.sync(); // the tiles are loaded
                          // ... then each warp sums its tile, lane 0 last.
            let mine = tiles[rank].load(Ordering::Relaxed);
            warps[warp].sync(lane, (1 << LANES) - 1);
            block.sync();
            mine
        })
    }));
    match outcome {
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            if message.starts_with("syncthreads: divergent __syncthreads in phase 0: ") {
                println!("divergent_sync: caught, instead of a hang:\n{message}");
            } else {
                eprintln!("divergent_sync: unexpected panic: {message:?}");
                std::process::exit(1);
            }
        }
        Ok(values) => {
            eprintln!("divergent_sync: the kernel returned {values:?}; it should not have");
            std::process::exit(1);
        }
    }
}
