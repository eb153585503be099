//! The completion function: once per phase, on the completer, after every
//! arrival and before every wait returns; what the barrier answers from inside
//! it; arrivals that land while it runs (SPEC §1, "Completing a phase").

mod common;

use common::{dbg, eventually, on_threads, panic_message, running, scaled, watchdog};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};
use syncthreads::{ArrivalToken, Barrier};

#[test]
fn completion_runs_once_per_phase_when_the_last_arrival_lands() {
    let runs = AtomicUsize::new(0);
    let b = Barrier::with_completion(3, || {
        runs.fetch_add(1, Ordering::Relaxed);
    });
    for phase in 0..5 {
        let t = b.arrive_n(2);
        assert_eq!(runs.load(Ordering::Relaxed), phase);
        assert!(b.arrive_and_wait().is_leader());
        assert_eq!(runs.load(Ordering::Relaxed), phase + 1);
        b.wait(t);
    }
}

#[test]
fn completion_state_persists_across_phases() {
    let seen = Mutex::new(Vec::new());
    let mut phase = 0u32;
    {
        let b = Barrier::with_completion(1, || {
            seen.lock().unwrap().push(phase);
            phase += 1;
        });
        for _ in 0..4 {
            drop(b.arrive());
        }
    }
    assert_eq!(phase, 4);
    assert_eq!(*seen.lock().unwrap(), vec![0, 1, 2, 3]);
}

// ---- inside the completion function ------------------------------------------

/// What the completion function of `SELF_QUERY` saw.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    try_wait: Option<bool>,
    phase_parity: Option<bool>,
    try_wait_parity_false: Option<bool>,
    try_wait_parity_true: Option<bool>,
    is_poisoned: Option<bool>,
    debug: String,
}

static SELF_QUERY: OnceLock<Barrier<fn()>> = OnceLock::new();
static QUERY_TOKEN: Mutex<Option<ArrivalToken>> = Mutex::new(None);
static QUERY_SEEN: Mutex<Option<Seen>> = Mutex::new(None);

fn query_inside_completion() {
    let b = SELF_QUERY.get().expect("barrier set");
    let token = QUERY_TOKEN.lock().unwrap();
    let seen = Seen {
        try_wait: token.as_ref().map(|t| b.try_wait(t)),
        phase_parity: Some(b.phase_parity()),
        try_wait_parity_false: Some(b.try_wait_parity(false)),
        try_wait_parity_true: Some(b.try_wait_parity(true)),
        is_poisoned: Some(b.is_poisoned()),
        debug: dbg(b),
    };
    *QUERY_SEEN.lock().unwrap() = Some(seen);
}

#[test]
fn queries_inside_the_own_completion_report_the_phase_incomplete() {
    let b = SELF_QUERY.get_or_init(|| Barrier::with_completion(2, query_inside_completion as fn()));
    *QUERY_TOKEN.lock().unwrap() = Some(b.arrive());
    drop(b.arrive()); // completes phase 0: the completion runs here
    let seen = QUERY_SEEN.lock().unwrap().take().expect("completion ran");
    assert_eq!(seen.try_wait, Some(false), "{seen:?}");
    assert_eq!(seen.phase_parity, Some(false), "{seen:?}");
    assert_eq!(seen.try_wait_parity_false, Some(false), "{seen:?}");
    assert_eq!(seen.try_wait_parity_true, Some(true), "{seen:?}");
    assert_eq!(seen.is_poisoned, Some(false), "{seen:?}");
    assert!(
        seen.debug.starts_with("Barrier { phase_parity: false,"),
        "{seen:?}"
    );
    assert!(seen.debug.ends_with("poisoned: false }"), "{seen:?}");
    // Afterwards the phase is complete.
    let t = QUERY_TOKEN.lock().unwrap().take().unwrap();
    assert!(b.try_wait(&t));
    b.wait(t);
    assert_eq!(dbg(b), running(true, 2, 2, 0));
}

static SELF_OPS: OnceLock<Barrier<fn()>> = OnceLock::new();
static OPS_TOKENS: Mutex<Vec<ArrivalToken>> = Mutex::new(Vec::new());
static OPS_MESSAGES: Mutex<Vec<(&str, String)>> = Mutex::new(Vec::new());

