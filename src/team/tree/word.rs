//! A node's word of the combining tree and its transitions, each a pure
//! function that one RMW of the node stores (`tree.rs`).
//!
//! ```text
//!  63    58 57 56 55     48 47     40 39          20 19           0
//! +--------+-----+---------+---------+--------------+--------------+
//! |  zero  |round| members | pending |    drops     |   arrivals   |
//! +--------+-----+---------+---------+--------------+--------------+
//!             2       8         8           20             20      bits
//! ```
//!
//! | field | range | meaning |
//! |---|---|---|
//! | `round` | a [`Phase`] | the phase whose arrivals the node collects now |
//! | `pending` | `0 ..= members` | members (seats of a leaf, child nodes of an inner node) still owed in `round` |
//! | `members` | `0 ..= MAX_FAN_IN` | members that take part in the rounds after `round` |
//! | `arrivals`, `drops` | `0 ..= Barrier::MAX` | seats of this subtree that arrived / leave, so far in `round` |
//!
//! A member's *contribution* to round `r` carries `(a, d, leave)`: `a` seats
//! arrived, `d` of them leave, and `leave` says that the member itself (a
//! seat, or a child whose subtree emptied) stops being a member after `r`.
//! The word's transitions, each a pure function of [`NodeWord`] that one
//! RMW stores ([`Node::contribute`]):
//!
//! - [`count`](NodeWord::count): in round `r`, lower `pending`, add the
//!   sums and, if `leave`, lower `members`;
//! - [`rearm`](NodeWord::rearm): the contribution that brings `pending` to
//!   0 re-arms the node (`round + 1`, `pending = members`, sums 0) and
//!   climbs with the round's sums and `leave = (members == 0)`;
//! - a *plain* contribution (`a >= 1`, `d == 0`, no leave: a seat's
//!   arrival, or a child's round that nobody left) always finds its node
//!   in its own round, so its count is an addition, one `fetch_add`
//!   ([`Node::add`]); if it brings `pending` to 0, a second RMW re-arms
//!   the node. Until then the word is *completed*: still round `r`,
//!   `pending` 0, the sums in ([`is_completed`](NodeWord::is_completed)).
//!   Only a fold and an attach can land there, and the re-arm, a CAS from
//!   the word found, counts them in round `r` as if they had come before
//!   its last contribution. Every other contribution counts, or folds,
//!   and re-arms in one CAS;
//! - [`fold`](NodeWord::fold): a leaver's early contribution to round
//!   `r + 1` that finds the node still in round `r` is folded into it
//!   (team-tree.md, "Leaving");
//! - [`attach`](NodeWord::attach): a joined member, counted from the round
//!   after the joined phase `p` on (one more member, owed at once if the
//!   node is in round `p + 1` already); an empty node is re-armed for
//!   round `p + 1` with that one member and attaches to its parent the same
//!   way (team-tree.md, "Joining"). Empty means no members *and* nothing
//!   owed and no sums ([`is_empty`](NodeWord::is_empty)): a completed
//!   round whose members all left meanwhile is not empty yet, its re-arm
//!   still climbs with its sums.
//!
//! An empty node is touched by nobody but a join: its parent no longer
//! waits for it.

use crate::phase::Phase;
use std::fmt;

/// Width of `arrivals` and `drops`: they count seats, up to `Barrier::MAX`.
const SUM_BITS: u32 = 20;
/// Width of `pending` and `members`: they count members, up to [`MAX_FAN_IN`].
const COUNT_BITS: u32 = 8;

const ARRIVALS_SHIFT: u32 = 0;
const DROPS_SHIFT: u32 = ARRIVALS_SHIFT + SUM_BITS;
const PENDING_SHIFT: u32 = DROPS_SHIFT + SUM_BITS;
const MEMBERS_SHIFT: u32 = PENDING_SHIFT + COUNT_BITS;
const ROUND_SHIFT: u32 = MEMBERS_SHIFT + COUNT_BITS;

const SUM_MASK: u64 = (1 << SUM_BITS) - 1;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const ROUND_MASK: u64 = (1 << Phase::BITS) - 1;

/// Largest fan-in: what `pending` and `members` can count.
pub(in crate::team) const MAX_FAN_IN: usize = 64;

