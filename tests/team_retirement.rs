//! The relatives of two retirement bugs of a `Team` (an empty extra phase
//! completed by a tree team whose members all left; a joined seat's legal
//! leave that panicked on the phase it retired): every combination of
//! shape (flat, a one-leaf tree, a two-level tree), join (never, at the
//! start, after the first event, after every other seat's events), each
//! participant's leave (`arrive_and_drop` or drop, before or after its
//! arrival in the phase), the order of the leaves, a transaction count
//! holding phase 0 (released at any point, or none) and a completion
//! function (or none), run to retirement on one thread against a ledger of
//! the contract: a phase completes when its arrivals and tx are in; a
//! leave is its seat's arrival in the phase after its last one, a drop
//! without an arrival while the phase it arrived in still runs; a team
//! whose every seat left is retired as its last phase completes.
//!
//! Checked after every step: the completions counted exactly (with a
//! completion function) and the phase's parity (both), no panic on any of
//! these legal calls; at the end: retired in the ledger's phase.

mod common;

use common::shape;
use common::{panic_of, watchdog};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use syncthreads::{Completion, Seat, Team};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Flat,
    OneLeaf,
    TwoLevels,
}

impl Shape {
    /// The team's shape and capacity (one leaf: the default at three ranks).
    fn of(self) -> (shape::Shape, usize) {
        match self {
            Shape::Flat => (shape::Shape::FLAT, 3),
            Shape::OneLeaf => (shape::Shape::DEFAULT, 3),
            Shape::TwoLevels => (shape::Shape::BINARY, 4),
        }
    }

    /// The shapes to run: those of them the build has (`common::shape`).
    fn all() -> Vec<Shape> {
        let all = [Shape::Flat, Shape::OneLeaf, Shape::TwoLevels];
        let run = shape::shapes(&all.map(|s| s.of().0));
        all.into_iter()
            .filter(|s| run.contains(&s.of().0))
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leave {
    /// `arrive_and_drop()` without an arrival in the phase first.
    Called,
    /// `drop(seat)` without an arrival in the phase first.
    Dropped,
    /// `arrive()`, later `arrive_and_drop()` (leave from the next phase on).
    CalledAfterArrival,
    /// `arrive()`, later `drop(seat)`.
    DroppedAfterArrival,
}

impl Leave {
    const ALL: [Leave; 4] = [
        Leave::Called,
        Leave::Dropped,
        Leave::CalledAfterArrival,
        Leave::DroppedAfterArrival,
    ];
    fn arrives_first(self) -> bool {
        matches!(self, Leave::CalledAfterArrival | Leave::DroppedAfterArrival)
    }
    fn by_call(self) -> bool {
        matches!(self, Leave::Called | Leave::CalledAfterArrival)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Join,
    Arrive(usize),
    Leave(usize),
    CompleteTx,
}

/// The contract, sequentially: the wide phase, the counts, who arrived in
/// which phase, and how many phases completed.
#[derive(Debug)]
struct Ledger {
    phase: usize,
    pending: usize,
    expected: usize,
    tx: i64,
    /// The phase of each participant's last arrival (`None`: none yet).
    last: [Option<usize>; 3],
    completions: usize,
    /// Every seat left and the last phase completed.
    retired: bool,
}

impl Ledger {
    fn new(seats: usize, tx: bool) -> Ledger {
        Ledger {
            phase: 0,
            pending: seats,
            expected: seats,
            tx: i64::from(tx),
            last: [None; 3],
            completions: 0,
            retired: false,
        }
    }

    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 && !self.retired {
            self.completions += 1;
            self.phase += 1;
            self.pending = self.expected;
            self.retired = self.expected == 0;
        }
    }

    fn apply(&mut self, e: Event) {
        match e {
            Event::Join => {
                self.pending += 1;
                self.expected += 1;
            }
            Event::Arrive(who) => {
                assert_ne!(self.last[who], Some(self.phase), "the script arrives once");
                self.last[who] = Some(self.phase);
                self.pending -= 1;
            }
            Event::Leave(who) => {
                if self.last[who] == Some(self.phase) {
                    // Arrived in the running phase: leaves from the next on.
                    self.expected -= 1;
                } else {
                    self.pending -= 1;
                    self.expected -= 1;
                }
            }
            Event::CompleteTx => self.tx -= 1,
        }
        self.settle();
    }
}

/// One case of the table, run on a fresh team. `Err` names what broke.
struct Case {
    shape: Shape,
    completion: bool,
    leaves: [Leave; 3],
    events: Vec<Event>,
    tx: bool,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "{:?}, completion {}, tx {}, leaves {:?}, events {:?}",
            self.shape, self.completion, self.tx, self.leaves, self.events
        )
    }