fn ops_inside_completion() {
    let b = SELF_OPS.get().expect("barrier set");
    let mut tokens = std::mem::take(&mut *OPS_TOKENS.lock().unwrap());
    let mut out = Vec::new();
    let mut record = |name: &'static str, f: &mut dyn FnMut()| {
        let message = match catch_unwind(AssertUnwindSafe(f)) {
            Ok(()) => "<returned>".to_owned(),
            Err(p) => panic_message(&*p),
        };
        out.push((name, message));
    };
    record("arrive()", &mut || drop(b.arrive()));
    record("arrive_n(1)", &mut || drop(b.arrive_n(1)));
    record("arrive_and_wait()", &mut || {
        let _ = b.arrive_and_wait();
    });
    record("arrive_and_drop()", &mut || b.arrive_and_drop());
    record("arrive_and_drop_n(1)", &mut || b.arrive_and_drop_n(1));
    record("arrive_tx(1, 1)", &mut || drop(b.arrive_tx(1, 1)));
    record("expect_tx(1)", &mut || b.expect_tx(1));
    record("complete_tx(1)", &mut || b.complete_tx(1));
    // The waits consume their token; `Cell` moves it out of the `FnMut`.
    let t = Cell::new(tokens.pop());
    record("wait", &mut || b.wait(t.take().unwrap()));
    let t = Cell::new(tokens.pop());
    record("wait_timeout", &mut || {
        drop(b.wait_timeout(t.take().unwrap(), Duration::ZERO))
    });
    let t = Cell::new(tokens.pop());
    record("wait_deadline", &mut || {
        drop(b.wait_deadline(t.take().unwrap(), Instant::now()))
    });
    record("wait_parity", &mut || b.wait_parity(false));
    record("wait_parity", &mut || b.wait_parity(true));
    record("wait_parity_timeout", &mut || {
        let _ = b.wait_parity_timeout(false, Duration::ZERO);
    });
    *OPS_MESSAGES.lock().unwrap() = out;
}

#[test]
fn waits_and_mutations_inside_the_own_completion_panic_and_change_nothing() {
    let b = SELF_OPS.get_or_init(|| Barrier::with_completion(4, ops_inside_completion as fn()));
    let tokens: Vec<_> = (0..3).map(|_| b.arrive()).collect();
    *OPS_TOKENS.lock().unwrap() = tokens;
    // The last arrival completes phase 0 and runs the completion here.
    assert!(b.arrive_and_wait().is_leader());
    let messages = std::mem::take(&mut *OPS_MESSAGES.lock().unwrap());
    assert_eq!(messages.len(), 14);
    for (op, message) in &messages {
        assert_eq!(
            message,
            &format!(
                "syncthreads: {op}: called inside this barrier's own completion function, where it would deadlock"
            )
        );
    }
    // None of them counted, and the caught panics did not poison the barrier.
    assert!(!b.is_poisoned());
    assert_eq!(dbg(b), running(true, 4, 4, 0));
}

static SELF_ARRIVE: OnceLock<Barrier<fn()>> = OnceLock::new();

fn arrive_inside_completion() {
    drop(SELF_ARRIVE.get().expect("barrier set").arrive());
}

#[test]
#[should_panic(
    expected = "syncthreads: arrive(): called inside this barrier's own completion function"
)]
fn arrive_inside_the_own_completion_panics_instead_of_deadlocking() {
    let b =
        SELF_ARRIVE.get_or_init(|| Barrier::with_completion(1, arrive_inside_completion as fn()));
    watchdog(20, || dbg(b), || drop(b.arrive()));
}

// ---- completion and unwinding ----------------------------------------------------

/// Runs a closure when dropped, e.g. while its thread unwinds.
struct OnDrop<F: FnMut()>(F);
impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

#[test]
fn completion_run_by_an_unwinding_thread_does_not_poison_the_barrier() {
    // A participant that fails leaves the barrier from a drop guard; its
    // arrive_and_drop completes the phase while its thread is unwinding. The
    // completion function itself returns normally, so the barrier must not
    // be poisoned (SPEC: poisoned when the completion function panics).
    let runs = AtomicUsize::new(0);
    let b = Barrier::with_completion(2, || {
        runs.fetch_add(1, Ordering::Relaxed);
    });
    let t = b.arrive();
    let failed = catch_unwind(AssertUnwindSafe(|| {
        let _leave = OnDrop(|| b.arrive_and_drop());
        panic!("participant failed");
    }));
    assert_eq!(panic_message(&*failed.unwrap_err()), "participant failed");
    assert_eq!(runs.load(Ordering::Relaxed), 1, "the completion ran once");
    assert!(
        !b.is_poisoned(),
        "poisoned although the completion returned: {b:?}"
    );
    assert!(b.try_wait(&t));
    assert_eq!(dbg(&b), running(true, 1, 1, 0));
    b.wait(t);
    assert!(b.arrive_and_wait().is_leader());
}