// The fields fit the word and do not overlap, and hold what they count.
crate::assert::const_assert!(ROUND_SHIFT + Phase::BITS <= 64);
crate::assert::const_assert_eq!(
    ((SUM_MASK << ARRIVALS_SHIFT)
        | (SUM_MASK << DROPS_SHIFT)
        | (COUNT_MASK << PENDING_SHIFT)
        | (COUNT_MASK << MEMBERS_SHIFT)
        | (ROUND_MASK << ROUND_SHIFT))
        .count_ones(),
    2 * SUM_BITS + 2 * COUNT_BITS + Phase::BITS
);
crate::assert::const_assert!(crate::state::MAX as u64 <= SUM_MASK);
crate::assert::const_assert!(MAX_FAN_IN as u64 <= COUNT_MASK);

/// A decoded node word (module docs).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::team) struct NodeWord(pub(super) u64);

impl fmt::Debug for NodeWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeWord")
            .field("round", &self.round())
            .field("pending", &self.pending())
            .field("members", &self.members())
            .field("arrivals", &self.arrivals())
            .field("drops", &self.drops())
            .finish()
    }
}

/// What a member hands to its node for one round (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::team) struct Contribution {
    pub(in crate::team) arrivals: u32,
    pub(in crate::team) drops: u32,
    /// The member stops being a member after this round.
    pub(in crate::team) leave: bool,
}

impl NodeWord {
    /// The word of a node collecting `round`, owed by all of its `members`.
    pub(in crate::team) fn new(round: Phase, members: u32) -> NodeWord {
        NodeWord(
            (round.bits() << ROUND_SHIFT)
                | (u64::from(members) << MEMBERS_SHIFT)
                | (u64::from(members) << PENDING_SHIFT),
        )
    }

    pub(in crate::team) fn round(self) -> Phase {
        Phase::new(((self.0 >> ROUND_SHIFT) & ROUND_MASK) as u8)
    }
    pub(in crate::team) fn members(self) -> u32 {
        ((self.0 >> MEMBERS_SHIFT) & COUNT_MASK) as u32
    }
    pub(in crate::team) fn pending(self) -> u32 {
        ((self.0 >> PENDING_SHIFT) & COUNT_MASK) as u32
    }
    pub(in crate::team) fn arrivals(self) -> u32 {
        ((self.0 >> ARRIVALS_SHIFT) & SUM_MASK) as u32
    }
    pub(in crate::team) fn drops(self) -> u32 {
        ((self.0 >> DROPS_SHIFT) & SUM_MASK) as u32
    }

    /// The same round with these counts.
    fn with(self, pending: u32, members: u32, arrivals: u32, drops: u32) -> NodeWord {
        debug_assert!(pending <= members + 1 && u64::from(members) <= COUNT_MASK);
        debug_assert!(u64::from(arrivals) <= SUM_MASK && u64::from(drops) <= SUM_MASK);
        NodeWord(
            (self.round().bits() << ROUND_SHIFT)
                | (u64::from(members) << MEMBERS_SHIFT)
                | (u64::from(pending) << PENDING_SHIFT)
                | (u64::from(drops) << DROPS_SHIFT)
                | (u64::from(arrivals) << ARRIVALS_SHIFT),
        )
    }

    /// Whether `c` is a *plain* contribution, which [`Node::contribute`]
    /// makes with one `fetch_add` of [`delta`](NodeWord::delta): it brings
    /// arrivals (at least one) and neither drops nor a leave. Such a
    /// contribution always finds its node in its own round (the argument is
    /// at [`Node::add`]), where [`count`](NodeWord::count) is a pure
    /// addition: `arrivals + a`, `pending - 1`, nothing else changes.
    pub(in crate::team) fn is_plain(c: Contribution) -> bool {
        c.arrivals > 0 && c.drops == 0 && !c.leave
    }

    /// What a plain contribution `c` adds to the word, wrapping: `a`
    /// arrivals and one member fewer owed. Added to a word of the running
    /// round (`pending >= 1`, and room for the arrivals: they count seats
    /// of the subtree) it borrows from no other field.
    pub(in crate::team) fn delta(c: Contribution) -> u64 {
        debug_assert!(NodeWord::is_plain(c));
        (u64::from(c.arrivals) << ARRIVALS_SHIFT).wrapping_sub(1 << PENDING_SHIFT)
    }

    /// A round whose contributions are all in and which is not re-armed
    /// yet: the word between a plain contribution's `fetch_add` that
    /// brought `pending` to 0 and its re-arm ([`Node::add`]). A completed
    /// round is re-armed in its own RMW otherwise, so such a word is always
    /// this transient state; it has arrivals (the plain contribution's), so
    /// it is never mistaken for an empty node.
    pub(in crate::team) fn is_completed(self) -> bool {
        self.pending() == 0 && !self.is_empty()
    }

