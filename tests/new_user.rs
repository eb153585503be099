//! A program written the way a `std::sync::Barrier` user writes one: an
//! `Arc<Barrier>`, `thread::spawn`, one `arrive_and_wait()` per round where
//! std has `wait()`, and exactly one leader per round. Also pins the install
//! line of the README and the quick start to the package's version.

mod common;

use common::watchdog;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use syncthreads::Barrier;

/// `threads` workers, `rounds` rounds: each worker adds its share to a
/// shared total, waits for the round, and the round's leader checks the
/// total and records the round.
fn std_style(threads: usize, rounds: usize) -> (Vec<usize>, usize) {
    let barrier = Arc::new(Barrier::new(threads));
    let total = Arc::new(AtomicUsize::new(0));
    let led = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..threads)
        .map(|id| {
            let (barrier, total, led) =
                (Arc::clone(&barrier), Arc::clone(&total), Arc::clone(&led));
            thread::spawn(move || {
                let mut leader_rounds = 0;
                for round in 0..rounds {
                    total.fetch_add(id + 1, Ordering::Relaxed);
                    // std: `barrier.wait()`
                    let result = barrier.arrive_and_wait();
                    if result.is_leader() {
                        leader_rounds += 1;
                        led.lock().unwrap().push(round);
                    }
                    // Everyone's share of this round is in; nobody adds the
                    // next round's before everyone has read (second wait).
                    let want = (round + 1) * threads * (threads + 1) / 2;
                    assert_eq!(
                        total.load(Ordering::Relaxed),
                        want,
                        "round {round}, thread {id}"
                    );
                    barrier.arrive_and_wait();
                }
                leader_rounds
            })
        })
        .collect();
    let leader_rounds: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let mut led = Arc::try_unwrap(led).unwrap().into_inner().unwrap();
    led.sort_unstable();
    (led, leader_rounds)
}

#[test]
fn a_std_style_program_runs_with_one_leader_per_round() {
    for threads in [1, 2, 5] {
        let (led, leader_rounds) = watchdog(60, String::new, || std_style(threads, 200));
        // Exactly one leader per round (the second wait is not counted).
        assert_eq!(led, (0..200).collect::<Vec<_>>(), "{threads} threads");
        assert_eq!(leader_rounds, 200);
    }
}

#[test]
fn the_install_line_matches_the_package_version() {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.');
    let (major, minor) = (parts.next().unwrap(), parts.next().unwrap());
    let line = format!("syncthreads = \"{major}.{minor}\"");
    for (file, text) in [
        ("README.md", include_str!("../README.md")),
        (
            "docs/quick-start.md",
            include_str!("../docs/quick-start.md"),
        ),
    ] {
        assert!(text.contains(&line), "{file} should show `{line}`");
        assert!(
            text.contains("cargo add syncthreads"),
            "{file} should show `cargo add syncthreads`"
        );
    }
}
