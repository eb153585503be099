//! `launch` on persistent pool threads and `Launcher`: the caller as rank 0,
//! threads reused across launches, concurrent and nested launches (with
//! panics), the keep-alive, names, drop, and a thread that cannot be spawned.

mod common;

use common::{panic_message, panic_of, scaled, watchdog, within};
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::ThreadId;
use std::time::Duration;
use syncthreads::{launch, Barrier, Block, Launcher};

/// A kernel that checks the block: a neighbour exchange through `sync` and
/// a count, returning what every rank must agree on.
fn checked(block: &Block<'_>, round: usize) -> usize {
    let n = block.size();
    let count = block.sync_count((block.thread_rank() + round) % 3 == 0);
    let expected = (0..n).filter(|r| (r + round) % 3 == 0).count();
    assert_eq!(count, expected, "rank {} of {n}", block.thread_rank());
    block.sync();
    count
}

/// The names of this process's threads as the OS shows them
/// (`/proc/self/task/*/comm`, at most 15 bytes), or `None` off Linux.
fn os_thread_names() -> Option<Vec<String>> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .map(|s| s.trim_end().to_owned())
            .collect(),
    )
}

/// How many of this process's OS threads have a name starting with `prefix`.
fn os_threads_named(prefix: &str) -> Option<usize> {
    Some(
        os_thread_names()?
            .iter()
            .filter(|n| n.starts_with(prefix))
            .count(),
    )
}

#[test]
fn rank_zero_runs_on_the_caller_and_the_others_on_named_pool_threads() {
    let me = std::thread::current().id();
    let got = watchdog(60, String::new, || {
        launch(4, |block| {
            block.sync();
            let t = std::thread::current();
            // What a debugger shows: the OS's copy of the name (Linux).
            // (Miri's isolation has no file system.)
            let os = (!cfg!(miri))
                .then(|| std::fs::read_to_string("/proc/thread-self/comm").ok())
                .flatten();
            (t.id(), t.name().map(str::to_owned), os)
        })
    });
    assert_eq!(got[0].0, me);
    let pool: HashSet<ThreadId> = got[1..].iter().map(|(id, ..)| *id).collect();
    assert_eq!(pool.len(), 3, "three distinct pool threads");
    assert!(!pool.contains(&me));
    for (_, name, os) in &got[1..] {
        let name = name.as_deref().expect("pool threads are named");
        assert!(name.starts_with("syncthreads-"), "{name}");
        // The whole name reaches the OS (15 bytes at most on Linux), so
        // a debugger tells the pool's threads apart.
        if let Some(os) = os {
            assert_eq!(os.trim_end(), name);
        }
    }
}

#[test]
fn a_private_pool_reuses_its_threads_across_launches() {
    let launcher = Launcher::new().keep_alive(Duration::from_secs(600));
    let mut seen = HashSet::new();
    watchdog(60, String::new, || {
        for round in 0..scaled(200, 10) {
            let ids = launcher.launch(4, |block| {
                checked(block, round);
                std::thread::current().id()
            });
            seen.extend(ids[1..].iter().copied());
        }
    });
    // Launches one after another never find their threads busy.
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(launcher.live_threads(), 3);
}

#[test]
fn launches_alternating_sizes_each_run_every_rank() {
    // Each launch finds the last one's threads idle, more or fewer than it
    // needs: it must claim as many as it needs, spawn the rest, and run
    // every rank once.
    let launcher = Launcher::new().keep_alive(Duration::from_secs(600));
    watchdog(60, String::new, || {
        for round in 0..scaled(300, 10) {
            let threads = [3, 2, 3, 4, 2, 4][round % 6];
            let ranks = launcher.launch(threads, |block| {
                checked(block, round);
                block.thread_rank()
            });
            assert_eq!(ranks, (0..threads).collect::<Vec<_>>());
        }
    });
}

