#!/usr/bin/env bash
# Runs benchmark commands on a machine without compilers, in interleaved
# passes, and keeps every output. It builds nothing: build the static
# binaries first (bash benches/device-build.sh) and carry device/ there.
#
#   OUT=out PASSES=3 bash benches/device-run.sh 'CMD ARGS' ['CMD ARGS' ...]
#
# Each pass runs every command once; the order rotates from pass to pass,
# so that drift on the machine spreads over all of them. Writes to $OUT
# (default device/out): machine.md (the machine and the commands),
# cN-pP.md (command N's stdout in pass P) and progress.log (what ran when,
# and every stderr line). A command that fails is noted and the run goes on.
# Example (benches/RESULTS.md gives each section's command):
#
#   OUT=out bash benches/device-run.sh \
#       'device/bench_table --threads 2,4,8,16 --only barrier,team,block --sections episode --rounds 3' \
#       'device/anchors --threads 16 --episodes 20000 --reps 9 --only spin_dissemination'
set -uo pipefail

if (($# == 0)) || [[ $1 == -h || $1 == --help ]]; then
    sed -n '2,16p' "$0" | cut -c3-
    exit $((($# == 0) * 2))
fi
OUT=${OUT:-device/out}
PASSES=${PASSES:-1}
mkdir -p "$OUT"
LOG=$OUT/progress.log
: >"$LOG"
log() { printf '[%5d s] %s\n' "$SECONDS" "$*" | tee -a "$LOG" >&2; }

{
    echo "# Machine and commands"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); nproc $(nproc); $(uname -srm)"
    echo "- loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg); passes: $PASSES"
    [[ -f device/BUILT_FROM ]] && sed 's/^/- /' device/BUILT_FROM
    grep -m1 'model name' /proc/cpuinfo | sed 's/^/- /'
    echo
    for ((c = 1; c <= $#; c++)); do echo "- c$c: \`${!c}\`"; done
} >"$OUT/machine.md"

cmds=("$@")
n=${#cmds[@]}
for ((p = 1; p <= PASSES; p++)); do
    for ((k = 0; k < n; k++)); do
        c=$(((k + p - 1) % n))
        log "pass $p: c$((c + 1)): ${cmds[c]}"
        # Word splitting on purpose: each command is a binary and its arguments.
        # shellcheck disable=SC2086
        ${cmds[c]} >"$OUT/c$((c + 1))-p$p.md" 2>>"$LOG" ||
            log "c$((c + 1)) in pass $p exited with status $?"
    done
done
log "done"
