//! Async waits (SPEC §8): tasks and threads on one barrier, on tokio's
//! current-thread and multi-thread runtimes and on a minimal hand-written
//! executor; futures dropped by `select!` and timeouts; an observer task by
//! parity; poisoning and retired phases seen by pending futures.

mod common;
use common::{dbg, on_threads, panic_message, panic_of, scaled, watchdog};
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;
use syncthreads::Barrier;

/// A waker that counts its wakes and unparks the thread that made it: the
/// whole executor of [`block_on`], and a probe for "woken once, through the
/// latest waker".
struct Probe {
    wakes: AtomicUsize,
    thread: Thread,
}

impl Probe {
    fn new() -> Arc<Probe> {
        Arc::new(Probe {
            wakes: AtomicUsize::new(0),
            thread: thread::current(),
        })
    }

    fn wakes(&self) -> usize {
        // Acquire: a test that sees the wake reads what came before it.
        self.wakes.load(Ordering::Acquire)
    }
}

impl Wake for Probe {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: pairs with `wakes`.
        self.wakes.fetch_add(1, Ordering::Release);
        self.thread.unpark();
    }
}

/// The minimal executor: polls `fut` on this thread, parking between polls
/// until its waker has been woken.
fn block_on<T>(fut: impl Future<Output = T>) -> T {
    let probe = Probe::new();
    let waker = Waker::from(probe.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        let seen = probe.wakes();
        if let Poll::Ready(value) = fut.as_mut().poll(&mut cx) {
            return value;
        }
        while probe.wakes() == seen {
            thread::park();
        }
    }
}

fn poll_once<F: Future>(fut: std::pin::Pin<&mut F>, probe: &Arc<Probe>) -> Poll<F::Output> {
    let waker = Waker::from(probe.clone());
    fut.poll(&mut Context::from_waker(&waker))
}

#[test]
fn a_barrier_is_still_eight_bytes() {
    assert_eq!(std::mem::size_of::<Barrier>(), 8);
}

#[test]
fn a_pending_wait_is_woken_once_through_the_waker_of_its_latest_poll() {
    let barrier = Barrier::new(2);
    let token = barrier.arrive();
    let mut fut = pin!(barrier.wait_async(token));
    let (first, latest) = (Probe::new(), Probe::new());
    assert!(poll_once(fut.as_mut(), &first).is_pending());
    assert!(
        poll_once(fut.as_mut(), &first).is_pending(),
        "a re-poll stays registered"
    );
    assert!(poll_once(fut.as_mut(), &latest).is_pending());
    drop(barrier.arrive()); // completes phase 0
    assert_eq!((first.wakes(), latest.wakes()), (0, 1));
    assert!(poll_once(fut.as_mut(), &latest).is_ready());
    // The next phase's completion wakes nobody: the future is done.
    barrier.arrive_and_drop();
    drop(barrier.arrive());
    assert_eq!((first.wakes(), latest.wakes()), (0, 1));
}

#[test]
fn a_dropped_pending_future_is_not_woken_and_its_arrival_stands() {
    let barrier = Barrier::new(2);
    let probe = Probe::new();
    {
        let mut fut = Box::pin(barrier.arrive_and_wait_async());
        assert!(poll_once(fut.as_mut(), &probe).is_pending());
    }
    assert!(
        barrier.arrive_and_wait().is_leader(),
        "the dropped future's arrival counted"
    );
    assert_eq!(probe.wakes(), 0);
    assert!(barrier.phase_parity());
}

#[test]
fn the_leaders_future_is_ready_at_once_with_is_leader() {
    let barrier = Barrier::new(2);
    let other = barrier.arrive_and_wait_async(); // arrives at the call
    let leader = barrier.arrive_and_wait_async();
    assert!(
        barrier.phase_parity(),
        "both arrivals happened before any poll"
    );
    let probe = Probe::new();
    let (mut other, mut leader) = (pin!(other), pin!(leader));
    let Poll::Ready(result) = poll_once(leader.as_mut(), &probe) else {
        panic!("the leader's future must be ready");
    };
    assert!(result.is_leader());
    let Poll::Ready(result) = poll_once(other.as_mut(), &probe) else {
        panic!("the phase completed");
    };
    assert!(!result.is_leader());
    assert_eq!(probe.wakes(), 0, "nobody had to be woken");
}

