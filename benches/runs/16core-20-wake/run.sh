#!/usr/bin/env bash
# One call on the 16-core machine, from the checkout's root with device/
# carried: the README's table from the build of main (device/bench_table),
# the stage clock and two seats in 31 rounds from the same build, then the
# release-line prototype (device/bt_wake: `team-wake`, one release line per
# leaf; `team-wake1`, one per seat) beside the Team and the dissemination
# barriers in three interleaved passes, pinned and unpinned, and
# oversubscribed. One archive back: $OUT/run.tgz.
#
# device/bench_table: `bash benches/device-build.sh` at f25b409.
# device/bt_wake: the same bench target built from f25b409 with
# release-lines.patch applied (`git apply`, then the device-build.sh cargo
# line), the prototype measured here and not kept: the seat whose arrival
# completed the phase stores the phase into every release line after the
# word's RMW; a waiter of `arrive_and_wait` polls its line for up to the
# spin budget, then waits on the word as before.
set -u
OUT=${OUT:-device/out}
O=$(mktemp -d)
mkdir -p "$OUT"
trap 'tar czf "$OUT/run.tgz" -C "$O" .' EXIT
{ nproc; uptime; cat device/BUILT_FROM; } >"$O/machine.md" 2>&1
OUT=$O bash benches/runs/16core-17-readme/run.sh
for pin in "" --pin; do
    device/bench_table --threads 2,4,8,16 --sections stages --rounds 5 $pin >"$O/stages$pin.md" 2>/dev/null
    device/bench_table --threads 2 --only mbarrier,team,team-no-table,block,block-no-table --sections episode \
        --rounds 31 --budget-ms 50 $pin >"$O/two$pin.md" 2>/dev/null
done
for pass in 1 2 3; do
    for pin in "" --pin; do
        device/bt_wake --threads 4,8,16 --only team,team-wake,team-wake1,block,dissemination --sections episode \
            --rounds 5 --budget-ms 60 $pin >"$O/wake-$pass$pin.md" 2>/dev/null
        for t in 4 8 16; do
            device/anchors --threads $t --episodes 20000 --reps 9 --only spin_dissemination $pin 2>/dev/null >>"$O/wake-$pass$pin.md"
        done
    done
done
device/bt_wake --threads 32,64 --only team,team-wake,team-wake1 --sections episode --rounds 7 --budget-ms 100 \
    >"$O/wake-over.md" 2>/dev/null
uptime >>"$O/machine.md"
