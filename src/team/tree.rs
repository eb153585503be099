//! The combining tree of a [`Team`]: the nodes and the climb from a leaf
//! to the root (a node's word and its transitions: `tree/word.rs`; the
//! design, leaving and joining:
//! [docs/design/team-tree.md](../../docs/design/team-tree.md); the orderings:
//! [docs/design/orderings.md](../../docs/design/orderings.md)).
//!
//! An empty node is touched by nobody but a join: its parent no longer
//! waits for it.

use crate::lines::{Line, Lines};
use crate::phase::Phase;
use crate::sync::{AtomicU64, Ordering};

/// Default fan-in of the tree: the fastest of 2, 4, 8 and 16, or level with
/// 8, from 4 to 16 threads (benches/RESULTS.md, "Shape and crossover"). Fan-in
/// 2 climbs a level more per phase; 8 and 16 put that many RMWs on one line.
pub(super) const FAN_IN: usize = 4;
/// Teams of at most this many seats go flat: with two seats every tree was
/// slower than the flat word, from four one node beats it (benches/RESULTS.md,
/// "Shape and crossover").
pub(super) const FLAT: usize = 2;

mod word;

pub(super) use word::{Contribution, NodeWord, MAX_FAN_IN};

/// The root has no parent.
pub(super) const NO_PARENT: u32 = u32::MAX;

/// One countdown of the tree, on its own cache line.
pub(super) struct Node {
    word: AtomicU64,
    /// Index of the parent node, or [`NO_PARENT`] for the root.
    pub(super) parent: u32,
}

impl Node {
    fn new(members: u32) -> Node {
        Node {
            word: AtomicU64::new(NodeWord::new(Phase::ZERO, members).0),
            parent: NO_PARENT,
        }
    }

    /// The node's word, for the tests.
    #[cfg(test)]
    pub(super) fn load(&self) -> NodeWord {
        // Relaxed: a snapshot.
        NodeWord(self.word.load(Ordering::Relaxed))
    }

    /// Attaches a member joined in phase `joined` ([`NodeWord::attach`]);
    /// whether the node was empty and must attach to its parent too.
    ///
    /// The count is the word itself, which every later contribution (an
    /// RMW) reads as the latest value, and being an RMW the attach
    /// continues the release sequences of the contributions before it
    /// (orderings.md, point 1); no data is handed over.
    fn attach(&self, joined: Phase) -> bool {
        // Relaxed: seeds the CAS loop.
        let mut cur = NodeWord(self.word.load(Ordering::Relaxed));
        loop {
            let (new, revived) = cur.attach(joined);
            // Release: the join's read → a climb with no arrival, point 5; failure Relaxed (orderings.md).
            match self.word.compare_exchange_weak(
                cur.0,
                new.0,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return revived,
                Err(found) => cur = NodeWord(found),
            }
        }
    }

    /// Contributes `c` to `round`: the sums to climb with if that
    /// completed the round. A plain contribution ([`NodeWord::is_plain`]:
    /// a seat's arrival, a child's round without drops or leave) is one
    /// `fetch_add` ([`add`](Node::add)); the others, which may find the
    /// node a round behind and fold, one CAS retried from the word found.
    #[inline]
    fn contribute(&self, round: Phase, c: Contribution) -> Option<Contribution> {
        if NodeWord::is_plain(c) {
            return self.add(round, c);
        }
        // Relaxed: seeds the CAS loop; the CAS carries the ordering, and a
        // stale word only fails it, handing back the word found.
        let mut cur = NodeWord(self.word.load(Ordering::Relaxed));
        loop {
            let (new, completed) = cur.contribute(round, c);
            // AcqRel: as `add`'s Release, and the completer's acquire of the round, point 1 (orderings.md).
            match self
                .word
                .compare_exchange_weak(cur.0, new.0, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return completed,
                Err(found) => cur = NodeWord(found),
            }
        }
    }

