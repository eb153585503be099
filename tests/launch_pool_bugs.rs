//! Regressions of the launch pool under odd but legal configurations and
//! thread exits: a keep-alive of `Duration::MAX`, a launch from a pool
//! thread's thread-local destructor (on its own pool, and one that waits
//! for a later launch), and a panic between the first claimed rank and the
//! last (a name prefix that cannot name a thread, refused when it is set).
//! Each hang is a watchdog failure, not a CI timeout.

mod common;

use common::{panic_message, panic_of, watchdog, within};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use syncthreads::{launch, Launcher};

#[test]
fn a_keep_alive_of_duration_max_keeps_idle_threads_for_the_next_launch() {
    if cfg!(miri) {
        return; // the idle threads must reach their park: real time
    }
    for keep_alive in [Duration::MAX, Duration::new(u64::MAX, 0)] {
        let launcher = Launcher::new().keep_alive(keep_alive);
        watchdog(60, String::new, || {
            assert_eq!(launcher.launch(3, |b| b.sync_count(true)), [3; 3]);
            // Past the idle threads' poll: they park with no deadline.
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(launcher.live_threads(), 2, "{launcher:?}");
            assert_eq!(launcher.launch(3, |b| b.sync_count(true)), [3; 3]);
            assert_eq!(launcher.live_threads(), 2, "{launcher:?}");
        });
        // Drop wakes and joins the threads that would never leave.
        watchdog(60, String::new, || drop(launcher));
    }
}

#[test]
fn tiny_and_zero_keep_alives_work() {
    for keep_alive in [Duration::ZERO, Duration::from_nanos(1)] {
        let launcher = Launcher::new().keep_alive(keep_alive);
        watchdog(60, String::new, || {
            for _ in 0..20 {
                assert_eq!(launcher.launch(3, |b| b.sync_count(true)), [3; 3]);
            }
            assert!(within(20, || launcher.live_threads() == 0), "{launcher:?}");
        });
    }
}

/// A value whose drop, on the thread that owns it, runs `on_drop`.
struct OnExit(Option<Box<dyn FnOnce()>>);

impl Drop for OnExit {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

thread_local! {
    static ON_EXIT: RefCell<Option<OnExit>> = const { RefCell::new(None) };
}

/// Runs `f` in this thread's thread-local destructors.
fn at_thread_exit(f: impl FnOnce() + 'static) {
    ON_EXIT.with(|e| *e.borrow_mut() = Some(OnExit(Some(Box::new(f)))));
}

/// A launcher that lives for the rest of the process, so that a pool
/// thread's destructor may launch on it.
fn leaked(launcher: Launcher) -> &'static Launcher {
    Box::leak(Box::new(launcher))
}

