//! CUDA's block-level synchronization for CPU threads.
//!
//! `mbarrier` brings the asynchronous barrier of CUDA (`cuda::barrier`, the
//! PTX `mbarrier` object) and the `__syncthreads` / `__syncwarp` family to
//! ordinary threads. Where `std::sync::Barrier` only offers "arrive and block",
//! [`Barrier`] splits arriving from waiting, tracks phases, lets participants
//! leave, runs a completion function once per phase, holds a phase open for
//! transaction counts, and keeps its whole state in one `AtomicU64`.
//!
//! # Items
//!
//! - [`Barrier`]: split [`arrive`](Barrier::arrive) / [`wait`](Barrier::wait),
//!   [`arrive_and_wait`](Barrier::arrive_and_wait), parity waits
//!   ([`wait_parity`](Barrier::wait_parity), [`try_wait_parity`](Barrier::try_wait_parity)),
//!   timed waits, [`arrive_and_drop`](Barrier::arrive_and_drop), a completion
//!   function ([`Barrier::with_completion`]), transaction counts
//!   ([`expect_tx`](Barrier::expect_tx), [`complete_tx`](Barrier::complete_tx),
//!   [`arrive_tx`](Barrier::arrive_tx)) and [`poison`](Barrier::poison).
//! - Async waits, for tasks on any executor beside threads on the same
//!   barrier: [`wait_async`](Barrier::wait_async) ([`WaitFuture`]),
//!   [`wait_parity_async`](Barrier::wait_parity_async) ([`ParityWaitFuture`]),
//!   [`arrive_and_wait_async`](Barrier::arrive_and_wait_async)
//!   ([`ArriveAndWaitFuture`]); a pending wait allocates nothing.
//! - [`ArrivalToken`]: proof of an arrival, waited on with [`Barrier::wait`].
//! - [`BarrierWaitResult`]: what [`Barrier::arrive_and_wait`] returns (`is_leader`).
//! - [`Completion`]: the (sealed) bound on a barrier's completion function.
//! - [`BlockBarrier`]: `__syncthreads()` and `__syncthreads_count/and/or`.
//! - [`WarpBarrier`]: `__syncwarp(mask)` for up to 64 lanes.
//! - [`launch`] and [`Block`]: run a closure on a CPU "thread block", with
//!   `thread_rank()`, `size()` and `sync()` as in `cooperative_groups`.
//!
//! # Example
//!
//! ```
//! use mbarrier::Barrier;
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! let partial = [AtomicU64::new(0), AtomicU64::new(0)];
//! let barrier = Barrier::new(2);
//! std::thread::scope(|s| {
//!     for (rank, mine) in partial.iter().enumerate() {
//!         let (partial, barrier) = (&partial, &barrier);
//!         s.spawn(move || {
//!             mine.store(rank as u64 + 1, Ordering::Relaxed);
//!             let token = barrier.arrive(); // publish, don't block
//!             let local: u64 = (0..1000).sum(); // overlap independent work
//!             barrier.wait(token); // now every partial is visible
//!             let total: u64 = partial.iter().map(|p| p.load(Ordering::Relaxed)).sum();
//!             assert_eq!(total + local - 499_500, 3);
//!         });
//!     }
//! });
//! ```
//!
//! # Memory ordering
//!
//! As for C++'s `std::barrier`, extended to transaction counts: everything a
//! thread did before its arrival (or `expect_tx` / `complete_tx`)
//! happens-before the phase's completion function, and both happen-before
//! every wait for that phase returning, and every `try_wait*` that returns
//! true for it.
//!
//! # Waiting
//!
//! A waiter spins briefly on the word if every participant can have a core,
//! then yields its core for a while (unless a recent yield showed foreign
//! load competing for the cores), then parks in `parking_lot_core`'s global
//! table keyed by the barrier's address, so a barrier costs nothing beyond its
//! 8 bytes. The thread that completes a phase wakes the parked threads only
//! if there are any. The numbers behind this policy are in `src/wait.rs` and
//! `benches/RESULTS.md`. An async wait never blocks its thread: a pending
//! future's task registers its waker in a static table keyed by the same
//! address (a node inside the future, no allocation), and the same completer
//! wakes it.
//!
//! # Decisions where the contract is silent
//!
//! - **The completion window.** An arrival (or tx operation) that comes while
//!   the previous phase's completion function runs waits until the next phase
//!   has started, then counts for it: keep completion functions short.
//! - **Poisoning is terminal and keeps the first cause** (a `poison()` that
//!   comes while a completion function runs wins over that function's panic). A poisoned word
//!   keeps its phase and expected count but no longer tracks pending arrivals
//!   or the transaction count (`Debug` shows them as 0). `poison()` during a
//!   completion function takes effect when the function returns, and that
//!   phase does not complete. Calling `poison()` again does nothing.
//! - **Zero transactions.** `expect_tx(0)` and `complete_tx(0)` are allowed
//!   and change nothing (they still panic on a poisoned or retired barrier).
//! - **Tokens in debug builds** carry their barrier's address, so a token
//!   used on another barrier panics in `wait*` and in `try_wait`. A barrier
//!   moved between `arrive` and `wait` (only possible when one thread owns it)
//!   counts as another barrier there.
//! - **Parity of a phase not yet begun.** `try_wait_parity(p)` only compares
//!   parities: on a fresh barrier (phase 0), `try_wait_parity(true)` is true,
//!   as for the hardware, whose phase "-1" counts as completed.
//! - **Panics and unwinding.** `Barrier` is `RefUnwindSafe`: every operation
//!   checks before it mutates, so a caught misuse panic leaves it usable.
//!   A completion function that panics poisons the barrier even when it runs
//!   inside a `Drop` during another panic; one that returns does not.
//! - **Phase numbers in messages** are modulo 4, the phase bits the word keeps.
//! - `BarrierWaitResult` is not `#[must_use]`, as in `std`.
//!
//! # CUDA's `__syncthreads` family
//!
//! | CUDA | `mbarrier` |
//! |---|---|
//! | `__syncthreads()` | [`BlockBarrier::sync`], [`Block::sync`] |
//! | `__syncthreads_count(pred)` | [`BlockBarrier::sync_count`], [`Block::sync_count`] |
//! | `__syncthreads_and(pred)` | [`BlockBarrier::sync_and`], [`Block::sync_and`] |
//! | `__syncthreads_or(pred)` | [`BlockBarrier::sync_or`], [`Block::sync_or`] |
//! | `__syncwarp(mask)` | [`WarpBarrier::sync(lane, mask)`](WarpBarrier::sync) (mask as `u64`, up to 64 lanes) |
//! | `kernel<<<1, n>>>(...)` | [`launch(n, \|block\| ...)`](launch) |
//! | `cooperative_groups::this_thread_block()` | the [`&Block`](Block) handed to the kernel by [`launch`] |
//! | `block.thread_rank()` | [`Block::thread_rank`] |
//! | `block.size()` | [`Block::size`] |
//! | `block.sync()` | [`Block::sync`] |
//!
//! A thread of a [`launch`]ed block that panics poisons the block's barrier,
//! so the others panic out of `sync` instead of hanging; `launch` then
//! re-raises the first panic that was not itself caused by the poisoning.
//!
//! # Model checking
//!
//! With `RUSTFLAGS="--cfg loom"` the crate's atomics, cells and parking switch
//! to [loom](https://docs.rs/loom)'s models (`loom-tests/`), and with
//! `--cfg shuttle` to [shuttle](https://docs.rs/shuttle)'s, for randomized
//! schedules. Nothing changes for normal builds.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod barrier;
mod block;
mod completion;
mod future;
mod launch;
mod op;
mod park;
mod state;
mod sync;
mod token;
mod wait;
mod warp;

pub use barrier::Barrier;
pub use block::BlockBarrier;
pub use completion::Completion;
pub use future::{ArriveAndWaitFuture, ParityWaitFuture, WaitFuture};
pub use launch::{launch, Block};
pub use token::{ArrivalToken, BarrierWaitResult};
pub use warp::WarpBarrier;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
