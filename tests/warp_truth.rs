//! The warp collectives against the hardware: replays the calls recorded
//! on a GPU by `benches/peers/warp_truth.cu` (`tests/data/warp_truth.txt`,
//! format in that file) on a `WarpBarrier` of 32 lanes, lane by lane. Lanes
//! whose result CUDA leaves undefined (a shuffle whose source lane is not in
//! the mask: the hardware returns stale registers, we the own value) are
//! skipped. Without a recorded file the replay says so and checks only the
//! parser on a line of its own.

mod common;
#[path = "warp_model/mod.rs"]
mod warp_model;

use common::watchdog;
use syncthreads::WarpBarrier;
use warp_model::{ptx_source, Shfl};

/// One recorded call: the op's name, width, argument, mask, input seed, and
/// each lane's result (`None` outside the mask).
struct Recorded {
    op: String,
    width: usize,
    arg: usize,
    mask: u64,
    seed: u64,
    results: Vec<Option<u32>>,
}

fn parse(line: &str) -> Recorded {
    let (head, tail) = line
        .split_once(':')
        .expect("`OP WIDTH ARG MASK SEED: R0 .. R31`");
    let head: Vec<&str> = head.split_whitespace().collect();
    let hex = |s: &str| {
        u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("not hex: {s:?} in {line:?}"))
    };
    let results: Vec<Option<u32>> = tail
        .split_whitespace()
        .map(|r| (r != "-").then(|| hex(r) as u32))
        .collect();
    assert_eq!((head.len(), results.len()), (5, 32), "{line:?}");
    Recorded {
        op: head[0].to_owned(),
        width: head[1].parse().expect("width"),
        arg: head[2].parse().expect("arg"),
        mask: hex(head[3]),
        seed: hex(head[4]),
        results,
    }
}

/// Lane `lane`'s input (as the CUDA program makes it).
fn input(seed: u64, lane: usize) -> u32 {
    let mut x = (seed ^ lane as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as u32
}

/// Runs `call` as lane `lane` (in its mask); `None` where CUDA's result
/// is undefined.
fn replay(warp: &WarpBarrier, lane: usize, call: &Recorded) -> Option<u32> {
    let (mask, v) = (call.mask, input(call.seed, lane));
    let (w, a) = (call.width, call.arg);
    let shuffle = |shfl: Shfl, got: u32| {
        let src = ptx_source(lane, 32, w, shfl);
        (src == lane || mask & (1 << src) != 0).then_some(got)
    };
    Some(match call.op.as_str() {
        "shfl" => return shuffle(Shfl::Idx(a), warp.shfl(lane, mask, v, a, w)),
        "shfl_up" => return shuffle(Shfl::Up(a), warp.shfl_up(lane, mask, v, a, w)),
        "shfl_down" => return shuffle(Shfl::Down(a), warp.shfl_down(lane, mask, v, a, w)),
        "shfl_xor" => return shuffle(Shfl::Xor(a), warp.shfl_xor(lane, mask, v, a, w)),
        "ballot" => warp.ballot(lane, mask, v & 1 == 1) as u32,
        "any" => warp.any(lane, mask, v & 1 == 1) as u32,
        "all" => warp.all(lane, mask, v & 1 == 1) as u32,
        "match_any" => warp.match_any(lane, mask, v % 4) as u32,
        "match_all" => warp.match_all(lane, mask, v % 2).map_or(0, |m| m as u32),
        "reduce_add" => warp.reduce_add(lane, mask, v),
        "reduce_min_u" => warp.reduce_min(lane, mask, v),
        "reduce_max_u" => warp.reduce_max(lane, mask, v),
        "reduce_min_i" => warp.reduce_min(lane, mask, v as i32) as u32,
        "reduce_max_i" => warp.reduce_max(lane, mask, v as i32) as u32,
        "reduce_and" => warp.reduce_and(lane, mask, v),
        "reduce_or" => warp.reduce_or(lane, mask, v),
        "reduce_xor" => warp.reduce_xor(lane, mask, v),
        other => panic!("unknown op {other:?}"),
    })
}

/// Replays `calls` on 32 lanes (lanes outside a call's mask sync among
/// themselves, so every lane syncs once per call); returns how many lane
/// results were compared.
fn replay_all(calls: &[Recorded]) -> usize {
    let warp = WarpBarrier::new(32);
    let compared = std::sync::atomic::AtomicUsize::new(0);
    watchdog(
        120,
        || format!("{warp:?}"),
        || {
            std::thread::scope(|s| {
                for lane in 0..32 {
                    let (warp, compared) = (&warp, &compared);
                    s.spawn(move || {
                        for (i, call) in calls.iter().enumerate() {
                            if call.mask & (1 << lane) == 0 {
                                warp.sync(lane, 0xffff_ffff & !call.mask);
                                continue;
                            }
                            if let Some(got) = replay(warp, lane, call) {
                                let want =
                                    call.results[lane].expect("a lane of the mask has a result");
                                assert_eq!(
                                    got, want,
                                    "call {i} ({} width {} arg {} mask {:#x}), lane {lane}",
                                    call.op, call.width, call.arg, call.mask
                                );
                                compared.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    });
                }
            });
        },
    );
    compared.into_inner()
}

#[test]
fn the_recorded_hardware_results_match_lane_by_lane() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/warp_truth.txt");
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!(
            "warp_truth: no {path} (record it with benches/peers/warp_truth.cu): nothing replayed"
        );
        return;
    };
    let calls: Vec<Recorded> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(parse)
        .collect();
    let compared = replay_all(&calls);
    assert!(
        compared > calls.len(),
        "only {compared} lane results compared"
    );
}

#[test]
fn the_parser_reads_a_line_of_the_format() {
    // Not hardware output: a line of the format, with the values our
    // model gives (SPEC: a shfl_up by 34 on 32 lanes is one by 2).
    let seed = 0x45;
    let mut line = format!("shfl_up 32 34 ffffffff {seed:x}:");
    for lane in 0..32 {
        let src = if lane >= 2 { lane - 2 } else { lane };
        line.push_str(&format!(" {:x}", input(seed, src)));
    }
    let call = parse(&line);
    assert_eq!((call.width, call.arg, call.mask), (32, 34, 0xffff_ffff));
    assert_eq!(replay_all(&[call]), 32);
}