    /// A plain contribution `c` to `round`: one `fetch_add`; the one that
    /// brings `pending` to 0 re-arms the node and climbs with the sums. It
    /// always finds the node in `round` (team-tree.md, "A plain
    /// contribution").
    #[inline]
    fn add(&self, round: Phase, c: Contribution) -> Option<Contribution> {
        let delta = NodeWord::delta(c);
        // Release: this member's writes → the round's completer, point 1 (orderings.md).
        let prior = NodeWord(self.word.fetch_add(delta, Ordering::Release));
        debug_assert!(
            prior.round() == round && prior.pending() >= 1,
            "a plain contribution to round {round} found {prior:?}"
        );
        if prior.pending() > 1 {
            return None;
        }
        Some(self.rearm(NodeWord(prior.0.wrapping_add(delta))))
    }

    /// Re-arms a node whose round the last plain contribution completed,
    /// `cur` being the word it left: the sums to climb with. A CAS from the
    /// word found, never a store: a fold or an attach may land in the
    /// completed round first, and counts in it. Acquire: the climber's
    /// acquire of the round, folds included; no Release of its own
    /// (team-tree.md, "Re-arming a node").
    fn rearm(&self, mut cur: NodeWord) -> Contribution {
        loop {
            let (new, sums) = cur.rearm();
            match self.word.compare_exchange_weak(
                cur.0,
                new.0,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return sums,
                Err(found) => {
                    crate::sync::model_event("node-rearm-retried");
                    cur = NodeWord(found);
                }
            }
        }
    }
}

/// The tree for `capacity` ranks with fan-in `fan_in`, of which
/// `0 .. seats` take part, level by level, leaves first and the root last:
/// rank `r` belongs to leaf `r / fan_in`, and every `fan_in` nodes of a
/// level have a parent on the next level. A rank that does not take part
/// is no member of its leaf, and a node without members none of its parent.
fn build(seats: usize, capacity: usize, fan_in: usize) -> impl ExactSizeIterator<Item = Node> {
    (0..node_count(capacity, fan_in)).map(move |i| node(i, seats, capacity, fan_in))
}

/// Node `i` of [`build`]'s tree, found by walking up its levels. Those
/// taking part on a level are a prefix of it (ranks `0 .. seats`, then the
/// nodes with a member), so node `j` of a level combines
/// `taking - j * fan_in` of them, at most `fan_in`, at least none.
fn node(i: usize, seats: usize, capacity: usize, fan_in: usize) -> Node {
    // The level below the one searched: its width and how many of it take
    // part; `start`: the index of the searched level's first node.
    let (mut below, mut taking, mut start) = (capacity, seats, 0);
    loop {
        let width = below.div_ceil(fan_in);
        if i < start + width {
            let j = i - start;
            let mut node = Node::new(taking.saturating_sub(j * fan_in).min(fan_in) as u32);
            if width > 1 {
                node.parent = (start + width + j / fan_in) as u32;
            }
            return node;
        }
        (below, taking, start) = (width, taking.div_ceil(fan_in), start + width);
    }
}

/// How many nodes [`build`] makes for `capacity` ranks and fan-in `fan_in`.
fn node_count(capacity: usize, fan_in: usize) -> usize {
    let (mut width, mut total) = (capacity, 0);
    loop {
        width = width.div_ceil(fan_in);
        total += width;
        if width == 1 {
            return total;
        }
    }
}

/// The tree of a grid of `blocks` blocks of `threads` ranks each (rank
/// `r` in block `r / threads`), every rank taking part: each block's ranks
/// combine in a subtree of their own ([`build`]'s tree of `threads` ranks;
/// one node for a block of up to twice the fan-in),
/// whose root is a member of a tree over the blocks (the same tree of
/// `blocks` members), so that a block's arrivals meet each other before
/// they meet another block's, and one arrival per block climbs further. A
/// block of one rank has no subtree: its rank is a member of the tree over
/// the blocks. Block `b`'s subtree is nodes `b * per_block ..`; the tree over
/// the blocks follows, its root last (none for one block, whose subtree's
/// root is the root).
fn build_grid(blocks: usize, threads: usize, fan_in: usize) -> (Vec<Node>, Groups) {
    // A block of up to twice the fan-in is one node: a level fewer for
    // its arrivals to climb than two nodes and their parent, and the
    // team's measurements found fan-in 8 level with 4.
    let block_fan_in = if threads <= 2 * fan_in {
        threads.max(2)
    } else {
        fan_in
    };
    let per_block = if threads > 1 {
        node_count(threads, block_fan_in)
    } else {
        0
    };
    let groups = Groups {
        threads: threads as u32,
        per_block: per_block as u32,
        fan_in: block_fan_in as u32,
    };
    (grid_nodes(blocks, fan_in, groups).collect(), groups)
}

