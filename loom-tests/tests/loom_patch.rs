//! The patched loom (`loom-track-loads.patch`) is the one these models run
//! on: the smallest case of the reordering loom 0.7.3 missed. The main
//! thread (which loom runs first) only loads `x`; the spawned thread loads
//! `x` and then stores to it. Unpatched, loom checks the store only against
//! the last access to `x` (the spawned thread's own load), never tries it
//! before the main thread's load, and explores one execution in which the
//! main thread reads 0. Patched, the store is checked against every
//! thread's loads since the last store, and the main thread reads 1 too.
//! Both layouts are the same model here: with the reader spawned, loom 0.7.3
//! explores both values already (the reader's load is the last access).

mod common;
use common::model_reaching;
use loom::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    thread,
};

#[test]
fn a_store_after_its_own_load_is_tried_before_another_threads_load() {
    model_reaching(&["read 0", "read 1"], |reach| {
        let x = Arc::new(AtomicUsize::new(0));
        let writer = {
            let x = x.clone();
            thread::spawn(move || {
                // SeqCst: the smallest case, orderings aside.
                let seen = x.load(Ordering::SeqCst);
                x.store(seen + 1, Ordering::SeqCst);
            })
        };
        // SeqCst: as above.
        reach.case(match x.load(Ordering::SeqCst) {
            0 => "read 0",
            _ => "read 1",
        });
        writer.join().unwrap();
    });
}
