use std::hint::black_box;
fn main() {
    let mode: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let t: usize = std::env::args().nth(2).map_or(1, |s| s.parse().unwrap());
    for _ in 0..20000 {
        match mode {
            0 => syncthreads::bench_hooks::bench_pool_round_trip(t),
            _ => { black_box(syncthreads::launch(t, |_| ())); }
        }
    }
}
