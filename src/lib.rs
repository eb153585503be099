//! CUDA's block-level synchronization for CPU threads.
//!
//! - [`Barrier`]: the asynchronous barrier (`cuda::barrier`, PTX `mbarrier`):
//!   split [`arrive`](Barrier::arrive) / [`wait`](Barrier::wait), phases and
//!   parity waits, [`arrive_and_drop`](Barrier::arrive_and_drop), a completion
//!   function, transaction counts, timed waits and poisoning, all in one
//!   `AtomicU64`.
//! - [`ArrivalToken`], [`BarrierWaitResult`], [`Completion`]: its companions.
//!
//! ## CUDA's __syncthreads family
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
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod barrier;
mod block;
mod launch;
mod park;
mod state;
mod sync;
mod wait;
mod warp;

pub use barrier::{ArrivalToken, Barrier, BarrierWaitResult, Completion};
pub use block::BlockBarrier;
pub use launch::{launch, Block};
pub use warp::WarpBarrier;