/// The nodes of [`build_grid`]'s tree, in order, without allocating (a
/// kept grid's re-arm makes them again).
fn grid_nodes(blocks: usize, fan_in: usize, groups: Groups) -> impl Iterator<Item = Node> {
    let threads = groups.threads as usize;
    let (per_block, block_fan_in) = (groups.per_block as usize, groups.fan_in as usize);
    let above = blocks * per_block;
    let offset = move |node: Node, by: usize, root_parent: u32| Node {
        parent: if node.parent == NO_PARENT {
            root_parent
        } else {
            node.parent + by as u32
        },
        ..node
    };
    let subtrees = (0..if per_block > 0 { blocks } else { 0 }).flat_map(move |b| {
        let root_parent = if blocks > 1 {
            (above + b / fan_in) as u32
        } else {
            NO_PARENT
        };
        build(threads, threads, block_fan_in).map(move |n| offset(n, b * per_block, root_parent))
    });
    let over_blocks = (blocks > 1 || per_block == 0)
        .then(move || build(blocks, blocks, fan_in).map(move |n| offset(n, above, NO_PARENT)));
    subtrees.chain(over_blocks.into_iter().flatten())
}

/// Which leaf a rank belongs to: `rank / fan_in` in a plain tree; in a
/// grid's ([`build_grid`]), the leaf of its block's subtree.
#[derive(Clone, Copy)]
struct Groups {
    /// Ranks per block; 0 for a plain tree.
    threads: u32,
    /// Nodes per block's subtree (0 for blocks of one rank).
    per_block: u32,
    /// The fan-in of a block's subtree.
    fan_in: u32,
}

/// What a seat's arrival passes through before it reaches the word.
pub(super) enum Front {
    /// Nothing: each seat's arrival is one RMW of the word.
    Flat,
    /// A combining tree.
    Tree(Tree),
}

impl Front {
    /// The front of a team of `seats` seats taking part of `capacity`
    /// ranks: a tree of `fan_in` members per node above `flat` ranks. A
    /// fan-in out of range panics, naming the constructor `call`.
    #[track_caller]
    pub(super) fn new(
        call: &dyn std::fmt::Display,
        seats: usize,
        capacity: usize,
        fan_in: usize,
        flat: usize,
    ) -> Front {
        assert!(
            (2..=MAX_FAN_IN).contains(&fan_in),
            "syncthreads: {call}: the fan-in must be in 2 ..= {MAX_FAN_IN}"
        );
        if capacity > flat {
            let plain = Groups {
                threads: 0,
                per_block: 0,
                fan_in: 0,
            };
            Front::Tree(Tree(
                Lines::new(build(seats, capacity, fan_in), Node::new(0)),
                plain,
            ))
        } else {
            Front::Flat
        }
    }

    /// Every node's word as [`new`](Front::new) or [`grid`](Front::grid)
    /// made it, through atomic stores ([`Team::rearm`](super::Team::rearm)).
    pub(super) fn rearm(&self, seats: usize, capacity: usize, fan_in: usize) {
        let Front::Tree(Tree(nodes, groups)) = self else {
            return;
        };
        let rearm = |line: &Line<Node>, fresh: Node| {
            // Relaxed: as `State::rearm`; `fresh` is this thread's alone.
            let word = fresh.word.load(Ordering::Relaxed);
            line.word.store(word, Ordering::Relaxed);
        };
        if groups.threads == 0 {
            for (i, line) in nodes.iter().enumerate() {
                rearm(line, node(i, seats, capacity, fan_in));
            }
        } else {
            let blocks = seats / groups.threads as usize;
            for (line, node) in nodes.iter().zip(grid_nodes(blocks, fan_in, *groups)) {
                rearm(line, node);
            }
        }
    }

