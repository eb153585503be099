//! `--sections stages` (needs `--features bench`): where a `Team`'s
//! episode goes, stage by stage. Every seat of a `Team::new(n)` runs
//! `arrive_and_wait` in a loop with the crate's stage clock on
//! (`bench_hooks::record_stages`); the records of one episode, across the
//! threads, say how long each seat's entry read, its contribution to the
//! tree, the root climber's RMW of the word and the release's way to each
//! waiter took. The same loop without the clock runs beside it, so that
//! the clock's own cost shows.

use super::*;
use barrier::bench_hooks::{record_stages, take_stages, StageRecord};

/// Runs `episodes` episodes (after a fifth of that unrecorded) on a
/// `Team::new(n)`; each thread's records, by rank, or `None` without
/// recording (then the wall time per episode only).
fn run(n: usize, episodes: usize, record: bool) -> (f64, Vec<Vec<StageRecord>>) {
    let team = Arc::new(barrier::Team::new(n));
    let start = Arc::new(std::sync::Barrier::new(n + 1));
    let handles: Vec<_> = (0..n)
        .map(|rank| {
            let (team, start) = (team.clone(), start.clone());
            std::thread::spawn(move || {
                if common::pinning() {
                    common::pin_to_allowed(rank);
                }
                let seat = team.seat(rank);
                start.wait();
                for _ in 0..episodes / 5 {
                    seat.arrive_and_wait();
                }
                if record {
                    record_stages(episodes);
                }
                let t0 = Instant::now();
                for _ in 0..episodes {
                    seat.arrive_and_wait();
                }
                let wall = t0.elapsed().as_nanos() as f64 / episodes as f64;
                (wall, take_stages())
            })
        })
        .collect();
    start.wait();
    let mut out = Vec::with_capacity(n);
    let mut wall = 0.0;
    for h in handles {
        let (w, records) = h.join().expect("stage worker panicked");
        wall = f64::max(wall, w);
        out.push(records);
    }
    (wall, out)
}

/// The stages of every episode: medians (and 90th percentiles) over the
/// episodes of what each took, in ns.
struct Stages {
    /// From one episode's word RMW to the next one's.
    period: Vec<f64>,
    /// A seat's entry read (every seat).
    entry: Vec<f64>,
    /// A seat's fetch_add on its leaf, for the seats that did not complete it.
    leaf: Vec<f64>,
    /// The root climber's part in the tree: its leaf's fetch_add, the
    /// re-arms and the inner nodes up to the root.
    climb: Vec<f64>,
    /// The root climber's RMW of the word.
    word: Vec<f64>,
    /// From the word's RMW to a waiter's return (every waiter).
    release: Vec<f64>,
    /// From the word's RMW to the last waiter's return (per episode).
    release_last: Vec<f64>,
    /// From a waiter's return to its next call (the loop).
    gap: Vec<f64>,
    /// From the last seat's call to the word's RMW (per episode).
    last_to_word: Vec<f64>,
}

fn stages(records: &[Vec<StageRecord>]) -> Stages {
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let episodes = records.iter().map(Vec::len).min().unwrap_or(0);
    let mut s = Stages {
        period: Vec::new(),
        entry: Vec::new(),
        leaf: Vec::new(),
        climb: Vec::new(),
        word: Vec::new(),
        release: Vec::new(),
        release_last: Vec::new(),
        gap: Vec::new(),
        last_to_word: Vec::new(),
    };
    let mut last_root = None;
    for k in 0..episodes {
        let ep: Vec<&StageRecord> = records.iter().map(|r| &r[k]).collect();
        let Some(leader) = ep.iter().find(|r| r.leader) else {
            continue;
        };
        let root = leader.rooted;
        if let Some(prev) = last_root {
            s.period.push(d(prev, root));
        }
        last_root = Some(root);
        let last_start = ep.iter().map(|r| r.start).max().unwrap_or(root);
        s.last_to_word.push(d(last_start, root));
        let mut latest = root;
        for (i, r) in ep.iter().enumerate() {
            s.entry.push(d(r.start, r.entered));
            if r.climbed {
                s.climb.push(d(r.entered, r.counted));
                s.word.push(d(r.counted, r.rooted));
            } else {
                s.leaf.push(d(r.entered, r.counted));
            }
            if !r.leader {
                s.release.push(d(root, r.released));
                latest = latest.max(r.released);
            }
            if let Some(next) = records[i].get(k + 1) {
                s.gap.push(d(r.released, next.start));
            }
        }
        s.release_last.push(d(root, latest));
    }
    s
}

pub(crate) fn stage_section(r: &mut Report<'_>) {
    let o = r.o;
    let episodes = if o.quick { 2_000 } else { 50_000 };
    r.progress(format_args!("stages"));
    r.line(format!(
        "\n## Where a Team's episode goes: stage by stage ({episodes} recorded episodes per round, {} rounds, medians over the rounds of each stage's median; p90 in brackets)\n",
        o.rounds
    ));
    r.line(
        "Every seat of a `Team::new(T)` (default shape) in an `arrive_and_wait` loop with the crate's stage clock on. \
         entry: the seat's read of the word; leaf: a seat's `fetch_add` on its leaf (the seats that did not complete it); \
         climb: the root climber's leaf `fetch_add`, re-arms and inner nodes; word: its RMW of the word; \
         release: from that RMW to a waiter's return (all waiters; last: the slowest per episode); \
         gap: a waiter's return to its next call; last call to word: the latest seat's call to the word's RMW. \
         A flat team has no tree: its seats' word RMW is under \"word\". \
         Wall per episode with and without the clock: what the clock itself costs.\n",
    );
    r.line("| threads | wall, no clock | wall, clock | period | entry | leaf | climb | word | release | release (last) | gap | last call to word |");
    r.line("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &n in &o.threads {
        let mut plain = Vec::new();
        let mut clocked = Vec::new();
        let mut rows: Vec<[(f64, f64); 9]> = Vec::new();
        for round in 0..o.rounds {
            r.progress(format_args!("stages: {n} threads, round {round}"));
            // Alternate which goes first, as the other sections rotate kinds.
            for record in [round % 2 == 0, round % 2 == 1] {
                let (wall, records) = run(n, episodes, record);
                if !record {
                    plain.push(wall);
                    continue;
                }
                clocked.push(wall);
                let s = stages(&records);
                let q = |v: &[f64]| (quantile(v, 0.5), quantile(v, 0.9));
                rows.push([
                    q(&s.period),
                    q(&s.entry),
                    q(&s.leaf),
                    q(&s.climb),
                    q(&s.word),
                    q(&s.release),
                    q(&s.release_last),
                    q(&s.gap),
                    q(&s.last_to_word),
                ]);
            }
        }
        let cell = |i: usize| {
            let m: Vec<f64> = rows.iter().map(|row| row[i].0).collect();
            let p: Vec<f64> = rows.iter().map(|row| row[i].1).collect();
            if m.iter().all(|x| x.is_nan()) {
                "-".to_owned()
            } else {
                format!("{} ({})", fmt_time(med(&m)), fmt_time(med(&p)))
            }
        };
        let cells: Vec<String> = (0..9).map(cell).collect();
        r.line(format!(
            "| {n} | {} | {} | {} |",
            fmt_time(med(&plain)),
            fmt_time(med(&clocked)),
            cells.join(" | ")
        ));
    }
}