#[test]
fn arrive_and_wait_async_misuse_panics_at_the_call() {
    let barrier = Barrier::new(2);
    barrier.poison();
    let message = panic_of(|| barrier.arrive_and_wait_async());
    assert_eq!(
        message,
        "syncthreads: barrier poisoned by poison() (seen by arrive_and_wait_async())"
    );
    let retired = Barrier::new(1);
    retired.arrive_and_drop();
    let message = panic_of(|| retired.arrive_and_wait_async());
    assert!(
        message.contains("arrive_and_wait_async(): the barrier is retired"),
        "{message}"
    );
}

#[test]
fn poison_wakes_a_pending_task_that_then_panics_when_polled() {
    let barrier = Barrier::new(2);
    let token = barrier.arrive();
    let probe = Probe::new();
    let mut fut = Box::pin(barrier.wait_async(token));
    assert!(poll_once(fut.as_mut(), &probe).is_pending());
    watchdog(
        10,
        || dbg(&barrier),
        || {
            thread::scope(|s| {
                s.spawn(|| barrier.poison());
            })
        },
    );
    assert_eq!(probe.wakes(), 1, "poison woke the pending task");
    let payload = catch_unwind(AssertUnwindSafe(|| poll_once(fut.as_mut(), &probe))).unwrap_err();
    assert_eq!(
        panic_message(&*payload),
        "syncthreads: barrier poisoned by poison() (seen by wait_async)"
    );
}

#[test]
fn poison_reaches_tasks_on_tokio_as_panics() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let barrier = Arc::new(Barrier::new(5));
    let messages = watchdog(
        20,
        || dbg(&barrier),
        || {
            rt.block_on(async {
                let tasks: Vec<_> = (0..4)
                    .map(|i| {
                        let barrier = barrier.clone();
                        tokio::spawn(async move {
                            if i % 2 == 0 {
                                barrier.arrive_and_wait_async().await;
                            } else {
                                barrier.wait_parity_async(false).await;
                            }
                        })
                    })
                    .collect();
                // Let every task register (or not: either way it must panic).
                tokio::time::sleep(Duration::from_millis(20)).await;
                barrier.poison();
                let mut messages = Vec::new();
                for task in tasks {
                    let err = task.await.unwrap_err();
                    messages.push(panic_message(&*err.into_panic()));
                }
                messages
            })
        },
    );
    for (i, message) in messages.iter().enumerate() {
        let op = if i % 2 == 0 {
            "arrive_and_wait_async()"
        } else {
            "wait_parity_async"
        };
        assert_eq!(
            message,
            &format!("syncthreads: barrier poisoned by poison() (seen by {op})")
        );
    }
}

#[test]
fn a_wait_for_a_retired_phase_panics_when_polled() {
    let barrier = Barrier::new(1);
    barrier.arrive_and_drop(); // phase 0 completes; retired in phase 1
    let fut = barrier.wait_parity_async(true);
    let message = panic_of(|| block_on(fut));
    assert_eq!(
        message,
        "syncthreads: wait_parity_async: the phase of parity true can never complete: every participant dropped out and the barrier is retired in phase 1"
    );
    // Phase 0 did complete: its parity wait is ready.
    block_on(barrier.wait_parity_async(false));
}

/// `tasks` tasks (on `rt`) and `threads` threads run `phases` phases of one
/// barrier whose completion function counts them; after each wait everyone
/// checks the count, so a wait that returned early, or a lost wake-up (the
/// watchdog), fails the test.
fn tasks_and_threads(rt: &tokio::runtime::Runtime, tasks: usize, threads: usize, phases: usize) {
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let barrier = Arc::new(Barrier::with_completion(tasks + threads, move || {
        // Relaxed: the barrier orders the completion before every wait's return.
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    let leaders = AtomicUsize::new(0);
    watchdog(
        60,
        || dbg(&barrier),
        || {
            thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        for phase in 1..=phases {
                            let r = barrier.arrive_and_wait();
                            leaders.fetch_add(r.is_leader() as usize, Ordering::Relaxed);
                            assert!(done.load(Ordering::Relaxed) >= phase);
                        }
                    });
                }
                let task_leaders = rt.block_on(async {
                    let handles: Vec<_> = (0..tasks)
                        .map(|i| {
                            let (barrier, done) = (barrier.clone(), done.clone());
                            tokio::spawn(async move {
                                let mut leaders = 0;
                                for phase in 1..=phases {
                                    if (i + phase) % 3 == 0 {
                                        // The split form: arrive, then wait on the token.
                                        barrier.wait_async(barrier.arrive()).await;
                                    } else {
                                        let r = barrier.arrive_and_wait_async().await;
                                        leaders += r.is_leader() as usize;
                                    }
                                    assert!(done.load(Ordering::Relaxed) >= phase);
                                }
                                leaders
                            })
                        })
                        .collect();
                    let mut leaders = 0;
                    for h in handles {
                        leaders += h.await.unwrap();
                    }
                    leaders
                });
                leaders.fetch_add(task_leaders, Ordering::Relaxed);
            });
        },
    );
    assert_eq!(done.load(Ordering::Relaxed), phases);
    assert!(leaders.load(Ordering::Relaxed) <= phases);
}