    /// The front of a grid of `blocks` blocks of `threads` ranks
    /// ([`build_grid`]); flat if it has at most `flat` ranks.
    pub(super) fn grid(blocks: usize, threads: usize, fan_in: usize, flat: usize) -> Front {
        if blocks * threads > flat {
            let (nodes, groups) = build_grid(blocks, threads, fan_in);
            Front::Tree(Tree(Lines::new(nodes.into_iter(), Node::new(0)), groups))
        } else {
            Front::Flat
        }
    }

    /// Attaches rank `rank`, joined in phase `joined`, to its leaf
    /// ([`Tree::attach`]); whether its seat arrives through a tree.
    pub(super) fn attach(&self, rank: u32, fan_in: u32, joined: Phase) -> bool {
        match self {
            Front::Flat => false,
            Front::Tree(tree) => {
                tree.attach(tree.leaf(rank, fan_in), joined);
                true
            }
        }
    }

    /// The tree's nodes (none for a flat front).
    pub(super) fn nodes(&self) -> &[Line<Node>] {
        match self {
            Front::Flat => &[],
            Front::Tree(tree) => &tree.0[..],
        }
    }
}

#[cfg(test)]
impl Front {
    /// The tree's heap bytes (0 for a flat front).
    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            Front::Flat => 0,
            Front::Tree(tree) => tree.0.heap_bytes(),
        }
    }
}

/// The nodes of a tree, leaves first, the root last, and which leaf each
/// rank belongs to.
pub(super) struct Tree(Lines<Node>, Groups);

impl Tree {
    /// The leaf of rank `rank` in a tree of fan-in `fan_in`.
    #[inline]
    pub(super) fn leaf(&self, rank: u32, fan_in: u32) -> u32 {
        let g = self.1;
        // A plain tree, or blocks of one rank (each rank its block's
        // member of the tree over the blocks).
        if g.per_block == 0 {
            rank / fan_in
        } else {
            (rank / g.threads) * g.per_block + (rank % g.threads) / g.fan_in
        }
    }

    /// Contributes `c` to `round` at `node` and climbs while it completes
    /// rounds; returns the root's sums if it completed the root's.
    #[inline]
    pub(super) fn climb(
        &self,
        mut node: u32,
        round: Phase,
        mut c: Contribution,
    ) -> Option<Contribution> {
        loop {
            let n = &self.0[node as usize];
            c = n.contribute(round, c)?;
            if n.parent == NO_PARENT {
                return Some(c);
            }
            node = n.parent;
        }
    }

