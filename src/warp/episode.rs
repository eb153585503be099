//! One collective: claim the lane, make sure its slot's readers are done,
//! publish the value, arrive, wait, read the sources, say done
//! (docs/design/warp-collectives.md, "The episode"). Word values, and a
//! shuffle's one slot value, are read during the wait, from the line whose
//! load showed their lane arrived; a vote is the same episode with its
//! predicate in the arrival itself (a bit of the lane's word), which the
//! waiters read as they wait: nothing to read after.

use super::slots::{self, Own};
use super::{Lane, WarpBarrier, COUNT, POISONED, VOTES};
use crate::sync::{self, Ordering};
use crate::wait::Word;

/// The claim of a lane for one collective; its drop says the lane reads
/// no more of its round (if it arrived) and releases the claim, also
/// when unwinding.
struct Claim<'a> {
    own: &'a Own,
    arrived: Option<u64>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if let Some(round) = self.arrived {
            // Release: this lane's reads of `round` → a writer's reuse check.
            self.own.done.store(round, Ordering::Release);
        }
        // Release: this collective's record and slot writes → the lane's next claim.
        self.own.busy.store(false, Ordering::Release);
    }
}

/// What a lane reads in its episode: the values of round `round`, slot
/// parity `parity`, of the lanes of `mask`. Word values are read during
/// the wait, into `words` (by lane), and so is the slot value of `early`,
/// the one source a shuffle needs; other slot values after the wait.
pub(super) struct Episode<'a, T> {
    warp: &'a WarpBarrier,
    pub(super) lane: usize,
    pub(super) mask: u64,
    round: u64,
    parity: usize,
    words: [u64; 64],
    early: Option<usize>,
    early_value: Option<T>,
}

impl<T: Copy + 'static> Episode<'_, T> {
    /// Takes what the episode needs of lane `i`, whose line's load showed
    /// it caught up, from that line while it is in our cache: its word
    /// value, or its slot value if `i` is the early source.
    #[inline(always)]
    fn take(&mut self, i: usize, line: &Lane) {
        if slots::is_word::<T>() {
            // Relaxed: the load that showed lane `i` caught up acquired its
            // arrival, which released this value (and `i` writes this
            // parity again only after our `done` or our next arrival).
            self.words[i] = line.word[self.parity].load(Ordering::Relaxed);
        } else if self.early == Some(i) {
            self.early_value = self.slot(i);
        }
    }

    /// Lane `src`'s slot value, or `None` unless the readers' rule holds.
    #[inline]
    fn slot(&self, src: usize) -> Option<T> {
        let line = &self.warp.lanes[src];
        let p = self.parity;
        // Acquire (both): `src`'s slot write → our read, whatever we waited
        // for (the readers' rule in warp-collectives.md).
        if line.round[p].load(Ordering::Acquire) != self.round
            || line.mask[p].load(Ordering::Acquire) & (1 << self.lane) == 0
        {
            return None;
        }
        // SAFETY: the readers' rule held: `src` wrote this slot for us in
        // our round, and will not write it again before our `done` (or our
        // next arrival) says we read no more (warp-collectives.md).
        self.warp.own[src].values[p].with(|values| unsafe { (*values).get::<T>() })
    }

    /// Lane `src`'s value, or `None` if it published none this round (only
    /// in a program that breaks CUDA's rule). `src` is in the mask and is
    /// not the caller.
    #[inline]
    pub(super) fn get(&self, src: usize) -> Option<T> {
        if slots::is_word::<T>() {
            return slots::from_word(self.words[src]);
        }
        if self.early == Some(src) {
            return self.early_value;
        }
        self.slot(src)
    }

    /// Lane `src`'s value, or `own` where it is the caller, not in the
    /// mask, or published none.
    #[inline]
    pub(super) fn value_or(&self, src: usize, own: T) -> T {
        if src == self.lane || src >= 64 || self.mask & (1 << src) == 0 {
            return own;
        }
        self.get(src).unwrap_or(own)
    }
}