#[test]
fn thousands_of_phases_of_tasks_on_a_current_thread_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tasks_and_threads(&rt, 8, 0, scaled(3000, 8));
    tasks_and_threads(&rt, 64, 0, scaled(500, 2));
}

#[test]
fn thousands_of_phases_of_tasks_and_threads_on_a_current_thread_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tasks_and_threads(&rt, 8, 2, scaled(2000, 10));
}

#[test]
fn thousands_of_phases_of_tasks_and_threads_on_a_multi_thread_runtime() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    tasks_and_threads(&rt, 8, 0, scaled(3000, 4));
    tasks_and_threads(&rt, 16, 2, scaled(2000, 2));
    tasks_and_threads(&rt, 64, 3, scaled(500, 1));
}

#[test]
fn threads_on_the_hand_written_executor_beside_blocking_threads() {
    const PHASES: usize = scaled(2000, 30);
    let barrier = Barrier::new(6);
    let progress: Vec<AtomicUsize> = (0..6).map(|_| AtomicUsize::new(0)).collect();
    on_threads(
        60,
        || dbg(&barrier),
        progress.iter().enumerate(),
        |(i, mine)| {
            for phase in 1..=PHASES {
                mine.store(phase, Ordering::Relaxed);
                match i % 3 {
                    0 => drop(barrier.arrive_and_wait()),
                    1 => drop(block_on(barrier.arrive_and_wait_async())),
                    _ => block_on(barrier.wait_async(barrier.arrive())),
                }
                for other in &progress {
                    assert!(other.load(Ordering::Relaxed) >= phase);
                }
            }
        },
    );
}

