#!/bin/bash
# Release 0.2, the 250 ns spin floor: the policy parts of device-run.sh again.
B=./device/bench_table
E="--sections episode --rounds 10 --budget-ms 100"
echo '## a: idle'; $B --threads 2,8,16 --only mbarrier,classic,team,hurdles,dissemination $E 2>/dev/null | grep "^| [0-9]" | head -6
echo '## c: 2 busy hog processes'; $B --threads 16 --only mbarrier,classic,team,std,hurdles $E --hogs 2 --hog-procs 2>/dev/null | grep "^| 16 | 16" | head -2
echo '## c: 2 hog processes 2ms/1ms'; $B --threads 16 --only mbarrier,classic,team,std,hurdles $E --hogs 2 --hog-procs --hog-pattern 2,1 2>/dev/null | grep "^| 16 | 16" | head -2
echo '## c: 2 on 2 CPUs, hogs 2ms/1ms'; $B --cpus 2 --threads 2 --only mbarrier,classic,team,std,hurdles $E --hogs 2 --hog-procs --hog-pattern 2,1 2>/dev/null | grep "^| 2 | 2" | head -2
echo '## e: fresh'; for a in "--threads 16 --pin" "--threads 16" "--threads 64" "--cpus 2 --threads 2"; do $B $a --only mbarrier,classic,hurdles --fresh 10 --episodes 20000 --rounds 1 --cap-ms 2000 2>/dev/null | grep "^| [0-9]"; done
echo '## fuzzy'; $B --threads 2,16 --sections fuzzy --rounds 7 2>/dev/null | grep "^| 2 \|^| 16 "
