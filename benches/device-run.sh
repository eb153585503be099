#!/usr/bin/env bash
# The benchmark run on a many-core machine in one invocation: the crate's
# bench_table and the C++ peers (../shared/anchors), interleaved (a deadline
# of DEADLINE_S seconds, default 480, skips whatever would start later). The
# machine needs no compilers: build the static binaries first, into device/
# (git-ignored), and copy that folder beside the checkout there:
#
#   bash benches/device-build.sh                # device/bench_table, device/anchors
#   bash benches/device-run.sh --quick          # a small version, to try it here
#   bash benches/device-run.sh --dry-run        # the commands only
#   OUT=results bash benches/device-run.sh      # the full run (on the many-core machine)
#
# Writes one markdown file per part to $OUT (default device/out):
#   machine.md            nproc, lscpu, kernel, the binaries' provenance, total time
#   a-latency.md          episode latency at T = 2,4,8,16: barrier (default and
#                         classic policy), team, launch+Block, std, hurdles,
#                         dissemination; the C++ peers spin_dissemination,
#                         omp_barrier, std_barrier at the same T; fuzzy, wake,
#                         pipeline and single-thread sections
#   b-oversubscribed.md   2x and 4x as many threads as cores; OpenMP and std::barrier there
#   c-foreign-load.md     16 threads beside 2 hogs (threads; processes; processes
#                         busy 2 ms / asleep 1 ms), the C++ peers beside 2 hog
#                         processes, and 2 threads on 2 CPUs beside 2 such processes
#   d-pinned.md           16 threads pinned one per CPU (and the pinned C++ peers)
#   e-fresh.md            10 fresh processes of 20 000 episodes: 16 pinned,
#                         16 unpinned, 64 unpinned, 2 threads on 2 CPUs
#   f-stats.md            wait-stage statistics of the slow modes (needs a
#                         bench_table built with --features bench)
#   h-small-teams.md      T = 2,4,8,16, unpinned and pinned, 3 interleaved passes:
#                         syncthreads, Team (default and other shapes), launch+Block,
#                         both without the per-rank table, beside spin_dissemination
#                         and omp_barrier; a capacity-64 Team beside Team::new(16)
#   progress.log          what ran when, and every stderr line
# PARTS="a h" runs only those parts (default: all of them); BT=PATH runs
# another build of bench_table (e.g. an older commit's, to compare).
# Kinds the binary lacks (team before the Team lands; classic and spin-only
# without --features bench) are left out of the --only lists, not failed.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: bash benches/device-run.sh [--quick] [--dry-run]"; }
QUICK=0
DRY=0
for a in "$@"; do
    case $a in
    --quick) QUICK=1 ;;
    --dry-run) DRY=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        usage >&2
        exit 2
        ;;
    esac
done

BT=${BT:-device/bench_table}
AN=device/anchors
for b in $BT $AN; do
    [[ -x $b ]] || {
        echo "device-run: no $b: run 'bash benches/device-build.sh' first (and carry device/)" >&2
        exit 1
    }
done
OUT=${OUT:-device/out}
mkdir -p "$OUT"
LOG=$OUT/progress.log
: >"$LOG"
DEADLINE=${DEADLINE_S:-480}
T0=$SECONDS
HAVE_TIMEOUT=0
command -v timeout >/dev/null && HAVE_TIMEOUT=1

if ((QUICK)); then
    A_T="2 4" B_T="8" C_T=2 D_T=2 E_T64=8 HOGS=1
    ROUNDS=2 BUDGET=10 FUZZY_ROUNDS=2 REPS=3 AEP=2000 ABUDGET=300
    FRESH=2 FEP=2000 CAP=1000 F_ROUNDS=2 H_PASSES=1 H_ROUNDS=2
else
    A_T="2 4 8 16" B_T="32 64" C_T=16 D_T=16 E_T64=64 HOGS=2
    ROUNDS=10 BUDGET=100 FUZZY_ROUNDS=5 REPS=9 AEP=20000 ABUDGET=1500
    FRESH=10 FEP=20000 CAP=2000 F_ROUNDS=5 H_PASSES=3 H_ROUNDS=3
