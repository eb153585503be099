//! `BlockBarrier` (`__syncthreads*`): every thread of a phase gets the same
//! `sync_count` result, consecutive phases never mix their predicates, and
//! `sync` publishes the writes made before it. Over three phases the model
//! races both edges of the counter clears (block.rs): the leader of phase 0
//! clears phase 2's counter while phase 2's adds may be near, and the leader
//! of phase 2 clears phase 0's counter while phase 0's readers may be late.
//! (Five phases, to see a cleared counter reused, ran over 4 minutes even at
//! preemption bound 2; `tests/block.rs` covers reuse over thousands of phases.)

mod common;
use common::{model, Slots};
use loom::{sync::Arc, thread};
use mbarrier::BlockBarrier;

const PHASES: usize = 3;

/// Thread `me`'s predicate in phase `k`; with 2 threads the true ones per
/// phase are 2, 1, 0.
fn pred(me: usize, k: usize) -> bool {
    (me + k) % 4 < 2
}

fn expected_count(threads: usize, k: usize) -> usize {
    (0..threads).filter(|&t| pred(t, k)).count()
}

#[test]
fn sync_count_per_phase_never_mixes_phases() {
    model(|| {
        let block = Arc::new(BlockBarrier::new(2));
        let other = {
            let block = block.clone();
            thread::spawn(move || {
                (0..PHASES)
                    .map(|k| block.sync_count(pred(1, k)))
                    .collect::<Vec<_>>()
            })
        };
        let mine: Vec<_> = (0..PHASES).map(|k| block.sync_count(pred(0, k))).collect();
        let theirs = other.join().unwrap();
        let expected: Vec<_> = (0..PHASES).map(|k| expected_count(2, k)).collect();
        assert_eq!(expected, [2, 1, 0]);
        assert_eq!(mine, expected);
        assert_eq!(theirs, expected);
    });
}

#[test]
fn three_threads_agree_on_sync_and_or() {
    model(|| {
        let block = Arc::new(BlockBarrier::new(3));
        let others: Vec<_> = (1..3)
            .map(|me| {
                let block = block.clone();
                thread::spawn(move || block.sync_or(me == 2))
            })
            .collect();
        assert!(
            block.sync_or(false),
            "lane 2's true predicate is seen by all"
        );
        for other in others {
            assert!(other.join().unwrap());
        }
    });
}

#[test]
fn sync_publishes_writes() {
    model(|| {
        let shared = Arc::new((BlockBarrier::new(2), Slots::new(4)));
        let other = {
            let shared = shared.clone();
            thread::spawn(move || {
                let (block, slots) = &*shared;
                for k in 0..PHASES {
                    slots.set((k % 2) * 2 + 1, k);
                    block.sync();
                    assert_eq!(slots.get((k % 2) * 2), k);
                }
            })
        };
        let (block, slots) = &*shared;
        for k in 0..PHASES {
            slots.set((k % 2) * 2, k);
            block.sync();
            assert_eq!(slots.get((k % 2) * 2 + 1), k);
        }
        other.join().unwrap();
    });
}
