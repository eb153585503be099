//! The completion function runs exactly once per phase, before any wait of
//! the phase returns, and sees every arriver's writes; an arrival for the next
//! phase that lands while it runs waits for the next phase and counts there
//! (never in the completing phase, never twice).
//!
//! Cases: the main thread's arrival completed phase 0 (its completion runs
//! there and opens the window to the other thread), the other thread's did;
//! the other thread's phase-1 arrival landed while phase 0's completion
//! still ran and waited it out (`event:op-waits-out-completion`, the window
//! this model is about); a wait slept. One layout:
//! both threads complete phase 0 in it (the cases), and the early arriver
//! needs the other to be inside the completion, not to run first.

mod common;
use common::{model_reaching, Slots};
use loom::{
    cell::UnsafeCell,
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Notify,
    },
    thread,
};
use syncthreads::Barrier;

const PHASES: usize = 2;
/// Slot of thread `t`'s data for phase `p`.
fn slot(p: usize, t: usize) -> usize {
    p * 2 + t
}
/// Slot the completion function of phase `p` writes, read after the wait.
fn result(p: usize) -> usize {
    4 + p
}

#[test]
fn completion_once_per_phase_sees_all_arrivals() {
    let cases = &[
        "the main thread completed phase 0",
        "the other thread completed phase 0",
        "event:op-waits-out-completion",
        "event:park-sleeps",
    ];
    model_reaching(cases, |reach| {
        let slots = Arc::new(Slots::new(6));
        let runs = Arc::new(AtomicUsize::new(0));
        // Opened by phase 0's completion function, from inside the window.
        // (loom's `Notify` may wake spuriously: the flag says it is open.)
        let window = Arc::new((AtomicBool::new(false), Notify::new()));
        // The completion's own state: loom checks that successive runs are
        // ordered (the barrier's `impl Sync` relies on it).
        let phase = UnsafeCell::new(0usize);
        let barrier = {
            let (slots, runs, window) = (slots.clone(), runs.clone(), window.clone());
            Arc::new(Barrier::with_completion(2, move || {
                // SAFETY: loom fails the model if two runs are not ordered.
                let p = phase.with_mut(|p| unsafe {
                    *p += 1;
                    *p - 1
                });
                assert!(
                    p < PHASES,
                    "completion ran more often than phases completed"
                );
                assert_eq!(slots.get(slot(p, 0)), p * 10);
                assert_eq!(slots.get(slot(p, 1)), p * 10 + 1);
                slots.set(result(p), 100 + p);
                // Relaxed: read after the joins.
                runs.fetch_add(1, Ordering::Relaxed);
                if p == 0 {
                    // Relaxed: the flag only filters spurious wakes; the arrival
                    // that follows it is an RMW, which reads the latest word anyway.
                    window.0.store(true, Ordering::Relaxed);
                    window.1.notify();
                }
            }))
        };
        // Thread 1 arrives for phase 0, and as soon as phase 0's completion
        // has started (not ended), arrives again: for phase 1, possibly while
        // the completion function still runs on the main thread.
        let early = {
            let (barrier, slots) = (barrier.clone(), slots.clone());
            thread::spawn(move || {
                slots.set(slot(0, 1), 1);
                let first = barrier.arrive();
                while !window.0.load(Ordering::Relaxed) {
                    window.1.wait();
                }
                slots.set(slot(1, 1), 11);
                let second = barrier.arrive();
                barrier.wait(first);
                assert_eq!(slots.get(result(0)), 100);
                barrier.wait(second);
                assert_eq!(slots.get(result(1)), 101);
            })
        };
        for p in 0..PHASES {
            slots.set(slot(p, 0), p * 10);
            let led = barrier.arrive_and_wait().is_leader();
            if p == 0 {
                reach.either(
                    led,
                    "the main thread completed phase 0",
                    "the other thread completed phase 0",
                );
            }
            assert_eq!(slots.get(result(p)), 100 + p);
        }
        early.join().unwrap();
        let _ = reach.events();
        // Relaxed: every run happened-before the joins.
        assert_eq!(runs.load(Ordering::Relaxed), PHASES);
        assert!(!barrier.phase_parity(), "two phases completed");
    });
}
