#!/usr/bin/env bash
# Ordering mutants: do the loom models see every non-Relaxed atomic ordering
# in src/? In a scratch copy of the crate, weaken one ordering at a time
#   Acquire -> Relaxed, Release -> Relaxed,
#   AcqRel  -> Acquire and AcqRel -> Release,
#   SeqCst  -> AcqRel (an RMW), -> Acquire (a load or a CAS failure), -> Release (a store),
# run the loom models against it, one test at a time, and stop at the first
# one that fails. Prints a markdown table: where, original, mutant, caught by
# which model (file::test) in how many seconds, or SURVIVED.
#
# Not part of CI (a full run takes the better part of an hour on 2 cores);
# run by hand, niced, after orderings change:
#   nice bash loom-tests/mutants.sh                         # every mutant
#   bash loom-tests/mutants.sh --file src/barrier.rs        # one file
#   bash loom-tests/mutants.sh --file src/barrier.rs --lines 306,447
#   bash loom-tests/mutants.sh --list                       # the mutants only
# Options:
#   --file PATH      only mutants in PATH (relative to the crate root)
#   --lines L1,L2    only these lines (with --file, or in every file)
#   --models "a b"   model files to run, in this order (default: all, cheap first)
#   --timeout SECS   limit per model test (default 300); a test that hits it
#                    counts as not catching the mutant and is named in the row
#   --baseline       first run every model on the unmutated copy (must pass)
#   --list           print the mutants and exit
# Environment: MUTANTS_TARGET_DIR (default loom-tests/target/mutants), shared
# by every mutant and every run, so each rebuild is incremental;
# LOOM_MAX_PREEMPTIONS (default 3, as .ci/loom).
#
# Rust's rules: a compare_exchange failure ordering is never Release or
# AcqRel, so those mutants are not made; a mutant that does not build is
# reported as "does not compile" and skipped.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE_FILTER=""
LINES=""
MODELS=""
TIMEOUT=300
BASELINE=0
LIST_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
        --file) FILE_FILTER="$2"; shift 2 ;;
        --lines) LINES="$2"; shift 2 ;;
        --models) MODELS="$2"; shift 2 ;;
        --timeout) TIMEOUT="$2"; shift 2 ;;
        --baseline) BASELINE=1; shift ;;
        --list) LIST_ONLY=1; shift ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "mutants.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done

# ---- the mutants: file<TAB>line<TAB>occurrence<TAB>from<TAB>to ----------
# One per non-Relaxed `Ordering::` occurrence and weakening; the occurrence
# is counted among the non-Relaxed orderings of the line, so a line with two
# (a compare_exchange's success and failure) gives a mutant for each.
list_mutants() {
    (cd "$ROOT" && find src -name '*.rs' | sort) | while read -r file; do
        if [ -n "$FILE_FILTER" ] && [ "$file" != "${FILE_FILTER#./}" ]; then
            continue
        fi
        perl -ne '
            BEGIN { %want = map { $_ => 1 } grep { length } split /,/, $ENV{LINES} // ""; }
            next if %want && !$want{$.};
            next if m{^\s*//};                     # comments and docs
            my $code = $_; $code =~ s{//.*$}{};    # a trailing comment
            my $k = 0;
            while ($code =~ /Ordering::(\w+)/g) {
                my ($o, $at) = ($1, pos($code));
                next if $o eq "Relaxed";
                $k++;
                # The call this ordering is an argument of: the last
                # `.method(` before it, and how many orderings precede it there.
                my $before = substr($code, 0, $at);
                my ($method, $from) = ("", 0);
                while ($before =~ /\.(\w+)\(/g) { ($method, $from) = ($1, pos($before)) }
                my $nth = () = substr($before, $from) =~ /Ordering::/g;
                # A CAS takes (success, failure); fetch_update (set, fetch).
                my $failure = $method =~ /^(compare_exchange|fetch_update)/ && $nth == 2;
                my @to;
                if ($o eq "Acquire" || $o eq "Release") { @to = ("Relaxed") }
                elsif ($o eq "AcqRel") { @to = ("Acquire", "Release") }
                elsif ($o eq "SeqCst") {
                    @to = $failure || $method eq "load" ? ("Acquire")
                        : $method eq "store" ? ("Release")
                        : ("AcqRel");
                }
                print join("\t", $ARGV, $., $k, $o, $_), "\n" for @to;
            }
        ' "$ROOT/$file" | sed "s|^$ROOT/||"
    done
}
export LINES
MUTANTS="$(list_mutants)"
if [ -z "$MUTANTS" ]; then
    echo "mutants.sh: no non-Relaxed orderings match (file '$FILE_FILTER', lines '$LINES')" >&2
    exit 1
fi
if [ "$LIST_ONLY" = 1 ]; then
    printf '%s\n' "$MUTANTS" | awk -F'\t' '{ printf "%s:%s #%s  %s -> %s\n", $1, $2, $3, $4, $5 }'
    exit 0
fi

# ---- the scratch copy --------------------------------------------------------
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/mbarrier-mutants.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
tar -C "$ROOT" --exclude=./target --exclude=./loom-tests/target --exclude=./.git \
    --exclude=./device -cf - . | tar -C "$SCRATCH" -xf -
cp -r "$SCRATCH/src" "$SCRATCH/.pristine-src"

export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export CARGO_TARGET_DIR="${MUTANTS_TARGET_DIR:-$ROOT/loom-tests/target/mutants}"
cd "$SCRATCH/loom-tests"

log() { echo "mutants: $*" >&2; }

# Model files, cheap ones first so that most mutants die early; files not
# named here run last, in name order.
ORDER="queries join poison arrive_and_drop timeout completion tx split_arrive_wait park_wake parity leader warp block"
if [ -z "$MODELS" ]; then
    all="$(cd tests && ls -- *.rs | sed 's/\.rs$//')"
    for m in $ORDER; do
        if printf '%s\n' "$all" | grep -qx "$m"; then MODELS="$MODELS $m"; fi
    done
    for m in $all; do
        case " $ORDER " in *" $m "*) ;; *) MODELS="$MODELS $m" ;; esac
    done
fi

build() { cargo test --release --no-run -q >"$SCRATCH/build.log" 2>&1; }

log "building the unmutated copy (target dir $CARGO_TARGET_DIR)"
if ! build; then
    cat "$SCRATCH/build.log" >&2
    log "the unmutated copy does not build"
    exit 1
fi
# The tests of each model file, listed once.
declare -A TESTS
for m in $MODELS; do
    TESTS[$m]="$(cargo test --release -q --test "$m" -- --list --format=terse 2>/dev/null |
        sed -n 's/: test$//p')"
done

# Runs the models against the current copy. Sets CAUGHT ("file.rs::test")
# and SECS (that test's run time), or CAUGHT="" if every test passed;
# TIMEOUTS lists the tests that hit the limit.
run_models() {
    CAUGHT="" SECS="" TIMEOUTS=""
    for m in $MODELS; do
        for t in ${TESTS[$m]}; do
            local start end rc=0
            start=$(date +%s.%N)
            timeout "$TIMEOUT" cargo test --release -q --test "$m" -- --exact "$t" \
                --test-threads=1 >"$SCRATCH/test.log" 2>&1 || rc=$?
            end=$(date +%s.%N)
            local secs
            secs=$(echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }')
            if [ "$rc" = 124 ]; then
                TIMEOUTS="$TIMEOUTS $m.rs::$t"
                log "  $m.rs::$t timed out after ${TIMEOUT}s"
            elif [ "$rc" != 0 ]; then
                CAUGHT="$m.rs::$t" SECS="$secs"
                # What the model said, for the log (stderr), not the table.
                grep -E 'panicked at|Causality|deadlock|assertion|left:|right:' "$SCRATCH/test.log" |
                    head -6 | sed 's/^/mutants:     /' >&2 || true
                return
            fi
        done
    done
}

started=$SECONDS
commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ROOT" status --porcelain -- src loom-tests 2>/dev/null)" ]; then
    commit="$commit + uncommitted changes"
