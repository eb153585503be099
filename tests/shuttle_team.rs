//! A team's seats and joined seats leaving at once while a transaction
//! count holds the phase, under shuttle's random and PCT schedules: the
//! race in which a joined seat's legal leave used to panic ("the barrier is
//! retired") when its own arrival retired the team. Only built with
//! `--cfg shuttle`; run it with `.ci/shuttle`.
#![cfg(shuttle)]

use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::sync::Arc;
use shuttle::thread;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::TeamShape;

#[path = "common/shuttle.rs"]
mod schedules;
use schedules::check;

shuttle::thread_local! {
    /// What this model thread's calls are, for the completion function to
    /// tell who ended the phase.
    static WHO: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
}

const CASES: [&str; 4] = [
    "a seat's leave ended phase 0",
    "a joined seat's leave ended phase 0",
    "complete_tx ended phase 0",
    "a join came after the team retired",
];

/// Three seats leave without arriving (`arrive_and_drop` or drop), two
/// threads join and then leave the same ways, and one thread completes the
/// transaction count that holds phase 0. Every leave counts in phase 0, so
/// whatever the order, the completion runs once, the team retires in phase
/// 1, and no call panics but a join that came after that (a retired team
/// never comes back). `flat` is the control shape.
fn leaves_joins_and_tx(flat: bool, seen: &std::sync::Mutex<BTreeSet<&'static str>>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(std::sync::Mutex::new(""));
    let team = {
        let (runs, ended) = (runs.clone(), ended.clone());
        let f = move || {
            // Relaxed: read after every thread is joined.
            runs.fetch_add(1, Ordering::Relaxed);
            *ended.lock().unwrap() = WHO.with(|w| w.get());
        };
        let flat = if flat { usize::MAX } else { 0 };
        Arc::new(TeamShape::new(2, flat).team_with_completion_and_capacity(3, 6, f))
    };
    team.expect_tx(1);
    let mut threads = Vec::new();
    for rank in 0..3 {
        let team = team.clone();
        threads.push(thread::spawn(move || {
            WHO.with(|w| w.set(CASES[0]));
            let seat = team.seat(rank);
            if rank % 2 == 0 {
                seat.arrive_and_drop();
            } else {
                drop(seat);
            }
        }));
    }
    let late = Arc::new(AtomicUsize::new(0));
    for j in 0..2 {
        let (team, late) = (team.clone(), late.clone());
        threads.push(thread::spawn(move || {
            WHO.with(|w| w.set(CASES[1]));
            match catch_unwind(AssertUnwindSafe(|| team.join())) {
                Ok(seat) => {
                    let seat = seat.expect("ranks 3 .. 6 are free");
                    if j == 0 {
                        seat.arrive_and_drop();
                    } else {
                        drop(seat);
                    }
                }
                Err(payload) => {
                    let message = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_default();
                    assert!(message.contains("the barrier is retired"), "{message}");
                    // Relaxed: read after the join of this thread.
                    late.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    {
        let team = team.clone();
        threads.push(thread::spawn(move || {
            WHO.with(|w| w.set(CASES[2]));
            team.complete_tx(1);
        }));
    }
    for t in threads {
        t.join().expect("no legal call panics");
    }
    assert_eq!(runs.load(Ordering::Relaxed), 1, "{team:?}");
    let debug = format!("{:?}", *team);
    assert!(
        debug.contains(
            "barrier: Barrier { phase_parity: true, pending: 0, expected: 0, tx: 0, poisoned: false }"
        ),
        "not retired in phase 1: {debug}"
    );
    let mut seen = seen.lock().unwrap();
    seen.insert(*ended.lock().unwrap());
    if late.load(Ordering::Relaxed) > 0 {
        seen.insert(CASES[3]);
    }
}

/// Keeps the expected panics (a join on the retired team) out of the
/// output; every other panic prints as usual.
fn quiet_late_joins() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or("");
        if !message.starts_with("syncthreads: Team::join(): the barrier is retired") {
            default(info);
        }
    }));
}

#[test]
fn joined_and_seated_leaves_racing_complete_tx_retire_the_team_once() {
    quiet_late_joins();
    for flat in [false, true] {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
        let reached = seen.clone();
        check(move || leaves_joins_and_tx(flat, &reached));
        let seen = seen.lock().unwrap();
        for case in CASES {
            assert!(
                seen.contains(case),
                "flat {flat}: never reached `{case}` (reached: {seen:?})"
            );
        }
    }
}
