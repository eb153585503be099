//! The per-rank table of a [`Team`]: one word per rank of the capacity,
//! saying whether the rank takes part and, in a *wide* phase number that
//! does not wrap, the next phase it arrives in or the phase its leave
//! counts in. It serves [`Team::join`] (which ranks are free, and the wide
//! number of the current phase) and [`Team::missing`] and the progress in
//! `Debug` (who arrived in the current phase).
//!
//! # An entry
//!
//! ```text
//!  63 62 61                                            0
//! +-----+-----------------------------------------------+
//! |state|                 wide phase                    |
//! +-----+-----------------------------------------------+
//! ```
//!
//! | state | wide phase | meaning |
//! |---|---|---|
//! | [`FREE`] | 0 | never took part (ranks `seats..capacity` at the start) |
//! | [`UNHANDED`] | the next phase it arrives in (0) | takes part since construction; its seat was not handed out yet |
//! | [`PART`] | the next phase it arrives in | takes part; its seat is out |
//! | [`LEFT`] | the phase its leave counts in | left: free from the phase after that one |
//!
//! The wide phase counts every phase since construction (the word keeps
//! only its value modulo 4); 62 bits do not wrap in any real run. Each
//! entry has one writer at a time: the seat that holds the rank (each of
//! its arrivals stores its next phase, its leave stores `LEFT`), else
//! [`Team::join`] under the team's join lock (`FREE` or `LEFT` to `PART`),
//! else `Team::seat` (`UNHANDED` to `PART`, a CAS, as two threads may ask
//! for the same rank).
//!
//! # Where the entries live
//!
//! Each entry on a cache line of its own, which only its seat writes: an
//! arrival's store then finds the line in its own core's cache and waits
//! for nobody. Beside a word that other threads update it would cost a
//! line transfer whenever a neighbour's update came between the store and
//! the arrival's own RMW; that is where a table beside the leaves' words
//! cost a team's episode most (benches/RESULTS.md, "Levers tried"). A
//! reader (`join`, `missing()`, `Debug`) pays a line per rank, once per
//! call.
//!
//! # Reading the table
//!
//! Why a reader that read the word `Acquire` can fix the wide phase from
//! the largest entry: docs/design/orderings.md, "Reading the per-rank table".

#[cfg(doc)]
use super::Team;
use crate::lines::Lines;
use crate::phase::Phase;
use crate::sync::{AtomicU64, Ordering};

/// Rank never took part (`seats..capacity` at the start).
pub(super) const FREE: u64 = 0;
/// Rank takes part; its seat is out.
pub(super) const PART: u64 = 1 << 62;
/// Rank takes part since construction; its seat was not handed out yet.
pub(super) const UNHANDED: u64 = 2 << 62;
/// Rank left; the wide phase is the phase its leave counts in.
pub(super) const LEFT: u64 = 3 << 62;
const STATE: u64 = 3 << 62;
const WIDE: u64 = !STATE;

/// A decoded entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct RankEntry(pub(super) u64);

impl RankEntry {
    pub(super) fn new(state: u64, wide: u64) -> RankEntry {
        debug_assert!(state & WIDE == 0);
        RankEntry(state | (wide & WIDE))
    }
    pub(super) fn state(self) -> u64 {
        self.0 & STATE
    }
    pub(super) fn wide(self) -> u64 {
        self.0 & WIDE
    }
    /// The rank takes part (handed out or not).
    pub(super) fn takes_part(self) -> bool {
        matches!(self.state(), PART | UNHANDED)
    }
}

/// What the table says about the current phase.
pub(super) struct Progress {
    /// Participants of the current phase, and how many of them arrived
    /// (a leave in it counts as an arrival).
    pub(super) expected: usize,
    pub(super) arrived: usize,
}

/// The per-rank table: one entry per rank of the capacity, each on a cache
/// line that only its seat writes.
pub(super) struct Ranks(Lines<AtomicU64>);