impl WarpBarrier {
    /// Runs one collective of lane `lane` with `mask`, publishing `value`;
    /// `read` computes the caller's result from the episode once every lane
    /// of the mask has arrived. Word values, and the slot value of `early`
    /// (a shuffle's source), are read during the wait, right after the load
    /// that showed their lane arrived, from the line it loaded (so the
    /// slowest lane touches no line after its wait that a `sync` would
    /// not); other slot values after it. `lane` and `mask` are checked here.
    #[track_caller]
    pub(super) fn episode<T: Copy + 'static, R>(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        value: T,
        early: Option<usize>,
        read: impl FnOnce(&Episode<'_, T>, T) -> R,
    ) -> R {
        let (mut claim, round, _) = self.enter(call, lane, mask);
        let p = (round % 2) as usize;
        if let Some(word) = slots::to_word(&value) {
            // Relaxed: the arrival below releases it.
            self.lanes[lane].word[p].store(word, Ordering::Relaxed);
        } else {
            // SAFETY: we hold the claim, and every reader of the slot's
            // last round has finished (`await_readers`): nobody else
            // accesses it (warp-collectives.md).
            self.own[lane].values[p].with_mut(|values| unsafe { (*values).put(value) });
        }
        self.arrive(call, lane, mask, &mut claim, round, 1);
        let others = mask & !(1 << lane);
        let mut episode = Episode {
            warp: self,
            lane,
            mask,
            round,
            parity: p,
            words: [0; 64],
            early,
            early_value: None,
        };
        let _votes = self.wait(call, mask, others, round, |i, line| episode.take(i, line));
        self.record(lane, round, others);
        let result = read(&episode, value);
        drop(claim);
        result
    }

    /// A vote of lane `lane` with `mask`: the episode whose value is `pred`,
    /// carried in the lane's vote bit of the round's parity, set by the
    /// arrival itself. Returns the mask of the lanes of `mask` that voted
    /// true, read from the words that the wait loaded anyway. `lane` and
    /// `mask` are checked here.
    #[track_caller]
    pub(super) fn vote(&self, call: &'static str, lane: usize, mask: u64, pred: bool) -> u64 {
        let (mut claim, round, word) = self.enter(call, lane, mask);
        let bit = VOTES + (round % 2) as u32;
        // The vote bits change only by this lane's arrivals, under its
        // claim, so `word` has the bit as it is: the raise sets it to
        // `pred` without a carry into any other bit.
        let had = (word >> bit) & 1;
        let raise = 1u64
            .wrapping_add((pred as u64) << bit)
            .wrapping_sub(had << bit);
        self.arrive(call, lane, mask, &mut claim, round, raise);
        let others = mask & !(1 << lane);
        let votes = self.wait(call, mask, others, round, |_, _| {});
        self.record(lane, round, others);
        drop(claim);
        votes | (pred as u64) << lane
    }

