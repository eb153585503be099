#!/usr/bin/env bash
# Ordering mutants: do the loom models see every non-Relaxed atomic ordering
# in src/? In a scratch copy of the crate, weaken one ordering at a time
#   Acquire -> Relaxed, Release -> Relaxed,
#   AcqRel  -> Acquire and AcqRel -> Release,
#   SeqCst  -> AcqRel (an RMW), -> Acquire (a load or a CAS failure), -> Release (a store),
# run the loom models against it, one test at a time, and stop at the first
# one that fails. Prints a markdown table: where, original, mutant, caught by
# which model (file::test) in how many seconds, or SURVIVED. A row names
# its site by file and function (and the call the ordering is an argument
# of), not by line, so that a table stays readable after the file changes.
#
# Not part of CI (a full run takes the better part of an hour on 2 cores);
# run by hand, niced, after orderings change:
#   nice bash loom-tests/mutants.sh                         # every mutant
#   bash loom-tests/mutants.sh --file src/barrier.rs        # one file
#   bash loom-tests/mutants.sh --file src/barrier.rs --lines 306,447
#   bash loom-tests/mutants.sh --list                       # the mutants only
# Options:
#   --file PATH      only mutants in PATH (relative to the crate root)
#   --skip P1,P2     no mutants in these files (say, src/diagnostics/slot.rs,
#                    whose models need `--features diagnostics`, which this
#                    script does not build)
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
#
# Code mutants (--code): the named one-line mistakes listed under
# code_mutants below, each a literal replacement that must match exactly
# once in its file, run against the models named beside it (a loom model
# file, or test:FILE for a test file of the main crate in a normal build,
# for code no model can run), in that order, stopping at the first failure:
#   nice bash loom-tests/mutants.sh --code                  # every code mutant
#   bash loom-tests/mutants.sh --code --only poison-wakes-nobody,wake-batch-ends-the-wake
#   bash loom-tests/mutants.sh --code --list
# --models overrides the models of every code mutant (to see which of them
# would have caught it). Normal-build tests use MUTANTS_PLAIN_TARGET_DIR
# (default: target/mutants-plain: a build of a mutated copy in the crate's own
# target dir would be taken up by the next build of the real tree).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FILE_FILTER=""
SKIP=""
LINES=""
MODELS=""
TIMEOUT=300
BASELINE=0
LIST_ONLY=0
CODE=0
ONLY=""
while [ $# -gt 0 ]; do
    case "$1" in
        --file) FILE_FILTER="$2"; shift 2 ;;
        --skip) SKIP=",$2,"; shift 2 ;;
        --lines) LINES="$2"; shift 2 ;;
        --models) MODELS="$2"; shift 2 ;;
        --timeout) TIMEOUT="$2"; shift 2 ;;
        --baseline) BASELINE=1; shift ;;
        --list) LIST_ONLY=1; shift ;;
        --code) CODE=1; shift ;;
        --only) ONLY="$2"; shift 2 ;;
        -h|--help) sed -n '2,47p' "$0"; exit 0 ;;
        *) echo "mutants.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done

