//! A sequential model of CUDA's warp collectives, written from the PTX
//! `shfl.sync` definition (`segmask`, `minLane`, `maxLane`), not from the
//! crate's code; and random programs of collectives, one per round, each
//! round's lanes split into disjoint masks (every lane syncs once per round,
//! so CUDA's rule holds), checked lane by lane against the model.
#![allow(dead_code)]

use syncthreads::WarpBarrier;

/// SplitMix64: the plan of a round is a function of its seed, so every lane
/// computes the same plan by itself.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Which shuffle, with its raw argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shfl {
    Idx(usize),
    Up(usize),
    Down(usize),
    Xor(usize),
}

/// The lane `lane` reads in a shuffle, as PTX defines it, or `lane` itself
/// when `pval` is false; `group` is 32 for up to 32 lanes, else 64 (the
/// lane-index field the hardware keeps). The caller applies the mask.
pub fn ptx_source(lane: usize, lanes: usize, width: usize, shfl: Shfl) -> usize {
    let group: i64 = if lanes <= 32 { 32 } else { 64 };
    let lane = lane as i64;
    let segmask = group - width as i64; // the lane bits naming the section
    let min_lane = lane & segmask;
    let field = |b: usize| (b as i64) & (group - 1);
    let (j, pval) = match shfl {
        Shfl::Up(b) => {
            let max_lane = min_lane; // cval = 0
            let j = lane - field(b);
            (j, j >= max_lane)
        }
        Shfl::Down(b) => {
            let max_lane = min_lane | ((group - 1) & !segmask);
            let j = lane + field(b);
            (j, j <= max_lane)
        }
        Shfl::Xor(b) => {
            let max_lane = min_lane | ((group - 1) & !segmask);
            let j = lane ^ field(b);
            (j, j <= max_lane)
        }
        Shfl::Idx(b) => {
            let max_lane = min_lane | ((group - 1) & !segmask);
            // src modulo width (`b & ~segmask` within the field)
            let j = min_lane | ((b % width) as i64 & !segmask);
            (j, j <= max_lane)
        }
    };
    if pval {
        j as usize
    } else {
        lane as usize
    }
}

/// The model's result of a shuffle for `lane`: the source's value if the
/// source is in `mask`, else the own value.
pub fn model_shfl<T: Copy>(values: &[T], mask: u64, lane: usize, width: usize, shfl: Shfl) -> T {
    let j = ptx_source(lane, values.len(), width, shfl);
    if j < 64 && mask & (1 << j) != 0 {
        values[j]
    } else {
        values[lane]
    }
}

/// The lanes of `mask`, lowest first.
pub fn lanes_of(mask: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |l| mask & (1u64 << l) != 0)
}

/// One collective of a round, as every lane of its mask runs it.
#[derive(Clone, Copy, Debug)]
pub enum Call {
    Sync,
    Ballot,
    Any,
    All,
    Shuffle(Shfl, usize),
    MatchAny,
    MatchAll,
    ReduceAdd,
    ReduceMin,
    ReduceMax,
    ReduceAnd,
    ReduceOr,
    ReduceXor,
    /// The generic fold with an operation that is not commutative.
    Fold,
}

/// The value types a program exchanges: word types, a padded tuple and a
/// type larger than the inline slot.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    U32,
    I64,
    Pair,
    Big,
}

/// A large value (rides the heap buffer of a slot).
pub type Big = [u64; 12];

pub fn pair(v: u64) -> (u8, u32) {
    (v as u8, (v >> 8) as u32)
}

pub fn big(v: u64) -> Big {
    std::array::from_fn(|i| v.rotate_left(i as u32 * 5))
}

/// A random power of two `<= lanes`.
pub fn width(lanes: usize, r: u64) -> usize {
    let max = usize::BITS - 1 - lanes.leading_zeros(); // log2 of the largest
    1 << (r % (max as u64 + 1))
}

/// The plan of the collective of the mask whose lowest lane is `key`, in
/// round `round` of the program `seed`.
pub fn plan(seed: u64, round: u64, key: usize, lanes: usize) -> (Call, Ty) {
    let r = mix(seed ^ mix(round << 8 | key as u64));
    let ty = [Ty::U32, Ty::I64, Ty::Pair, Ty::Big][(r >> 8) as usize % 4];
    let width = width(lanes, r >> 16);
    let arg = (r >> 24) as usize % 140;
    let call = match r % 15 {
        0 => Call::Sync,
        1 => Call::Ballot,
        2 => Call::Any,
        3 => Call::All,
        4 => Call::Shuffle(Shfl::Idx(arg), width),
        5 => Call::Shuffle(Shfl::Up(arg), width),
        6 => Call::Shuffle(Shfl::Down(arg), width),
        7 => Call::Shuffle(Shfl::Xor(arg), width),
        8 => Call::MatchAny,
        9 => Call::MatchAll,
        10 => Call::ReduceAdd,
        11 => [Call::ReduceMin, Call::ReduceMax][(r >> 40) as usize % 2],
        12 => [Call::ReduceAnd, Call::ReduceOr][(r >> 40) as usize % 2],
        13 => Call::ReduceXor,
        _ => Call::Fold,
    };
    (call, ty)
}