/// A task waits with a timeout too short to last (or `select!`s against a
/// yield), so most futures are dropped pending; the arrivals stand, the task
/// then waits by parity, and the barrier goes on.
fn dropped_futures_lose_nothing(rt: &tokio::runtime::Runtime) {
    const TASKS: usize = 8;
    const PHASES: usize = scaled(300, 10);
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let barrier = Arc::new(Barrier::with_completion(TASKS, move || {
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    let dropped = Arc::new(AtomicUsize::new(0));
    watchdog(
        60,
        || dbg(&barrier),
        || {
            rt.block_on(async {
                let handles: Vec<_> = (0..TASKS)
                    .map(|i| {
                        let (barrier, done, dropped) =
                            (barrier.clone(), done.clone(), dropped.clone());
                        tokio::spawn(async move {
                            for phase in 1..=PHASES {
                                // Between its last wait and this arrival the phase
                                // cannot move: this is the arrival's phase.
                                let parity = barrier.phase_parity();
                                let fut = barrier.arrive_and_wait_async();
                                let finished = if i % 2 == 0 {
                                    tokio::time::timeout(Duration::from_micros(1), fut)
                                        .await
                                        .is_ok()
                                } else {
                                    tokio::select! {
                                        biased;
                                        _ = tokio::task::yield_now() => false,
                                        _ = fut => true,
                                    }
                                };
                                if !finished {
                                    dropped.fetch_add(1, Ordering::Relaxed);
                                    barrier.wait_parity_async(parity).await;
                                }
                                assert!(done.load(Ordering::Relaxed) >= phase);
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            });
        },
    );
    assert_eq!(done.load(Ordering::Relaxed), PHASES);
    assert!(
        dropped.load(Ordering::Relaxed) > 0,
        "no future was dropped pending"
    );
    // Still usable: one more phase, by threads.
    watchdog(
        10,
        || dbg(&barrier),
        || {
            thread::scope(|s| {
                for _ in 0..TASKS {
                    s.spawn(|| barrier.arrive_and_wait());
                }
            })
        },
    );
    assert_eq!(done.load(Ordering::Relaxed), PHASES + 1);
}

#[test]
fn timeouts_and_select_drop_futures_without_losing_arrivals_current_thread() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    dropped_futures_lose_nothing(&rt);
}

#[test]
fn timeouts_and_select_drop_futures_without_losing_arrivals_multi_thread() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    dropped_futures_lose_nothing(&rt);
}

#[test]
fn a_select_loop_keeps_polling_the_same_pinned_future() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let ticks = watchdog(
        20,
        || dbg(&barrier),
        || {
            rt.block_on(async {
                let late = {
                    let barrier = barrier.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        barrier.arrive_and_wait_async().await
                    })
                };
                let mut wait = pin!(barrier.arrive_and_wait_async());
                let mut ticks = 0;
                let mut tick = tokio::time::interval(Duration::from_millis(2));
                let mine = loop {
                    tokio::select! {
                        r = &mut wait => break r,
                        _ = tick.tick() => ticks += 1,
                    }
                };
                let theirs = late.await.unwrap();
                assert!(
                    !mine.is_leader() && theirs.is_leader(),
                    "the late arrival completed the phase"
                );
                ticks
            })
        },
    );
    assert!(ticks >= 2, "the wait was re-polled across ticks ({ticks})");
    assert!(barrier.phase_parity());
}

#[test]
fn an_observer_task_follows_the_phases_by_parity() {
    // The observer never arrives. A parity wait tells only two phases apart,
    // so an observer that falls two phases behind waits for the next phase
    // of its parity, as in CUDA: the threads therefore go on completing
    // phases until the observer has seen `PHASES` of them, then leave one
    // by one (a barrier that just stopped could leave the observer waiting
    // for a phase that never comes).
    const PHASES: usize = scaled(2000, 30);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let barrier = Barrier::with_completion(3, move || {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let stop = std::sync::atomic::AtomicBool::new(false);
    let woken = watchdog(
        60,
        || dbg(&barrier),
        || {
            thread::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|| {
                        while !stop.load(Ordering::Relaxed) {
                            barrier.arrive_and_wait();
                        }
                        barrier.arrive_and_drop();
                    });
                }
                rt.block_on(async {
                    let mut woken = 0;
                    loop {
                        let parity = barrier.phase_parity();
                        let before = done.load(Ordering::Relaxed);
                        if before >= PHASES {
                            stop.store(true, Ordering::Relaxed);
                            return woken;
                        }
                        barrier.wait_parity_async(parity).await;
                        // The phase of `parity` completed, and with it its
                        // completion function (ordered by the wait): either
                        // that completion came after `before` was read, or
                        // it had already been counted in `before` (it ran
                        // between the two reads, or the parity was read in
                        // its completion window, where the word still shows
                        // the phase): then `before` phases had completed,
                        // the last of them of parity `parity`.
                        let after = done.load(Ordering::Relaxed);
                        assert!(
                            after > before || before % 2 != usize::from(parity),
                            "woken for parity {parity}: {before} -> {after} completions"
                        );
                        woken += 1;
                    }
                })
            })
        },
    );
    assert!(woken >= 1, "{woken}");
}

#[test]
fn a_future_dropped_while_being_woken_is_safe() {
    // A thread polls a future once and drops it while another thread
    // completes the phase (and may be waking it at that moment).
    const ROUNDS: usize = scaled(5000, 60);
    let barrier = Barrier::new(2);
    watchdog(
        60,
        || dbg(&barrier),
        || {
            thread::scope(|s| {
                s.spawn(|| {
                    for _ in 0..ROUNDS {
                        let probe = Probe::new();
                        let parity = barrier.phase_parity(); // the arrival's phase
                        let mut fut = Box::pin(barrier.arrive_and_wait_async());
                        let _ = poll_once(fut.as_mut(), &probe);
                        drop(fut);
                        // Its arrival stood: the other thread's ends the phase.
                        block_on(barrier.wait_parity_async(parity));
                    }
                });
                s.spawn(|| {
                    for _ in 0..ROUNDS {
                        barrier.arrive_and_wait();
                    }
                });
            })
        },
    );
}

#[test]
fn futures_are_debug() {
    let barrier = Barrier::new(2);
    let wait = barrier.wait_parity_async(false);
    assert_eq!(
        format!("{wait:?}"),
        "ParityWaitFuture { parity: false, barrier: Barrier { phase_parity: false, pending: 2, expected: 2, tx: 0, poisoned: false }, .. }"
    );
    let arrive = barrier.arrive_and_wait_async();
    assert!(format!("{arrive:?}").starts_with("ArriveAndWaitFuture { phase: 0, is_leader: false,"));
    let token = barrier.wait_async(barrier.arrive());
    assert!(format!("{token:?}").starts_with("WaitFuture { phase: 0,"));
}

#[test]
fn more_pending_futures_than_one_wake_batch_are_each_woken_once() {
    // The completer wakes 32 wakers per locked pass: 100 need four passes.
    const FUTURES: usize = 100;
    let barrier = Barrier::new(2);
    let parity = barrier.phase_parity();
    let probes: Vec<_> = (0..FUTURES).map(|_| Probe::new()).collect();
    let mut futures: Vec<_> = (0..FUTURES)
        .map(|_| Some(Box::pin(barrier.wait_parity_async(parity))))
        .collect();
    for (fut, probe) in futures.iter_mut().zip(&probes) {
        assert!(poll_once(fut.as_mut().unwrap().as_mut(), probe).is_pending());
    }
    // Drop every third one: the others must still be woken.
    for fut in futures.iter_mut().step_by(3) {
        *fut = None;
    }
    drop(barrier.arrive_n(2));
    for (i, probe) in probes.iter().enumerate() {
        assert_eq!(probe.wakes(), usize::from(i % 3 != 0), "future {i}");
    }
    for (fut, probe) in futures.iter_mut().zip(&probes) {
        if let Some(fut) = fut {
            assert!(poll_once(fut.as_mut(), probe).is_ready());
        }
    }
}

#[test]
fn a_completion_wakes_only_the_tasks_of_its_own_barrier() {
    // 64 barriers, each with a pending future: completing one wakes one.
    let barriers: Vec<Barrier> = (0..64).map(|_| Barrier::new(2)).collect();
    let probes: Vec<_> = (0..64).map(|_| Probe::new()).collect();
    let mut futures: Vec<_> = barriers
        .iter()
        .map(|b| Box::pin(b.wait_parity_async(false)))
        .collect();
    for (fut, probe) in futures.iter_mut().zip(&probes) {
        assert!(poll_once(fut.as_mut(), probe).is_pending());
    }
    for (i, barrier) in barriers.iter().enumerate() {
        drop(barrier.arrive_n(2));
        for (j, probe) in probes.iter().enumerate() {
            assert_eq!(
                probe.wakes(),
                usize::from(j <= i),
                "barrier {i}, future {j}"
            );
        }
    }
}

/// A `Team`'s seats on tokio tasks (4 workers) and threads: every phase has
/// exactly one leader, and every seat sees every other seat's write of the
/// phase after its wait (SPEC §7 and §8 together).
#[test]
fn team_seats_wait_async_beside_threads() {
    const SEATS: usize = 16;
    const TASKS: usize = 12;
    const PHASES: usize = scaled(500, 5);
    let team = Arc::new(syncthreads::Team::new(SEATS));
    let stamps: Arc<Vec<AtomicUsize>> = Arc::new((0..SEATS).map(|_| AtomicUsize::new(0)).collect());
    let leaders = Arc::new(AtomicUsize::new(0));
    let (t, l) = (team.clone(), leaders.clone());
    watchdog(
        60,
        move || format!("{t:?}, leaders {}", l.load(Ordering::Relaxed)),
        || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .build()
                .unwrap();
            let mut seats: Vec<_> = (0..SEATS).collect();
            let threads: Vec<usize> = seats.split_off(TASKS);
            thread::scope(|s| {
                for rank in threads {
                    let (team, stamps, leaders) = (&team, &stamps, &leaders);
                    s.spawn(move || {
                        let seat = team.seat(rank);
                        for phase in 1..=PHASES {
                            stamps[rank].store(phase, Ordering::Relaxed);
                            if seat.arrive_and_wait().is_leader() {
                                leaders.fetch_add(1, Ordering::Relaxed);
                            }
                            assert!(stamps.iter().all(|x| x.load(Ordering::Relaxed) >= phase));
                        }
                    });
                }
                rt.block_on(async {
                    let handles: Vec<_> = seats
                        .into_iter()
                        .map(|rank| {
                            let (team, stamps, leaders) =
                                (team.clone(), stamps.clone(), leaders.clone());
                            tokio::spawn(async move {
                                let seat = team.seat(rank);
                                for phase in 1..=PHASES {
                                    stamps[rank].store(phase, Ordering::Relaxed);
                                    if seat.arrive_and_wait_async().await.is_leader() {
                                        leaders.fetch_add(1, Ordering::Relaxed);
                                    }
                                    assert!(stamps
                                        .iter()
                                        .all(|x| x.load(Ordering::Relaxed) >= phase));
                                }
                            })
                        })
                        .collect();
                    for h in handles {
                        h.await.unwrap();
                    }
                });
            });
        },
    );
    assert_eq!(leaders.load(Ordering::Relaxed), PHASES);
}