    /// A node without members, owed nothing, with no sums: frozen, its
    /// parent waits for it no more (only a join touches it).
    fn is_empty(self) -> bool {
        self.0 & !(ROUND_MASK << ROUND_SHIFT) == 0
    }

    /// The word after contribution `c` to `round`, and the sums to climb
    /// with if `c` completed the round there.
    pub(in crate::team) fn contribute(
        self,
        round: Phase,
        c: Contribution,
    ) -> (NodeWord, Option<Contribution>) {
        if self.round() == round {
            self.count(c)
        } else {
            (self.fold(round, c), None)
        }
    }

    /// `c` in the running round: one member fewer owed; the last one re-arms.
    fn count(self, c: Contribution) -> (NodeWord, Option<Contribution>) {
        let pending = self.pending() - 1;
        let counted = self.with(
            pending,
            self.members() - u32::from(c.leave),
            self.arrivals() + c.arrivals,
            self.drops() + c.drops,
        );
        if pending == 0 {
            let (word, sums) = counted.rearm();
            (word, Some(sums))
        } else {
            (counted, None)
        }
    }

    /// A round with nothing owed any more: the next round, owed by every
    /// member still there, and the round's sums for the parent (the node
    /// leaves it once it has no members). Taken from the word as the re-arm
    /// finds it, so a fold or an attach that landed after the round's last
    /// contribution ([`Node::add`]) is counted as if it had come before it.
    pub(super) fn rearm(self) -> (NodeWord, Contribution) {
        debug_assert_eq!(self.pending(), 0);
        let sums = Contribution {
            arrivals: self.arrivals(),
            drops: self.drops(),
            leave: self.members() == 0,
        };
        (NodeWord::new(self.round().next(), self.members()), sums)
    }

    /// A member joined in phase `joined` (its arrival there goes to the
    /// word): counted from round `joined + 1` on. A node with members is in
    /// round `joined` (the member is owed from the re-arm on; also while
    /// that round is completed and not yet re-armed, [`is_completed`]) or
    /// already in `joined + 1` (owed at once); an empty node is re-armed
    /// for `joined + 1` with the one member, and the `true` says that it
    /// must attach to its parent too.
    ///
    /// Empty means [`is_empty`], not just "no members": a completed round
    /// whose members all left since (their early leaves folded into it) is
    /// still to be re-armed, with its sums, by its last contributor; the
    /// member is counted in it as in any round `joined`, and the re-arm
    /// then keeps the node in its parent (`leave` is false), so nothing
    /// attaches there.
    ///
    /// [`is_completed`]: NodeWord::is_completed
    /// [`is_empty`]: NodeWord::is_empty
    pub(in crate::team) fn attach(self, joined: Phase) -> (NodeWord, bool) {
        if self.is_empty() {
            return (NodeWord::new(joined.next(), 1), true);
        }
        let owed_now = self.round() != joined;
        debug_assert!(!owed_now || self.round() == joined.next());
        // A completed round is the joined one: a round after it completes
        // only with an arrival of the next phase, which the join holds off.
        debug_assert!(!owed_now || !self.is_completed());
        let word = self.with(
            self.pending() + u32::from(owed_now),
            self.members() + 1,
            self.arrivals(),
            self.drops(),
        );
        (word, false)
    }

