#!/usr/bin/env bash
# One call on the 16-core machine, from the checkout's root with device/
# carried: main's build (device/bench_table, `bash benches/device-build.sh`
# at f25b409) against the base build (device/bt_base: examples/bench_table.rs
# of e10cf26, `cargo build --release --example bench_table --features bench`
# with the static RUSTFLAGS of device-build.sh), in fresh processes of 64
# threads interleaved four at a time, and at 32 and 64 threads in rounds;
# then the diagnostics feature's cost at 2 and 16 threads, three times. One
# archive back: $OUT/run.tgz.
set -u
OUT=${OUT:-device/out}
O=$(mktemp -d)
mkdir -p "$OUT"
trap 'tar czf "$OUT/run.tgz" -C "$O" .' EXIT
M=device/bench_table
B=device/bt_base
{ nproc; uptime; cat device/BUILT_FROM; } >"$O/machine.md" 2>&1
for i in 1 2 3 4 5; do
    for bin in $M $B; do
        $bin --threads 64 --only team --fresh 4 --episodes 20000 --rounds 1 --cap-ms 2000 \
            >"$O/fresh64-$(basename $bin)-$i.md" 2>/dev/null
    done
done
for pass in 1 2; do
    for bin in $M $B; do
        $bin --threads 32,64 --only team,block --sections episode --rounds 10 >"$O/over-$(basename $bin)-$pass.md" 2>/dev/null
    done
done
for pass in 1 2 3; do
    $M --threads 2,16 --only team,block --fresh 5 --versus device/bench_table_diagnostics \
        >"$O/diagnostics-$pass.md" 2>/dev/null
done
uptime >>"$O/machine.md"
