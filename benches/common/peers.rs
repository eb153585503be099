//! Textbook spin barriers, the floor references: they never park or yield,
//! so they are as fast as a cache-line round trip allows with a core per
//! thread, and collapse (whole scheduler time slices per episode) without.

use super::Kind;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The centralized sense-reversing barrier (Mellor-Crummey & Scott 1991,
/// algorithm 7 without the tree): one counter, one global sense flag.
pub struct SenseSpin {
    count: CachePadded<AtomicUsize>,
    sense: CachePadded<AtomicBool>,
    n: usize,
}

impl Kind for SenseSpin {
    /// The thread's local sense.
    type Local = bool;
    fn new(n: usize) -> Self {
        SenseSpin {
            count: CachePadded::new(AtomicUsize::new(n)),
            sense: CachePadded::new(AtomicBool::new(false)),
            n,
        }
    }
    fn locals(&self, n: usize) -> Vec<bool> {
        vec![false; n]
    }
    #[inline]
    fn wait(&self, local: &mut bool) {
        *local = !*local;
        // AcqRel: the last arriver must see every arrival's writes (Acquire)
        // and each arrival publishes its own (Release).
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Relaxed: ordered before the Release store of the sense below.
            self.count.store(self.n, Ordering::Relaxed);
            // Release: publishes the episode to the spinners.
            self.sense.store(*local, Ordering::Release);
        } else {
            // Acquire: pairs with the Release store of the sense.
            while self.sense.load(Ordering::Acquire) != *local {
                std::hint::spin_loop();
            }
        }
    }
}

/// Rounds a dissemination barrier for up to 2^6 = 64 threads needs.
const MAX_ROUNDS: usize = 6;

/// The dissemination barrier (Hensgen, Finkel & Manber 1988; MCS 1991,
/// algorithm 9): in round r thread i signals thread (i + 2^r) mod n and waits
/// for thread (i - 2^r) mod n; ceil(log2 n) rounds, no shared counter. Each
/// flag has its own cache line.
pub struct Dissemination {
    /// `flags[(i * 2 + parity) * MAX_ROUNDS + round]`.
    flags: Vec<CachePadded<AtomicBool>>,
    n: usize,
    rounds: usize,
}

/// A thread's state in the dissemination barrier.
pub struct DissLocal {
    id: usize,
    parity: usize,
    sense: bool,
}

impl Kind for Dissemination {
    type Local = DissLocal;
    fn new(n: usize) -> Self {
        let rounds = n.next_power_of_two().trailing_zeros() as usize;
        assert!(
            rounds <= MAX_ROUNDS,
            "dissemination barrier: at most 64 threads"
        );
        Dissemination {
            flags: (0..n * 2 * MAX_ROUNDS)
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
            n,
            rounds,
        }
    }
    fn locals(&self, n: usize) -> Vec<DissLocal> {
        (0..n)
            .map(|id| DissLocal {
                id,
                parity: 0,
                sense: true,
            })
            .collect()
    }
    #[inline]
    fn wait(&self, l: &mut DissLocal) {
        for r in 0..self.rounds {
            let partner = (l.id + (1 << r)) % self.n;
            // Release: our writes (and what we learnt in earlier rounds) travel to the partner.
            self.flags[(partner * 2 + l.parity) * MAX_ROUNDS + r].store(l.sense, Ordering::Release);
            let mine = &self.flags[(l.id * 2 + l.parity) * MAX_ROUNDS + r];
            // Acquire: pairs with the signaller's Release store.
            while mine.load(Ordering::Acquire) != l.sense {
                std::hint::spin_loop();
            }
        }
        if l.parity == 1 {
            l.sense = !l.sense;
        }
        l.parity = 1 - l.parity;
    }
}
