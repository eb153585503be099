#!/usr/bin/env bash
# One call on the 16-core machine, from the checkout's root with device/
# carried: a Team's episode stage by stage, the rank table's cost and a
# capacity-64 team in 15 rounds, this build against the base build
# (device/bt_base) at 32 and 64 threads, beside foreign processes and in
# fresh processes; then device-run.sh's part h (the peers). Everything lands
# in one archive, $OUT/run.tgz (the machine hands back few files).
set -u
OUT=${OUT:-device/out}
O=$(mktemp -d)
mkdir -p "$OUT"
trap 'tar czf "$OUT/run.tgz" -C "$O" .' EXIT
M=device/bench_table
B=device/bt_base
t0=$SECONDS
lg() { echo "[$((SECONDS - t0)) s] $*" >>"$O/progress.log"; }
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >"$O/clocksource" 2>&1
for pin in "" --pin; do
    lg "stages $pin"
    $M --threads 2,4,8,16 --sections stages --rounds 5 $pin >"$O/stages$pin.md" 2>>"$O/err"
done
for pin in "" --pin; do
    lg "table cost $pin"
    $M --threads 2,4,8,16 --only team,team-no-table,block,block-no-table --sections episode \
        --rounds 15 --budget-ms 60 $pin >"$O/table-cost$pin.md" 2>>"$O/err"
    lg "cap64 $pin"
    $M --threads 16 --only team,team-cap64 --sections episode --rounds 15 --budget-ms 60 $pin \
        >"$O/cap64$pin.md" 2>>"$O/err"
done
K=mbarrier,team,block,hurdles
for pass in 1 2; do
    for bin in $M $B; do
        tag=$(basename "$bin")-$pass
        lg "regressions $tag"
        $bin --threads 32,64 --only $K --sections episode --rounds 5 >"$O/over-$tag.md" 2>>"$O/err"
        $bin --threads 16 --only $K --sections episode --rounds 5 --hogs 2 --hog-procs \
            >"$O/busy-$tag.md" 2>>"$O/err"
        $bin --threads 16 --only $K --sections episode --rounds 5 --hogs 2 --hog-procs \
            --hog-pattern 2,1 >"$O/bursty-$tag.md" 2>>"$O/err"
    done
done
for bin in $M $B; do
    tag=$(basename "$bin")
    lg "fresh $tag"
    F=(--only mbarrier,team --fresh 10 --episodes 20000 --rounds 1 --cap-ms 2000)
    $bin --threads 16 --pin "${F[@]}" >"$O/fresh16-pinned-$tag.md" 2>>"$O/err"
    $bin --threads 16 "${F[@]}" >"$O/fresh16-$tag.md" 2>>"$O/err"
    $bin --threads 64 "${F[@]}" >"$O/fresh64-$tag.md" 2>>"$O/err"
done
lg "part h"
OUT=$O PARTS=h DEADLINE_S=240 bash benches/device-run.sh 2>>"$O/err"
lg "done"