impl Ranks {
    /// The table of `capacity` ranks, of which `0 .. seats` take part
    /// since construction (their seats not handed out yet).
    pub(super) fn new(seats: usize, capacity: usize) -> Ranks {
        let entry = |rank| {
            let e = if rank < seats {
                RankEntry::new(UNHANDED, 0)
            } else {
                RankEntry(FREE)
            };
            AtomicU64::new(e.0)
        };
        Ranks(Lines::new((0..capacity).map(entry), AtomicU64::new(0)))
    }

    /// Every rank of `0 .. seats` unhanded again, as new ([`Team::rearm`]:
    /// a launch's team, whose seats are all its ranks).
    pub(super) fn rearm(&self, seats: usize) {
        debug_assert_eq!(seats, self.0.len(), "a launch's team has no spare ranks");
        for entry in &self.0[..seats] {
            // Relaxed: as `State::rearm`.
            entry.store(RankEntry::new(UNHANDED, 0).0, Ordering::Relaxed);
        }
    }

    /// Claims `rank`, taking part since construction and not handed out
    /// yet; what its entry said otherwise.
    pub(super) fn claim(&self, rank: usize) -> Result<(), RankEntry> {
        let entry = self.entry(rank);
        // Relaxed: the CAS's atomicity alone hands the rank out; it publishes nothing (orderings.md).
        let mut e = RankEntry(entry.load(Ordering::Relaxed));
        loop {
            if e.state() != UNHANDED {
                return Err(e);
            }
            let part = RankEntry::new(PART, e.wide());
            // Relaxed: as above.
            match entry.compare_exchange_weak(e.0, part.0, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(found) => e = RankEntry(found),
            }
        }
    }

    /// The entry of `rank` (`rank < capacity`).
    #[inline]
    pub(super) fn entry(&self, rank: usize) -> &AtomicU64 {
        &self.0[rank]
    }

    /// Every entry, in rank order (`Relaxed` loads: see the module docs
    /// for what the caller's `Acquire` read of the word makes them show).
    pub(super) fn entries(&self) -> impl Iterator<Item = RankEntry> + '_ {
        self.0.iter().map(|e| RankEntry(e.load(Ordering::Relaxed)))
    }

    /// The table's heap bytes, for the memory table.
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    /// The wide number of the current phase, whose value modulo 4 is
    /// `phase` (orderings.md, "Reading the per-rank table").
    pub(super) fn wide_phase(&self, phase: Phase) -> u64 {
        let max = self.entries().map(RankEntry::wide).max().unwrap_or(0);
        // `M - 2`, not `M - 1`: a flat seat's entry may be two ahead.
        let base = max.saturating_sub(2);
        base + (phase.bits().wrapping_sub(base) & 3)
    }

    /// The lowest rank free in the phase `phase` (mod 4) of wide number
    /// `wide`: not taking part, and nothing of it owed or counted in it.
    pub(super) fn lowest_free(&self, wide: u64) -> Option<usize> {
        self.entries().position(|e| match e.state() {
            FREE => true,
            LEFT => e.wide() < wide,
            _ => false,
        })
    }

    /// The ranks that take part in phase `phase` and have not arrived in
    /// it, ascending.
    pub(super) fn missing_in(&self, phase: Phase) -> Vec<usize> {
        self.entries()
            .enumerate()
            .filter(|(_, e)| e.takes_part() && Phase::of_wide(e.wide()) == phase)
            .map(|(r, _)| r)
            .collect()
    }

    /// Participants of phase `phase` and their arrivals.
    pub(super) fn progress_in(&self, phase: Phase) -> Progress {
        let wide = self.wide_phase(phase);
        let mut p = Progress {
            expected: 0,
            arrived: 0,
        };
        for e in self.entries() {
            let (takes_part, arrived) = match e.state() {
                PART | UNHANDED => (true, Phase::of_wide(e.wide()) != phase),
                // Its leave is its arrival in `wide`, or (it arrived in
                // `wide` and left from the next phase on) in `wide + 1`.
                LEFT => {
                    let counted = e.wide() == wide || e.wide() == wide + 1;
                    (counted, counted)
                }
                _ => (false, false),
            };
            p.expected += takes_part as usize;
            p.arrived += arrived as usize;
        }
        p
    }
}
