//! Helpers shared by the models: the model runner, data slots whose accesses
//! loom checks for races, and a panic hook that keeps expected panics quiet.
#![allow(dead_code)] // each test file uses a different subset

use loom::cell::UnsafeCell;
use std::sync::Once;

/// Runs `f` under loom. `LOOM_MAX_PREEMPTIONS` picks the preemption bound
/// (`.ci/loom` sets it); when it is unset the bound is 2, so a plain
/// `cargo test` in this crate finishes instead of exploring without bound.
/// Prints how many executions loom explored (see with `--nocapture`).
pub fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    model_bounded(usize::MAX, f)
}

/// [`model`] with the preemption bound capped at `max`: for a model whose
/// schedules grow past the budget at the suite's bound (each capped model
/// says why its cap still reaches the interleaving it is about).
pub fn model_bounded<F: Fn() + Sync + Send + 'static>(max: usize, f: F) {
    model_with(max, None, f)
}

/// [`model_bounded`], and with room for `branches` scheduling points per
/// execution (loom's default is 1 000): for a model that runs many
/// operations in one thread (dozens of tasks), not many interleavings.
pub fn model_with<F: Fn() + Sync + Send + 'static>(max: usize, branches: Option<usize>, f: F) {
    let mut builder = loom::model::Builder::new();
    if let Some(branches) = branches {
        builder.max_branches = branches;
    }
    let bound = builder.preemption_bound.unwrap_or(2).min(max);
    builder.preemption_bound = Some(bound);
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = executions.clone();
    let start = std::time::Instant::now();
    builder.check(move || {
        // Relaxed: a statistic, read after `check` returns on this thread.
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    let (name, executions) = (
        model_name(),
        executions.load(std::sync::atomic::Ordering::Relaxed),
    );
    // One write each, so that the lines of models running in parallel do
    // not interleave.
    let secs = start.elapsed().as_secs_f64();
    let line =
        format!("loom: {name} {executions} executions (preemption bound {bound}, {secs:.1} s)\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    // `.ci/loom` reads the counts and times from this file (appended to,
    // one line per model, in one write).
    if let Some(path) = std::env::var_os("LOOM_COUNTS") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("LOOM_COUNTS names a writable file");
        let entry = format!("{name} {executions} {secs:.1}\n");
        std::io::Write::write_all(&mut file, entry.as_bytes()).expect("the count is written");
    }
}

/// `FILE::TEST` of the running model (the test binary's name without its
/// hash, and the test thread's name), with `#2`, `#3` for a test's later
/// models: the key of its count in `counts.txt`, which `.ci/loom` checks.
fn model_name() -> String {
    static RUNS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let binary = std::env::args().next().unwrap_or_default();
    let binary = std::path::Path::new(&binary)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    let file = binary.rsplit_once('-').map_or(binary, |(file, _hash)| file);
    let test = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace("::", ".");
    let name = format!("{file}::{test}");
    let mut runs = RUNS.lock().unwrap();
    runs.push(name.clone());
    match runs.iter().filter(|run| **run == name).count() {
        1 => name,
        n => format!("{name}#{n}"),
    }
}

/// [`model`], for a model whose executions fall into named cases (a timed
/// wait in time or timed out, a poll that saw the phase at once or later):
/// each execution names its case with [`Reach::case`], and once loom is done
/// every case in `cases` must have come up in some execution. A model that
/// explores fewer interleavings than it is written for then fails instead
/// of passing with its assertions for one case never run (`README.md`,
/// "Which thread runs first").
pub fn model_reaching<F>(cases: &'static [&'static str], f: F)
where
    F: Fn(&Reach) + Sync + Send + 'static,
{
    model_reaching_bounded(usize::MAX, cases, f)
}

/// [`model_reaching_bounded`] with room for `branches` scheduling points
/// per execution (see [`model_with`]).
pub fn model_reaching_with<F>(
    max: usize,
    branches: Option<usize>,
    cases: &'static [&'static str],
    f: F,
) where
    F: Fn(&Reach) + Sync + Send + 'static,
{
    reaching(max, branches, cases, f)
}

/// [`model_reaching`] with the preemption bound capped at `max`. A case
/// `event:NAME` is reached when the crate marked the internal path `NAME`
/// (`syncthreads::take_model_events`, under `--cfg loom` only) in some
/// execution.
pub fn model_reaching_bounded<F>(max: usize, cases: &'static [&'static str], f: F)
where
    F: Fn(&Reach) + Sync + Send + 'static,
{
    reaching(max, None, cases, f)
}

fn reaching<F>(max: usize, branches: Option<usize>, cases: &'static [&'static str], f: F)
where
    F: Fn(&Reach) + Sync + Send + 'static,
{
    let _ = syncthreads::take_model_events();
    let reach = Reach {
        cases,
        seen: Default::default(),
        events_seen: Default::default(),
    };
    let inner = reach.clone();
    model_with(max, branches, move || f(&inner));
    // The internal paths the crate marked (`sync::model_event`) since the
    // last execution's `Reach::events`, named `event:NAME` among the cases.
    reach.mark_events(syncthreads::take_model_events());
    let seen = reach.seen.lock().unwrap();
    let events = reach.events_seen.lock().unwrap();
    for case in cases {
        assert!(
            seen.contains(case),
            "loom never reached the case `{case}` (reached: {seen:?}; internal paths: {events:?})"
        );
    }
}