#[test]
fn thread_locals_of_a_pool_thread_persist_from_one_launch_to_the_next() {
    thread_local!(static RUNS: Cell<usize> = const { Cell::new(0) });
    let launcher = Launcher::new().keep_alive(Duration::from_secs(600));
    let counts: Vec<usize> = (0..3)
        .map(|_| {
            launcher.launch(2, |block| {
                RUNS.with(|r| r.replace(r.get() + 1)) * block.thread_rank()
            })[1]
        })
        .collect();
    // The one pool thread ran rank 1 each time and kept its count.
    assert_eq!(counts, [0, 1, 2]);
}

#[test]
fn concurrent_launches_from_several_threads_each_get_their_own_threads() {
    let launched = AtomicUsize::new(0);
    watchdog(
        120,
        || format!("{} launches done", launched.load(Ordering::Relaxed)),
        || {
            std::thread::scope(|s| {
                for caller in 0..4 {
                    let launched = &launched;
                    s.spawn(move || {
                        for round in 0..scaled(100, 4) {
                            let threads = 2 + (caller + round) % 5;
                            let got = launch(threads, |block| checked(block, round));
                            assert!(got.windows(2).all(|w| w[0] == w[1]), "{got:?}");
                            launched.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
        },
    );
}

#[test]
fn nested_launches_run_and_return_in_rank_order() {
    let launcher = Launcher::new();
    let got = watchdog(60, String::new, || {
        launch(3, |outer| {
            outer.sync();
            // A kernel that launches: on the default pool and on a private one.
            let inner = launch(3, |inner| {
                let innermost = launcher.launch(2, |b| {
                    b.sync();
                    b.thread_rank()
                });
                assert_eq!(innermost, [0, 1]);
                inner.sync_count(true) * 10 + inner.thread_rank()
            });
            outer.sync();
            (outer.thread_rank(), inner)
        })
    });
    for (rank, (r, inner)) in got.into_iter().enumerate() {
        assert_eq!(r, rank);
        assert_eq!(inner, [30, 31, 32]);
    }
}

#[test]
fn a_panic_in_a_nested_kernel_is_re_raised_by_the_outer_launch() {
    let payload = watchdog(60, String::new, || {
        catch_unwind(AssertUnwindSafe(|| {
            launch(4, |outer| {
                if outer.thread_rank() == 2 {
                    launch(3, |inner| {
                        if inner.thread_rank() == 1 {
                            panic!("inner rank 1 failed");
                        }
                        inner.sync();
                    });
                }
                // The others wait here; the outer block is poisoned by
                // rank 2's panic (re-raised by its inner launch).
                outer.sync();
            })
        }))
        .unwrap_err()
    });
    assert_eq!(panic_message(&*payload), "inner rank 1 failed");
    // The pool is whole: a launch after it works.
    assert_eq!(launch(4, |b| b.sync_count(true)), [4; 4]);
}

#[test]
fn a_panic_racing_other_launches_reaches_only_its_own_launch() {
    watchdog(120, String::new, || {
        std::thread::scope(|s| {
            for caller in 0..4 {
                s.spawn(move || {
                    for round in 0..scaled(50, 3) {
                        if caller == 0 {
                            let message = panic_of(|| {
                                launch(5, |block| {
                                    block.sync();
                                    if block.thread_rank() == round % 5 {
                                        panic!("round {round} failed");
                                    }
                                    block.sync();
                                })
                            });
                            assert_eq!(message, format!("round {round} failed"));
                        } else {
                            let got = launch(4, |block| checked(block, round));
                            assert!(got.windows(2).all(|w| w[0] == w[1]));
                        }
                    }
                });
            }
        });
    });
}

#[test]
fn oversubscribed_launches_complete() {
    // Far more block threads than cores, and several such launches at once
    // (fewer threads under Miri, which runs them one at a time anyway).
    let (wide, each) = (scaled(64, 12), scaled(16, 4));
    watchdog(180, String::new, || {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for round in 0..scaled(10, 1) {
                        let got = launch(each, |block| checked(block, round));
                        assert_eq!(got.len(), each);
                    }
                });
            }
            for round in 0..scaled(5, 1) {
                assert_eq!(launch(wide, |block| checked(block, round)).len(), wide);
            }
        });
    });
}

#[test]
fn idle_threads_leave_after_the_keep_alive_and_come_back_on_demand() {
    let launcher = Launcher::new()
        .name_prefix("lp-keep")
        .keep_alive(Duration::from_millis(50));
    watchdog(60, String::new, || {
        launcher.launch(4, |block| block.sync());
        assert!(within(20, || launcher.live_threads() == 0), "{launcher:?}");
        if !cfg!(miri) {
            // The OS threads are gone too, not just marked.
            assert!(
                within(20, || os_threads_named("lp-keep") == Some(0))
                    || os_threads_named("lp-keep").is_none()
            );
        }
        // The next launch spawns again, into the same places (names).
        let names = launcher.launch(3, |block| {
            block.sync();
            std::thread::current().name().map(str::to_owned)
        });
        let mut pool: Vec<_> = names[1..].iter().map(|n| n.clone().unwrap()).collect();
        pool.sort();
        assert_eq!(pool, ["lp-keep-1", "lp-keep-2"]);
    });
}

/// A crew whose threads time out and leave between launches, and grows
/// back: threads of a shrunk crew that have not yet seen their leave must
/// never run a rank of a later launch (whose ranks the new threads run),
/// so every launch still runs each rank once and exactly once.
#[test]
fn a_crew_that_shrinks_and_grows_again_runs_each_rank_once() {
    // A keep-alive shorter than the pauses below: members leave in them.
    let launcher = Launcher::new().keep_alive(Duration::from_micros(200));
    watchdog(120, String::new, || {
        for round in 0..scaled(300, 6) {
            let size = 2 + round % 7;
            let ran = AtomicUsize::new(0);
            let ranks = launcher.launch(size, |block| {
                ran.fetch_add(1, Ordering::Relaxed);
                checked(block, round);
                block.thread_rank()
            });
            assert_eq!(ranks, (0..size).collect::<Vec<_>>());
            assert_eq!(ran.load(Ordering::Relaxed), size);
            if round % 5 == 4 && !cfg!(miri) {
                // Past the watch and the keep-alive: the crew shrinks.
                std::thread::sleep(Duration::from_millis(3));
            }
        }
    });
}

#[test]
fn dropping_a_launcher_joins_its_threads() {
    if cfg!(miri) {
        return; // no /proc under Miri
    }
    /// Counts its drops: a thread's thread-locals drop as it exits,
    /// before a join of it returns.
    struct Exit;
    impl Drop for Exit {
        fn drop(&mut self) {
            EXITED.fetch_add(1, Ordering::SeqCst);
        }
    }
    static EXITED: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MARK: Cell<Option<Exit>> = const { Cell::new(None) };
    }
    let launcher = Launcher::new()
        .name_prefix("lp-drop")
        .keep_alive(Duration::from_secs(600));
    watchdog(60, String::new, || {
        launcher.launch(5, |block| {
            if block.thread_rank() > 0 {
                MARK.set(Some(Exit));
            }
            block.sync();
        });
        if os_threads_named("lp-drop").is_some() {
            // Listing /proc/self/task can skip a live thread while other
            // threads of the process exit (the other tests'): look again
            // until all four show.
            assert!(
                within(20, || os_threads_named("lp-drop") == Some(4)),
                "{:?}",
                os_thread_names()
            );
        }
        assert_eq!(
            EXITED.load(Ordering::SeqCst),
            0,
            "the pool's threads wait for work"
        );
        drop(launcher);
        // Joined: every pool thread has exited when `drop` returns. (The OS
        // may list an exited thread in /proc a moment longer, until it
        // reaps it, so the count of names there is no test of the join.)
        assert_eq!(EXITED.load(Ordering::SeqCst), 4);
    });
}

