//! Stress: many threads and many phases, oversubscribed on a small machine;
//! each under a watchdog that fails with the decoded word instead of hanging.

mod common;

use common::{assert_one_leader_each, dbg, phase_loop, running};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use syncthreads::Barrier;

#[test]
fn sixteen_threads_twenty_thousand_phases_of_arrive_and_wait() {
    const THREADS: usize = 16;
    const PHASES: usize = 20_000;
    let leaders: Vec<AtomicU8> = (0..PHASES).map(|_| AtomicU8::new(0)).collect();
    let progress: Vec<AtomicUsize> = (0..THREADS).map(|_| AtomicUsize::new(0)).collect();
    let b = Barrier::new(THREADS);
    let start = Instant::now();
    phase_loop(
        45,
        || {
            let progress: Vec<_> = progress.iter().map(|p| p.load(Ordering::Relaxed)).collect();
            format!("{b:?}, phases done per thread: {progress:?}")
        },
        THREADS,
        PHASES,
        |i, p| {
            if b.arrive_and_wait().is_leader() {
                leaders[p].fetch_add(1, Ordering::Relaxed);
            }
            progress[i].store(p + 1, Ordering::Relaxed);
        },
    );
    let took = start.elapsed();
    assert_one_leader_each(leaders.iter().map(|l| l.load(Ordering::Relaxed)));
    assert_eq!(dbg(&b), running(PHASES % 2 == 1, THREADS, THREADS, 0));
    eprintln!("{THREADS} threads x {PHASES} phases: {took:?}");
}

#[test]
fn four_threads_mixing_split_waits_parity_waits_and_tx() {
    const THREADS: usize = 4;
    const PHASES: u64 = 5_000;
    // In phase p, thread i writes slots[p % 2][i] = p before its arrival, by
    // one of five styles chosen by (p + i) % 5, and after its wait checks
    // every slot of that buffer (rewritten only in phase p + 2).
    let slots: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..THREADS).map(|_| AtomicU64::new(u64::MAX)).collect());
    let completed = AtomicU64::new(0);
    let bad = AtomicUsize::new(0);
    let mut phase = 0u64;
    let b = Barrier::with_completion(THREADS, || {
        for slot in &slots[(phase % 2) as usize] {
            // Relaxed: the barrier orders every arrival's writes before us.
            if slot.load(Ordering::Relaxed) != phase {
                bad.fetch_add(1, Ordering::Relaxed);
            }
        }
        phase += 1;
        // Relaxed: ordered before every wait's return by the barrier.
        completed.store(phase, Ordering::Relaxed);
    });
    phase_loop(
        45,
        || format!("{b:?}, completed {}", completed.load(Ordering::Relaxed)),
        THREADS,
        PHASES as usize,
        |i, p| {
            let p = p as u64;
            let buffer = &slots[(p % 2) as usize];
            buffer[i].store(p, Ordering::Relaxed);
            match (p + i as u64) % 5 {
                0 => {
                    b.arrive_and_wait();
                }
                1 => {
                    let t = b.arrive();
                    b.wait(t);
                }
                2 => {
                    // Arrive, drop the token, wait by parity.
                    let parity = b.phase_parity();
                    drop(b.arrive());
                    // Our arrival is in phase p, so the current
                    // phase was p when we read the parity.
                    b.wait_parity(parity);
                }
                3 => {
                    // tx in pieces, some before the expect.
                    b.complete_tx(2);
                    let t = b.arrive_tx(1, 5);
                    b.complete_tx(3);
                    b.wait(t);
                }
                _ => {
                    let mut t = b.arrive();
                    while let Err(back) = b.wait_timeout(t, Duration::from_micros(50)) {
                        t = back;
                    }
                }
            }
            assert_eq!(completed.load(Ordering::Relaxed), p + 1, "thread {i}");
            for (j, slot) in buffer.iter().enumerate() {
                assert_eq!(slot.load(Ordering::Relaxed), p, "thread {i} reading {j}");
            }
        },
    );
    assert_eq!(bad.load(Ordering::Relaxed), 0);
    assert_eq!(completed.load(Ordering::Relaxed), PHASES);
    assert_eq!(dbg(&b), running(PHASES % 2 == 1, THREADS, THREADS, 0));
}
