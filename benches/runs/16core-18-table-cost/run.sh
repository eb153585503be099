#!/usr/bin/env bash
# The rank table's cost in long paired runs, one call on the 16-core
# machine, from the checkout's root with device/ carried: 61 interleaved
# rounds of 30 ms of Team and launch+Block with and without the table, at
# 2-16 threads, unpinned and pinned; a capacity-64 team beside Team::new(16)
# in 61 rounds. One archive back: $OUT/run.tgz.
set -u
OUT=${OUT:-device/out}
O=$(mktemp -d)
mkdir -p "$OUT"
trap 'tar czf "$OUT/run.tgz" -C "$O" .' EXIT
for pin in "" --pin; do
    device/bench_table --threads 2,4,8,16 --only team,team-no-table,block,block-no-table \
        --sections episode --rounds 61 --budget-ms 30 $pin >"$O/table-cost$pin.md" 2>/dev/null
    device/bench_table --threads 16 --only team,team-cap64 --sections episode --rounds 61 \
        --budget-ms 30 $pin >"$O/cap64$pin.md" 2>/dev/null
done
