//! CUDA's block-level synchronization for CPU threads.
//!
//! - [`Barrier`]: the asynchronous barrier (`cuda::barrier`, PTX `mbarrier`):
//!   split [`arrive`](Barrier::arrive) / [`wait`](Barrier::wait), phases and
//!   parity waits, [`arrive_and_drop`](Barrier::arrive_and_drop), a completion
//!   function, transaction counts, timed waits and poisoning, all in one
//!   `AtomicU64`.
//! - [`ArrivalToken`], [`BarrierWaitResult`], [`Completion`]: its companions.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod barrier;
mod park;
mod state;
mod sync;
mod wait;

pub use barrier::{ArrivalToken, Barrier, BarrierWaitResult, Completion};