#[test]
fn a_thread_that_cannot_be_spawned_panics_clearly_and_leaves_nothing_waiting() {
    if cfg!(miri) {
        return; // Miri does not fail spawns for their stack size
    }
    // No system can map a stack this large.
    let launcher = Launcher::new().stack_size(usize::MAX / 4);
    let message = watchdog(60, String::new, || {
        panic_of(|| launcher.launch(3, |block| block.sync()))
    });
    assert!(
        message.starts_with("syncthreads: launch(3, _): could not spawn thread 1: "),
        "{message}"
    );
    assert_eq!(launcher.live_threads(), 0);
    // The failed launch left no claimed thread behind: the default pool
    // and this launcher (with one thread, needing no spawn) still work.
    assert_eq!(launch(3, |b| b.sync_count(true)), [3; 3]);
    assert_eq!(launcher.launch(1, |b| b.sync_count(true)), [1]);
}

#[test]
fn a_crew_that_cannot_grow_fails_the_launch_clearly_and_stays() {
    if cfg!(miri) {
        return; // Miri does not fail spawns for their stack size
    }
    // Two threads stay with the launcher; then no new thread can start.
    let launcher = Launcher::new();
    assert_eq!(launcher.launch(3, |b| b.sync_count(true)), [3; 3]);
    assert_eq!(launcher.live_threads(), 2);
    let launcher = launcher.stack_size(usize::MAX / 4);
    let started = AtomicUsize::new(0);
    let message = watchdog(60, String::new, || {
        panic_of(|| {
            launcher.launch(5, |block| {
                started.fetch_add(1, Ordering::Relaxed);
                block.sync();
            })
        })
    });
    // The launch needed two threads more than the launcher has and could
    // spawn none: it panics naming the first thread it could not start,
    // before any rank ran (a spawn failing after some ranks started, on
    // a launch that hands its ranks out one by one, is the pool's unit
    // test `a_panic_while_handing_out_ends_the_started_ranks_and_is_reported`
    // and launch.rs's `a_failed_launch_drops_the_results_of_the_ranks_that_ran`).
    assert!(
        message.starts_with("syncthreads: launch(5, _): could not spawn thread 1: "),
        "{message}"
    );
    assert_eq!(started.load(Ordering::Relaxed), 0);
    // The two threads are still the launcher's, and a launch they suffice
    // for runs on them.
    assert_eq!(launcher.live_threads(), 2);
    assert_eq!(launcher.launch(3, |b| b.sync_count(true)), [3; 3]);
}

