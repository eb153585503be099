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
        // Until the crate is published, the line that works today.
        assert!(
            text.contains("cargo add --path"),
            "{file} should show `cargo add --path`"
        );
    }
}

/// Set in the child run of the test below.
#[cfg(not(feature = "diagnostics"))]
const CHILD: &str = "SYNCTHREADS_TEST_CHILD";

/// The child's program: a thread waits long enough to park, three times.
#[cfg(not(feature = "diagnostics"))]
#[test]
fn child_waits_that_park() {
    if std::env::var_os(CHILD).is_none() {
        return; // only as a child
    }
    let barrier = Barrier::new(2);
    thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..3 {
                barrier.arrive_and_wait();
            }
        });
        for _ in 0..3 {
            // Late, so that the other thread's wait parks.
            thread::sleep(std::time::Duration::from_millis(50));
            barrier.arrive_and_wait();
        }
    });
}

/// A user who sets `SYNCTHREADS_STALL_REPORT` in a build without the
/// `diagnostics` feature is told, once, instead of waiting for a report
/// that never comes.
#[cfg(not(feature = "diagnostics"))]
#[test]
#[cfg_attr(miri, ignore = "spawns a child process, which Miri cannot")]
fn the_stall_report_variable_without_the_feature_says_so_once() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["child_waits_that_park", "--exact", "--nocapture"])
        .env(CHILD, "1")
        .env("SYNCTHREADS_STALL_REPORT", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = "syncthreads: SYNCTHREADS_STALL_REPORT is set, but stall reports need the `diagnostics` feature";
    assert_eq!(stderr.matches(line).count(), 1, "{stderr}");
}
