//! A barrier for threads that can split arriving from waiting: CUDA's
//! block-level synchronization for ordinary CPU threads.
//!
//! `syncthreads` brings the asynchronous barrier of CUDA (`cuda::barrier`, the
//! PTX `mbarrier` object) and the `__syncthreads` / `__syncwarp` family to
//! ordinary threads. Where [`std::sync::Barrier`] only offers "arrive and
//! block", [`Barrier`] splits arriving from waiting, so a thread keeps
//! working while the slow ones catch up; it also tracks phases, lets
//! participants leave or join, runs a completion function once per phase,
//! holds a phase open for transaction counts, and keeps its whole state in
//! one `AtomicU64`.
//!
//! ```
//! use syncthreads::Barrier;
//!
//! let barrier = Barrier::new(2);
//! std::thread::scope(|s| {
//!     for _ in 0..2 {
//!         s.spawn(|| {
//!             barrier.arrive_and_wait(); // std's `wait()`
//!             let token = barrier.arrive(); // "my part is done"
//!             // ... work that needs nobody else ...
//!             barrier.wait(token); // now everybody's part is done
//!         });
//!     }
//! });
//! ```
//!
//! # Which type do I pick?
//!
//! | you have | use |
//! |---|---|
//! | 2 or 3 threads and a `std::sync::Barrier`, or work to do between "done" and "wait" | [`Barrier`]: [`arrive_and_wait`](Barrier::arrive_and_wait) as std's `wait`, or [`arrive`](Barrier::arrive) then [`wait`](Barrier::wait) |
//! | 4 threads or more on one barrier | [`Team`]: each thread takes a [`Seat`] (a rank) once and arrives through it; a combining tree keeps the arrivals off one cache line |
//! | CUDA code with `__syncthreads()` | [`launch`] runs a closure on `n` threads with [`Block::thread_rank`] and [`Block::sync`]; the caller is rank 0 and the others run on a process-wide pool whose threads stay between launches ([`Launcher`] sets their stack size, names and idle time, on a pool of its own); [`BlockBarrier`] is the barrier alone |
//! | a cooperative CUDA kernel (`this_grid().sync()`) | [`launch_grid`] runs `blocks × threads` threads at once, each with its [`Block`] and its [`Grid`] ([`Block::grid`]) |
//! | CUDA code with `__syncwarp(mask)`, `__shfl*_sync`, `__ballot_sync`, `__match_*_sync`, `__reduce_*_sync` | [`WarpBarrier`]; in a [`launch`], [`Block::tiled_partition`] gives a [`Tile`] (`thread_block_tile`) |
//! | async tasks and threads on one phase | the async waits: [`wait_async`](Barrier::wait_async), [`wait_parity_async`](Barrier::wait_parity_async), [`arrive_and_wait_async`](Barrier::arrive_and_wait_async) |
//! | a hang to find | the `diagnostics` feature: who waits where, who is missing ([`guide::debugging`]) |
//!
//! # Guides
//!
//! - [`guide::quick_start`]: the split barrier, a CUDA block, a `Team`,
//!   tasks and threads on one barrier.
//! - [`guide::coming_from_std`]: [`Barrier`] beside [`std::sync::Barrier`].
//! - [`guide::pitfalls`]: things you may trip on.
//! - [`guide::debugging`]: finding a hang with the `diagnostics` feature.
//! - [`guide::porting`]: CUDA's barrier calls and their Rust lines.
//! - [`guide::semantics`]: memory ordering, how a wait spins, yields and
//!   parks, and the corner cases neither CUDA nor `std` decides.
//! - [`guide::glossary`]: the words the crate's code and design notes use
//!   (phase, round, front, seat, ticket, ...).
//!
//! # Feature flags
//!
//! - `diagnostics`: `stalls()`, with its `Stall` and `Waiter`, and the
//!   divergent-`__syncthreads` check ([`guide::debugging`]). Off by default.
//! - `loom`, `shuttle`: for model builds only. With `RUSTFLAGS="--cfg loom"`
//!   and the feature `loom`, the crate's atomics, cells and parking switch to
//!   [loom](https://docs.rs/loom)'s models, so your loom tests explore the
//!   barrier's interleavings along with yours; `--cfg shuttle` with the
//!   feature `shuttle` does the same for [shuttle](https://docs.rs/shuttle)'s
//!   randomized schedules. Nothing changes for normal builds (the source's
//!   `docs/testing.md` shows the set-up).
//! - `bench`: internal, for the crate's own benches; not an API.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod assert;
mod barrier;
mod block;
mod completion;
#[cfg(feature = "diagnostics")]
#[cfg_attr(docsrs, doc(cfg(feature = "diagnostics")))]
pub mod diagnostics;
#[cfg(not(feature = "diagnostics"))]
mod diagnostics;
mod engine;
mod launch;
mod lines;
mod op;
mod park;
mod phase;
mod state;
mod sync;
mod team;
mod token;
mod wait;
mod warp;

pub use barrier::Barrier;
pub use block::{BlockBarrier, BlockSeat};
pub use completion::Completion;
pub use engine::{ArriveAndWaitFuture, ParityWaitFuture, WaitFuture};
#[cfg(loom)]
#[doc(hidden)]
pub use launch::SlotProbe;
pub use launch::{launch, launch_grid, Block, Grid, GridToken, Launcher};
#[cfg(loom)]
#[doc(hidden)]
pub use sync::take_model_events;
#[cfg(any(loom, shuttle, feature = "bench"))]
pub use team::shape::TeamShape;
pub use team::{Seat, Seats, Team};
pub use token::{ArrivalToken, BarrierWaitResult};
pub use warp::{Tile, WarpBarrier, WarpInt};

/// For syncthreads's own benches (feature `bench`), not a stable API: the
/// switch to spin-only waits, the wait-stage counters and the pool's bare hand-off.
#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench_hooks {
    pub use crate::launch::{pool_round_trip, set_crew_group};
    pub use crate::team::shape::team_word;
    pub use crate::wait::policy::{set_policy, Policy};
    pub use crate::wait::stats::{set_stats, take_stats, WaitStats};
}

/// The guides: longer documentation than a type's page, each also a file
/// under `docs/` in the source.
pub mod guide {
    // The guides link to items by their names at the crate root (a
    // module's outer docs resolve their links here).
    #[allow(unused_imports)]
    use crate::*;

    #[doc = include_str!("../docs/quick-start.md")]
    pub mod quick_start {}
    #[doc = include_str!("../docs/std.md")]
    pub mod coming_from_std {}
    #[doc = include_str!("../docs/pitfalls.md")]
    pub mod pitfalls {}
    #[doc = include_str!("../docs/debugging.md")]
    pub mod debugging {}
    #[doc = include_str!("../docs/porting.md")]
    pub mod porting {}
    #[doc = include_str!("../docs/semantics.md")]
    pub mod semantics {}
    #[doc = include_str!("../docs/design/glossary.md")]
    pub mod glossary {}
}

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
