//! Async I/O tasks feeding a compute pool through one barrier: the CUDA
//! copy-engine pattern (`complete_tx` while threads wait) with tokio tasks
//! as the copy engine.
//!
//! The example first writes `phases × chunks` files of pseudo-random bytes
//! to a fresh directory under the system's temp dir. Then, for every phase, a
//! coordinator task declares the phase's bytes with `arrive_tx`, spawns one
//! tokio task per chunk that reads its file (after a simulated device delay
//! of up to 200 µs, which tokio's millisecond timer rounds up, so the chunks
//! land out of order), stores the bytes into
//! the phase's half of a double buffer and reports them with
//! `complete_tx(bytes)`, and awaits the phase with `wait_async`. A pool of
//! plain threads blocks in `arrive_and_wait`; when it returns, every byte of
//! the phase has landed, and each thread checks its share of the chunks
//! against a checksum of what the files should hold. Any mismatch makes the
//! example exit with status 1.
//!
//! ```text
//! cargo run --release --example async_io -- [threads] [chunks] [phases]
//! ```

mod args;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syncthreads::Barrier;

/// Bytes per chunk (one file); a phase's chunks stay below `Barrier::MAX_TX`.
const CHUNK_BYTES: usize = 4096;
const CHUNK_WORDS: usize = CHUNK_BYTES / 8;

const CLI: args::Cli<3> = args::Cli {
    program: "async_io",
    counts: [
        args::count("threads", 4, 1..=64),
        args::count("chunks", 8, 1..=255),
        args::count("phases", 200, 1..=10_000),
    ],
    note: "chunks per phase, each a 4 KiB file; chunks * phases <= 16384 (64 MiB of files)",
};

/// splitmix64: the files' contents, recomputable by the checkers.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Word `w` of chunk `c` of phase `p`.
fn word(p: usize, c: usize, w: usize) -> u64 {
    mix(((p as u64) << 40) ^ ((c as u64) << 20) ^ w as u64)
}

/// The checksum of a chunk (a position-weighted sum, so swapped words show).
fn checksum(words: impl Iterator<Item = u64>) -> u64 {
    words.enumerate().fold(0u64, |acc, (i, w)| {
        acc.wrapping_add(w.wrapping_mul(2 * i as u64 + 1))
    })
}

fn chunk_path(dir: &Path, p: usize, c: usize) -> PathBuf {
    dir.join(format!("phase{p}-chunk{c}.bin"))
}

