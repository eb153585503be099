//! An idle process burns no CPU: after launches, the pool's threads poll
//! for a moment and then park. One test in its own process, so that no
//! other test's CPU time is counted.
#![cfg(not(miri))] // a process CPU clock and a second of real time

mod common;

use common::watchdog;
use std::time::Duration;
use syncthreads::launch;

/// The CPU time of the whole process (all threads).
fn process_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec.
    assert_eq!(
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) },
        0
    );
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[test]
fn an_idle_process_burns_no_cpu_after_launches() {
    watchdog(60, String::new, || {
        for round in 0..200 {
            let got = launch(8, |block| block.sync_count(block.thread_rank() < round % 9));
            assert_eq!(got, [(round % 9).min(8); 8]);
        }
    });
    // Seven pool threads are alive now (the keep-alive is seconds); over a
    // second of idleness they may poll for their first milliseconds, then
    // must sleep.
    let before = process_cpu();
    std::thread::sleep(Duration::from_secs(1));
    let burnt = process_cpu() - before;
    assert!(
        burnt < Duration::from_millis(50),
        "the idle pool burnt {burnt:?} of CPU in a second"
    );
}
