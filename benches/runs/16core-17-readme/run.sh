#!/usr/bin/env bash
# The README's table, one call on the 16-core machine, from the checkout's
# root with device/ carried: the crate's kinds beside std, hurdles and the
# spin dissemination barrier, then the C++ peers at the same thread counts.
# One file back: $OUT/readme.md.
set -u
OUT=${OUT:-device/out}
mkdir -p "$OUT"
R=$OUT/readme.md
device/bench_table --threads 2,4,8,16,32,64 --only mbarrier,team,block,std,hurdles,dissemination \
    --sections episode --rounds 10 --budget-ms 100 >"$R" 2>/dev/null
echo '## C++ peers (anchors), same call' >>"$R"
for t in 2 4 8 16; do
    for p in spin_dissemination omp_barrier std_barrier; do
        device/anchors --threads $t --episodes 20000 --reps 9 --only $p 2>/dev/null >>"$R"
    done
done
for t in 32 64; do
    for p in omp_barrier std_barrier; do
        device/anchors --threads $t --episodes 20000 --reps 9 --only $p --budget-ms 1500 2>/dev/null >>"$R"
    done
done
