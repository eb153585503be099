#!/usr/bin/env bash
# The final build of this change, one call on the 16-core machine, from the
# checkout's root with device/ carried: the README's table
# (16core-17-readme/run.sh), two seats in 31 interleaved rounds, and
# device-run.sh's part h (skipped with PART_H=0). One archive back:
# $OUT/run.tgz.
set -u
OUT=${OUT:-device/out}
O=$(mktemp -d)
mkdir -p "$OUT"
trap 'tar czf "$OUT/run.tgz" -C "$O" .' EXIT
OUT=$O bash benches/runs/16core-17-readme/run.sh
for pin in "" --pin; do
    device/bench_table --threads 2 --only mbarrier,team,team-no-table,block,block-no-table --sections episode \
        --rounds 31 --budget-ms 50 $pin >"$O/two$pin.md" 2>/dev/null
done
[ "${PART_H:-1}" = 0 ] || OUT=$O PARTS=h DEADLINE_S=200 bash benches/device-run.sh 2>"$O/h.log"
