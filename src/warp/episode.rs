//! One collective: claim the lane, make sure its slot's readers are done,
//! publish the value, arrive, wait, read the sources, say done
//! (docs/design/warp-collectives.md, "The episode").

use super::slots::{self, Own};
use super::{Lane, WarpBarrier, COUNT, POISONED};
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

/// What a lane reads after its episode: the values of round `round`, slot
/// parity `parity`, of the lanes of `mask`.
pub(super) struct Episode<'a> {
    warp: &'a WarpBarrier,
    pub(super) lane: usize,
    pub(super) mask: u64,
    round: u64,
    parity: usize,
}

impl Episode<'_> {
    /// Lane `src`'s value, or `None` if it published none this round (only
    /// in a program that breaks CUDA's rule). `src` is in the mask and is
    /// not the caller.
    #[inline]
    pub(super) fn get<T: Copy + 'static>(&self, src: usize) -> Option<T> {
        let line = &self.warp.lanes[src];
        let p = self.parity;
        if slots::is_word::<T>() {
            // Relaxed: our wait acquired `src`'s arrival, which released it.
            return slots::from_word(line.word[p].load(Ordering::Relaxed));
        }
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

    /// Lane `src`'s value, or `own` where it is the caller, not in the
    /// mask, or published none.
    #[inline]
    pub(super) fn value_or<T: Copy + 'static>(&self, src: usize, own: T) -> T {
        if src == self.lane || src >= 64 || self.mask & (1 << src) == 0 {
            return own;
        }
        self.get(src).unwrap_or(own)
    }
}

impl WarpBarrier {
    /// Runs one collective of lane `lane` with `mask`, publishing `value`;
    /// `read` computes the caller's result from the episode once every lane
    /// of the mask has arrived. `lane` and `mask` are checked here.
    #[track_caller]
    pub(super) fn episode<T: Copy + 'static, R>(
        &self,
        call: &'static str,
        lane: usize,
        mask: u64,
        value: T,
        read: impl FnOnce(&Episode<'_>, T) -> R,
    ) -> R {
        self.check(call, lane, mask);
        let own = &self.own[lane];
        // Acquire: the lane's previous claim's record and slot writes → ours.
        if own.busy.swap(true, Ordering::Acquire) {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): lane {lane} is inside a collective on another thread (one thread per lane)"
            );
        }
        let mut claim = Claim { own, arrived: None };
        let me = &self.lanes[lane];
        // Relaxed: only this lane raises its count (a thread that broke that is caught below).
        let round = (me.synced.load(Ordering::Relaxed) & COUNT) + 1;
        let p = (round % 2) as usize;
        self.await_readers(call, lane, p);
        if let Some(word) = slots::to_word(&value) {
            // Relaxed: the arrival below releases it.
            me.word[p].store(word, Ordering::Relaxed);
        } else {
            // SAFETY: we hold the claim, and every reader of the slot's
            // last round has finished (`await_readers`): nobody else
            // accesses it (warp-collectives.md).
            own.values[p].with_mut(|values| unsafe { (*values).put(value) });
        }
        // Release (both, mask first): the slot → a reader that acquires
        // the header without having waited for us (the readers' rule).
        me.mask[p].store(mask, Ordering::Release);
        me.round[p].store(round, Ordering::Release);
        // Release: the value and this lane's writes → the lanes that wait for it (orderings.md).
        let old = me.synced.fetch_add(1, Ordering::Release);
        claim.arrived = Some(round);
        if Lane::parked(old) {
            self.wake_waiters_of(lane, old);
        }
        if old & COUNT != round - 1 {
            panic!(
                "syncthreads: {call}(lane {lane}, mask {mask:#x}): lane {lane} synced on another thread during this call (one thread per lane)"
            );
        }
        let others = mask & !(1 << lane);
        self.wait(call, mask, others, round);
        // Relaxed (both): read only under the claim.
        own.last_round.store(round, Ordering::Relaxed);
        own.last_mask.store(others, Ordering::Relaxed);
        let episode = Episode {
            warp: self,
            lane,
            mask,
            round,
            parity: p,
        };
        let result = read(&episode, value);
        drop(claim);
        result
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