fi
# The parts to run (PARTS="a h" runs those two), all by default.
PARTS=" ${PARTS:-a b c d e f g h} "
want() { [[ $PARTS == *" $1 "* ]]; }

KINDS=" $($BT --list-kinds | cut -f1 | tr '\n' ' ') "
has() { [[ $KINDS == *" $1 "* ]]; }
# The kinds of this binary among the arguments, comma-separated.
pick() {
    local out=() k
    for k in "$@"; do has "$k" && out+=("$k"); done
    local IFS=,
    echo "${out[*]}"
}
STATS=()
$BT --help | grep -q -- --stats && STATS=(--stats)

log() { printf '[%4d s] %s\n' $((SECONDS - T0)) "$*" | tee -a "$LOG" >&2; }

# step FILE MODE LIMIT_S CMD...: appends CMD and its output to $OUT/FILE.md.
# MODE md: stdout is markdown, stderr goes to the log; MODE text: stdout and
# stderr in a code block. A step that would start after the deadline is
# skipped; one that runs past LIMIT_S (or the deadline) is cut.
step() {
    local part=$1 file=$OUT/$1.md mode=$2 limit=$3
    shift 3
    printf '\n---\n\n```sh\n%s\n```\n\n' "$*" >>"$file"
    local left=$((DEADLINE - (SECONDS - T0)))
    if ((left < 10)); then
        echo "_skipped: the script's deadline of ${DEADLINE} s had passed_" >>"$file"
        log "skipped (deadline): $*"
        return
    fi
    ((limit > left)) && limit=$left
    log "$part: $*"
    ((DRY)) && return
    local start=$SECONDS rc
    local run=("$@")
    ((HAVE_TIMEOUT)) && run=(timeout -k 5 "$limit" "$@")
    if [[ $mode == md ]]; then
        "${run[@]}" >>"$file" 2>>"$LOG"
        rc=$?
    else
        {
            echo '```text'
            "${run[@]}" 2>&1 | tee -a "$LOG"
            rc=${PIPESTATUS[0]}
            echo '```'
        } >>"$file"
    fi
    ((rc != 0)) && echo "_exit status $rc (124: cut at ${limit} s)_" >>"$file"
    printf '\n_%d s_\n' $((SECONDS - start)) >>"$file"
}

anchor() { # anchor FILE THREADS PEER [--pin]
    local file=$1 t=$2 peer=$3
    shift 3
    step "$file" text 30 $AN --threads "$t" --episodes $AEP --reps $REPS --only "$peer" --budget-ms $ABUDGET "$@"
}

# The anchors' stdout lines of a part as one table.
anchor_table() {
    local file=$OUT/$1.md
    ((DRY)) && return
    {
        printf '\n---\n\n### C++ peers of this part (../shared/anchors, median ns per episode over the repetitions)\n\n'
        echo '| peer | threads | ns per episode |'
        echo '|---|---:|---:|'
        grep -E '^(spin_dissemination|spin_sense|omp_barrier[a-z_]*|std_barrier[a-z_]*|pthread_barrier) [0-9]+ [0-9.]+' "$file" |
            awk '{ printf "| %s | %s | %.0f |\n", $1, $2, $3 }'
    } >>"$file"
}