# ---- the mutants: file<TAB>line<TAB>occurrence<TAB>from<TAB>to ----------
# One per non-Relaxed `Ordering::` occurrence and weakening; the occurrence
# is counted among the non-Relaxed orderings of the line, so a line with two
# (a compare_exchange's success and failure) gives a mutant for each.
list_mutants() {
    (cd "$ROOT" && find src -name '*.rs' | sort) | while read -r file; do
        case "$SKIP" in *",$file,"*) continue ;; esac
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
# ---- the code mutants: name<TAB>file<TAB>from<TAB>to<TAB>models ----------
# Each is a mistake of a kind the models must see (a wake that wakes
# nobody, a batch boundary, a counter left uncleared, a check skipped).
code_mutants() {
    cat <<'MUTANTS'
poison-wakes-nobody	src/engine.rs	wake(&self.state, prior);	let _ = prior;	poison park_wake
wake-batch-ends-the-wake	src/park/tasks.rs	more = true;	more = false;	async_batch async_register
panicking-waker-stops-the-wake	src/park/tasks.rs	if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| waker.wake())) {	if let Err(payload) = Ok::<(), Box<dyn Any + Send>>(waker.wake()) {	async_batch
block-seat-leave-does-not-clear	src/block/seat.rs	self.block.clear_two_ahead(self.seat.next_phase());	let _ = self.seat.next_phase();	block
block-leader-does-not-clear	src/block.rs	self.clear_two_ahead(k);	let _ = k;	block
block-clear-always-skipped	src/block.rs	if counter.load(Ordering::Relaxed) != 0 {	if false && counter.load(Ordering::Relaxed) != 0 {	block
poisoned-block-seat-clears	src/block/seat.rs	if self.block.team.is_poisoned() {	if false {	block
launch-panic-does-not-poison	src/launch.rs	poison();	let _ = poison;	test:launch
grid-panic-does-not-poison-the-grid	src/launch/grid_job.rs	self.grid.team.poison();	let _ = &self.grid;	test:grid
seat-double-arrival-accepted	src/engine/front.rs	if s.phase() != last {	if s.phase() != last || !s.is_completing() {	team
early-leave-not-folded	src/team.rs	let op = if sums.arrivals == sums.drops {	let op = if false {	team
rearm-blind-store	src/team/tree.rs	if prior.pending() > 1 {	if prior.pending() > 1 { return None; } if true { let (new, sums) = NodeWord(prior.0.wrapping_add(delta)).rearm(); self.word.store(new.0, Ordering::Relaxed); return Some(sums); } if false {	team_rearm
attach-revives-a-completed-round	src/team/tree/word.rs	if self.is_empty() {	if self.members() == 0 {	team_join
unlink-clears-queued-relaxed	src/park/tasks.rs	node.queued.store(false, Ordering::Release);	node.queued.store(false, Ordering::Relaxed);	async_drop async_register async_poison async_thread_and_task
deregister-reads-queued-relaxed	src/park/tasks.rs	if !self.queued.load(Ordering::Acquire) {	if !self.queued.load(Ordering::Relaxed) {	async_drop async_register async_poison async_thread_and_task
join-trusts-its-first-look	src/team.rs	let Some(rank) = self.ranks.lowest_free(wide) else {	let Some(rank) = self.ranks.lowest_free(wide) else { panic!("syncthreads: Team::join: no rank free after the first look saw one");	team_join
pool-claim-wakes-nobody	src/launch/pool/slot.rs	park::unpark_all(self.key());	let _ = self.key();	launch
pool-hand-back-wakes-the-slot	src/launch/pool/slot.rs	park::unpark_all(ticket.addr());	park::unpark_all(self.key());	launch
pool-reuse-plain-store	src/launch/pool/slot.rs	let prior = self.word.swap(ticket, Ordering::Relaxed);	let prior = exited(); self.word.store(ticket, Ordering::Relaxed);	launch
pool-claim-gives-up-after-one-cas	src/launch/pool/slot.rs	Err(now) => seen = now,	Err(_) => return false,	launch
pool-reuse-joins-the-leaving-thread	src/launch/pool.rs	self.retire(old);	let _ = old.join();	launch test:launch_pool_bugs
crew-launch-wakes-no-sleeper	src/launch/pool/crew/words.rs	wait::wake(&Place { go: self, place }, (prior, place));	let _ = place;	crew
crew-member-wakes-no-join	src/launch/pool/crew.rs	wait::wake(&*group.done, prior);	let _ = prior;	crew
crew-member-ignores-its-leave	src/launch/pool/crew.rs	if self.left.load(Ordering::Relaxed) {	if false && self.left.load(Ordering::Relaxed) {	crew test:launch_pool
launch-end-acquire-relaxed	src/engine/wait.rs	let first = self.state.load(Ordering::Acquire);	let first = self.state.load(Ordering::Relaxed);	crew
kept-block-not-re-armed	src/block.rs	self.team.rearm();	let _ = &self.team;	crew
warp-done-store-relaxed	src/warp/episode.rs	self.own.done.store(round, Ordering::Release);	self.own.done.store(round, Ordering::Relaxed);	warp_collectives
warp-claim-release-relaxed	src/warp/episode.rs	self.own.busy.store(false, Ordering::Release);	self.own.busy.store(false, Ordering::Relaxed);	warp_collectives
warp-claim-acquire-relaxed	src/warp/episode.rs	if own.busy.swap(true, Ordering::Acquire) {	if own.busy.swap(true, Ordering::Relaxed) {	warp_collectives
warp-header-round-load-relaxed	src/warp/episode.rs	if line.round[p].load(Ordering::Acquire) != self.round	if line.round[p].load(Ordering::Relaxed) != self.round	warp_collectives
warp-header-mask-load-relaxed	src/warp/episode.rs	|| line.mask[p].load(Ordering::Acquire) & (1 << self.lane) == 0	|| line.mask[p].load(Ordering::Relaxed) & (1 << self.lane) == 0	warp_collectives
warp-header-mask-store-relaxed	src/warp/episode.rs	me.mask[p].store(mask, Ordering::Release);	me.mask[p].store(mask, Ordering::Relaxed);	warp_collectives
warp-header-round-store-relaxed	src/warp/episode.rs	me.round[p].store(round, Ordering::Release);	me.round[p].store(round, Ordering::Relaxed);	warp_collectives
warp-arrival-relaxed	src/warp/episode.rs	let old = me.synced.fetch_add(raise, Ordering::Release);	let old = me.synced.fetch_add(raise, Ordering::Relaxed);	warp_collectives
warp-reuse-count-load-relaxed	src/warp/episode.rs	let s = self.lanes[i].synced.load(Ordering::Acquire);	let s = self.lanes[i].synced.load(Ordering::Relaxed);	warp_collectives
warp-reuse-done-load-relaxed	src/warp/episode.rs	} else if self.own[i].done.load(Ordering::Acquire) >= t {	} else if self.own[i].done.load(Ordering::Relaxed) >= t {	warp_collectives
warp-vote-bit-of-the-other-parity	src/warp.rs	(s >> (VOTES + (round % 2) as u32)) & 1	(s >> (VOTES + ((round + 1) % 2) as u32)) & 1	warp_collectives
warp-wait-drops-the-waited-lanes-vote	src/warp.rs	votes |= vote_of(s, round) << target;	votes |= 0;	warp_collectives
warp-wait-takes-no-waited-lane	src/warp.rs	take(target, lane);	let _ = lane;	warp_collectives
warp-word-read-from-the-other-parity	src/warp/episode.rs	words[i] = line.word[p].load(Ordering::Relaxed);	words[i] = line.word[1 - p].load(Ordering::Relaxed);	warp_collectives
warp-reuse-check-skipped	src/warp/episode.rs	if pending != 0 {	if false && pending != 0 {	warp_collectives
warp-shuffle-drops-its-early-slot-read	src/warp/episode.rs	self.early_value = self.slot(i);	self.early_value = None;	warp_collectives
MUTANTS
}

export LINES
if [ "$CODE" = 1 ]; then
    MUTANTS="$(code_mutants | awk -F'\t' -v only="$ONLY" '
        BEGIN { n = split(only, o, ","); for (i = 1; i <= n; i++) want[o[i]] = 1 }
        only == "" || ($1 in want)')"
    if [ -z "$MUTANTS" ]; then
        echo "mutants.sh: no code mutant named '$ONLY' (try --code --list)" >&2
        exit 1
    fi
    if [ "$LIST_ONLY" = 1 ]; then
        printf '%s\n' "$MUTANTS" | awk -F'\t' '{ printf "%s  %s: `%s` -> `%s`  [%s]\n", $1, $2, $3, $4, $5 }'
        exit 0
    fi
else
    MUTANTS="$(list_mutants)"
    if [ -z "$MUTANTS" ]; then
        echo "mutants.sh: no non-Relaxed orderings match (file '$FILE_FILTER', lines '$LINES')" >&2
        exit 1
    fi
    if [ "$LIST_ONLY" = 1 ]; then
        printf '%s\n' "$MUTANTS" | awk -F'\t' '{ printf "%s:%s #%s  %s -> %s\n", $1, $2, $3, $4, $5 }'
        exit 0
    fi
fi

# ---- the scratch copy --------------------------------------------------------
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/syncthreads-mutants.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
tar -C "$ROOT" --exclude=./target --exclude=./loom-tests/target --exclude=./.git \
    --exclude=./device -cf - . | tar -C "$SCRATCH" -xf -
cp -r "$SCRATCH/src" "$SCRATCH/.pristine-src"
# The patched loom (loom-tests/Cargo.toml's [patch.crates-io]).
bash "$ROOT/.ci/loom" --prepare >/dev/null
mkdir -p "$SCRATCH/loom-tests/target"
cp -r "$ROOT/loom-tests/target/loom-patched" "$SCRATCH/loom-tests/target/"

export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export CARGO_TARGET_DIR="${MUTANTS_TARGET_DIR:-$ROOT/loom-tests/target/mutants}"
cd "$SCRATCH/loom-tests"

log() { echo "mutants: $*" >&2; }

# Model files, cheap ones first so that most mutants die early; files not
# named here run last, in name order. (Code mutants name their own.)
MODELS_OVERRIDE="$MODELS"
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

# Builds the model files of MODELS (a code mutant's own list), or all.
build() {
    local only=() m
    if [ "$CODE" = 1 ]; then
        for m in $MODELS; do
            case "$m" in test:*) ;; *) only+=(--test "$m") ;; esac
        done
        [ ${#only[@]} = 0 ] && return 0
    fi
    cargo test --release --no-run -q "${only[@]}" >"$SCRATCH/build.log" 2>&1
}

log "building the unmutated copy (target dir $CARGO_TARGET_DIR)"
if [ "$CODE" = 1 ]; then
    MODELS="${MODELS_OVERRIDE:-$(printf '%s\n' "$MUTANTS" | cut -f5 | tr ' ' '\n' | sort -u | tr '\n' ' ')}"
fi
if ! build; then
    cat "$SCRATCH/build.log" >&2
    log "the unmutated copy does not build"
    exit 1
fi
# The tests of each model file, listed once.
declare -A TESTS
for m in $MODELS; do
    case "$m" in test:*) continue ;; esac
    TESTS[$m]="$(cargo test --release -q --test "$m" -- --list --format=terse 2>/dev/null |
        sed -n 's/: test$//p')"
done

# A test file of the main crate in a normal build (a code mutant's
# test:FILE), run as a whole. Sets CAUGHT / SECS / TIMEOUTS as below.
run_plain() {
    local f="$1" start end rc=0 secs
    start=$(date +%s.%N)
    (cd "$SCRATCH" && RUSTFLAGS="" CARGO_TARGET_DIR="${MUTANTS_PLAIN_TARGET_DIR:-$ROOT/target/mutants-plain}" \
        timeout "$TIMEOUT" cargo test --release -q --test "$f") >"$SCRATCH/test.log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    secs=$(echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }')
    if [ "$rc" = 124 ]; then
        TIMEOUTS="$TIMEOUTS tests/$f.rs"
    elif [ "$rc" != 0 ]; then
        local failed
        failed="$(sed -n 's/^    \([a-z_0-9]*\)$/\1/p' "$SCRATCH/test.log" | head -1)"
        CAUGHT="tests/$f.rs::${failed:-?}" SECS="$secs"
        grep -E 'panicked at|WATCHDOG|left:|right:' "$SCRATCH/test.log" |
            head -6 | sed 's/^/mutants:     /' >&2 || true
    fi
}

# Runs the models against the current copy. Sets CAUGHT ("file.rs::test")
# and SECS (that test's run time), or CAUGHT="" if every test passed;
# TIMEOUTS lists the tests that hit the limit.
run_models() {
    CAUGHT="" SECS="" TIMEOUTS=""
    for m in $MODELS; do
        case "$m" in
            test:*) run_plain "${m#test:}"; [ -n "$CAUGHT" ] && return; continue ;;
        esac
        if [ -z "${TESTS[$m]+set}" ]; then
            TESTS[$m]="$(cargo test --release -q --test "$m" -- --list --format=terse 2>/dev/null |
                sed -n 's/: test$//p')"
        fi
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

# The function a line of FILE is in (the last `fn NAME` at or above LINE)
# and the call its Nth non-Relaxed ordering is an argument of: a row's key,
# which unlike a line number survives edits elsewhere in the file.
fn_of() { # FILE LINE [N]
    L="$2" N="${3:-0}" perl -ne '
        $f = $1 if /\bfn\s+(\w+)/;
        next unless $. == $ENV{L};
        my $code = $_; $code =~ s{//.*$}{};
        my ($k, $call) = (0, "");
        while ($ENV{N} && $code =~ /Ordering::(\w+)/g) {
            next if $1 eq "Relaxed";
            next unless ++$k == $ENV{N};
            my $before = substr($code, 0, pos($code));
            $call = $1 while $before =~ /\.(\w+)\(/g;
        }
        print $f // "?", ($call ne "" ? " ($call)" : "");
        exit;
    ' "$1"
}
total=$(printf '%s\n' "$MUTANTS" | wc -l)
n=0
survivors=0
if [ "$CODE" = 1 ]; then
    echo "| mutant | where | change | caught by | time |"
    echo "|---|---|---|---|---|"
    while IFS=$'\t' read -r name file from to models; do
        n=$((n + 1))
        log "[$n/$total] $name ($file)"
        MODELS="${MODELS_OVERRIDE:-$models}"
        cp "$SCRATCH/.pristine-src/${file#src/}" "$SCRATCH/$file"
        count=$(FROM="$from" perl -0ne 'my $n = () = /\Q$ENV{FROM}\E/g; print $n' "$SCRATCH/$file")
        FROM="$from" TO="$to" perl -i -pe 's{\Q$ENV{FROM}\E}{$ENV{TO}}' "$SCRATCH/$file"
        line=$(FROM="$to" perl -ne 'if (index($_, $ENV{FROM}) >= 0) { print "$.\n"; exit }' "$SCRATCH/$file")
        where="\`$file\` \`$(fn_of "$SCRATCH/$file" "${line:-0}")\`"
        change="\`$from\` → \`$to\`"
        if [ "$count" != 1 ]; then
            row "| $name | \`$file\` | $change | (matches $count times, not once: script bug) | |"
        elif ! build; then
            row "| $name | $where | $change | does not compile: skipped | |"
        else
            run_models
            extra=""
            [ -n "$TIMEOUTS" ] && extra=" (timed out:$TIMEOUTS)"
            if [ -n "$CAUGHT" ]; then
                row "| $name | $where | $change | \`$CAUGHT\`$extra | ${SECS} s |"
            else
                survivors=$((survivors + 1))
                row "| $name | $where | $change | **SURVIVED** ($MODELS)$extra | |"
            fi
        fi
        cp "$SCRATCH/.pristine-src/${file#src/}" "$SCRATCH/$file"
    done <<<"$MUTANTS"
    elapsed=$((SECONDS - started))
    echo
    echo "$total code mutants, $survivors survived; commit $commit, $(date -u +%Y-%m-%d), LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS, ${elapsed}s ($((elapsed / 60)) min $((elapsed % 60)) s)"
    exit 0
fi
echo "| where | ordering | mutant | caught by | time |"
echo "|---|---|---|---|---|"
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
    where="\`$file\` \`$(fn_of "$SCRATCH/.pristine-src/${file#src/}" "$line" "$occ")\`"
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
