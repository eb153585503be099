//! `arrive_and_drop` while another thread waits: the dropping arrival counts
//! for the current phase, and every later phase owes one arrival fewer (if it
//! did not, phase 1 could never complete and loom would report a deadlock).

mod common;
use common::{both_layouts, Slots};
use loom::{sync::Arc, thread};
use syncthreads::Barrier;

const PHASES: usize = 3;

/// Both layouts (`common::both_layouts`): the stayer on the main thread,
/// then the leaver. The cases: the stayer's arrival completed phase 0 (it
/// led), or the leaver's drop did.
#[test]
fn dropping_participant_counts_once_then_is_not_waited_for() {
    // Slots 0..2: the stayer's data per parity; slot 2: the leaver's.
    both_layouts(
        &["the stayer completed phase 0", "the drop completed phase 0"],
        || (Barrier::new(2), Slots::new(3)),
        |(barrier, slots), reach| {
            for phase in 0..PHASES {
                slots.set(phase % 2, phase);
                let led = barrier.arrive_and_wait().is_leader();
                if phase == 0 {
                    reach.case(if led {
                        "the stayer completed phase 0"
                    } else {
                        "the drop completed phase 0"
                    });
                }
                assert_eq!(slots.get(phase % 2), phase);
                // The leaver's write came before its (phase 0) arrival.
                assert_eq!(slots.get(2), 42);
            }
        },
        |(barrier, slots), _| {
            slots.set(2, 42);
            barrier.arrive_and_drop();
        },
        |(barrier, _)| {
            assert_eq!(
                format!("{barrier:?}"),
                "Barrier { phase_parity: true, pending: 1, expected: 1, tx: 0, poisoned: false }"
            );
        },
    );
}

/// Cases: the spawned thread's drop returned first, the main thread's did
/// (the drops land in either order). One layout: both threads run the same drop.
#[test]
fn last_participants_leaving_retire_the_barrier() {
    common::quiet_expected_panics();
    let cases = &[
        "the spawned thread's drop returned first",
        "the main thread's drop returned first",
    ];
    common::model_reaching(cases, |reach| {
        // Outside the model: the spawned thread's drop returned.
        let done = common::Order::new();
        let barrier = Arc::new(Barrier::new(2));
        let other = {
            let (barrier, done) = (barrier.clone(), done.clone());
            thread::spawn(move || {
                barrier.arrive_and_drop();
                done.set(1);
            })
        };
        barrier.arrive_and_drop();
        reach.either(
            done.get() == 1,
            "the spawned thread's drop returned first",
            "the main thread's drop returned first",
        );
        other.join().unwrap();
        // Both dropped in phase 0: it completed, and phase 1 can never.
        assert!(barrier.phase_parity());
        let retired = std::panic::catch_unwind(|| drop(barrier.arrive()));
        assert!(retired.is_err(), "arrive on a retired barrier panics");
    });
}
