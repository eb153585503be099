//! CUDA's lane arithmetic for the shuffles: which lane a shuffle reads,
//! by sections of `width` lanes (docs/design/warp-collectives.md, the case
//! table). Pure functions; the checks of `width` panic with the call's name.

/// Which shuffle, with its argument as the caller passed it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shuffle {
    /// `shfl(value, src, width)`: section start + `src % width`.
    Idx(usize),
    /// `shfl_up(value, delta, width)`: `lane - delta`, within the section.
    Up(usize),
    /// `shfl_down(value, delta, width)`: `lane + delta`, within the section.
    Down(usize),
    /// `shfl_xor(value, lane_mask, width)`: `lane ^ lane_mask`, unless that
    /// lies in a later section.
    Xor(usize),
}

/// The bits of a `delta` or `lane_mask` that the hardware uses: 5 for a
/// group of up to 32 lanes, 6 above.
fn low_bits(x: usize, lanes: usize) -> usize {
    x & if lanes <= 32 { 31 } else { 63 }
}

/// The lane that `lane` reads in `shuffle` over sections of `width` lanes of
/// a group of `lanes`, or `None` when it keeps its own value because the
/// source leaves its section (`width` already checked). The caller still
/// takes its own value when the source is not in the mask.
pub(crate) fn source(lane: usize, lanes: usize, width: usize, shuffle: Shuffle) -> Option<usize> {
    let start = lane - lane % width;
    let end = start + width; // one past the section
    match shuffle {
        Shuffle::Idx(src) => Some(start + src % width),
        Shuffle::Up(delta) => lane
            .checked_sub(low_bits(delta, lanes))
            .filter(|&j| j >= start),
        Shuffle::Down(delta) => Some(lane + low_bits(delta, lanes)).filter(|&j| j < end),
        Shuffle::Xor(mask) => Some(lane ^ low_bits(mask, lanes)).filter(|&j| j < end),
    }
}

/// Checks a shuffle's `width`: a power of two in `1 ..= lanes`.
#[track_caller]
pub(crate) fn check_width(call: &str, lane: usize, mask: u64, width: usize, lanes: usize) {
    if !width.is_power_of_two() || width > lanes {
        panic!(
            "syncthreads: {call}(lane {lane}, mask {mask:#x}): width {width} must be a power of two in 1 ..= {lanes} (the group's lanes)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_bound_up_and_down_but_xor_reads_earlier_sections() {
        // 32 lanes, width 8: lane 9 is in section 8..16.
        assert_eq!(source(9, 32, 8, Shuffle::Up(1)), Some(8));
        assert_eq!(source(9, 32, 8, Shuffle::Up(2)), None);
        assert_eq!(source(9, 32, 8, Shuffle::Down(6)), Some(15));
        assert_eq!(source(9, 32, 8, Shuffle::Down(7)), None);
        assert_eq!(source(9, 32, 8, Shuffle::Xor(8)), Some(1));
        assert_eq!(source(9, 32, 8, Shuffle::Xor(16)), None);
        assert_eq!(source(9, 32, 8, Shuffle::Idx(19)), Some(11));
    }

    #[test]
    fn deltas_keep_their_low_bits() {
        assert_eq!(source(5, 32, 32, Shuffle::Up(34)), Some(3));
        assert_eq!(source(5, 64, 64, Shuffle::Up(66)), Some(3));
        assert_eq!(source(5, 64, 64, Shuffle::Up(34)), None);
        assert_eq!(source(5, 33, 32, Shuffle::Down(32)), None);
    }
}
