//! The tree shapes a team test runs on. The contract's constructors build
//! one shape per capacity (flat up to two ranks, a tree of fan-in four
//! above); the crate's `bench` feature adds `TeamShape`, with which
//! the same tests also run on a binary tree, a wide one and a flat team of
//! any size. CI runs the team tests in both builds (`.ci/run`).

use syncthreads::Team;

/// A team's tree shape: `fan_in` members per node, no tree for a capacity
/// of at most `flat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// For the tests' messages.
    pub name: &'static str,
    pub fan_in: usize,
    pub flat: usize,
}

impl Shape {
    /// The shape the contract's constructors build (`Team::new`, …).
    pub const DEFAULT: Shape = Shape {
        name: "default",
        fan_in: 4,
        flat: 2,
    };
    /// A binary tree: the most levels.
    pub const BINARY: Shape = Shape {
        name: "fan-in 2",
        fan_in: 2,
        flat: 0,
    };
    /// A wide tree: eight seats' RMWs on one node.
    pub const WIDE: Shape = Shape {
        name: "fan-in 8",
        fan_in: 8,
        flat: 0,
    };
    /// No tree at any size: every arrival on the word.
    pub const FLAT: Shape = Shape {
        name: "flat",
        fan_in: 4,
        flat: usize::MAX,
    };
    /// A team of this shape: `capacity` ranks, `0 .. seats` taking part.
    pub fn team(self, seats: usize, capacity: usize) -> Team {
        #[cfg(feature = "bench")]
        return syncthreads::TeamShape::new(self.fan_in, self.flat)
            .team_with_capacity(seats, capacity);
        #[cfg(not(feature = "bench"))]
        {
            self.assert_default();
            Team::with_capacity(seats, capacity)
        }
    }

    /// [`Shape::team`] with a completion function.
    pub fn team_with<F: FnMut() + Send>(self, seats: usize, capacity: usize, f: F) -> Team<F> {
        #[cfg(feature = "bench")]
        return syncthreads::TeamShape::new(self.fan_in, self.flat)
            .team_with_completion_and_capacity(seats, capacity, f);
        #[cfg(not(feature = "bench"))]
        {
            self.assert_default();
            Team::with_completion_and_capacity(seats, capacity, f)
        }
    }

    #[cfg(not(feature = "bench"))]
    fn assert_default(self) {
        assert_eq!(
            self,
            Shape::DEFAULT,
            "the {} shape needs the crate's `bench` feature (take shapes from `shapes`)",
            self.name
        );
    }
}

/// The shapes to run of `wanted`: all of them in a build with the crate's
/// `bench` feature; without it the default alone, the only shape the
/// contract's constructors build.
pub fn shapes(wanted: &[Shape]) -> Vec<Shape> {
    if cfg!(feature = "bench") {
        wanted.to_vec()
    } else {
        vec![Shape::DEFAULT]
    }
}
