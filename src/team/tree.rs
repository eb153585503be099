//! The combining tree of a [`Team`]: node words, nodes, and the climb
//! from a leaf to the root (the design and its proof are in `team.rs`).

use super::*;

/// Largest fan-in: `pending` and `members` are 8-bit fields.
pub(super) const MAX_FAN_IN: usize = 64;

pub(super) const ARRIVALS_SHIFT: u32 = 0;
pub(super) const DROPS_SHIFT: u32 = 20;
pub(super) const SUM_MASK: u64 = (1 << 20) - 1;
pub(super) const PENDING_SHIFT: u32 = 40;
pub(super) const MEMBERS_SHIFT: u32 = 48;
pub(super) const COUNT_MASK: u64 = 0xff;
pub(super) const ROUND_SHIFT: u32 = 56;
pub(super) const ROUND_MASK: u64 = 3;
/// The root has no parent.
pub(super) const NO_PARENT: u32 = u32::MAX;

static_assertions::const_assert!(crate::state::MAX as u64 <= SUM_MASK);
static_assertions::const_assert!(MAX_FAN_IN as u64 <= COUNT_MASK);

/// A decoded node word (module docs).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct NodeWord(pub(super) u64);

impl NodeWord {
    pub(super) fn new(round: u8, members: u32) -> NodeWord {
        NodeWord(
            (u64::from(round & 3) << ROUND_SHIFT)
                | (u64::from(members) << MEMBERS_SHIFT)
                | (u64::from(members) << PENDING_SHIFT),
        )
    }
    pub(super) fn round(self) -> u8 {
        ((self.0 >> ROUND_SHIFT) & ROUND_MASK) as u8
    }
    pub(super) fn members(self) -> u32 {
        ((self.0 >> MEMBERS_SHIFT) & COUNT_MASK) as u32
    }
    pub(super) fn pending(self) -> u32 {
        ((self.0 >> PENDING_SHIFT) & COUNT_MASK) as u32
    }
    pub(super) fn arrivals(self) -> u32 {
        ((self.0 >> ARRIVALS_SHIFT) & SUM_MASK) as u32
    }
    pub(super) fn drops(self) -> u32 {
        ((self.0 >> DROPS_SHIFT) & SUM_MASK) as u32
    }
    pub(super) fn with(self, pending: u32, members: u32, arrivals: u32, drops: u32) -> NodeWord {
        debug_assert!(pending <= members + 1 && u64::from(members) <= COUNT_MASK);
        debug_assert!(u64::from(arrivals) <= SUM_MASK && u64::from(drops) <= SUM_MASK);
        NodeWord(
            (u64::from(self.round()) << ROUND_SHIFT)
                | (u64::from(members) << MEMBERS_SHIFT)
                | (u64::from(pending) << PENDING_SHIFT)
                | (u64::from(drops) << DROPS_SHIFT)
                | (u64::from(arrivals) << ARRIVALS_SHIFT),
        )
    }
}

/// One countdown of the tree, on its own cache line.
pub(super) struct Node {
    pub(super) word: AtomicU64,
    /// Index of the parent node, or [`NO_PARENT`] for the root.
    pub(super) parent: u32,
}

/// What a member hands to its node for one round (module docs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Contribution {
    pub(super) arrivals: u32,
    pub(super) drops: u32,
    /// The member stops being a member after this round.
    pub(super) leave: bool,
}

impl<F: Completion> Team<F> {
    /// Contributes `c` to round `round` at `node` and climbs while it
    /// completes rounds; returns the root's sums if it completed the root's.
    #[inline]
    pub(super) fn climb(
        &self,
        mut node: u32,
        round: u8,
        mut c: Contribution,
    ) -> Option<Contribution> {
        loop {
            let n = &self.nodes[node as usize];
            // Relaxed: seeds the CAS loop; the CAS carries the ordering.
            let mut cur = NodeWord(n.word.load(Ordering::Relaxed));
            let completed = loop {
                let (new, completed) = if cur.round() == round {
                    let pending = cur.pending() - 1;
                    let members = cur.members() - u32::from(c.leave);
                    let arrivals = cur.arrivals() + c.arrivals;
                    let drops = cur.drops() + c.drops;
                    if pending == 0 {
                        let done = Contribution {
                            arrivals,
                            drops,
                            leave: members == 0,
                        };
                        (NodeWord::new(round.wrapping_add(1), members), Some(done))
                    } else {
                        (cur.with(pending, members, arrivals, drops), None)
                    }
                } else {
                    // Folded into the previous round (module docs, "Leaving").
                    debug_assert_eq!(cur.round(), round.wrapping_sub(1) & 3);
                    debug_assert!(c.leave && c.arrivals == c.drops);
                    let new = cur.with(
                        cur.pending(),
                        cur.members() - 1,
                        cur.arrivals(),
                        cur.drops() + c.drops,
                    );
                    (new, None)
                };
                // AcqRel: Acquire takes every earlier contribution's writes
                // along; Release hands ours (and those) to the climber (point 1).
                match n.word.compare_exchange_weak(
                    cur.0,
                    new.0,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break completed,
                    Err(found) => cur = NodeWord(found),
                }
            };
            c = completed?;
            if n.parent == NO_PARENT {
                return Some(c);
            }
            node = n.parent;
        }
    }

    /// The root's climber: one combined arrival of round `round` on the word.
    #[track_caller]
    #[inline]
    pub(super) fn arrive_root(
        &self,
        round: u8,
        sums: Contribution,
        call: SeatCall,
        quiet: bool,
    ) -> (ArrivalToken, bool) {
        let op = if sums.arrivals == sums.drops {
            // A round of leavers only, which may be early: every seat left
            // while phase `round - 1` was still running (module docs,
            // "Leaving"). The word decides, in the RMW: drops folded into
            // that phase if it still runs, arrivals and drops of `round`
            // otherwise. Never a wait (the last leaver may be the thread
            // that would end phase `round - 1`, e.g. by `complete_tx`).
            call.leave_after(round.wrapping_sub(1) & 3, sums.drops, quiet)
        } else {
            call.combined(sums.arrivals, sums.drops, 0, quiet)
        };
        self.barrier.arrive_combined(op)
    }
}
