#!/usr/bin/env bash
# Builds the static binaries that benches/device-run.sh runs on a machine
# without compilers, into device/ (git-ignored):
#
#   device/bench_table   the bench target benches/bench_table/, --features bench (the crate's
#                        bench_hooks: policy switch and wait-stage counters)
#   device/bench_table_diagnostics   the same plus --features diagnostics, for
#                        `bench_table --versus device/bench_table_diagnostics`
#   device/anchors       benches/peers/anchors.cpp, the C and C++ peers
#   device/launch        the bench target benches/launch.rs (a launch's round trip
#                        beside rayon, std::thread::scope and libgomp's region)
#   device/grid          the bench target benches/grid.rs (grid.sync() beside a Team)
#   device/warp          the bench target benches/warp.rs (the warp collectives beside sync)
#   device/omp_parallel  benches/peers/omp_parallel.cpp, libgomp's parallel
#                        region, for `device/launch --omp device/omp_parallel`
#   device/BUILT_FROM    the commit, the features and the build date
#
#   bash benches/device-build.sh                 # as the device run wants it
#   bash benches/device-build.sh --no-bench      # without --features bench
#
# Static: RUSTFLAGS="-C target-feature=+crt-static" with an explicit
# --target (so that build scripts stay dynamic), and g++ -static. A first
# build compiles every dependency again for that target (a few minutes on 2
# cores); later ones only the crate.
set -euo pipefail
cd "$(dirname "$0")/.."

features=(--features bench)
case "${1:-}" in
--no-bench) features=() ;;
"") ;;
*)
    echo "usage: bash benches/device-build.sh [--no-bench]" >&2
    exit 2
    ;;
esac

target=x86_64-unknown-linux-gnu
mkdir -p device
start=$SECONDS
# Builds bench target $1 static (further arguments go to cargo) and copies it
# to $2. Its binary carries a hash in its name: cargo names its path.
bench() {
    local name=$1 to=$2 exe
    shift 2
    exe=$(RUSTFLAGS="-C target-feature=+crt-static" nice cargo build --quiet --release \
        --target "$target" --bench "$name" "$@" --message-format=json |
        grep -o "\"executable\":\"[^\"]*/$name-[^\"]*\"" | tail -n 1 | cut -d'"' -f4)
    if [ -z "$exe" ]; then
        echo "device-build: cargo named no $name executable for $to" >&2
        exit 1
    fi
    cp "$exe" "$to"
}
bench bench_table device/bench_table "${features[@]}"
bench bench_table device/bench_table_diagnostics "${features[@]}" --features diagnostics
bench launch device/launch "${features[@]}"
bench grid device/grid
bench warp device/warp
RUSTFLAGS="-C target-feature=+crt-static" nice cargo build --quiet --release \
    --target "$target" --example heat
cp "target/$target/release/examples/heat" device/heat

# Everything it compiles is in the repository.
anchors=benches/peers/anchors.cpp
omp_parallel=benches/peers/omp_parallel.cpp
# The linker's warnings about dlopen in static binaries are harmless.
nice g++ -O2 -std=c++20 -pthread -fopenmp -static "$anchors" -o device/anchors 2>device/anchors-build.log ||
    {
        cat device/anchors-build.log >&2
        exit 1
    }

nice g++ -O2 -fopenmp -static "$omp_parallel" -o device/omp_parallel 2>device/omp-build.log ||
    {
        cat device/omp-build.log >&2
        exit 1
    }

for b in device/bench_table device/bench_table_diagnostics device/heat device/anchors device/launch device/grid device/warp device/omp_parallel; do
    # ldd says "not a dynamic executable" (static) or "statically linked" (static-pie).
    if ! { ldd "$b" 2>&1 || true; } | grep -Eq 'not a dynamic executable|statically linked'; then
        echo "device-build: $b is dynamically linked" >&2
        exit 1
    fi
done

{
    echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src examples benches Cargo.toml || echo ' (with uncommitted changes)')"
    echo "bench_table features: ${features[*]:-default}"
    echo "anchors: $(sha256sum "$anchors" | cut -c1-16) $anchors"
    echo "omp_parallel: $(sha256sum "$omp_parallel" | cut -c1-16) $omp_parallel"
    echo "built $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), $((SECONDS - start)) s"
} >device/BUILT_FROM
cat device/BUILT_FROM
ls -l device/bench_table device/anchors device/launch device/omp_parallel