/// The cases a [`model_reaching`] model came through, across executions (a
/// std lock: a record outside the model, no scheduling point).
#[derive(Clone)]
pub struct Reach {
    cases: &'static [&'static str],
    seen: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<&'static str>>>,
    /// Every internal path marked in the exploration (for the failure message).
    events_seen: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<&'static str>>>,
}

impl Reach {
    /// This execution came through `case`, one of the model's cases.
    pub fn case(&self, case: &'static str) {
        assert!(
            self.cases.contains(&case),
            "`{case}` is not a case of the model"
        );
        self.seen.lock().unwrap().insert(case);
    }

    /// Names `yes` if `cond` holds in this execution, else `no`.
    pub fn either(&self, cond: bool, yes: &'static str, no: &'static str) {
        self.case(if cond { yes } else { no });
    }

    /// The internal paths (`sync::model_event`) this execution came
    /// through: call it once, at the end of the execution, on the main
    /// thread after the joins (it takes them; loom runs every model thread
    /// of an execution on one OS thread, whose list this is). Those named
    /// `event:NAME` among the cases count as reached. The paths of the
    /// parking model: `park-sleeps` (a wait slept in the parking lot until
    /// woken), `park-refused` (a wait about to sleep found, under the lot's
    /// lock, that the word had changed: the waker came in between).
    pub fn events(&self) -> std::collections::BTreeSet<&'static str> {
        let events = syncthreads::take_model_events();
        self.mark_events(events.clone());
        events
    }

    /// Whether a wait of this execution slept in the parking lot (see
    /// [`Reach::events`]: call once, at the end).
    pub fn slept(&self) -> bool {
        self.events().contains("park-sleeps")
    }

    fn mark_events(&self, events: std::collections::BTreeSet<&'static str>) {
        let mut seen = self.seen.lock().unwrap();
        for event in &events {
            if let Some(case) = self
                .cases
                .iter()
                .find(|case| case.strip_prefix("event:") == Some(*event))
            {
                seen.insert(case);
            }
        }
        self.events_seen.lock().unwrap().extend(events);
    }
}

/// Counts the polls of a future (outside the model, as [`Order`]): a task
/// whose first poll was its last never waited for a wake.
#[derive(Default)]
pub struct Polls(std::cell::Cell<usize>);

impl Polls {
    /// `fut`, counting its polls here.
    pub fn count<'a, F: std::future::Future + 'a>(
        &'a self,
        fut: F,
    ) -> impl std::future::Future<Output = F::Output> + 'a {
        let mut fut = Box::pin(fut);
        std::future::poll_fn(move |cx| {
            self.0.set(self.0.get() + 1);
            fut.as_mut().poll(cx)
        })
    }

    pub fn get(&self) -> usize {
        self.0.get()
    }
}

/// A record of the order one execution took, outside the model: a std
/// atomic, which loom neither sees nor schedules (it runs the model threads
/// one at a time on one OS thread, so the record is the real order of that
/// execution). For naming cases only, never for an assertion on ordering.
#[derive(Default)]
pub struct Order(std::sync::atomic::AtomicUsize);

impl Order {
    pub fn new() -> std::sync::Arc<Order> {
        Default::default()
    }

    /// Adds one (Relaxed: outside the model, one OS thread).
    pub fn bump(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn set(&self, v: usize) {
        self.0.store(v, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Plain (non-atomic) data cells. Every access goes through loom's
/// `UnsafeCell`, which fails the model when two accesses are not ordered by
/// happens-before: a write before `arrive` read after `wait` is exactly the
/// guarantee the barrier gives, and a missing Acquire/Release shows up here.
pub struct Slots(Vec<UnsafeCell<usize>>);

// SAFETY: every access goes through loom's `UnsafeCell`, which checks (and
// panics on) accesses that race; the models only share slots through the
// barrier's ordering.
unsafe impl Sync for Slots {}
// SAFETY: as above; the cells hold plain `usize`s.
unsafe impl Send for Slots {}

impl Slots {
    pub fn new(n: usize) -> Slots {
        Slots((0..n).map(|_| UnsafeCell::new(usize::MAX)).collect())
    }

    #[track_caller]
    pub fn set(&self, i: usize, value: usize) {
        // SAFETY: loom checks this write against every other access first.
        self.0[i].with_mut(|p| unsafe { *p = value });
    }

    #[track_caller]
    pub fn get(&self, i: usize) -> usize {
        // SAFETY: loom checks this read against every other write first.
        self.0[i].with(|p| unsafe { *p })
    }
}

/// Installs (once per process) a panic hook that stays silent for the panics
/// the models provoke on purpose (poisoned barriers, `boom` completions) and
/// prints every other panic as usual.
/// (The barrier-retired panics are provoked on purpose too.)
pub fn quiet_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = panic_message(info.payload());
            let expected = message.starts_with("syncthreads: barrier poisoned")
                || message.starts_with("syncthreads: divergent __syncthreads")
                || message.contains("the barrier is retired")
                || message.contains("a seat arrives once per phase")
                || message.contains("used either through seats or seat-less")
                || message == "boom";
            if !expected {
                default(info);
            }
        }));
    });
}

