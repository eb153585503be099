#!/bin/bash
# Release 0.2, final commit: the README's table, one call.
B=./device/bench_table
$B --threads 2,4,8,16,32,64 --only mbarrier,team,block,std,hurdles,dissemination --sections episode --rounds 10 --budget-ms 100 2>/dev/null
echo '## C++ peers (anchors), same call'
for t in 2 4 8 16; do for p in spin_dissemination omp_barrier std_barrier; do ./device/anchors --threads $t --episodes 20000 --reps 9 --only $p 2>/dev/null; done; done
for t in 32 64; do for p in omp_barrier std_barrier; do ./device/anchors --threads $t --episodes 20000 --reps 9 --only $p --budget-ms 1500 2>/dev/null; done; done
