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
//! # Which type do I pick?
//!
//! | you have | use |
//! |---|---|
//! | a few threads and a `std::sync::Barrier`, or work to do between "done" and "wait" | [`Barrier`]: [`arrive_and_wait`](Barrier::arrive_and_wait) as std's `wait`, or [`arrive`](Barrier::arrive) then [`wait`](Barrier::wait) |
//! | about 4 threads or more on one barrier | [`Team`]: each thread takes a [`Seat`] (a rank) once and arrives through it; a combining tree keeps the arrivals off one cache line |
//! | CUDA code with `__syncthreads()` | [`launch`] runs a closure on `n` threads with [`Block::thread_rank`] and [`Block::sync`]; the caller is rank 0 and the others run on a process-wide pool whose threads stay between launches ([`Launcher`] sets their stack size, names and idle time, on a pool of its own); [`BlockBarrier`] is the barrier alone |
//! | a cooperative CUDA kernel (`this_grid().sync()`) | [`launch_grid`] runs `blocks × threads` threads at once, each with its [`Block`] and its [`Grid`] ([`Block::grid`]) |
//! | CUDA code with `__syncwarp(mask)`, `__shfl*_sync`, `__ballot_sync`, `__match_*_sync`, `__reduce_*_sync` | [`WarpBarrier`]; in a [`launch`], [`Block::tiled_partition`] gives a [`Tile`] (`thread_block_tile`) |
//! | async tasks and threads on one phase | the async waits: [`wait_async`](Barrier::wait_async), [`wait_parity_async`](Barrier::wait_parity_async), [`arrive_and_wait_async`](Barrier::arrive_and_wait_async) |
//! | a hang to find | the `diagnostics` feature: who waits where, who is missing ("Debugging a hang" below) |
//!
#![doc = include_str!("../docs/quick-start.md")]
//!
//! # Items
//!
//! - [`Barrier`]: split [`arrive`](Barrier::arrive) / [`wait`](Barrier::wait),
//!   [`arrive_and_wait`](Barrier::arrive_and_wait) (std's `wait`), parity waits
//!   ([`wait_parity`](Barrier::wait_parity), [`try_wait_parity`](Barrier::try_wait_parity)),
//!   timed waits, [`arrive_and_drop`](Barrier::arrive_and_drop) and
//!   [`add_participants`](Barrier::add_participants), a completion
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
//! - [`Team`] and [`Seat`] (with [`Seats`]): a `Barrier` with a combining
//!   tree in front of its word, for many threads: each takes its seat once
//!   and arrives through it, and the word is updated about once per phase;
//!   a team made [`with_capacity`](Team::with_capacity) lets seats
//!   [`join`](Team::join) while phases run, and [`missing`](Team::missing)
//!   says who has not arrived.
//!   Pick it over a `Barrier` when about 4 threads or more share one.
//! - [`BlockBarrier`]: `__syncthreads()` and `__syncthreads_count/and/or`;
//!   threads that know their rank sync through a [`BlockSeat`] (its `Team`).
//! - [`WarpBarrier`]: `__syncwarp(mask)` for up to 64 lanes, and the warp
//!   collectives on it, each one sync of its lanes: votes
//!   ([`ballot`](WarpBarrier::ballot), [`any`](WarpBarrier::any),
//!   [`all`](WarpBarrier::all)), shuffles of any `Copy` value
//!   ([`shfl`](WarpBarrier::shfl), [`shfl_up`](WarpBarrier::shfl_up),
//!   [`shfl_down`](WarpBarrier::shfl_down), [`shfl_xor`](WarpBarrier::shfl_xor)),
//!   [`match_any`](WarpBarrier::match_any), [`match_all`](WarpBarrier::match_all),
//!   reductions ([`reduce_add`](WarpBarrier::reduce_add) and friends over
//!   [`WarpInt`], [`reduce`](WarpBarrier::reduce) with any operation).
//!   Where CUDA leaves a shuffle undefined (a source lane outside the
//!   mask), the caller gets its own value.
//! - [`Tile`] ([`Block::tiled_partition`]): a tile of a block, with the
//!   warp collectives for the whole tile (`cooperative_groups::thread_block_tile`).
//! - [`launch`] and [`Block`]: run a closure on a CPU "thread block", with
//!   `thread_rank()`, `size()` and `sync()` as in `cooperative_groups`; the
//!   caller is rank 0 and persistent pool threads the others ([`Launcher`]
//!   configures them), so a block per time step is cheap.
//! - [`launch_grid`], [`Grid`] and [`GridToken`]: a grid of blocks, every
//!   thread running at once (a cooperative launch), with `grid.sync()` and
//!   its split form across every block.
//! - `diagnostics` (cargo feature `diagnostics`): `stalls()`, with its
//!   `Stall` and `Waiter`, and the divergent-`__syncthreads` check (see
//!   "Debugging a hang" below).
//!
#![doc = include_str!("../docs/std.md")]
//!
#![doc = include_str!("../docs/pitfalls.md")]
//!
#![doc = include_str!("../docs/debugging.md")]
//!
//! # Memory ordering
//!
//! As for C++'s `std::barrier`, extended to transaction counts: everything a
//! thread did before its arrival (or `expect_tx` / `complete_tx`)
//! happens-before the phase's completion function, and both happen-before
//! every wait for that phase returning, and every `try_wait*` that returns
//! true for it.
//!
//! The words the crate's code and design notes use (phase, round, front, seat, …) are defined in the package's [`docs/design/glossary.md`](https://docs.rs/crate/syncthreads/latest/source/docs/design/glossary.md).
//!
//! # Waiting
//!
//! A waiter spins briefly on the word if every participant can have a core,
//! then yields its core for a while (unless a recent yield showed foreign
//! load competing for the cores), then parks in `parking_lot_core`'s global
//! table keyed by the barrier's address, so a barrier costs nothing beyond its
//! 8 bytes. The thread that completes a phase wakes the parked threads only
//! if there are any. This holds for every blocking wait ([`Barrier::wait`],
//! [`Barrier::arrive_and_wait`], [`Barrier::wait_parity`], the timed waits,
//! [`BlockBarrier::sync`], [`Team`]'s seats, [`WarpBarrier::sync`]). The measurements behind
//! the policy, with more threads than cores and under foreign load, are in
//! the package's [`benches/RESULTS.md`](https://docs.rs/crate/syncthreads/latest/source/benches/RESULTS.md).
//! An async wait never blocks its thread: a pending future's task registers
//! its waker in a static table keyed by the same address (a node inside the
//! future, no allocation), and the same completer wakes it.
//!
//! # Corner cases
//!
//! Choices made where neither CUDA nor `std` says what should happen:
//!
//! - **Poisoning is terminal and keeps the first cause** (a `poison()` that
//!   comes while a completion function runs wins over that function's panic). A poisoned word
//!   keeps its phase and expected count but no longer tracks pending arrivals
//!   or the transaction count (`Debug` shows them as 0). `poison()` during a
//!   completion function takes effect at the call (`is_poisoned`, `Debug`,
//!   waits and joins say so at once); the function runs to its end, and
//!   that phase does not complete. Calling `poison()` again does nothing.
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
//! - **Seats that left** take no part in later phases of a `BlockBarrier`:
//!   `sync_and` counts the false predicates, so a seat that left does not
//!   veto it, and `sync_count` counts the seats still there.
//! - **A `Team` arrives through its seats only**: every operation that is
//!   not an arrival is delegated to its barrier, and it has no `arrive*` of
//!   its own (nor a `Deref` to its barrier), so no arrival bypasses the tree.
//!   Dropping a seat inside its own team's completion function poisons the
//!   team (it cannot leave there without deadlocking).
//! - **Joining** ([`Barrier::add_participants`]) follows Java's `Phaser`:
//!   the joiners are owed from the current phase on, a join that meets a
//!   running completion function waits for the next phase and joins that
//!   one, and a retired barrier never comes back (a join on it panics, as
//!   registering on a terminated `Phaser` fails). A barrier whose
//!   participants all left while a transaction count still holds its phase
//!   open is not retired yet: a join then keeps it alive. A join is an
//!   acquire operation (the joiner sees what the previous phase published);
//!   `add_participants(0)` never blocks, but still panics on a poisoned or
//!   retired barrier and inside the barrier's own completion function.
//! - **Joining a `Team`** ([`Team::join`]) takes the lowest free rank, so
//!   ranks are reused densely, as `Phaser` parties are counted; a rank is
//!   free from the phase after its seat's leave (a seat that arrived and
//!   then left counts as arrived in the next phase too, so its rank is free
//!   one phase later). `join` returns `None` when no rank is free rather
//!   than waiting for one. [`Team::seat`] hands out only the ranks taking
//!   part since construction, each once; a joined rank comes from `join`.
//! - **Who is missing** ([`Team::missing`], [`BlockBarrier::missing`], the
//!   `arrived` / `expected` of their `Debug`): a snapshot, exact while
//!   nobody arrives; ranks whose seats were never handed out count as taking
//!   part (and missing), a seat whose leave counts in the current phase has
//!   arrived in it. A seat-less `BlockBarrier` knows no ranks (`None`); its
//!   `Debug` counts the word's arrivals. On a poisoned team the answer is
//!   that of the phase it is stuck in.
//! - **`launch`**: a thread whose kernel returns while the others still sync
//!   leaves the block (its seat is dropped), so the others do not hang.
//! - **`launch_grid`**: a thread whose kernel returns leaves its block and
//!   the grid. A panic anywhere poisons every block and the grid, so that
//!   nobody hangs, and the root cause is re-raised once. `block.sync()` and
//!   `grid.sync()` are two barriers (a thread at one while another is at the
//!   other is CUDA's undefined mix: a hang, which the `diagnostics`
//!   feature's stall report shows), except in
//!   a grid of one block, whose threads are exactly the block's: there the
//!   grid syncs on the block's barrier, so a plain `launch` builds nothing
//!   for its grid. A grid larger than `Barrier::MAX` threads, or than a
//!   `Launcher`'s `max_threads`, is refused before any thread starts.
//! - **Async waits**: `arrive_and_wait_async` records the arrival at the call,
//!   so in a completion window it blocks the calling thread until the next
//!   phase starts, as `arrive` does; a pending future is woken once per
//!   completion through the waker of its latest poll. A waker whose `wake`
//!   panics (std's `Waker` contract says it should not) loses nobody's
//!   wake-up: the operation that completed the phase (or poisoned the
//!   barrier) has taken effect, every parked thread and every other task of
//!   that completion is woken, and only then does the first such panic
//!   propagate, resumed out of that `arrive`, `complete_tx`, `poison`, …
//!   (a completing `Seat` that does not catch it poisons its team on drop).
//!
#![doc = include_str!("../docs/porting.md")]
//!
//! # Model checking
//!
//! With `RUSTFLAGS="--cfg loom"` the crate's atomics, cells and parking switch
//! to [loom](https://docs.rs/loom)'s models, so your loom tests explore the
//! barrier's interleavings along with yours, and with `--cfg shuttle` to
//! [shuttle](https://docs.rs/shuttle)'s, for randomized schedules. Nothing
//! changes for normal builds. How the crate itself is tested is in the
//! package's
//! [`docs/testing.md`](https://docs.rs/crate/syncthreads/latest/source/docs/testing.md).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

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
pub use launch::{launch, launch_grid, Block, Grid, GridToken, Launcher};
#[cfg(loom)]
#[doc(hidden)]
pub use sync::take_model_events;
pub use team::{Seat, Seats, Team};
pub use token::{ArrivalToken, BarrierWaitResult};
pub use warp::{Tile, WarpBarrier, WarpInt};

/// For syncthreads's own benches (feature `bench`), not a stable API: the
/// switch to spin-only waits, the wait-stage counters and the pool's bare hand-off.
#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench_hooks {
    pub use crate::launch::pool_round_trip;
    pub use crate::wait::policy::{set_policy, Policy};
    pub use crate::wait::stats::{set_stats, take_stats, WaitStats};
}

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