/// The masks of round `round`: the lanes split into disjoint parts, by a
/// random choice of single lanes, ranges, random subsets or the whole group.
pub fn partition(seed: u64, round: u64, lanes: usize) -> Vec<u64> {
    let r = mix(seed.wrapping_mul(31) ^ round);
    let full = u64::MAX >> (64 - lanes);
    match r % 4 {
        0 => vec![full],
        1 => (0..lanes).map(|l| 1u64 << l).collect(),
        2 => {
            // ranges of random lengths
            let mut masks = Vec::new();
            let mut start = 0;
            let mut x = r;
            while start < lanes {
                x = mix(x);
                let len = 1 + (x as usize % lanes.clamp(1, 17));
                let end = (start + len).min(lanes);
                let bits = |n: usize| if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                masks.push(bits(end) & !bits(start));
                start = end;
            }
            masks.retain(|&m| m != 0);
            masks
        }
        _ => {
            // random subsets: each lane picks one of k parts
            let k = 1 + (r >> 8) as usize % 4;
            let mut masks = vec![0u64; k];
            for l in 0..lanes {
                masks[mix(r ^ l as u64) as usize % k] |= 1 << l;
            }
            masks.retain(|&m| m != 0);
            masks
        }
    }
}

/// Lane `lane`'s value in a round (as a `u64`; each type takes its bits).
/// Small ranges, so that matches find equal values.
pub fn value(seed: u64, round: u64, lane: usize) -> u64 {
    let r = mix(seed ^ round.wrapping_mul(0x1_0000_0001) ^ (lane as u64) << 48);
    if r % 3 == 0 {
        r >> 60
    } else {
        r
    }
}

fn fold_op(a: u64, b: u64) -> u64 {
    a.wrapping_mul(31).wrapping_add(b)
}

/// Runs `call` on `warp` for `lane` with the values of `values` (every lane's,
/// for the model) and asserts the result against the model.
pub fn run_and_check(
    warp: &WarpBarrier,
    lane: usize,
    mask: u64,
    call: Call,
    ty: Ty,
    values: &[u64],
    what: &dyn Fn() -> String,
) {
    let v = values[lane];
    let in_mask: Vec<usize> = lanes_of(mask).collect();
    let lanes = values.len();
    macro_rules! check {
        ($got:expr, $want:expr) => {{
            let (got, want) = ($got, $want);
            assert!(
                got == want,
                "{}: lane {lane}, mask {mask:#x}, {call:?} on {ty:?}: got {got:?}, want {want:?}",
                what()
            );
        }};
    }
    match call {
        Call::Sync => warp.sync(lane, mask),
        Call::Ballot | Call::Any | Call::All => {
            let pred = |l: usize| values[l] % 2 == 1;
            let bits: u64 = in_mask
                .iter()
                .filter(|&&l| pred(l))
                .map(|&l| 1u64 << l)
                .sum();
            match call {
                Call::Ballot => check!(warp.ballot(lane, mask, pred(lane)), bits),
                Call::Any => check!(warp.any(lane, mask, pred(lane)), bits != 0),
                _ => check!(warp.all(lane, mask, pred(lane)), bits == mask),
            }
        }
        Call::Shuffle(shfl, width) => {
            let go = |w: &WarpBarrier| -> u64 {
                match ty {
                    Ty::U32 => u64::from(shuffle(w, lane, mask, v as u32, shfl, width)),
                    Ty::I64 => shuffle(w, lane, mask, v as i64, shfl, width) as u64,
                    Ty::Pair => {
                        let (a, b) = shuffle(w, lane, mask, pair(v), shfl, width);
                        u64::from(a) | u64::from(b) << 8
                    }
                    Ty::Big => shuffle(w, lane, mask, big(v), shfl, width)[0],
                }
            };
            let want = model_shfl(values, mask, lane, width, shfl);
            let want = match ty {
                Ty::U32 => want as u32 as u64,
                Ty::I64 => want,
                Ty::Pair => {
                    let (a, b) = pair(want);
                    u64::from(a) | u64::from(b) << 8
                }
                Ty::Big => big(want)[0],
            };
            check!(go(warp), want);
        }
        Call::MatchAny | Call::MatchAll => {
            let key = |l: usize| values[l] % 4;
            let same: u64 = in_mask
                .iter()
                .filter(|&&l| key(l) == key(lane))
                .map(|&l| 1u64 << l)
                .sum();
            if let Call::MatchAny = call {
                match ty {
                    Ty::Pair | Ty::Big => check!(warp.match_any(lane, mask, pair(key(lane))), same),
                    _ => check!(warp.match_any(lane, mask, key(lane) as u32), same),
                }
            } else {
                let want = (same == mask).then_some(mask);
                match ty {
                    Ty::Pair | Ty::Big => check!(warp.match_all(lane, mask, big(key(lane))), want),
                    _ => check!(warp.match_all(lane, mask, key(lane) as i64), want),
                }
            }
        }
        Call::Fold => {
            let want = in_mask.iter().map(|&l| values[l]).reduce(fold_op).unwrap();
            match ty {
                Ty::Big => check!(
                    warp.reduce(lane, mask, big(v), |a, b| big(fold_op(a[0], b[0])))[0],
                    want
                ),
                _ => check!(warp.reduce(lane, mask, v, fold_op), want),
            }
        }
        reduction => {
            let vals: Vec<u64> = in_mask.iter().map(|&l| values[l]).collect();
            match ty {
                Ty::U32 | Ty::Pair => {
                    let xs: Vec<u32> = vals.iter().map(|&x| x as u32).collect();
                    let me = v as u32;
                    let (got, want) =
                        reduce_int(warp, lane, mask, reduction, me, &xs, u32::wrapping_add);
                    check!(got, want);
                }
                Ty::I64 | Ty::Big => {
                    let xs: Vec<i64> = vals.iter().map(|&x| x as i64).collect();
                    let (got, want) = reduce_int(
                        warp,
                        lane,
                        mask,
                        reduction,
                        v as i64,
                        &xs,
                        i64::wrapping_add,
                    );
                    check!(got, want);
                }
            }
        }
    }
    let _ = lanes;
}