    /// A seat joined in phase `joined` at `leaf`: attaches it from the next
    /// round on, reviving empty nodes up to the root (team-tree.md, "Joining").
    /// Under the team's join lock, while phase `joined` cannot complete.
    pub(super) fn attach(&self, mut node: u32, joined: Phase) {
        loop {
            let n = &self.0[node as usize];
            if !n.attach(joined) || n.parent == NO_PARENT {
                return;
            }
            node = n.parent;
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn ranks_not_taking_part_are_no_members() {
        // Capacity 10, fan-in 2, ranks 0..3 taking part: leaves {0,1} {2}
        // (rank 3 out) and three empty ones; of the next level only the
        // first node has members; the root has one.
        let members: Vec<u32> = build(3, 10, 2).map(|n| n.load().members()).collect();
        assert_eq!(members, [2, 1, 0, 0, 0, 2, 0, 0, 1, 0, 1]);
    }

    #[test]
    fn parents_point_one_level_up() {
        // 5 leaves (0-4), then 3 (5-7), 2 (8-9) and the root (10).
        let parents: Vec<u32> = build(10, 10, 2).map(|n| n.parent).collect();
        assert_eq!(parents, [5, 5, 6, 6, 7, 8, 8, 9, 10, 10, NO_PARENT]);
    }

    #[test]
    fn a_grid_tree_combines_each_block_before_the_blocks() {
        // Under Miri, the small shapes only (every case of the layout).
        let largest = if cfg!(miri) { 3 } else { 9 };
        for fan_in in [2, 4] {
            for blocks in 1..=largest {
                for threads in 1..=largest {
                    let (nodes, groups) = build_grid(blocks, threads, fan_in);
                    let tree = Tree(Lines::new(nodes.into_iter(), Node::new(0)), groups);
                    let shape = format!("{blocks} x {threads}, fan-in {fan_in}");
                    let nodes = &tree.0[..];
                    // Members: each rank at its leaf, each node with
                    // members at its parent; only the last node is the root.
                    let mut owed = vec![0u32; nodes.len()];
                    for r in 0..blocks * threads {
                        owed[tree.leaf(r as u32, fan_in as u32) as usize] += 1;
                    }
                    for (i, n) in nodes.iter().enumerate() {
                        assert_eq!(n.load().members(), owed[i], "node {i}, {shape}");
                        if n.parent == NO_PARENT {
                            assert_eq!(i, nodes.len() - 1, "{shape}");
                        } else {
                            assert!(n.parent as usize > i, "{shape}");
                            owed[n.parent as usize] += 1;
                        }
                    }
                    // Two ranks of one block meet below any node that
                    // holds a rank of another block.
                    let path = |r: usize| {
                        let mut at = tree.leaf(r as u32, fan_in as u32);
                        let mut up = vec![at];
                        while nodes[at as usize].parent != NO_PARENT {
                            at = nodes[at as usize].parent;
                            up.push(at);
                        }
                        up
                    };
                    let meet = |a: usize, b: usize| {
                        let pb = path(b);
                        path(a).into_iter().position(|n| pb.contains(&n)).unwrap()
                    };
                    for b in 0..blocks {
                        for t in 1..threads {
                            let inside = meet(b * threads, b * threads + t);
                            for other in (0..blocks * threads).filter(|r| r / threads != b) {
                                assert!(inside <= meet(b * threads, other), "{shape}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_node_counts_its_members_taking_part() {
        // Under Miri, the small shapes only (every case of the walk up).
        let largest = if cfg!(miri) { 9 } else { 70 };
        for fan_in in 2..=5 {
            for capacity in 1..=largest {
                for seats in 0..=capacity {
                    let nodes: Vec<Node> = build(seats, capacity, fan_in).collect();
                    let shape = format!("seats {seats}, capacity {capacity}, fan-in {fan_in}");
                    // Leaves: rank `r` belongs to leaf `r / fan_in`.
                    let leaves = capacity.div_ceil(fan_in);
                    let mut owed = vec![0u32; nodes.len()];
                    for r in 0..seats {
                        owed[r / fan_in] += 1;
                    }
                    // Higher nodes: one member per child with members,
                    // children coming before their parent.
                    for (i, n) in nodes.iter().enumerate() {
                        let members = n.load().members();
                        assert_eq!(members, owed[i], "node {i}, {shape}");
                        if n.parent == NO_PARENT {
                            assert_eq!(
                                i,
                                nodes.len() - 1,
                                "only the last node is the root, {shape}"
                            );
                        } else {
                            let p = n.parent as usize;
                            assert!(p > i && p >= leaves, "node {i}'s parent {p}, {shape}");
                            owed[p] += u32::from(members > 0);
                        }
                    }
                    // Every node of a level of `w` nodes has its parent
                    // `fan_in` siblings apart: each parent has at most
                    // `fan_in` children.
                    let mut children = vec![0usize; nodes.len()];
                    for n in nodes.iter().filter(|n| n.parent != NO_PARENT) {
                        children[n.parent as usize] += 1;
                    }
                    assert!(children.iter().all(|&c| c <= fan_in), "{shape}");
                }
            }
        }
    }
}
