//! The warp collectives against a real GPU: tests/data/warp_truth.txt holds
//! what an NVIDIA Hopper GPU's `__shfl*_sync`, `__ballot_sync`,
//! `__any_sync`, `__all_sync`, `__match_*_sync` and `__reduce_*_sync`
//! returned for random masks, widths, values and sources (recorded by
//! tests/data/warp_truth.cu, whose header describes the format). Every case
//! runs here on a fresh 32-lane `WarpBarrier`, the lanes outside the mask
//! skipping the call as they did on the GPU, and every result CUDA defines
//! must be the hardware's, lane for lane. Where CUDA leaves a shuffle's
//! result undefined (its source lane is outside the mask) the crate returns
//! the caller's own value, which this test checks instead.

mod common;

use common::watchdog;
use syncthreads::WarpBarrier;

const LANES: usize = 32;

/// One recorded case: the line's fields, parsed.
struct Case {
    line: usize,
    op: String,
    width: usize,
    mask: u64,
    input: Vec<u32>,
    arg: Vec<usize>,
    /// The hardware's result per lane, as printed (`None` outside the mask).
    out: Vec<Option<String>>,
}

fn parse(text: &str) -> Vec<Case> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 6, "line {}: six fields", i + 1);
            let list = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
            let input = list(f[3]).iter().map(|v| v.parse().unwrap()).collect();
            let arg = list(f[4]).iter().map(|v| v.parse().unwrap()).collect();
            let out = list(f[5])
                .into_iter()
                .map(|v| (v != "-").then_some(v))
                .collect();
            Case {
                line: i + 1,
                op: f[0].to_owned(),
                width: f[1].parse().unwrap(),
                mask: u64::from_str_radix(f[2], 16).unwrap(),
                input,
                arg,
                out,
            }
        })
        .collect()
}

/// What lane `lane` of the case returns through the crate, printed as the
/// recording prints it.
fn run_lane(warp: &WarpBarrier, c: &Case, lane: usize) -> String {
    let (mask, v, a, w) = (c.mask, c.input[lane], c.arg[lane], c.width);
    let i = v as i32;
    let pred = v & 1 == 1;
    match c.op.as_str() {
        "shfl" => warp.shfl(lane, mask, v, a, w).to_string(),
        "up" => warp.shfl_up(lane, mask, v, a, w).to_string(),
        "down" => warp.shfl_down(lane, mask, v, a, w).to_string(),
        "xor" => warp.shfl_xor(lane, mask, v, a, w).to_string(),
        "ballot" => format!("{:x}", warp.ballot(lane, mask, pred)),
        "any" => u32::from(warp.any(lane, mask, pred)).to_string(),
        "all" => u32::from(warp.all(lane, mask, pred)).to_string(),
        "match_any" => format!("{:x}", warp.match_any(lane, mask, v)),
        "match_all" => match warp.match_all(lane, mask, v) {
            Some(m) => format!("{m:x}/1"),
            None => "0/0".to_owned(),
        },
        "add_u" => warp.reduce_add(lane, mask, v).to_string(),
        "min_u" => warp.reduce_min(lane, mask, v).to_string(),
        "max_u" => warp.reduce_max(lane, mask, v).to_string(),
        "add_i" => warp.reduce_add(lane, mask, i).to_string(),
        "min_i" => warp.reduce_min(lane, mask, i).to_string(),
        "max_i" => warp.reduce_max(lane, mask, i).to_string(),
        "and" => warp.reduce_and(lane, mask, v).to_string(),
        "or" => warp.reduce_or(lane, mask, v).to_string(),
        "xor_r" => warp.reduce_xor(lane, mask, v).to_string(),
        op => panic!("line {}: unknown op {op}", c.line),
    }
}

/// The lane a shuffle reads, or `None` where it returns the caller's own
/// value because the source leaves the caller's section (the rules of the
/// `WarpBarrier` docs; deltas and lane masks use their low five bits on a
/// group of 32 lanes).
fn shuffle_source(op: &str, lane: usize, arg: usize, width: usize) -> Option<usize> {
    let start = lane - lane % width;
    match op {
        "shfl" => Some(start + arg % width),
        "up" => lane.checked_sub(arg % LANES).filter(|&s| s >= start),
        "down" => Some(lane + arg % LANES).filter(|&s| s < start + width),
        "xor" => Some(lane ^ (arg % LANES)).filter(|&s| s < start + width),
        _ => unreachable!(),
    }
}

#[test]
fn every_collective_agrees_with_the_recorded_gpu_lane_for_lane() {
    let cases = parse(include_str!("data/warp_truth.txt"));
    assert!(cases.len() > 300, "the recording has {} cases", cases.len());
    // A fresh warp per case: lanes outside a mask skip the call, so one
    // warp for all cases would break the rule that the lanes of a mask have
    // synced equally often before.
    let warps: Vec<WarpBarrier> = cases.iter().map(|_| WarpBarrier::new(LANES)).collect();
    let results: Vec<Vec<Option<String>>> = watchdog(
        120,
        || "warp_truth: a collective did not return".to_owned(),
        || {
            std::thread::scope(|s| {
                let lanes: Vec<_> = (0..LANES)
                    .map(|lane| {
                        let (cases, warps) = (&cases, &warps);
                        s.spawn(move || {
                            cases
                                .iter()
                                .zip(warps)
                                .map(|(c, warp)| {
                                    (c.mask >> lane & 1 == 1).then(|| run_lane(warp, c, lane))
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                lanes.into_iter().map(|h| h.join().unwrap()).collect()
            })
        },
    );

    let (mut compared, mut undefined, mut own_value) = (0, 0, 0);
    for (k, c) in cases.iter().enumerate() {
        for (lane, lane_results) in results.iter().enumerate() {
            let ours = &lane_results[k];
            let theirs = &c.out[lane];
            assert_eq!(
                ours.is_some(),
                theirs.is_some(),
                "line {}: lane {lane} takes part on one side only",
                c.line
            );
            let (Some(ours), Some(theirs)) = (ours, theirs) else {
                continue;
            };
            if matches!(c.op.as_str(), "shfl" | "up" | "down" | "xor") {
                match shuffle_source(&c.op, lane, c.arg[lane], c.width) {
                    Some(src) if c.mask >> src & 1 == 0 => {
                        // Undefined in CUDA: the crate returns the own value.
                        assert_eq!(
                            ours,
                            &c.input[lane].to_string(),
                            "line {}: {} lane {lane} reads lane {src}, outside mask {:x}",
                            c.line,
                            c.op,
                            c.mask
                        );
                        undefined += 1;
                        continue;
                    }
                    None => own_value += 1,
                    Some(_) => {}
                }
            }
            assert_eq!(
                ours, theirs,
                "line {}: {} width {} mask {:x} lane {lane} (value {}, arg {}): ours / the GPU's",
                c.line, c.op, c.width, c.mask, c.input[lane], c.arg[lane]
            );
            compared += 1;
        }
    }
    // The recording covers each kind of case; a regenerated file that lost
    // one would make this test weaker without saying so.
    assert!(compared > 3000, "{compared} lane results compared");
    assert!(undefined > 20, "{undefined} undefined shuffle reads");
    assert!(own_value > 20, "{own_value} shuffles off the section");
}
