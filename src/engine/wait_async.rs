//! The engine's async waits, a `Barrier`'s and a `Team`'s: the methods that make the
//! futures of `future.rs`, and the one poll they all share, which takes the
//! task half of the handshake in `src/wait.rs`.

use super::future::{ParityWaitFuture, WaitFuture};
use super::wait::{End, Target};
use super::Engine;
use crate::completion::Completion;
use crate::diagnostics::Subject;
use crate::park::TaskNode;
use crate::token::ArrivalToken;
use crate::wait::{self, Word};
use std::pin::Pin;
use std::task::{Context, Poll};

impl<F: Completion> Engine<F> {
    /// As `Barrier::wait_async`, a wait on `subject` for the stall reports
    /// (which must own this engine: `future.rs`).
    #[track_caller]
    pub(crate) fn wait_async(&self, token: ArrivalToken, subject: Subject) -> WaitFuture<'_, F> {
        self.check_token("wait_async", &token);
        WaitFuture::new(self, token.phase, subject)
    }

    /// As `Barrier::wait_parity_async`, a wait on `subject`, as `wait_async`.
    #[track_caller]
    pub(crate) fn wait_parity_async(
        &self,
        parity: bool,
        subject: Subject,
    ) -> ParityWaitFuture<'_, F> {
        ParityWaitFuture::new(self, parity, subject)
    }

    /// A node of the task table for this barrier's word.
    pub(crate) fn task_node(&self) -> TaskNode {
        TaskNode::new(self.state.park_key())
    }

    /// One poll of an async wait until the word reaches `target`, a
    /// poisoned barrier or a phase that can never complete (the latter two
    /// panic, naming `op` and `target`, as the blocking waits do).
    pub(crate) fn poll_wait_async(
        &self,
        op: &str,
        node: Pin<&TaskNode>,
        cx: &mut Context<'_>,
        target: Target,
    ) -> Poll<()> {
        let s = self.begin_wait(op);
        wait::poll_wait(&self.state, s, node, cx.waker(), |s| {
            End::classify(s, target)
        })
        .map(|end| {
            end.finish(op, target);
        })
    }
}