/// The text of a panic payload (`&str` or `String`), or `""`.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        String::new()
    }
}

/// A waker for hand-polled futures in the models: it only counts its wakes
/// (a loom atomic), as the batch models' wakers do. It unparks nobody: a
/// loom `unpark` hands the woken thread everything the waker did, even when
/// that thread never parks on it, an ordering no real executor gives a task
/// that is not polled because of the wake. A task that waits for a wake
/// polls the count ([`Probe::wait_for`]), as an executor's queue would be.
pub struct Probe {
    wakes: loom::sync::atomic::AtomicUsize,
}

impl Probe {
    pub fn new() -> std::sync::Arc<Probe> {
        std::sync::Arc::new(Probe {
            wakes: loom::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// How often it was woken.
    pub fn wakes(&self) -> usize {
        // Acquire: a wake seen here comes with what the waker did before it
        // (an executor's run queue hands a woken task over so).
        self.wakes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits until the probe has been woken `n` times, yielding to the
    /// other model threads between looks (a lost wake-up leaves this loop
    /// alone with nothing to yield to: loom fails the model).
    pub fn wait_for(&self, n: usize) {
        while self.wakes() < n {
            loom::thread::yield_now();
        }
    }

    /// Polls `fut` once with this probe as the waker.
    pub fn poll<F: std::future::Future>(
        self: &std::sync::Arc<Self>,
        fut: std::pin::Pin<&mut F>,
    ) -> std::task::Poll<F::Output> {
        let waker = std::task::Waker::from(self.clone());
        fut.poll(&mut std::task::Context::from_waker(&waker))
    }
}

impl std::task::Wake for Probe {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        // Release: pairs with `wakes`.
        self.wakes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }
}

/// The `barrier: Barrier { .. }` part of a team's `Debug`: its word. The
/// `Debug` reads the word `Acquire` for its progress first, so a model's
/// check of what a thread sees after reading it rests on that read too (a
/// join's own `Acquire` is checked on a `Barrier`, join.rs).
pub fn word<F>(team: &syncthreads::Team<F>) -> String {
    let debug = format!("{team:?}");
    let start = debug
        .find("barrier: ")
        .expect("Team's Debug shows its barrier")
        + "barrier: ".len();
    let end = start + debug[start..].find('}').expect("the barrier's Debug ends") + 1;
    debug[start..end].to_string()
}

/// A team of `seats` seats of `capacity`, fan-in `fan_in`, never flat,
/// counting its completions.
pub fn counted(
    seats: usize,
    capacity: usize,
    fan_in: usize,
) -> (
    loom::sync::Arc<syncthreads::Team<impl syncthreads::Completion>>,
    loom::sync::Arc<loom::sync::atomic::AtomicUsize>,
) {
    let runs = loom::sync::Arc::new(loom::sync::atomic::AtomicUsize::new(0));
    let team = {
        let runs = runs.clone();
        syncthreads::TeamShape::new(fan_in, 0).team_with_completion_and_capacity(
            seats,
            capacity,
            move || {
                // Relaxed: the completions are ordered by the team.
                runs.fetch_add(1, loom::sync::atomic::Ordering::Relaxed);
            },
        )
    };
    (loom::sync::Arc::new(team), runs)
}

/// A two-thread model in both layouts: `setup` makes the shared state,
/// one role runs on the main thread (which loom runs first) and the other
/// on a spawned thread, then the other way round; `check` runs on the main
/// thread after both. Each layout is a [`model_reaching`] model of its own
/// (the second's count is `NAME#2`), and each must reach every case.
pub fn both_layouts<S: Send + Sync + 'static>(
    cases: &'static [&'static str],
    setup: fn() -> S,
    first: fn(&S, &Reach),
    second: fn(&S, &Reach),
    check: fn(&S),
) {
    for swapped in [false, true] {
        model_reaching(cases, move |reach| {
            let shared = loom::sync::Arc::new(setup());
            let (on_main, spawned) = if swapped {
                (second, first)
            } else {
                (first, second)
            };
            let other = {
                let (shared, reach) = (shared.clone(), reach.clone());
                loom::thread::spawn(move || spawned(&shared, &reach))
            };
            on_main(&shared, reach);
            other.join().unwrap();
            check(&shared);
        });
    }
}

/// A launch of 2 on `launcher` in which rank `r` writes `10 + r` into its
/// cell; the threads the ranks ran on (the pool models).
pub fn write_rank(launcher: &syncthreads::Launcher, cells: &Slots) -> Vec<loom::thread::ThreadId> {
    launcher.launch(2, |block| {
        cells.set(block.thread_rank(), 10 + block.thread_rank());
        loom::thread::current().id()
    })
}
