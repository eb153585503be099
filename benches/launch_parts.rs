//! Experiment: what a launch round trip is made of.
use std::hint::black_box;
use std::time::Instant;
use syncthreads::launch;

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn measure(mut op: impl FnMut()) -> (f64, f64, f64) {
    let n = 2000;
    for _ in 0..200 {
        op();
    }
    let mut v = Vec::new();
    for _ in 0..11 {
        let s = Instant::now();
        for _ in 0..n {
            op();
        }
        v.push(s.elapsed().as_nanos() as f64 / n as f64);
    }
    median(v)
}

fn omp(path: &str, t: usize, mode: usize) -> f64 {
    let out = std::process::Command::new(path)
        .args([t.to_string(), "2000".into(), mode.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let omp_path = args
        .iter()
        .position(|a| a == "--omp")
        .map(|i| args[i + 1].clone());
    let passes: usize = args
        .iter()
        .position(|a| a == "--passes")
        .map_or(3, |i| args[i + 1].parse().unwrap());
    for pass in 1..=passes {
        println!("PASS {pass}");
        for t in [2usize, 4, 8, 16] {
            let rows: Vec<(&str, (f64, f64, f64))> = vec![
                (
                    "raw",
                    measure(|| syncthreads::bench_hooks::bench_pool_round_trip(t)),
                ),
                (
                    "empty",
                    measure(|| {
                        black_box(launch(t, |_| ()));
                    }),
                ),
                (
                    "sync1",
                    measure(|| {
                        black_box(launch(t, |b| b.sync()));
                    }),
                ),
                (
                    "sync2",
                    measure(|| {
                        black_box(launch(t, |b| {
                            b.sync();
                            b.sync()
                        }));
                    }),
                ),
            ];
            for (name, (m, lo, hi)) in rows {
                println!("T={t} {name} {:.0} ({:.0}-{:.0})", m, lo, hi);
            }
            if let Some(p) = &omp_path {
                for mode in 0..3 {
                    println!("T={t} omp{mode} {:.0}", omp(p, t, mode));
                }
            }
        }
    }
}
