//! [`Seats`], the iterator of [`Team::seats`].

use super::{Seat, Team};
use crate::completion::Completion;
use std::fmt;

/// The iterator of [`Team::seats`].
///
/// # Examples
///
/// ```
/// let team = syncthreads::Team::new(3);
/// assert_eq!(team.seats().count(), 3);
/// assert_eq!(team.seats().count(), 0); // all handed out
/// ```
pub struct Seats<'a, F: Completion = ()> {
    pub(super) team: &'a Team<F>,
    pub(super) next: usize,
}

impl<'a, F: Completion> Iterator for Seats<'a, F> {
    type Item = Seat<'a, F>;

    fn next(&mut self) -> Option<Seat<'a, F>> {
        while self.next < self.team.seat_count() {
            let rank = self.next;
            self.next += 1;
            if self.team.ranks.claim(rank).is_ok() {
                return Some(Seat::new(self.team, rank, u64::MAX, false));
            }
        }
        None
    }
}

impl<F: Completion> fmt::Debug for Seats<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Seats").field("next", &self.next).finish()
    }
}
