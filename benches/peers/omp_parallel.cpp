// omp_parallel T [K]: median ns per `#pragma omp parallel num_threads(T) { #pragma omp barrier }`
// round trip (EPCC syncbench's PARALLEL, plus one barrier): the peer of
// `launch(T, |b| b.sync())` in benches/launch.rs (`--omp PATH` runs it).
// Prints `omp_parallel T NS`: the median over 7 batches of K round trips
// (default 2000), after one warm-up batch.
//
// Build (libgomp, static; benches/device-build.sh does this):
//   g++ -O2 -fopenmp -static benches/peers/omp_parallel.cpp -o device/omp_parallel
// LLVM's OpenMP runtime instead (no static libomp: link its shared library
// and carry it beside the binary):
//   g++ -O2 -fopenmp -c benches/peers/omp_parallel.cpp -o omp_parallel.o
//   g++ omp_parallel.o -o device/omp_parallel_llvm -Wl,-rpath,'$ORIGIN' device/libomp.so.5
// (libomp.so.5 from Debian's package libomp5-19: apt-get download libomp5-19, dpkg -x).
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
int main(int argc, char** argv) {
  if (argc < 2 || atoi(argv[1]) < 1) {
    fprintf(stderr, "usage: omp_parallel THREADS [ROUND_TRIPS]\n");
    return 2;
  }
  int t = atoi(argv[1]); long k = argc > 2 ? atol(argv[2]) : 2000;
  std::vector<double> v;
  for (int r = 0; r < 8; r++) {
    auto a = std::chrono::steady_clock::now();
    for (long i = 0; i < k; i++) {
#pragma omp parallel num_threads(t)
      {
#pragma omp barrier
      }
    }
    auto b = std::chrono::steady_clock::now();
    if (r) v.push_back(std::chrono::duration<double, std::nano>(b - a).count() / k);
  }
  std::sort(v.begin(), v.end());
  printf("omp_parallel %d %.0f\n", t, v[v.size() / 2]);
}