    /// A leaver's contribution `c` to `round` that finds the node still in
    /// the round before: folded into that round (its arrival is in there,
    /// so nothing more is owed; it leaves and counts as a drop). That round
    /// may be completed already and waiting for its re-arm
    /// ([`is_completed`](NodeWord::is_completed)): `pending` stays 0 and
    /// the re-arm takes the fold's drop and leave with it.
    fn fold(self, round: Phase, c: Contribution) -> NodeWord {
        debug_assert_eq!(self.round(), round.prev());
        debug_assert!(c.leave && c.arrivals == c.drops);
        self.with(
            self.pending(),
            self.members() - 1,
            self.arrivals(),
            self.drops() + c.drops,
        )
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    const ONE: Contribution = Contribution {
        arrivals: 1,
        drops: 0,
        leave: false,
    };
    const LEAVER: Contribution = Contribution {
        arrivals: 1,
        drops: 1,
        leave: true,
    };

    #[test]
    fn node_word_round_trips_its_fields_at_their_limits() {
        let w = NodeWord::new(Phase::new(3), 64).with(17, 63, (1 << 20) - 1, 12345);
        assert_eq!(
            (w.round(), w.pending(), w.members(), w.arrivals(), w.drops()),
            (Phase::new(3), 17, 63, (1 << 20) - 1, 12345)
        );
        assert_eq!(NodeWord::new(Phase::new(3).next(), 2).round(), Phase::ZERO);
    }

    #[test]
    fn count_lowers_pending_and_the_last_contribution_rearms() {
        let w = NodeWord::new(Phase::new(1), 2);
        let (w, up) = w.contribute(Phase::new(1), ONE);
        assert_eq!(up, None);
        assert_eq!((w.pending(), w.members(), w.arrivals()), (1, 2, 1));
        let (w, up) = w.contribute(Phase::new(1), LEAVER);
        assert_eq!(
            up,
            Some(Contribution {
                arrivals: 2,
                drops: 1,
                leave: false,
            })
        );
        // Re-armed for round 2, owed by the one member left, sums cleared.
        assert_eq!(w, NodeWord::new(Phase::new(2), 1));
    }

    #[test]
    fn a_node_whose_members_all_left_climbs_as_a_leaver() {
        let (w, up) = NodeWord::new(Phase::ZERO, 1).contribute(Phase::ZERO, LEAVER);
        assert_eq!(up, Some(LEAVER));
        assert_eq!((w.round(), w.pending(), w.members()), (Phase::new(1), 0, 0));
    }

    #[test]
    fn an_early_leave_folds_into_the_running_round() {
        // Round 3 still owes one member; a member that arrived in it leaves
        // early (its contribution is to round 0).
        let w = NodeWord::new(Phase::new(3), 2).with(1, 2, 1, 0);
        let (w, up) = w.contribute(Phase::ZERO, LEAVER);
        assert_eq!(up, None);
        assert_eq!(
            (w.round(), w.pending(), w.members(), w.arrivals(), w.drops()),
            (Phase::new(3), 1, 1, 1, 1)
        );
    }

    #[test]
    fn attach_counts_a_joined_member_from_the_next_round() {
        let p = Phase::new(2);
        // Still in round p: owed from the re-arm for p + 1 on.
        let w = NodeWord::new(p, 3).count(ONE).0;
        let (a, revived) = w.attach(p);
        assert!(!revived);
        assert_eq!((a.round(), a.pending(), a.members()), (p, 2, 4));
        let (next, sums) = a.count(ONE).0.count(ONE);
        assert_eq!(sums.map(|c| c.arrivals), Some(3));
        assert_eq!(
            (next.round(), next.pending(), next.members()),
            (p.next(), 4, 4)
        );
        // Already in round p + 1: owed at once.
        let (b, _) = NodeWord::new(p.next(), 2).attach(p);
        assert_eq!((b.round(), b.pending(), b.members()), (p.next(), 3, 3));
        // Empty (frozen in any round): re-armed for p + 1 with the one member.
        for frozen in 0..4 {
            let (c, revived) = NodeWord::new(Phase::new(frozen), 0).attach(p);
            assert!(revived);
            assert_eq!((c.round(), c.pending(), c.members()), (p.next(), 1, 1));
        }
    }

    /// A plain contribution's word after the fetch_add, completed rounds
    /// re-armed as `Node::add` does.
    fn added(w: NodeWord, c: Contribution) -> (NodeWord, Option<Contribution>) {
        let w = NodeWord(w.0.wrapping_add(NodeWord::delta(c)));
        if w.pending() == 0 {
            assert!(w.is_completed());
            let (w, sums) = w.rearm();
            (w, Some(sums))
        } else {
            (w, None)
        }
    }

    #[test]
    fn the_fetch_add_delta_counts_a_plain_contribution() {
        let max = SUM_MASK as u32;
        for round in (0..4).map(Phase::new) {
            for members in [1, 2, 3, 4, 14, 63, 64] {
                for pending in [1, 2, members / 2, members - 1, members] {
                    if pending == 0 || pending > members {
                        continue;
                    }
                    for (arrivals, drops) in
                        [(0, 0), (1, 0), (7, 3), (max - 64, max - 64), (max - 1, 0)]
                    {
                        for a in [1, 2, 64, max - arrivals] {
                            if a == 0 || arrivals + a > max {
                                continue;
                            }
                            let w = NodeWord::new(round, members)
                                .with(pending, members, arrivals, drops);
                            let c = Contribution {
                                arrivals: a,
                                drops: 0,
                                leave: false,
                            };
                            assert!(NodeWord::is_plain(c));
                            assert_eq!(added(w, c), w.count(c), "{w:?} + {c:?}");
                        }
                    }
                }
            }
        }
        // Leaves, drops and contributions without arrivals are not plain.
        for c in [
            LEAVER,
            Contribution {
                arrivals: 2,
                drops: 1,
                leave: false,
            },
            Contribution {
                arrivals: 0,
                drops: 0,
                leave: true,
            },
            Contribution {
                arrivals: 0,
                drops: 0,
                leave: false,
            },
        ] {
            assert!(!NodeWord::is_plain(c), "{c:?}");
        }
    }

    #[test]
    fn a_fold_into_the_completed_round_is_re_armed_as_if_it_came_first() {
        // Round 2 of two seats: one arrived; the other's plain arrival
        // completes it, and the first one's early leave (to round 3)
        // lands before the re-arm, or (the single-CAS order) before that
        // last arrival.
        let w = NodeWord::new(Phase::new(2), 2).count(ONE).0;
        let completed = NodeWord(w.0.wrapping_add(NodeWord::delta(ONE)));
        assert!(completed.is_completed());
        assert_eq!(
            (completed.round(), completed.pending(), completed.members()),
            (Phase::new(2), 0, 2)
        );
        let (late, _) = completed.contribute(Phase::new(3), LEAVER);
        assert!(late.is_completed());
        let (early, _) = w.contribute(Phase::new(3), LEAVER);
        let (re_armed, sums) = late.rearm();
        assert_eq!((re_armed, Some(sums)), early.count(ONE));
        assert_eq!(re_armed, NodeWord::new(Phase::new(3), 1));
        assert_eq!(
            sums,
            Contribution {
                arrivals: 2,
                drops: 1,
                leave: false
            }
        );
    }

    #[test]
    fn an_attach_to_the_completed_round_is_re_armed_as_if_it_came_first() {
        let p = Phase::new(1);
        let w = NodeWord::new(p, 2).count(ONE).0;
        let completed = NodeWord(w.0.wrapping_add(NodeWord::delta(ONE)));
        let (late, revived) = completed.attach(p);
        assert!(!revived && late.is_completed());
        let (early, _) = w.attach(p);
        let (re_armed, sums) = late.rearm();
        assert_eq!((re_armed, Some(sums)), early.count(ONE));
        assert_eq!(re_armed, NodeWord::new(p.next(), 3));
        assert_eq!(
            sums,
            Contribution {
                arrivals: 2,
                drops: 0,
                leave: false
            }
        );
    }

    #[test]
    fn a_completed_round_whose_members_all_left_is_not_empty() {
        // An inner node of one member: the child's plain round completes
        // it; the child's next round, all early leavers, folds into it
        // before the re-arm and takes its last member.
        let p = Phase::new(3);
        let two = Contribution {
            arrivals: 2,
            drops: 0,
            leave: false,
        };
        let completed = NodeWord(NodeWord::new(p, 1).0.wrapping_add(NodeWord::delta(two)));
        let (gone, _) = completed.contribute(
            p.next(),
            Contribution {
                arrivals: 2,
                drops: 2,
                leave: true,
            },
        );
        assert_eq!((gone.round(), gone.pending(), gone.members()), (p, 0, 0));
        assert!(gone.is_completed() && !gone.is_empty());
        // Re-armed as it is, it climbs with the round's sums and its leave.
        assert_eq!(
            gone.rearm(),
            (
                NodeWord::new(p.next(), 0),
                Contribution {
                    arrivals: 2,
                    drops: 2,
                    leave: true
                }
            )
        );
        // A join now is counted in that round, not a revival that would
        // lose the sums: the re-arm keeps the node, with the new member,
        // in its parent.
        let (joined, revived) = gone.attach(p);
        assert!(!revived);
        assert_eq!(
            joined.rearm(),
            (
                NodeWord::new(p.next(), 1),
                Contribution {
                    arrivals: 2,
                    drops: 2,
                    leave: false
                }
            )
        );
        // An empty node (re-armed with no members) is revived.
        let (fresh, revived) = gone.rearm().0.attach(p);
        assert!(revived);
        assert_eq!(fresh, NodeWord::new(p.next(), 1));
        assert!(!NodeWord::new(p, 0).is_completed());
    }
}
