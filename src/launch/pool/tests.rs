//! The pool's own tests: a panic while a launch hands out its ranks.

use super::*;
use std::sync::atomic::AtomicUsize;

std::thread_local! {
    /// The hand-out at which this thread's next launch panics.
    static FAIL_AT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Panics at hand-out `claimed` of a launch that asked for it.
pub(super) fn fail_point(claimed: usize) {
    if FAIL_AT.get() == Some(claimed) {
        FAIL_AT.set(None);
        panic!("injected: hand-out {claimed}");
    }
}

/// A rank of a job that is one `AtomicUsize`: counts itself in, then
/// waits until `abort` adds `usize::MAX / 2`. (Relaxed throughout: one
/// counter of RMWs, read at the end after the launch, whose return
/// orders every rank before it.)
unsafe fn count_and_wait(job: *const (), _rank: usize) {
    // SAFETY: the test's job outlives the launch.
    let job = unsafe { &*job.cast::<AtomicUsize>() };
    job.fetch_add(1, Ordering::Relaxed);
    while job.load(Ordering::Relaxed) < usize::MAX / 2 {
        std::thread::yield_now();
    }
}

unsafe fn nop(_: *const (), _: usize) {}

#[test]
fn a_panic_while_handing_out_ends_the_started_ranks_and_is_reported() {
    // The body on a thread of its own: a hang fails the test after a
    // minute instead of hanging the suite.
    let (done, finished) = std::sync::mpsc::channel();
    let body = std::thread::spawn(move || {
        let pool = Pool::new(Config {
            crew: false,
            ..Config::default()
        });
        // Two idle workers.
        // SAFETY: `nop` touches nothing.
        assert!(unsafe { pool.run(3, ptr::null(), nop, &|| ()) }.is_ok());
        let job = AtomicUsize::new(0);
        let abort = || {
            job.fetch_add(usize::MAX / 2, Ordering::Relaxed);
        };
        // A launch of five that panics at its third hand-out, after
        // claiming both workers.
        FAIL_AT.set(Some(2));
        let ptr: *const () = ptr::from_ref(&job).cast();
        // SAFETY: `count_and_wait` only touches `job`, which outlives the call.
        let failed = unsafe { pool.run(5, ptr, count_and_wait, &abort) }.err();
        let failed = failed.expect("the injected panic is reported");
        assert_eq!(failed.rank, 3);
        match failed.cause {
            StartCause::Panic(payload) => assert_eq!(
                payload.downcast_ref::<String>().map(String::as_str),
                Some("injected: hand-out 2")
            ),
            StartCause::Spawn(e) => panic!("a spawn error: {e}"),
        }
        // The two claimed ranks ran, were ended, and handed back.
        assert_eq!(job.load(Ordering::Relaxed), usize::MAX / 2 + 2);
        assert_eq!(pool.live(), 2);
        // SAFETY: as the first run.
        assert!(unsafe { pool.run(3, ptr::null(), nop, &|| ()) }.is_ok());
        pool.shut_down();
        done.send(()).unwrap();
    });
    match finished.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("the launch hung"),
        Err(_) => panic::resume_unwind(body.join().unwrap_err()),
    }
}