HOG_PIDS=()
hogs_start() { # hogs_start N BUSY_MS,SLEEP_MS
    local i
    for ((i = 0; i < $1; i++)); do
        $BT --be-hog "$2" &
        HOG_PIDS+=($!)
    done
    log "started ${#HOG_PIDS[@]} hog processes ($2): ${HOG_PIDS[*]}"
}
hogs_stop() {
    ((${#HOG_PIDS[@]})) || return 0
    kill "${HOG_PIDS[@]}" 2>/dev/null
    wait "${HOG_PIDS[@]}" 2>/dev/null
    HOG_PIDS=()
}
trap hogs_stop EXIT

header() { # header FILE TITLE TEXT
    printf '# %s\n\n%s\n' "$2" "$3" >"$OUT/$1.md"
}

# ---- machine ----------------------------------------------------------------
{
    echo "# The machine of this run"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- nproc: $(nproc)"
    echo "- kernel: $(uname -srm)"
    echo "- loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- settings: $( ((QUICK)) && echo quick || echo full), deadline ${DEADLINE} s"
    echo "- bench_table kinds:${KINDS% }; --stats: $( ((${#STATS[@]})) && echo yes || echo no)"
    echo
    echo '```text'
    cat device/BUILT_FROM 2>/dev/null || echo "(no device/BUILT_FROM)"
    echo '```'
    echo
    echo '```text'
    if command -v lscpu >/dev/null; then lscpu; else grep -m1 'model name' /proc/cpuinfo; fi
    echo '```'
} >"$OUT/machine.md"

# ---- (a) episode latency, threads <= cores --------------------------------------
if want a; then
header a-latency "Episode latency, threads <= cores" \
    "bench_table at each T, then the C++ peers at the same T; then the fuzzy, wake, pipeline and single-thread sections."
KA=$(pick barrier classic no-backoff team team-f2 team-f8 team-f16 team-flat block std hurdles dissemination)
for t in $A_T; do
    step a-latency md 120 $BT --threads "$t" --only "$KA" --sections episode --rounds $ROUNDS --budget-ms $BUDGET
    for peer in spin_dissemination omp_barrier std_barrier; do
        anchor a-latency "$t" $peer
    done
done
read -ra TS <<<"$A_T"
step a-latency md 60 $BT --threads "${TS[0]},${TS[-1]}" --sections fuzzy --rounds $FUZZY_ROUNDS --budget-ms $BUDGET
step a-latency md 60 $BT --sections wake,pipeline,single --rounds $FUZZY_ROUNDS --budget-ms $BUDGET
anchor_table a-latency
fi

# ---- (b) oversubscribed -------------------------------------------------------------
if want b; then
header b-oversubscribed "Oversubscribed: more threads than cores" ""
KB=$(pick barrier classic no-backoff team block std hurdles)
step b-oversubscribed md 120 $BT --threads "${B_T// /,}" --only "$KB" --sections episode --rounds $ROUNDS --budget-ms $BUDGET "${STATS[@]}"
for t in $B_T; do
    for peer in omp_barrier std_barrier; do
        anchor b-oversubscribed "$t" $peer
    done
done
anchor_table b-oversubscribed
fi

# ---- (c) foreign load ---------------------------------------------------------------
if want c; then
header c-foreign-load "Foreign load: participants beside busy non-participants" ""
KC=$(pick barrier classic no-backoff team block std hurdles dissemination)
LOAD=(--threads $C_T --only "$KC" --sections episode --rounds $ROUNDS --budget-ms $BUDGET --hogs $HOGS)
step c-foreign-load md 90 $BT "${LOAD[@]}" "${STATS[@]}"
step c-foreign-load md 90 $BT "${LOAD[@]}" --hog-procs "${STATS[@]}"
step c-foreign-load md 90 $BT "${LOAD[@]}" --hog-procs --hog-pattern 2,1 "${STATS[@]}"
printf '\n---\n\nThe C++ peers beside %s hog processes (`bench_table --be-hog 10,0`, busy all the time):\n' $HOGS >>"$OUT/c-foreign-load.md"
((DRY)) || hogs_start $HOGS 10,0
for peer in spin_dissemination omp_barrier std_barrier; do
    anchor c-foreign-load $C_T $peer
done
hogs_stop
step c-foreign-load md 60 $BT --cpus 2 --threads 2 --only "$(pick barrier classic no-backoff team std hurdles)" --sections episode \
    --rounds $ROUNDS --budget-ms $BUDGET --hogs 2 --hog-procs --hog-pattern 2,1 "${STATS[@]}"
anchor_table c-foreign-load
fi

# ---- (d) pinned ---------------------------------------------------------------------
if want d; then
header d-pinned "Pinned: participant i on CPU i" ""
KD=$(pick barrier classic no-backoff spin-only team block std hurdles dissemination)
step d-pinned md 90 $BT --threads $D_T --pin --only "$KD" --sections episode --rounds $ROUNDS --budget-ms $BUDGET "${STATS[@]}"
for peer in spin_dissemination omp_barrier; do
    anchor d-pinned $D_T $peer --pin
done
anchor_table d-pinned
fi

# ---- (e) fresh processes ------------------------------------------------------------
if want e; then
header e-fresh "Fresh processes: the same short measurement in $FRESH new processes" \
    "Each process: one measurement of $FEP episodes after a warm-up of a fifth of that (a round longer than $CAP ms is cut and marked *)."
FRESH_ARGS=(--fresh $FRESH --episodes $FEP --rounds 1 --cap-ms $CAP)
KE=$(pick barrier classic no-backoff team hurdles)
step e-fresh md 120 $BT --threads $D_T --pin --only "$KE" "${FRESH_ARGS[@]}" "${STATS[@]}"
step e-fresh md 120 $BT --threads $D_T --only "$KE" "${FRESH_ARGS[@]}" "${STATS[@]}"
step e-fresh md 150 $BT --threads $E_T64 --only "$(pick barrier classic no-backoff team)" "${FRESH_ARGS[@]}" "${STATS[@]}"
step e-fresh md 60 $BT --cpus 2 --threads 2 --only "$KE" "${FRESH_ARGS[@]}" "${STATS[@]}"
fi

# ---- (f) wait stages of the slow modes -----------------------------------------------
if want f; then
header f-stats "Wait stages of the slow modes (bench_table --stats)" ""
if ((${#STATS[@]})); then
    KF=$(pick barrier classic no-backoff spin-only team)
    F=(--only "$KF" --sections episode --rounds $F_ROUNDS --budget-ms $BUDGET --stats)
    step f-stats md 60 $BT --threads $C_T --hogs $HOGS --hog-procs "${F[@]}"
    step f-stats md 60 $BT --threads $C_T --hogs $HOGS --hog-procs --hog-pattern 2,1 "${F[@]}"
    step f-stats md 60 $BT --threads $D_T --pin "${F[@]}"
    step f-stats md 60 $BT --threads $E_T64 "${F[@]}"
    step f-stats md 60 $BT --cpus 2 --threads 2 --hogs 2 --hog-procs --hog-pattern 2,1 "${F[@]}"
else
    echo "_skipped: $BT was built without --features bench (no --stats)_" >>"$OUT/f-stats.md"
fi
fi

# ---- (g) the demo: split arrive/wait on a Barrier and on a Team's seats ------------------
if want g; then
if [[ -x device/heat ]]; then
    header g-heat "examples/heat: Barrier vs Team" ""
    for flags in "--threads 16" "--threads 16 --team" "--threads 16" "--threads 16 --team"; do
        step g-heat md 60 device/heat $flags --reps 3
    done
fi
fi

# ---- (h) small and mid-size teams against the peers, and the table's cost --------------
# Interleaved passes, unpinned and pinned, every kind and peer at each T in
# the same pass; then a capacity-64 team beside Team::new(16).
if want h; then
header h-small-teams "Small and mid-size teams: $H_PASSES interleaved passes, unpinned and pinned" \
    "Each pass: bench_table at T (medians of $H_ROUNDS rounds), then spin_dissemination and omp_barrier at T. Ratios: compare within a pass."
KH=$(pick syncthreads team team-flat team-f2 team-f8 block team-no-table block-no-table)
for ((pass = 1; pass <= H_PASSES; pass++)); do
    for pin in "" --pin; do
        for t in $A_T; do
            step h-small-teams md 60 $BT --threads "$t" --only "$KH" --sections episode --rounds $H_ROUNDS --budget-ms $BUDGET $pin
            for peer in spin_dissemination omp_barrier; do
                anchor h-small-teams "$t" $peer $pin
            done
        done
    done
done
if has team-cap64; then
    read -ra TS <<<"$A_T"
    for ((pass = 1; pass <= H_PASSES; pass++)); do
        step h-small-teams md 60 $BT --threads "${TS[-1]}" --only team,team-cap64 --sections episode --rounds $H_ROUNDS --budget-ms $BUDGET
    done
fi
anchor_table h-small-teams
fi

printf '\n- total: %d s\n' $((SECONDS - T0)) >>"$OUT/machine.md"
log "done in $((SECONDS - T0)) s; files in $OUT"