    fn run(&self) -> Result<(), String> {
        let count = AtomicUsize::new(0);
        let (shape, capacity) = self.shape.of();
        if self.completion {
            let f = || {
                count.fetch_add(1, Ordering::Relaxed);
            };
            self.run_on(&shape.team_with(2, capacity, f), Some(&count))
        } else {
            self.run_on(&shape.team(2, capacity), None)
        }
    }

    fn run_on<F: Completion>(
        &self,
        team: &Team<F>,
        count: Option<&AtomicUsize>,
    ) -> Result<(), String> {
        let mut ledger = Ledger::new(2, self.tx);
        if self.tx {
            team.expect_tx(1);
        }
        let seats: [Cell<Option<Seat<'_, F>>>; 3] = [
            Cell::new(Some(team.seat(0))),
            Cell::new(Some(team.seat(1))),
            Cell::new(None),
        ];
        for (step, &e) in self.events.iter().enumerate() {
            let done = catch_unwind(AssertUnwindSafe(|| match e {
                Event::Join => {
                    let joined = team.join().expect("a free rank");
                    assert_eq!(joined.rank(), 2);
                    seats[2].set(Some(joined));
                }
                Event::Arrive(who) => {
                    let seat = seats[who].take().expect("seated");
                    drop(seat.arrive());
                    seats[who].set(Some(seat));
                }
                Event::Leave(who) => {
                    let seat = seats[who].take().expect("seated");
                    if self.leaves[who].by_call() {
                        seat.arrive_and_drop();
                    } else {
                        drop(seat);
                    }
                }
                Event::CompleteTx => team.complete_tx(1),
            }));
            if let Err(payload) = done {
                return Err(format!(
                    "step {step} ({e:?}) panicked: {}",
                    common::panic_message(&*payload)
                ));
            }
            ledger.apply(e);
            if let Some(count) = count {
                let ran = count.load(Ordering::Relaxed);
                if ran != ledger.completions {
                    return Err(format!(
                        "after step {step} ({e:?}): the completion ran {ran} times, the ledger says {}: {team:?}",
                        ledger.completions
                    ));
                }
            }
            if team.phase_parity() != (ledger.phase % 2 == 1) {
                return Err(format!(
                    "after step {step} ({e:?}): phase parity {}, the ledger's phase is {}: {team:?}",
                    team.phase_parity(),
                    ledger.phase
                ));
            }
        }
        if !ledger.retired {
            return Err(format!("the script does not retire the team: {ledger:?}"));
        }
        // Retired in the ledger's phase: a wait for it can never complete,
        // a join is refused, and the word owes nothing.
        let parity = ledger.phase % 2 == 1;
        let wait = panic_of(|| team.wait_parity(parity));
        let join = panic_of(|| team.join().map(|s| s.rank()));
        let debug = format!("{team:?}");
        if !wait.contains("retired") || !join.contains("retired") {
            return Err(format!(
                "not retired in phase {}: wait_parity: {wait}; join: {join}; {debug}",
                ledger.phase
            ));
        }
        if !debug.contains("pending: 0, expected: 0, tx: 0, poisoned: false") {
            return Err(format!("a retired word owes something: {debug}"));
        }
        Ok(())
    }
}

/// Whether every call of `events` is legal: no join on a team that
/// retired before it (a retired team never comes back: that join panics,
/// as the misuse tests pin).
fn legal(events: &[Event], tx: bool) -> bool {
    let mut ledger = Ledger::new(2, tx);
    events.iter().all(|&e| {
        let legal = !(e == Event::Join && ledger.retired);
        ledger.apply(e);
        legal
    })
}

/// Every order of the participants' leaves, `n` of them.
fn orders(n: usize) -> Vec<Vec<usize>> {
    if n == 2 {
        return vec![vec![0, 1], vec![1, 0]];
    }
    let mut all = Vec::new();
    for first in 0..3 {
        for second in (0..3).filter(|&second| second != first) {
            // The one left of 0, 1, 2 (their sum is 3).
            all.push(vec![first, second, 3 - first - second]);
        }
    }
    all
}

