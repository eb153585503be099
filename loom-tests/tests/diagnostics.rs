//! The divergent-`__syncthreads` check (feature `diagnostics`,
//! `src/diagnostics/sites.rs`): the first sync of a phase claims its call
//! site; a sync from the same site passes, one from another site panics
//! once and poisons the block; the claim words are cleared where the
//! predicate counters are, so a site claimed in phase 0 is free again for
//! phase 4, and never seen by phase 2. Nothing is recorded for a wait under
//! `--cfg loom` (a model's atomics cannot live in the process-wide registry),
//! so the waiter record's protocol is modelled on its own, by the crate
//! (`src/diagnostics/slot.rs`), run from here.
#![cfg(feature = "diagnostics")]

mod common;
use common::{model, model_reaching, model_reaching_bounded, panic_message, quiet_expected_panics};
use loom::{sync::Arc, thread};
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::BlockBarrier;

/// One call site for every sync of both threads.
fn step(block: &BlockBarrier) {
    block.sync();
}

/// Three phases from one call site: the leader of phase 0 clears phase 2's
/// claim while phase 2's first sync may be near, and no sync is divergent.
/// At a preemption bound capped at 1: the waits' park paths make three
/// phases of two threads explode at 2 on the patched loom (as `block.rs`'s
/// `sync` model), and a clear racing a claim needs one preemption between
/// the leader's clear and the other thread's check.
///
/// Cases: a sync slept until the other thread's woke it, a sync about to
/// sleep found its phase completed under the parking lot's lock. One
/// layout: both threads run the same syncs.
#[test]
fn the_same_call_site_passes_every_phase() {
    model_reaching_bounded(1, &["event:park-sleeps", "event:park-refused"], |reach| {
        let block = Arc::new(BlockBarrier::new(2));
        let other = {
            let block = block.clone();
            thread::spawn(move || (0..3).for_each(|_| step(&block)))
        };
        (0..3).for_each(|_| step(&block));
        other.join().unwrap();
        assert!(!block.is_poisoned());
        let _ = reach.events();
    });
}

/// Two call sites in phase 0: exactly one thread panics with the divergence
/// (whichever came second), the other sees the poisoned block; nobody hangs.
///
/// Cases: the main thread's sync was the divergent one, the spawned
/// thread's was; the other slept until the poison woke it. One layout:
/// each thread is the divergent one in it (the cases).
#[test]
fn two_call_sites_panic_once_and_poison() {
    quiet_expected_panics();
    let cases = &[
        "the main thread diverged",
        "the spawned thread diverged",
        "event:park-sleeps",
    ];
    model_reaching(cases, |reach| {
        let block = Arc::new(BlockBarrier::new(2));
        let other = {
            let block = block.clone();
            thread::spawn(move || {
                catch_unwind(AssertUnwindSafe(|| block.sync())).map_err(|p| panic_message(&*p))
            })
        };
        let mine = catch_unwind(AssertUnwindSafe(|| block.sync())).map_err(|p| panic_message(&*p));
        let theirs = other.join().unwrap();
        reach.either(
            matches!(&mine, Err(m) if m.starts_with("syncthreads: divergent")),
            "the main thread diverged",
            "the spawned thread diverged",
        );
        let _ = reach.events();
        let all = [mine, theirs];
        let divergent = all
            .iter()
            .filter(|r| matches!(r, Err(m) if m.starts_with("syncthreads: divergent __syncthreads in phase 0")))
            .count();
        let poisoned = all
            .iter()
            .filter(|r| matches!(r, Err(m) if m.starts_with("syncthreads: barrier poisoned")))
            .count();
        assert_eq!((divergent, poisoned), (1, 1), "{all:?}");
        assert!(block.is_poisoned());
    });
}

/// The waiter record (`src/diagnostics/slot.rs`): a reader of `stalls()`
/// never reads a half-written record, nor the barrier it describes after the
/// wait ended. No cases here: the model is the crate's own (the record is
/// private), its outcomes are not visible from this file; its count is
/// pinned.
#[test]
fn a_stall_reader_never_outlives_the_wait() {
    model(syncthreads::diagnostics::model_a_reader_never_outlives_the_wait);
}
