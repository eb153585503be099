//! The barrier kinds under test, their wait policies and the wait-stage counters.

use super::*;

/// The wait policy a kind runs under (`bench_hooks::set_policy`, with
/// `--features bench`; without it every kind runs the crate's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub(crate) enum Pol {
    Default,
    SpinOnly,
}

/// One row of the latency tables.
pub(crate) struct Entry {
    /// The name `--only` takes.
    pub(crate) key: &'static str,
    /// The name in the tables.
    pub(crate) name: &'static str,
    /// Spawns the participants.
    pub(crate) make: fn(usize) -> Pool,
    /// Ours (wait-stage statistics apply) or a peer we compare against.
    pub(crate) ours: bool,
    /// A pure spin barrier: collapses to scheduler time slices when the
    /// threads outnumber the cores (shorter budget there, none in --quick).
    pub(crate) spin: bool,
    pub(crate) policy: Pol,
}

impl Entry {
    const fn ours(key: &'static str, name: &'static str, make: fn(usize) -> Pool) -> Entry {
        Entry {
            key,
            name,
            make,
            ours: true,
            spin: false,
            policy: Pol::Default,
        }
    }
    const fn peer(key: &'static str, name: &'static str, make: fn(usize) -> Pool) -> Entry {
        Entry {
            ours: false,
            ..Entry::ours(key, name, make)
        }
    }
    const fn spin_peer(key: &'static str, name: &'static str, make: fn(usize) -> Pool) -> Entry {
        Entry {
            spin: true,
            ..Entry::peer(key, name, make)
        }
    }
    #[cfg_attr(not(feature = "bench"), allow(dead_code))]
    const fn policy(self, policy: Pol) -> Entry {
        Entry { policy, ..self }
    }
}

/// Every kind, in table order. Adding a kind is one line here, plus a
/// constructor for a barrier whose per-thread handles borrow it, e.g.
///
/// ```text
/// Entry::ours("team", "Team", team_pool),
///
/// fn team_pool(n: usize) -> Pool {
///     Pool::custom(n, |runners| {
///         let team = Arc::new(syncthreads::Team::new(n));
///         runners.into_iter().map(|r| {
///             let team = team.clone();
///             std::thread::spawn(move || {
///                 let seat = team.seat(r.rank());
///                 r.serve(|| { seat.arrive_and_wait(); })
///             })
///         }).collect()
///     })
/// }
/// ```
pub(crate) const KINDS: &[Entry] = &[
    Entry::ours("barrier", "barrier", Pool::new::<Plain>),
    #[cfg(feature = "bench")]
    Entry::ours("spin-only", "Barrier (spin only)", Pool::new::<Plain>).policy(Pol::SpinOnly),
    Entry::ours("team", "Team", Pool::team),
    // The shape sweep: `TeamShape` exists with `--features bench` only.
    #[cfg(feature = "bench")]
    Entry::ours("team-f2", "Team (fan-in 2)", |n| Pool::team_shaped(n, 2, 2)),
    #[cfg(feature = "bench")]
    Entry::ours("team-f8", "Team (fan-in 8)", |n| Pool::team_shaped(n, 8, 2)),
    #[cfg(feature = "bench")]
    Entry::ours("team-f16", "Team (fan-in 16)", |n| {
        Pool::team_shaped(n, 16, 2)
    }),
    #[cfg(feature = "bench")]
    Entry::ours("team-flat", "Team (flat)", |n| {
        Pool::team_shaped(n, 4, usize::MAX)
    }),
    Entry::ours("team-cap64", "Team (capacity 64)", |n| {
        Pool::team_with_capacity(n, 64)
    }),
    Entry::ours("block", "launch+Block", Pool::launched),
    Entry::ours(
        "block-seatless",
        "BlockBarrier (seat-less)",
        Pool::block_seatless,
    ),
    Entry::peer("std", "std", Pool::new::<Std>),
    Entry::peer("hurdles", "hurdles", Pool::new::<Hurdles>),
    Entry::spin_peer("sense", "sense spin", Pool::new::<SenseSpin>),
    Entry::spin_peer("dissemination", "dissemination", Pool::new::<Dissemination>),
];

/// Ratio columns of the latency table: `(numerator, denominator)` by key;
/// [`BEST_PEER`] is the fastest peer of the row.
pub(crate) const RATIOS: &[(&str, &str)] = &[
    ("std", "barrier"),
    ("barrier", BEST_PEER),
    ("barrier", "dissemination"),
    ("team", "dissemination"),
    ("team", "barrier"),
    ("block", "team"),
    ("team-cap64", "team"),
];

/// Ratio columns of the CPU table.
pub(crate) const CPU_RATIOS: &[(&str, &str)] = &[("barrier", "std")];

pub(crate) const BEST_PEER: &str = "best peer";

pub(crate) fn kind_index(key: &str) -> Option<usize> {
    KINDS.iter().position(|e| e.key == key)
}

pub(crate) fn set_policy(p: Pol) {
    #[cfg(feature = "bench")]
    {
        use syncthreads::bench_hooks::Policy;
        syncthreads::bench_hooks::set_policy(match p {
            Pol::Default => Policy::Adaptive,
            Pol::SpinOnly => Policy::SpinOnly,
        });
    }
    #[cfg(not(feature = "bench"))]
    let _ = p;
}

/// Process-wide wait-stage counters (`bench_hooks::WaitStats`), summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    pub(crate) waits: u64,
    pub(crate) ended_spin: u64,
    pub(crate) ended_yield: u64,
    pub(crate) ended_park: u64,
    pub(crate) spin_ns: u64,
    pub(crate) yield_ns: u64,
    pub(crate) park_ns: u64,
    pub(crate) slow_yields: u64,
}

impl Stats {
    pub(crate) fn add(&mut self, o: &Stats) {
        let (a, b) = (self.fields_mut(), o.fields());
        for (x, y) in a.into_iter().zip(b) {
            *x += y;
        }
    }
    pub(crate) fn fields(&self) -> [u64; 8] {
        [
            self.waits,
            self.ended_spin,
            self.ended_yield,
            self.ended_park,
            self.spin_ns,
            self.yield_ns,
            self.park_ns,
            self.slow_yields,
        ]
    }
    pub(crate) fn fields_mut(&mut self) -> [&mut u64; 8] {
        [
            &mut self.waits,
            &mut self.ended_spin,
            &mut self.ended_yield,
            &mut self.ended_park,
            &mut self.spin_ns,
            &mut self.yield_ns,
            &mut self.park_ns,
            &mut self.slow_yields,
        ]
    }
    pub(crate) fn encode(&self) -> String {
        join(self.fields().iter())
    }
    pub(crate) fn decode(s: &str) -> Option<Stats> {
        let v: Vec<u64> = s
            .split(',')
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        let mut out = Stats::default();
        if v.len() != 8 {
            return None;
        }
        for (x, y) in out.fields_mut().into_iter().zip(v) {
            *x = y;
        }
        Some(out)
    }
}

/// The counters since the last call (and resets them); zeros without
/// `--features bench`.
pub(crate) fn take_stats() -> Stats {
    #[cfg(feature = "bench")]
    {
        let s = syncthreads::bench_hooks::take_stats();
        Stats {
            waits: s.waits,
            ended_spin: s.ended_spin,
            ended_yield: s.ended_yield,
            ended_park: s.ended_park,
            spin_ns: s.spin_ns,
            yield_ns: s.yield_ns,
            park_ns: s.park_ns,
            slow_yields: s.slow_yields,
        }
    }
    #[cfg(not(feature = "bench"))]
    Stats::default()
}