#[test]
fn bad_thread_counts_panic_before_any_thread_starts() {
    let launcher = Launcher::new();
    assert_eq!(
        panic_of(|| launcher.launch(0, |_| ())),
        "syncthreads: Launcher::launch(0, _): the thread count must be in 1 ..= 1048575 (Barrier::MAX)"
    );
    assert_eq!(
        panic_of(|| launch(Barrier::MAX + 1, |_| ())),
        "syncthreads: launch(1048576, _): the thread count must be in 1 ..= 1048575 (Barrier::MAX)"
    );
    assert_eq!(launcher.live_threads(), 0);
}

#[test]
fn the_launcher_debug_shows_its_configuration() {
    let launcher = Launcher::new()
        .name_prefix("dbg")
        .keep_alive(Duration::from_secs(2));
    assert_eq!(
        format!("{launcher:?}"),
        "Launcher { stack_size: None, name_prefix: \"dbg\", keep_alive: 2s, max_threads: 1048575, live_threads: 0 }"
    );
}

/// The launch bench's bare hand-off (`bench_hooks::pool_round_trip`, an
/// `unsafe` call into the pool that `.ci/miri` runs): each size returns,
/// and the default pool then runs a launch of that size, every rank once.
#[cfg(feature = "bench")]
#[test]
fn the_bare_hand_off_returns_and_leaves_the_pool_usable() {
    watchdog(60, String::new, || {
        for threads in [1, 3, 2, 4, 3] {
            syncthreads::bench_hooks::pool_round_trip(threads);
            let ranks = launch(threads, |block| block.thread_rank());
            assert_eq!(ranks, (0..threads).collect::<Vec<_>>());
        }
    });
}
