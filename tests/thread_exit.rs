//! Leaving a barrier from a thread-local destructor at thread exit: the
//! leaving arrival may complete the phase and run the completion function
//! while the thread's other thread-locals are already gone.
//!
//! A failure here can abort the process ("thread local panicked on drop"),
//! so the scenario runs in a child process (this same test binary, filtered
//! to one test) and the parent checks how the child ended.

mod common;

use common::{dbg, running, watchdog};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use syncthreads::Barrier;

const CHILD_ENV: &str = "SYNCTHREADS_TEST_THREAD_EXIT_CHILD";

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn count_run() {
    RUNS.fetch_add(1, Ordering::Relaxed);
}

static BARRIER: LazyLock<Barrier<fn()>> =
    LazyLock::new(|| Barrier::with_completion(2, count_run as fn()));

/// Leaves `BARRIER` when the thread's thread-locals are destroyed.
struct LeaveOnThreadExit;

impl Drop for LeaveOnThreadExit {
    fn drop(&mut self) {
        BARRIER.arrive_and_drop();
    }
}

thread_local! {
    static GUARD: LeaveOnThreadExit = const { LeaveOnThreadExit };
}

/// The scenario, run only in the child process.
fn leave_from_a_thread_local_destructor() {
    let b = &*BARRIER;
    let t = b.arrive();
    watchdog(
        20,
        || dbg(b),
        || {
            std::thread::spawn(|| {
                // Register the guard's destructor before the crate's own
                // thread-locals (the completion below touches them), so that
                // they are destroyed first and the guard runs last.
                GUARD.with(|_| {});
                let solo = Barrier::with_completion(1, || {});
                solo.arrive_and_wait();
                // Thread exit: the guard's arrive_and_drop completes phase 0.
            })
            .join()
            .expect("the leaving thread ended normally");
            b.wait(t);
        },
    );
    assert_eq!(RUNS.load(Ordering::Relaxed), 1, "the completion ran once");
    assert_eq!(dbg(b), running(true, 1, 1, 0));
}

#[test]
fn leaving_from_a_thread_local_destructor_completes_the_phase() {
    if std::env::var_os(CHILD_ENV).is_some() {
        leave_from_a_thread_local_destructor();
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "leaving_from_a_thread_local_destructor_completes_the_phase",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run the child test process");
    assert!(
        output.status.success(),
        "the child process failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}
