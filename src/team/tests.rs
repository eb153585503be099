//! The team's shape and memory, pinned.

use super::*;
use tree::Node;

/// The team's heap bytes (the tree and the per-rank table).
fn heap_bytes(team: &Team) -> usize {
    team.front.heap_bytes() + team.ranks.heap_bytes()
}

/// The number of tree nodes (0 for a flat team).
fn node_count(team: &Team) -> usize {
    team.front.nodes().len()
}

#[test]
fn tree_shape_and_memory_table() {
    let line = std::mem::size_of::<crate::lines::Line<Node>>();
    for (seats, nodes) in [
        (1, 0),
        (2, 0),
        (3, 1),
        (4, 1),
        (5, 3),
        (16, 5),
        (17, 8),
        (64, 21),
        (1024, 341),
    ] {
        // Miri takes minutes over a 1024-seat table; the smaller rows
        // run the same code under it.
        if cfg!(miri) && seats > 64 {
            continue;
        }
        let team = Team::new(seats);
        assert_eq!(node_count(&team), nodes, "{seats} seats");
        // Each array has one spare cell (lines.rs).
        let trees = usize::from(nodes > 0);
        assert_eq!(heap_bytes(&team), (nodes + trees + seats + 1) * line);
        // The shape is the capacity's, whoever takes part.
        assert_eq!(node_count(&Team::with_capacity(1, seats)), nodes);
    }
    if cfg!(target_arch = "x86_64") {
        assert_eq!(line, 128);
        assert_eq!(std::mem::size_of::<Team>(), 256);
        for (seats, heap) in [
            (2, 384),
            (4, 896),
            (16, 2944),
            (64, 11_136),
            (1024, 174_976),
        ] {
            if cfg!(miri) && seats > 64 {
                continue;
            }
            assert_eq!(heap_bytes(&Team::new(seats)), heap, "{seats} seats");
        }
    }
}

/// Every word of `team`: the engine's, the nodes', the rank entries'.
fn words(team: &Team) -> (u64, Vec<tree::NodeWord>, Vec<RankEntry>) {
    let nodes = team.front.nodes().iter().map(|n| n.load()).collect();
    let ranks = team.ranks.entries().collect();
    (team.engine.word(Ordering::Relaxed).bits(), nodes, ranks)
}

/// A launch's team (plain or a grid's), used for a phase and retired by
/// every seat's leave, re-arms to the words of a new one.
#[test]
fn a_retired_launch_team_re_arms_as_new() {
    for (blocks, threads) in [(1, 2), (1, 5), (1, 16), (2, 8), (4, 4), (3, 1), (2, 17)] {
        let new = || match blocks {
            1 => Team::new(threads),
            _ => Team::grid(blocks, threads),
        };
        let (fresh, used) = (new(), new());
        let seats: Vec<_> = (0..blocks * threads)
            .map(|r| used.try_seat(r).expect("a free rank"))
            .collect();
        for seat in &seats {
            drop(seat.arrive());
        }
        drop(seats);
        assert!(used.engine.word(Ordering::Relaxed).is_retired());
        assert_ne!(words(&used), words(&fresh), "{blocks} x {threads}");
        used.rearm();
        assert_eq!(words(&used), words(&fresh), "{blocks} x {threads}");
    }
}