fn reduce_int<T: syncthreads::WarpInt + std::fmt::Debug>(
    warp: &WarpBarrier,
    lane: usize,
    mask: u64,
    call: Call,
    me: T,
    xs: &[T],
    add: fn(T, T) -> T,
) -> (T, T) {
    let it = xs.iter().copied();
    match call {
        Call::ReduceAdd => (warp.reduce_add(lane, mask, me), it.reduce(add).unwrap()),
        Call::ReduceMin => (warp.reduce_min(lane, mask, me), it.min().unwrap()),
        Call::ReduceMax => (warp.reduce_max(lane, mask, me), it.max().unwrap()),
        Call::ReduceAnd => (
            warp.reduce_and(lane, mask, me),
            it.reduce(|a, b| a & b).unwrap(),
        ),
        Call::ReduceOr => (
            warp.reduce_or(lane, mask, me),
            it.reduce(|a, b| a | b).unwrap(),
        ),
        Call::ReduceXor => (
            warp.reduce_xor(lane, mask, me),
            it.reduce(|a, b| a ^ b).unwrap(),
        ),
        other => unreachable!("{other:?}"),
    }
}

fn shuffle<T: Copy + Send + 'static>(
    w: &WarpBarrier,
    lane: usize,
    mask: u64,
    v: T,
    shfl: Shfl,
    width: usize,
) -> T {
    match shfl {
        Shfl::Idx(a) => w.shfl(lane, mask, v, a, width),
        Shfl::Up(a) => w.shfl_up(lane, mask, v, a, width),
        Shfl::Down(a) => w.shfl_down(lane, mask, v, a, width),
        Shfl::Xor(a) => w.shfl_xor(lane, mask, v, a, width),
    }
}

/// Runs `rounds` rounds of the random program `seed` on a warp of `lanes`
/// lanes, one thread per lane, each lane checking every result.
pub fn run_program(lanes: usize, seed: u64, rounds: u64) {
    let warp = WarpBarrier::new(lanes);
    std::thread::scope(|s| {
        for lane in 0..lanes {
            let warp = &warp;
            s.spawn(move || {
                for round in 0..rounds {
                    let masks = partition(seed, round, lanes);
                    let mask = *masks
                        .iter()
                        .find(|&&m| m & (1 << lane) != 0)
                        .expect("a partition covers every lane");
                    let key = mask.trailing_zeros() as usize;
                    let (call, ty) = plan(seed, round, key, lanes);
                    let values: Vec<u64> = (0..lanes).map(|l| value(seed, round, l)).collect();
                    run_and_check(warp, lane, mask, call, ty, &values, &|| {
                        format!("program {seed:#x} on {lanes} lanes, round {round}")
                    });
                }
            });
        }
    });
}