/// A waker whose `wake` panics.
struct Panicky;

impl Wake for Panicky {
    fn wake(self: Arc<Self>) {
        panic!("this waker panics");
    }
}

/// Regression: a waker whose `wake` panicked lost the wake-ups of every
/// task registered after it in that completion (whole later batches of 32
/// included). Now every other task is woken, a parked thread too, the
/// panic comes out of the completing call afterwards, and the table stays
/// consistent: the next completion wakes every re-registered task once.
#[test]
fn a_panicking_waker_loses_the_other_tasks_wake_ups() {
    // Four batches of 32; the panicking one early in the first.
    const FUTURES: usize = 100;
    const PANICKY: usize = 3;
    let barrier = Barrier::new(2);
    watchdog(
        30,
        || dbg(&barrier),
        || {
            thread::scope(|s| {
                barrier.expect_tx(1);
                let tokens = [barrier.arrive(), barrier.arrive()];
                // A thread parked on phase 0 (or about to park): woken too.
                let parked = s.spawn(|| barrier.wait_parity(false));
                let probes: Vec<_> = (0..FUTURES).map(|_| Probe::new()).collect();
                let panicky = Waker::from(Arc::new(Panicky));
                let mut futures: Vec<_> = (0..FUTURES)
                    .map(|_| Box::pin(barrier.wait_parity_async(false)))
                    .collect();
                for (i, (fut, probe)) in futures.iter_mut().zip(&probes).enumerate() {
                    let pending = if i == PANICKY {
                        let mut cx = Context::from_waker(&panicky);
                        fut.as_mut().poll(&mut cx).is_pending()
                    } else {
                        poll_once(fut.as_mut(), probe).is_pending()
                    };
                    assert!(pending, "future {i}");
                }
                let completed = catch_unwind(AssertUnwindSafe(|| barrier.complete_tx(1)));
                let message = panic_message(&*completed.unwrap_err());
                assert_eq!(message, "this waker panics", "the waker's panic comes out");
                for (i, probe) in probes.iter().enumerate() {
                    let expected = usize::from(i != PANICKY);
                    assert_eq!(probe.wakes(), expected, "future {i}: woken once");
                }
                parked.join().unwrap();
                assert!(tokens.iter().all(|t| barrier.try_wait(t)));
                // The phase completed: every future is ready, the panicky
                // one's too (its node was unlinked before its waker ran).
                for (i, (fut, probe)) in futures.iter_mut().zip(&probes).enumerate() {
                    assert!(poll_once(fut.as_mut(), probe).is_ready(), "future {i}");
                }
                // The table is consistent: phase 1's completion wakes each
                // of a new set of pending futures once.
                let tokens = [barrier.arrive(), barrier.arrive_n(1)];
                assert!(barrier.try_wait(&tokens[0]), "phase 1 completed at once");
                let fresh: Vec<_> = (0..FUTURES).map(|_| Probe::new()).collect();
                let mut futures: Vec<_> = (0..FUTURES)
                    .map(|_| Box::pin(barrier.wait_parity_async(false)))
                    .collect();
                for (fut, probe) in futures.iter_mut().zip(&fresh) {
                    assert!(poll_once(fut.as_mut(), probe).is_pending());
                }
                drop(barrier.arrive_n(2));
                for (i, (fut, probe)) in futures.iter_mut().zip(&fresh).enumerate() {
                    assert_eq!(probe.wakes(), 1, "phase 2, future {i}");
                    assert!(poll_once(fut.as_mut(), probe).is_ready());
                }
            });
        },
    );
}