/// Every interleaving of `b` into `a` that keeps each one's order.
fn interleavings(a: &[Event], b: &[Event]) -> Vec<Vec<Event>> {
    if a.is_empty() || b.is_empty() {
        return vec![[a, b].concat()];
    }
    let mut all = Vec::new();
    for mut rest in interleavings(&a[1..], b) {
        rest.insert(0, a[0]);
        all.push(rest);
    }
    for mut rest in interleavings(a, &b[1..]) {
        rest.insert(0, b[0]);
        all.push(rest);
    }
    all
}

/// The scripts of one choice of leaves and join: the events of seats 0 and
/// 1 (the arrivals first, then the leaves in `order`), the joined seat's
/// (its arrival, then its leave) interleaved anywhere after its join, the
/// join at the start, after the first event, or after every other event.
fn scripts(leaves: [Leave; 3], join: Option<usize>) -> Vec<Vec<Event>> {
    let n = if join.is_some() { 3 } else { 2 };
    let mut all = Vec::new();
    for order in orders(n) {
        let mut seated = Vec::new();
        let mut joined = Vec::new();
        for (who, leave) in leaves.iter().enumerate().take(n) {
            if leave.arrives_first() {
                let list = if who == 2 { &mut joined } else { &mut seated };
                list.push(Event::Arrive(who));
            }
        }
        for &who in &order {
            let list = if who == 2 { &mut joined } else { &mut seated };
            list.push(Event::Leave(who));
        }
        match join {
            None => all.push(seated),
            Some(at) => {
                let at = at.min(seated.len());
                let (before, after) = seated.split_at(at);
                for tail in interleavings(after, &joined) {
                    let mut script = before.to_vec();
                    script.push(Event::Join);
                    script.extend(tail);
                    all.push(script);
                }
            }
        }
    }
    all.sort_by_key(|s| format!("{s:?}"));
    all.dedup();
    all
}

#[test]
fn every_leave_and_join_combination_retires_in_the_ledgers_phase() {
    watchdog(
        120,
        || "the retirement table".to_owned(),
        || {
            let mut cases = 0;
            let mut failures = Vec::new();
            for shape in Shape::all() {
                for completion in [false, true] {
                    for join in [None, Some(0), Some(1), Some(usize::MAX)] {
                        for l0 in Leave::ALL {
                            for l1 in Leave::ALL {
                                for l2 in Leave::ALL {
                                    if join.is_none() && l2 != Leave::Called {
                                        continue; // no third seat: one case
                                    }
                                    let leaves = [l0, l1, l2];
                                    for events in scripts(leaves, join) {
                                        // The tx held from the start, released
                                        // before any event or after any.
                                        let releases = std::iter::once(None)
                                            .chain((0..=events.len()).map(Some));
                                        for release in releases {
                                            let mut events = events.clone();
                                            if let Some(at) = release {
                                                events.insert(at, Event::CompleteTx);
                                            }
                                            if !legal(&events, release.is_some()) {
                                                continue;
                                            }
                                            let case = Case {
                                                shape,
                                                completion,
                                                leaves,
                                                events,
                                                tx: release.is_some(),
                                            };
                                            cases += 1;
                                            if let Err(why) = case.run() {
                                                failures.push(format!("{}: {why}", case.name()));
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            eprintln!("retirement table: {cases} cases, {} failed", failures.len());
            assert!(cases > 10_000, "the table shrank: {cases} cases");
            assert!(
                failures.is_empty(),
                "{} of {cases} cases broke the contract, e.g.:\n{}",
                failures.len(),
                failures
                    .iter()
                    .take(12)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        },
    );
}

/// The ledger itself, on the two sequences of the bug report.
#[test]
fn the_ledger_retires_the_reported_sequences_in_phase_one() {
    // Seat 0 arrives and leaves, the joined seat is dropped before its
    // first arrival: phase 0 completes once, with nobody left.
    let mut l = Ledger::new(1, false);
    for e in [
        Event::Join,
        Event::Arrive(0),
        Event::Leave(0),
        Event::Leave(2),
    ] {
        l.apply(e);
    }
    assert!(l.retired);
    assert_eq!((l.phase, l.completions), (1, 1));
    // Two seats leave while tx holds phase 0, a third joins, the tx is
    // released, the joined seat leaves.
    let mut l = Ledger::new(2, true);
    for e in [
        Event::Leave(0),
        Event::Leave(1),
        Event::Join,
        Event::CompleteTx,
        Event::Leave(2),
    ] {
        l.apply(e);
    }
    assert!(l.retired);
    assert_eq!((l.phase, l.completions), (1, 1));
}