/// Launches 2 on `launcher`; rank 1's thread, when it leaves the pool
/// (its keep-alive passed), runs `exit_launch` in its thread-local
/// destructors. Returns what that launch returned, or its panic.
fn launch_from_a_leaving_thread(
    launcher: &Launcher,
    exit_launch: impl Fn() -> Vec<usize> + Send + Sync + 'static,
) -> Result<Vec<usize>, String> {
    let (tx, rx) = mpsc::channel::<Result<Vec<usize>, String>>();
    let tx = Mutex::new(tx);
    let exit_launch = std::sync::Arc::new(exit_launch);
    launcher.launch(2, |block| {
        if block.thread_rank() == 1 {
            let tx = tx.lock().unwrap().clone();
            let exit_launch = std::sync::Arc::clone(&exit_launch);
            at_thread_exit(move || {
                let ran = catch_unwind(AssertUnwindSafe(|| exit_launch()))
                    .map_err(|p| panic_message(&*p));
                let _ = tx.send(ran);
            });
        }
        block.sync();
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the destructor's launch returned")
}

#[test]
fn a_pool_threads_destructor_launches_on_its_own_pool() {
    let launcher = leaked(Launcher::new().keep_alive(Duration::from_millis(10)));
    watchdog(60, String::new, || {
        // The launch reuses the leaving thread's own place.
        let ran = launch_from_a_leaving_thread(launcher, move || {
            launcher.launch(2, |b| b.sync_count(true))
        });
        assert_eq!(ran, Ok(vec![2, 2]));
    });
}

/// A launcher's drop joins its threads; a joined thread's destructor that
/// launches on that very launcher adds threads to it while the drop runs,
/// and the drop joins those too: none outlives it.
#[test]
fn a_launcher_drop_joins_the_threads_a_destructor_launched_while_it_joined() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    /// The threads of the destructor's launch that ran their own
    /// destructors, i.e. exited.
    static EXITED: AtomicUsize = AtomicUsize::new(0);
    /// The launcher, for the destructor: a raw address, valid while its
    /// drop runs in place (the drop joins the thread whose destructor uses
    /// it).
    struct During(*const Launcher);
    // SAFETY: only an address, dereferenced under the drop's join (below).
    unsafe impl Send for During {}
    // SAFETY: as above.
    unsafe impl Sync for During {}
    watchdog(60, String::new, || {
        // Threads that never leave on their own: only the drop ends them.
        // Boxed, so that its drop runs where the destructor's address
        // points (`drop` of a plain local would move it first).
        let launcher = Box::new(Launcher::new().keep_alive(Duration::MAX));
        let during = &During(&*launcher);
        launcher.launch(2, |block| {
            if block.thread_rank() == 1 {
                let during = During(during.0);
                at_thread_exit(move || {
                    // SAFETY: this thread exits while the launcher's drop
                    // joins it, before that drop returns: the launcher is
                    // alive (its drop has not ended).
                    let launcher = unsafe { &*during.0 };
                    // Two new pool threads, each counting its own exit.
                    launcher.launch(3, |b| {
                        if b.thread_rank() > 0 {
                            at_thread_exit(|| {
                                EXITED.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    });
                });
            }
            block.sync();
        });
        drop(launcher);
        // Both threads the destructor's launch added were joined by the
        // drop: they exited before it returned.
        assert_eq!(EXITED.load(Ordering::Relaxed), 2);
    });
}

#[test]
fn a_pool_threads_destructor_launches_on_the_default_pool() {
    let launcher = Launcher::new().keep_alive(Duration::from_millis(10));
    watchdog(60, String::new, || {
        let ran = launch_from_a_leaving_thread(&launcher, || launch(3, |b| b.sync_count(true)));
        assert_eq!(ran, Ok(vec![3, 3, 3]));
    });
}

/// A flag that a thread can wait on for a while.
struct Flag(Mutex<bool>, Condvar);

impl Flag {
    const fn new() -> Flag {
        Flag(Mutex::new(false), Condvar::new())
    }

    fn set(&self) {
        *self.0.lock().unwrap() = true;
        self.1.notify_all();
    }

    /// Whether it was set within `wait`.
    fn wait(&self, wait: Duration) -> bool {
        let guard = self.0.lock().unwrap();
        let (guard, _) = self.1.wait_timeout_while(guard, wait, |set| !*set).unwrap();
        *guard
    }
}

#[test]
fn a_leaving_threads_destructors_delay_no_launch() {
    // The destructor of the leaving thread waits (up to 20 s) for the
    // launch that takes its place to have returned: that launch must not
    // wait for the destructor.
    static LATER_LAUNCH_DONE: Flag = Flag::new();
    static DESTRUCTOR_STARTED: Flag = Flag::new();
    let launcher = Launcher::new().keep_alive(Duration::from_millis(10));
    watchdog(60, String::new, || {
        launcher.launch(2, |block| {
            if block.thread_rank() == 1 {
                at_thread_exit(|| {
                    DESTRUCTOR_STARTED.set();
                    LATER_LAUNCH_DONE.wait(Duration::from_secs(20));
                });
            }
            block.sync();
        });
        assert!(DESTRUCTOR_STARTED.wait(Duration::from_secs(20)));
        assert_eq!(launcher.live_threads(), 0, "{launcher:?}");
        let start = Instant::now();
        assert_eq!(launcher.launch(2, |b| b.sync_count(true)), [2, 2]);
        let took = start.elapsed();
        LATER_LAUNCH_DONE.set();
        assert!(
            took < Duration::from_secs(10),
            "the launch waited {took:?} for a leaving thread's destructors"
        );
        // Drop joins every thread, the one whose destructor ran too.
        drop(launcher);
    });
}

#[test]
fn a_name_prefix_with_a_nul_byte_is_refused_when_set() {
    let message = panic_of(|| Launcher::new().name_prefix("ps\0nul"));
    assert_eq!(
        message,
        "syncthreads: Launcher::name_prefix(\"ps\\0nul\"): a thread name cannot hold a NUL byte (byte 2)"
    );
}

#[test]
fn a_bad_name_prefix_on_a_pool_with_idle_threads_strands_no_rank() {
    // Two idle threads, then a prefix no thread can be named with: refused
    // at once, with the pool's threads untouched (a launch needing a third
    // thread would otherwise claim the two, then fail to spawn).
    let launcher = Launcher::new();
    assert_eq!(launcher.launch(3, |b| b.sync_count(true)), [3; 3]);
    let renamed = catch_unwind(AssertUnwindSafe(move || launcher.name_prefix("ps\0nul")));
    match renamed {
        Err(payload) => assert!(
            panic_message(&*payload).contains("NUL byte (byte 2)"),
            "{}",
            panic_message(&*payload)
        ),
        Ok(launcher) => {
            let ran = watchdog(20, String::new, || {
                catch_unwind(AssertUnwindSafe(|| launcher.launch(5, |b| b.sync())))
                    .map_err(|p| panic_message(&*p))
            });
            panic!("the prefix was accepted; the launch gave {ran:?}");
        }
    }
}
