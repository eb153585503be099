use std::hint::black_box;
use std::time::Instant;
fn main() {
    let t: usize = std::env::args().nth(1).map_or(1, |s| s.parse().unwrap());
    for _ in 0..3 {
        for mode in 0..3 {
            let n = 200000 / t;
            let s = Instant::now();
            for _ in 0..n {
                match mode {
                    0 => syncthreads::bench_hooks::bench_pool_round_trip(t),
                    1 => { black_box(syncthreads::launch(t, |_| ())); }
                    _ => { black_box(syncthreads::BlockBarrier::new(t)); }
                }
            }
            print!("mode{mode} {:.0} ns  ", s.elapsed().as_nanos() as f64 / n as f64);
        }
        println!();
    }
}