// ---- multi-threaded ----------------------------------------------------------------

#[test]
fn completion_runs_once_per_phase_and_sees_every_arrivers_writes() {
    const THREADS: usize = 4;
    const PHASES: u64 = scaled(1_000, 12) as u64;
    let slots: Vec<AtomicU64> = (0..THREADS).map(|_| AtomicU64::new(0)).collect();
    let completed = AtomicU64::new(0);
    let bad_sums = AtomicUsize::new(0);
    let mut phase = 0u64;
    let b = Barrier::with_completion(THREADS, || {
        // Relaxed loads: the barrier must order the arrivers' writes before us.
        let sum: u64 = slots.iter().map(|s| s.load(Ordering::Relaxed)).sum();
        let want: u64 = (0..THREADS as u64).map(|i| phase * 100 + i).sum();
        if sum != want {
            bad_sums.fetch_add(1, Ordering::Relaxed);
        }
        phase += 1;
        // Relaxed: the barrier must order this before every wait's return.
        completed.store(phase, Ordering::Relaxed);
    });
    on_threads(
        30,
        || format!("{b:?}, completed {}", completed.load(Ordering::Relaxed)),
        0..THREADS,
        |i| {
            for p in 0..PHASES {
                slots[i].store(p * 100 + i as u64, Ordering::Relaxed);
                if (p + i as u64) % 2 == 0 {
                    b.arrive_and_wait();
                } else {
                    let t = b.arrive();
                    b.wait(t);
                }
                assert_eq!(completed.load(Ordering::Relaxed), p + 1, "thread {i}");
            }
        },
    );
    assert_eq!(bad_sums.load(Ordering::Relaxed), 0);
    assert_eq!(completed.load(Ordering::Relaxed), PHASES);
    assert_eq!(dbg(&b), running(PHASES % 2 == 1, THREADS, THREADS, 0));
}

#[test]
fn arrival_landing_while_the_completion_runs_belongs_to_the_next_phase() {
    let completers = Mutex::new(Vec::new());
    let in_completion = AtomicBool::new(false);
    let second_arriving = AtomicBool::new(false);
    let b = Barrier::with_completion(1, || {
        let mut completers = completers.lock().unwrap();
        completers.push(thread::current().name().map(str::to_owned));
        if completers.len() == 1 {
            drop(completers);
            in_completion.store(true, Ordering::Release);
            while !second_arriving.load(Ordering::Acquire) {
                thread::yield_now();
            }
            // Widen the window in which the second arrival lands while we run
            // (the assertions below hold whether or not it did).
            let until = Instant::now() + Duration::from_millis(20);
            while Instant::now() < until {
                thread::yield_now();
            }
        }
    });
    watchdog(
        20,
        || dbg(&b),
        || {
            thread::scope(|s| {
                let first = thread::Builder::new()
                    .name("first".into())
                    .spawn_scoped(s, || b.arrive())
                    .unwrap();
                let second = thread::Builder::new()
                    .name("second".into())
                    .spawn_scoped(s, || {
                        eventually("the completion runs", || {
                            in_completion.load(Ordering::Acquire)
                        });
                        second_arriving.store(true, Ordering::Release);
                        b.arrive()
                    })
                    .unwrap();
                let t1 = first.join().unwrap();
                let t2 = second.join().unwrap();
                assert!(b.try_wait(&t1) && b.try_wait(&t2));
                b.wait(t1);
                b.wait(t2);
            });
        },
    );
    // Phase 0 completed by the first arrival, phase 1 by the second: neither
    // lost nor counted twice.
    assert_eq!(
        *completers.lock().unwrap(),
        vec![Some("first".to_owned()), Some("second".to_owned())]
    );
    assert_eq!(dbg(&b), running(false, 1, 1, 0));
}

#[test]
fn completion_happens_before_try_wait_returns_true() {
    const PHASES: u64 = scaled(2_000, 12) as u64;
    let published = AtomicU64::new(0);
    let mut phase = 0u64;
    let b = Barrier::with_completion(2, || {
        phase += 1;
        // Relaxed: ordered by the barrier.
        published.store(phase, Ordering::Relaxed);
    });
    on_threads(
        30,
        || dbg(&b),
        0..2,
        |_| {
            for p in 0..PHASES {
                let t = b.arrive();
                while !b.try_wait(&t) {
                    std::hint::spin_loop();
                    thread::yield_now();
                }
                assert_eq!(published.load(Ordering::Relaxed), p + 1);
                b.wait(t);
            }
        },
    );
    assert_eq!(published.load(Ordering::Relaxed), PHASES);
}