fi

if [ "$BASELINE" = 1 ]; then
    log "baseline: every model on the unmutated copy"
    run_models
    if [ -n "$CAUGHT" ]; then
        cat "$SCRATCH/test.log" >&2
        log "baseline failed in $CAUGHT: fix that first"
        exit 1
    fi
fi

row() {

    echo "$1"
}
echo "| where | ordering | mutant | caught by | time |"
echo "|---|---|---|---|---|"
total=$(printf '%s\n' "$MUTANTS" | wc -l)
n=0
survivors=0
while IFS=$'\t' read -r file line occ from to; do
    n=$((n + 1))
    log "[$n/$total] $file:$line #$occ $from -> $to"
    cp "$SCRATCH/.pristine-src/${file#src/}" "$SCRATCH/$file"
    K="$occ" L="$line" FROM="$from" TO="$to" perl -i -pe '
        if ($. == $ENV{L}) {
            my $k = 0;
            s{Ordering::(Acquire|Release|AcqRel|SeqCst)\b}{
                ++$k == $ENV{K} ? "Ordering::$ENV{TO}" : $&
            }ge;
        }' "$SCRATCH/$file"
    where="\`$file:$line\`"
    [ "$occ" != 1 ] && where="$where (#$occ)"
    if cmp -s "$SCRATCH/.pristine-src/${file#src/}" "$SCRATCH/$file"; then
        row "| $where | \`$from\` | \`$to\` | (mutant not applied: script bug) | |"
    elif ! build; then
        row "| $where | \`$from\` | \`$to\` | does not compile: skipped | |"
    else
        run_models
        extra=""
        [ -n "$TIMEOUTS" ] && extra=" (timed out:$TIMEOUTS)"
        if [ -n "$CAUGHT" ]; then
            row "| $where | \`$from\` | \`$to\` | \`$CAUGHT\`$extra | ${SECS} s |"
        else
            survivors=$((survivors + 1))
            row "| $where | \`$from\` | \`$to\` | **SURVIVED**$extra | |"
        fi
    fi
    cp "$SCRATCH/.pristine-src/${file#src/}" "$SCRATCH/$file"
done <<<"$MUTANTS"

elapsed=$((SECONDS - started))
echo
echo "$total mutants, $survivors survived; commit $commit, $(date -u +%Y-%m-%d), LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS, ${elapsed}s ($((elapsed / 60)) min $((elapsed % 60)) s)"
