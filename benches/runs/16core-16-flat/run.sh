#!/usr/bin/env bash
# One call on the 16-core machine, from the checkout's root with device/
# carried, after a flat seat's arrival became one RMW: the stage clock,
# device-run.sh's part h (every Team shape, launch+Block and the table-less
# builds beside the C++ peers), the rank table's cost at 2 threads in 31
# rounds, this build against the base build (device/bt_base) at 32 and 64
# threads, beside foreign processes and in fresh processes, and the cost of
# the diagnostics feature. Everything lands in one archive, $OUT/run.tgz.
set -u
OUT=${OUT:-device/out}
O=$(mktemp -d)
mkdir -p "$OUT"
trap 'tar czf "$OUT/run.tgz" -C "$O" .' EXIT
M=device/bench_table
B=device/bt_base
t0=$SECONDS
lg() { echo "[$((SECONDS - t0)) s] $*" >>"$O/progress.log"; }
for pin in "" --pin; do
    lg "stages $pin"
    $M --threads 2,4,8,16 --sections stages --rounds 5 $pin >"$O/stages$pin.md" 2>>"$O/err"
done
lg "part h"
OUT=$O PARTS=h DEADLINE_S=240 bash benches/device-run.sh 2>>"$O/err"
for pin in "" --pin; do
    lg "two seats $pin"
    $M --threads 2 --only mbarrier,team,team-no-table,block,block-no-table --sections episode \
        --rounds 31 --budget-ms 50 $pin >"$O/two$pin.md" 2>>"$O/err"
done
K=team,block
for pass in 1 2; do
    for bin in $M $B; do
        tag=$(basename "$bin")-$pass
        lg "regressions $tag"
        $bin --threads 32,64 --only $K --sections episode --rounds 10 >"$O/over-$tag.md" 2>>"$O/err"
        $bin --threads 16 --only $K --sections episode --rounds 10 --hogs 2 --hog-procs \
            >"$O/busy-$tag.md" 2>>"$O/err"
        $bin --threads 16 --only $K --sections episode --rounds 10 --hogs 2 --hog-procs \
            --hog-pattern 2,1 >"$O/bursty-$tag.md" 2>>"$O/err"
    done
done
for bin in $M $B; do
    tag=$(basename "$bin")
    lg "fresh $tag"
    $bin --threads 64 --only team --fresh 10 --episodes 20000 --rounds 1 --cap-ms 2000 \
        >"$O/fresh64-$tag.md" 2>>"$O/err"
done
lg "diagnostics"
$M --threads 2,16 --only team,block --fresh 5 --versus device/bench_table_diagnostics \
    >"$O/diagnostics.md" 2>>"$O/err"
lg "done"