fn main() -> ExitCode {
    let [threads, chunks, phases] = CLI.parse();
    CLI.at_most(
        "chunks * phases",
        chunks * phases,
        16_384,
        "64 MiB of files",
    );
    let dir = std::env::temp_dir().join(format!("syncthreads-async-io-{}", std::process::id()));
    if let Err(e) = write_files(&dir, chunks, phases) {
        eprintln!(
            "async_io: cannot write the input files in {}: {e}",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    let start = Instant::now();
    let result = run(&dir, threads, chunks, phases);
    let elapsed = start.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(()) => {
            println!(
                "async_io: {} × {} of {CHUNK_BYTES} B read by tasks, checked by {}: all checksums match ({:.1} ms, {:.1} µs per phase)",
                args::counted(phases, "phase"),
                args::counted(chunks, "chunk"),
                args::counted(threads, "thread"),
                elapsed.as_secs_f64() * 1e3,
                elapsed.as_secs_f64() * 1e6 / phases as f64
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("async_io: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write_files(dir: &Path, chunks: usize, phases: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for p in 0..phases {
        for c in 0..chunks {
            let bytes: Vec<u8> = (0..CHUNK_WORDS)
                .flat_map(|w| word(p, c, w).to_le_bytes())
                .collect();
            std::fs::write(chunk_path(dir, p, c), bytes)?;
        }
    }
    Ok(())
}

fn run(dir: &Path, threads: usize, chunks: usize, phases: usize) -> Result<(), String> {
    let phase_bytes = (chunks * CHUNK_BYTES) as u32;
    assert!(phase_bytes <= Barrier::MAX_TX);
    // The pool and the coordinator task.
    let barrier = Arc::new(Barrier::new(threads + 1));
    // Two halves: phase p fills half p % 2 while the pool checks the other.
    let buffer: Arc<Vec<AtomicU64>> = Arc::new(
        (0..2 * chunks * CHUNK_WORDS)
            .map(|_| AtomicU64::new(0))
            .collect(),
    );
    let mismatches = AtomicUsize::new(0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;

    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, buffer, mismatches) = (&barrier, &buffer, &mismatches);
            s.spawn(move || {
                for p in 0..phases {
                    barrier.arrive_and_wait();
                    // Every byte of phase p has landed: check our chunks.
                    let half = (p % 2) * chunks * CHUNK_WORDS;
                    for c in (t..chunks).step_by(threads) {
                        let at = half + c * CHUNK_WORDS;
                        // Relaxed: the barrier's wait acquired the tasks' writes.
                        let got = checksum(
                            buffer[at..at + CHUNK_WORDS]
                                .iter()
                                .map(|w| w.load(Ordering::Relaxed)),
                        );
                        let want = checksum((0..CHUNK_WORDS).map(|w| word(p, c, w)));
                        if got != want {
                            eprintln!("async_io: phase {p} chunk {c}: checksum {got:#x}, expected {want:#x}");
                            mismatches.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
        runtime.block_on(coordinate(
            dir,
            &barrier,
            &buffer,
            chunks,
            phases,
            phase_bytes,
        ))
    })?;
    match mismatches.load(Ordering::Relaxed) {
        0 => Ok(()),
        n => Err(format!("{n} chunk checksums did not match")),
    }
}

/// The coordinator: per phase, declare the bytes, spawn the readers, await
/// the phase (the pool's arrivals and every reader's `complete_tx`).
async fn coordinate(
    dir: &Path,
    barrier: &Arc<Barrier>,
    buffer: &Arc<Vec<AtomicU64>>,
    chunks: usize,
    phases: usize,
    phase_bytes: u32,
) -> Result<(), String> {
    for p in 0..phases {
        // The previous phase has completed (awaited below), so the readers'
        // complete_tx can only count for this one.
        let token = barrier.arrive_tx(1, phase_bytes);
        let mut readers = Vec::with_capacity(chunks);
        for c in 0..chunks {
            let (barrier, buffer) = (barrier.clone(), buffer.clone());
            let path = chunk_path(dir, p, c);
            readers.push(tokio::spawn(async move {
                let read = read_chunk(&path, p, c).await;
                if let Ok(bytes) = &read {
                    let at = (p % 2) * chunks * CHUNK_WORDS + c * CHUNK_WORDS;
                    for (slot, w) in buffer[at..at + CHUNK_WORDS]
                        .iter()
                        .zip(bytes.chunks_exact(8))
                    {
                        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                        // Relaxed: complete_tx below releases it to the pool.
                        slot.store(w, Ordering::Relaxed);
                    }
                }
                // Reported even when the read failed, so the phase ends (and
                // the pool's checksum shows the missing chunk).
                barrier.complete_tx(CHUNK_BYTES as u32);
                read.map(drop)
            }));
        }
        barrier.wait_async(token).await;
        for reader in readers {
            reader.await.map_err(|e| format!("reader task: {e}"))??;
        }
    }
    Ok(())
}

/// Reads chunk `c` of phase `p` after a simulated device delay of up to
/// 200 µs, different for every chunk.
async fn read_chunk(path: &Path, p: usize, c: usize) -> Result<Vec<u8>, String> {
    let delay = mix(((p as u64) << 8) | c as u64) % 200;
    tokio::time::sleep(Duration::from_micros(delay)).await;
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() != CHUNK_BYTES {
        return Err(format!(
            "{}: {} bytes, expected {CHUNK_BYTES}",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes)
}
