//! The real backend: `parking_lot_core`'s address-keyed queues.

use super::Parked;
use parking_lot_core::{ParkResult, DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};
use std::time::Instant;

pub(crate) fn park(
    key: usize,
    validate: &mut dyn FnMut() -> bool,
    deadline: Option<Instant>,
) -> Parked {
    // SAFETY:
    // - `validate` only loads an atomic: it does not panic and does not call
    //   into `parking_lot_core`.
    // - `before_sleep` and `timed_out` are empty, so they neither panic nor park.
    // - `key` is an address inside one of our atomic words (its address + 1),
    //   where no other object lives, so no other parker uses it and only our
    //   `unpark_all` wakes it.
    let result = unsafe {
        parking_lot_core::park(
            key,
            validate,
            || {},
            |_, _| {},
            DEFAULT_PARK_TOKEN,
            deadline,
        )
    };
    match result {
        ParkResult::Invalid => Parked::Invalid,
        ParkResult::TimedOut => Parked::TimedOut,
        ParkResult::Unparked(_) => Parked::Woken,
    }
}

pub(crate) fn unpark_all(key: usize) {
    // SAFETY: waking an address is always sound: no callback runs, and a stale
    // or never-parked key just finds an empty queue.
    unsafe {
        parking_lot_core::unpark_all(key, DEFAULT_UNPARK_TOKEN);
    }
}