    /// The start of an episode: checks `lane` and `mask`, claims the lane,
    /// and waits for the readers of the slot of its next round's parity
    /// (`await_readers`). Returns the claim, that round, and the lane's
    /// word as it was.
    #[inline(always)]
    #[track_caller]
    fn enter(&self, call: &'static str, lane: usize, mask: u64) -> (Claim<'_>, u64, u64) {
        self.check(call, lane, mask);
        let own = &self.own[lane];
        // Acquire: the lane's previous claim's record and slot writes → ours.
        if own.busy.swap(true, Ordering::Acquire) {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): lane {lane} is inside a collective on another thread (one thread per lane)"
            );
        }
        let claim = Claim { own, arrived: None };
        // Relaxed: only this lane raises its count (a thread that broke that is caught below).
        let word = self.lanes[lane].synced.load(Ordering::Relaxed);
        let round = (word & COUNT) + 1;
        self.await_readers(call, lane, (round % 2) as usize);
        (claim, round, word)
    }

    /// The arrival of an episode, after its value was published: the slot's
    /// header, then the raise of the lane's word by `raise` (1, plus a vote
    /// bit's change), which releases both. Panics if another thread synced
    /// as this lane meanwhile.
    #[inline(always)]
    #[track_caller]
    fn arrive(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        claim: &mut Claim<'_>,
        round: u64,
        raise: u64,
    ) {
        let me = &self.lanes[lane];
        let p = (round % 2) as usize;
        // Release (both, mask first): the slot → a reader that acquires
        // the header without having waited for us (the readers' rule).
        me.mask[p].store(mask, Ordering::Release);
        me.round[p].store(round, Ordering::Release);
        // Release: the value and this lane's writes → the lanes that wait for it (orderings.md).
        let old = me.synced.fetch_add(raise, Ordering::Release);
        claim.arrived = Some(round);
        if Lane::parked(old) {
            self.wake_waiters_of(lane, old);
        }
        if old & COUNT != round - 1 {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): lane {lane} synced on another thread during this call (one thread per lane)"
            );
        }
    }

    /// Records the episode's wait (the fast reuse check's `last`).
    #[inline(always)]
    fn record(&self, lane: usize, round: u64, others: u64) {
        let own = &self.own[lane];
        // Relaxed (both): read only under the claim.
        own.last_round.store(round, Ordering::Relaxed);
        own.last_mask.store(others, Ordering::Relaxed);
    }

    /// The reuse check of `lane`'s slot `p`: returns once every reader of
    /// the round that last wrote it has finished reading it.
    #[inline]
    #[track_caller]
    fn await_readers(&self, call: &str, lane: usize, p: usize) {
        let (me, own) = (&self.lanes[lane], &self.own[lane]);
        // Relaxed (all four): this lane's own stores, made under an earlier claim.
        let t = me.round[p].load(Ordering::Relaxed);
        if t == 0 {
            return;
        }
        let readers = me.mask[p].load(Ordering::Relaxed) & !(1 << lane);
        let pending = if own.last_round.load(Ordering::Relaxed) > t {
            readers & !own.last_mask.load(Ordering::Relaxed)
        } else {
            readers
        };
        if pending != 0 {
            self.await_slow(call, pending, t);
        }
    }

    /// The slow reuse check: waits until each lane of `pending` has arrived
    /// after round `t` or said it finished reading it. Every such lane has
    /// arrived in round `t`, and nothing between its arrival and its `done`
    /// waits for another lane, so this ends unless the group is poisoned.
    #[cold]
    #[track_caller]
    fn await_slow(&self, call: &str, mut pending: u64, t: u64) {
        let mut spins = 0u32;
        loop {
            let mut rest = pending;
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                // Acquire (both): lane i's reads of round t → our overwrite (the reuse check).
                let s = self.lanes[i].synced.load(Ordering::Acquire);
                if s & POISONED != 0 {
                    Self::poisoned(call);
                }
                if s & COUNT > t {
                    pending &= !(1 << i);
                    sync::model_event("warp-reuse-reader-arrived-again");
                } else if self.own[i].done.load(Ordering::Acquire) >= t {
                    pending &= !(1 << i);
                    sync::model_event("warp-reuse-reader-done");
                }
            }
            if pending == 0 {
                return;
            }
            sync::model_event("warp-reuse-waited-for-a-reader");
            backoff(&mut spins);
        }
    }
}

/// One step of the slow reuse check's wait: a few spins, then yields.
fn backoff(spins: &mut u32) {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    if *spins < 64 {
        sync::spin_hint();
    } else {
        sync::yield_now();
    }
    *spins += 1;
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::super::vote_of;
    use crate::WarpBarrier;

    #[test]
    fn a_vote_sets_and_clears_its_bit_without_touching_the_count_or_the_other_parity() {
        let warp = WarpBarrier::new(2);
        // Lane 1 alone, so lane 0's word changes only by its own calls.
        let votes = [true, true, false, true, false, false, true];
        for (k, &pred) in votes.iter().enumerate() {
            assert_eq!(warp.ballot(0, 0b01, pred), pred as u64, "vote {k}");
            let word = warp.lanes[0].synced.load(crate::sync::Ordering::Relaxed);
            assert_eq!(word & super::COUNT, k as u64 + 1, "vote {k}");
            assert_eq!(vote_of(word, k as u64 + 1), pred as u64, "vote {k}");
            // The other parity still holds the vote before this one.
            if k > 0 {
                assert_eq!(vote_of(word, k as u64), votes[k - 1] as u64, "vote {k}");
            }
            warp.sync(1, 0b10);
        }
        warp.sync(0, 0b01);
        assert_eq!(format!("{warp:?}"), "WarpBarrier { synced: [8, 7] }");
    }
}
