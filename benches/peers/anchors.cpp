// anchors.cpp -- anchor numbers for CPU thread barriers.
//
// Build (static, so the binary runs on another Linux; benches/device-build.sh does this):
//   g++ -O2 -std=c++20 -pthread -fopenmp -static benches/peers/anchors.cpp -o device/anchors
//
// Usage:
//   anchors --threads T --episodes K --reps R --only NAME
//           [--pin] [--budget-ms MS] [--cpus A,B] [--label L]
//
// Prints one line per measurement on stdout:   name threads ns_per_episode
// and a detail line on stderr (K actually used, min/median/max over reps, and
// cpu_ns_per_episode: the process's CPU time, CLOCK_PROCESS_CPUTIME_ID, all
// threads, over the timed repetitions divided by the episodes run in them,
// alignment episodes included, read by thread 0; -1 where not measured).
//
// Method: T threads each run "arrive and wait" K times in a loop.  Thread 0
// times the whole K-episode loop; ns_per_episode = wall time / K.  The
// reported value is the median over R repetitions.  Before the timed
// repetitions there is a start gate (one episode), a pilot (chunks of 4, 50,
// 50, 50 episodes, fastest chunk counts; cut short once it has used one
// repetition's budget) that estimates the cost per episode, and one untimed
// warm-up repetition.  If the pilot says K episodes would take longer than
// budget/(R+1), K is reduced (to no fewer than 3) so that the whole
// measurement stays near --budget-ms (default 1500 ms); the K actually used is
// printed on stderr.  Every repetition starts with one
// extra (untimed) episode so that all threads leave it together.
//
// NAMEs:
//   std_barrier          C++20 std::barrier<>::arrive_and_wait (libstdc++)
//   std_barrier_split    std::barrier<>: arrive(); tiny work; wait(token)
//   pthread_barrier      pthread_barrier_wait
//   omp_barrier          #pragma omp barrier, OMP_WAIT_POLICY unset (libgomp default)
//   omp_barrier_active   same, OMP_WAIT_POLICY=active
//   omp_barrier_passive  same, OMP_WAIT_POLICY=passive
//   spin_sense           centralized sense-reversing barrier, std::atomic, pure spin
//   spin_dissemination   extra reference: dissemination barrier, ceil(log2 T)
//                        rounds of point-to-point flags, pure spin
//   pingpong             2 threads bounce a counter through one atomic; one
//                        episode = one round trip (2 cross-core handoffs)
//   pingpong_far         as pingpong, pinned to the first and the last allowed CPU
//   tinywork             cost of the tiny work used by std_barrier_split (1 thread)
//
// --pin pins thread i to the i-th CPU of the process's allowed set (modulo its
// size).  --cpus A,B pins the two pingpong threads to CPUs A and B.
//
// The omp_* variants re-exec the binary with OMP_WAIT_POLICY set (libgomp
// reads it once at start-up).

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

inline double now_ns() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Tiny independent work (a short dependent multiply-add chain, ~15-20 ns).
inline uint64_t tiny_work(uint64_t x) {
  for (int j = 0; j < 16; ++j) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(x));
  }
  return x;
}

std::atomic<uint64_t> g_sink{0};

struct Opts {
  int threads = 2;
  long episodes = 20000;
  int reps = 7;
  std::string only;
  bool pin = false;
  double budget_ms = 1500.0;
  int cpu_a = -1, cpu_b = -1;
  std::string label;
};

std::vector<int> g_cpus;  // allowed CPUs at start-up
bool g_pin = false;

void read_allowed_cpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &s)) g_cpus.push_back(c);
  }
}

void pin_to_cpu(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0)
    std::fprintf(stderr, "# warning: sched_setaffinity(cpu %d) failed: %s\n", cpu,
                 std::strerror(errno));
}

void pin_index(int idx) {
  if (!g_pin || g_cpus.empty()) return;
  pin_to_cpu(g_cpus[idx % g_cpus.size()]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct alignas(64) Shared {
  std::atomic<long> k_eff{0};
  std::atomic<bool> pilot_stop{false};
  std::vector<double> rep_ns;  // written by thread 0 only
  double pilot_ns = 0;
  // Process CPU time (all threads) per episode over the timed repetitions,
  // alignment episodes included; written by thread 0 only.
  double cpu_ns = -1;
};

// CPU time of the whole process (all threads, user + system), ns.
inline double process_cpu_ns() {
  timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// Runs the measurement protocol on thread `tid`.  `body(tid, n)` must execute
// n barrier episodes; every episode synchronizes all T threads, which is what
// publishes thread 0's choice of k to the others.
template <class Body>
void driver(int tid, Body& body, const Opts& o, Shared& sh) {
  body(tid, 1);  // start gate: all threads exist and are running
  // Pilot: chunks of 4, 50, 50, 50 episodes; the fastest chunk estimates the
  // cost per episode (the first chunks can include thread start-up effects).
  // Thread 0 stops the pilot early once it has used one repetition's budget
  // (pathological cases such as pure spinning on oversubscribed CPUs); its
  // decision is published by one extra episode, as k is below.
  const double per_rep_budget = o.budget_ms * 1e6 / (o.reps + 1);
  const long chunk[4] = {std::min<long>(o.episodes, 4), std::min<long>(o.episodes, 50),
                         std::min<long>(o.episodes, 50), std::min<long>(o.episodes, 50)};
  double per = 1e300, spent = 0;
  for (int c = 0; c < 4; ++c) {
    double t0 = now_ns();
    body(tid, chunk[c]);
    double dt = now_ns() - t0;
    per = std::min(per, dt / chunk[c]);
    spent += dt;
    if (tid == 0) sh.pilot_stop.store(spent > per_rep_budget, std::memory_order_relaxed);
    body(tid, 1);  // publish the decision
    if (sh.pilot_stop.load(std::memory_order_relaxed)) break;
  }
  if (tid == 0) {
    sh.pilot_ns = per;
    long k = (long)(per_rep_budget / std::max(per, 1.0));
    k = std::min<long>(o.episodes, std::max<long>(std::min<long>(o.episodes, 3), k));
    sh.k_eff.store(k, std::memory_order_relaxed);
  }
  body(tid, 1);  // publish k
  const long k = sh.k_eff.load(std::memory_order_relaxed);
  body(tid, k);  // warm-up repetition
  const double cpu0 = tid == 0 ? process_cpu_ns() : 0;
  for (int r = 0; r < o.reps; ++r) {
    body(tid, 1);  // align
    double s = now_ns();
    body(tid, k);
    if (tid == 0) sh.rep_ns[r] = (now_ns() - s) / k;
  }
  if (tid == 0) sh.cpu_ns = (process_cpu_ns() - cpu0) / ((double)(k + 1) * o.reps);
}

void report(const Opts& o, const char* name, int threads, const Shared& sh) {
  std::vector<double> v = sh.rep_ns;
  double med = median(v);
  std::sort(v.begin(), v.end());
  std::string nm = o.label.empty() ? std::string(name) : o.label;
  std::printf("%s %d %.1f\n", nm.c_str(), threads, med);
  std::fflush(stdout);
  std::fprintf(stderr,
               "# %s T=%d K=%ld reps=%d pin=%d pilot=%.1f min=%.1f median=%.1f max=%.1f "
               "ns/episode cpu_ns_per_episode=%.1f\n",
               nm.c_str(), threads, sh.k_eff.load(), o.reps, (int)o.pin, sh.pilot_ns,
               v.front(), med, v.back(), sh.cpu_ns);
}

// Spawns T std::threads (thread 0 is the calling thread) and runs the protocol.
template <class Body>
void run_std_threads(const Opts& o, const char* name, Body body) {
  Shared sh;
  sh.rep_ns.assign(o.reps, 0.0);
  std::vector<std::thread> ts;
  ts.reserve(o.threads);
  for (int t = 1; t < o.threads; ++t)
    ts.emplace_back([&, t] {
      pin_index(t);
      driver(t, body, o, sh);
    });
  pin_index(0);
  driver(0, body, o, sh);
  for (auto& th : ts) th.join();
  report(o, name, o.threads, sh);
}

// --- (e) centralized sense-reversing spin barrier -------------------------
class SenseBarrier {
 public:
  explicit SenseBarrier(int n) : count_(n), n_(n) {}
  // `local_sense` is the calling thread's private sense, initially false.
  void wait(bool& local_sense) {
    local_sense = !local_sense;
    if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      count_.store(n_, std::memory_order_relaxed);
      sense_.store(local_sense, std::memory_order_release);
    } else {
      while (sense_.load(std::memory_order_acquire) != local_sense) cpu_relax();
    }
  }

 private:
  alignas(64) std::atomic<int> count_;
  alignas(64) std::atomic<bool> sense_{false};
  alignas(64) int n_;
};

struct alignas(64) PaddedBool {
  bool v = false;
};

// --- extra: dissemination barrier (Hensgen/Finkel/Manber), pure spin ------
// Not one of the requested anchors: a textbook *scalable* reference, to show
// what ceil(log2 T) rounds of point-to-point handoffs cost next to one
// centralized counter.  Round r: thread i signals thread (i + 2^r) mod T and
// waits for the signal of thread (i - 2^r) mod T.  Each flag has exactly one
// writer and holds a monotonically increasing episode number, so no sense or
// parity bits are needed (a waiter accepts any value >= its episode).
class DisseminationBarrier {
 public:
  explicit DisseminationBarrier(int n) : n_(n) {
    rounds_ = 0;
    while ((1 << rounds_) < n) ++rounds_;
    flags_ = std::vector<Flag>((size_t)std::max(rounds_, 1) * n);
  }
  // `episode` is the calling thread's private episode counter, initially 0.
  void wait(int tid, uint64_t& episode) {
    const uint64_t e = ++episode;
    for (int r = 0; r < rounds_; ++r) {
      int partner = (tid + (1 << r)) % n_;
      flags_[(size_t)r * n_ + partner].v.store(e, std::memory_order_release);
      auto& mine = flags_[(size_t)r * n_ + tid].v;
      while (mine.load(std::memory_order_acquire) < e) cpu_relax();
    }
  }

 private:
  struct alignas(64) Flag {
    std::atomic<uint64_t> v{0};
  };
  int n_, rounds_;
  std::vector<Flag> flags_;
};

struct alignas(64) PaddedU64 {
  uint64_t v = 0;
};

// --- measurements ---------------------------------------------------------
void bench_std_barrier(const Opts& o) {
  std::barrier<> bar(o.threads);
  run_std_threads(o, "std_barrier", [&](int, long n) {
    for (long i = 0; i < n; ++i) bar.arrive_and_wait();
  });
}

void bench_std_barrier_split(const Opts& o) {
  std::barrier<> bar(o.threads);
  run_std_threads(o, "std_barrier_split", [&](int tid, long n) {
    uint64_t acc = (uint64_t)tid + 1;
    for (long i = 0; i < n; ++i) {
      auto tok = bar.arrive();
      acc = tiny_work(acc);
      bar.wait(std::move(tok));
    }
    g_sink.fetch_add(acc, std::memory_order_relaxed);
  });
}

void bench_pthread_barrier(const Opts& o) {
  pthread_barrier_t pb;
  pthread_barrier_init(&pb, nullptr, (unsigned)o.threads);
  run_std_threads(o, "pthread_barrier", [&](int, long n) {
    for (long i = 0; i < n; ++i) pthread_barrier_wait(&pb);
  });
  pthread_barrier_destroy(&pb);
}

void bench_spin_sense(const Opts& o) {
  SenseBarrier bar(o.threads);
  std::vector<PaddedBool> local(o.threads);
  run_std_threads(o, "spin_sense", [&](int tid, long n) {
    bool& ls = local[tid].v;
    for (long i = 0; i < n; ++i) bar.wait(ls);
  });
}

void bench_spin_dissemination(const Opts& o) {
  DisseminationBarrier bar(o.threads);
  std::vector<PaddedU64> episode(o.threads);
  run_std_threads(o, "spin_dissemination", [&](int tid, long n) {
    uint64_t& e = episode[tid].v;
    for (long i = 0; i < n; ++i) bar.wait(tid, e);
  });
}

void omp_barrier_body(int, long n) {
  for (long i = 0; i < n; ++i) {
#pragma omp barrier
  }
}

void bench_omp(const Opts& o, const char* name) {
  Shared sh;
  sh.rep_ns.assign(o.reps, 0.0);
  omp_set_dynamic(0);
  std::atomic<int> team{0};
#pragma omp parallel num_threads(o.threads)
  {
    int tid = omp_get_thread_num();
    if (tid == 0) team.store(omp_get_num_threads());
    pin_index(tid);
    auto body = omp_barrier_body;
    driver(tid, body, o, sh);
  }
  if (team.load() != o.threads) {
    std::fprintf(stderr, "error: OpenMP team has %d threads, wanted %d\n", team.load(),
                 o.threads);
    std::exit(3);
  }
  const char* pol = std::getenv("OMP_WAIT_POLICY");
  std::fprintf(stderr, "# OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s\n", pol ? pol : "(unset)",
               std::getenv("GOMP_SPINCOUNT") ? std::getenv("GOMP_SPINCOUNT") : "(unset)");
  report(o, name, o.threads, sh);
}

// (f) ping-pong: one round trip of a value through one atomic.
void bench_pingpong(const Opts& o, const char* name, int cpu_a, int cpu_b) {
  alignas(64) static std::atomic<uint64_t> x{0};
  constexpr uint64_t STOP = ~uint64_t(0);
  x.store(0);
  std::thread b([&] {
    if (cpu_b >= 0) pin_to_cpu(cpu_b);
    uint64_t v = 1;
    for (;;) {
      uint64_t cur;
      while ((cur = x.load(std::memory_order_acquire)) != v) {
        if (cur == STOP) return;
        cpu_relax();
      }
      x.store(v + 1, std::memory_order_release);
      v += 2;
    }
  });
  if (cpu_a >= 0) pin_to_cpu(cpu_a);
  uint64_t v = 1;
  auto rounds = [&](long n) {
    for (long i = 0; i < n; ++i) {
      x.store(v, std::memory_order_release);
      while (x.load(std::memory_order_acquire) != v + 1) cpu_relax();
      v += 2;
    }
  };
  Shared sh;
  sh.rep_ns.assign(o.reps, 0.0);
  rounds(1);
  const double per_rep_budget = o.budget_ms * 1e6 / (o.reps + 1);
  const long pilot = std::min<long>(o.episodes, 50);
  sh.pilot_ns = 1e300;
  double spent = 0;
  for (int c = 0; c < 4 && spent <= per_rep_budget; ++c) {
    double t0 = now_ns();
    rounds(pilot);
    double dt = now_ns() - t0;
    spent += dt;
    sh.pilot_ns = std::min(sh.pilot_ns, dt / pilot);
  }
  long k = (long)(per_rep_budget / std::max(sh.pilot_ns, 1.0));
  k = std::min<long>(o.episodes, std::max<long>(std::min<long>(o.episodes, 3), k));
  sh.k_eff.store(k);
  rounds(k);
  for (int r = 0; r < o.reps; ++r) {
    double s = now_ns();
    rounds(k);
    sh.rep_ns[r] = (now_ns() - s) / k;
  }
  x.store(STOP, std::memory_order_release);
  b.join();
  std::fprintf(stderr, "# %s cpus=%d,%d (-1 = not pinned)\n", name, cpu_a, cpu_b);
  report(o, name, 2, sh);
}

void bench_tinywork(const Opts& o) {
  Shared sh;
  sh.rep_ns.assign(o.reps, 0.0);
  sh.k_eff.store(o.episodes);
  uint64_t acc = 1;
  for (long i = 0; i < o.episodes; ++i) acc = tiny_work(acc);
  for (int r = 0; r < o.reps; ++r) {
    double s = now_ns();
    for (long i = 0; i < o.episodes; ++i) acc = tiny_work(acc);
    sh.rep_ns[r] = (now_ns() - s) / o.episodes;
  }
  g_sink.fetch_add(acc);
  report(o, "tinywork", 1, sh);
}

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --threads T --episodes K --reps R --only NAME [--pin] "
               "[--budget-ms MS] [--cpus A,B] [--label L]\n"
               "NAME: std_barrier std_barrier_split pthread_barrier omp_barrier "
               "omp_barrier_active omp_barrier_passive spin_sense spin_dissemination pingpong "
               "pingpong_far tinywork\n",
               argv0);
  std::exit(2);
}

// libgomp reads OMP_WAIT_POLICY once, at start-up: re-exec with the wanted value.
void ensure_wait_policy(const char* wanted, char** argv) {
  const char* cur = std::getenv("OMP_WAIT_POLICY");
  bool ok = wanted ? (cur && std::strcmp(cur, wanted) == 0) : (cur == nullptr);
  if (ok) return;
  if (std::getenv("ANCHORS_REEXECED")) {
    std::fprintf(stderr, "error: could not set OMP_WAIT_POLICY\n");
    std::exit(3);
  }
  if (wanted)
    setenv("OMP_WAIT_POLICY", wanted, 1);
  else
    unsetenv("OMP_WAIT_POLICY");
  setenv("ANCHORS_REEXECED", "1", 1);
  execv("/proc/self/exe", argv);
  std::perror("execv /proc/self/exe");
  std::exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto need = [&]() -> const char* {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (a == "--threads")
      o.threads = std::atoi(need());
    else if (a == "--episodes")
      o.episodes = std::atol(need());
    else if (a == "--reps")
      o.reps = std::atoi(need());
    else if (a == "--only")
      o.only = need();
    else if (a == "--pin")
      o.pin = true;
    else if (a == "--budget-ms")
      o.budget_ms = std::atof(need());
    else if (a == "--label")
      o.label = need();
    else if (a == "--cpus") {
      const char* s = need();
      if (std::sscanf(s, "%d,%d", &o.cpu_a, &o.cpu_b) != 2) usage(argv[0]);
    } else
      usage(argv[0]);
  }
  if (o.threads < 1 || o.episodes < 1 || o.reps < 1 || o.only.empty()) usage(argv[0]);
  g_pin = o.pin;
  read_allowed_cpus();

  const std::string& n = o.only;
  if (n == "omp_barrier") ensure_wait_policy(nullptr, argv);
  if (n == "omp_barrier_active") ensure_wait_policy("active", argv);
  if (n == "omp_barrier_passive") ensure_wait_policy("passive", argv);

  if (n == "std_barrier")
    bench_std_barrier(o);
  else if (n == "std_barrier_split")
    bench_std_barrier_split(o);
  else if (n == "pthread_barrier")
    bench_pthread_barrier(o);
  else if (n == "omp_barrier" || n == "omp_barrier_active" || n == "omp_barrier_passive")
    bench_omp(o, n.c_str());
  else if (n == "spin_sense")
    bench_spin_sense(o);
  else if (n == "spin_dissemination")
    bench_spin_dissemination(o);
  else if (n == "pingpong" || n == "pingpong_far") {
    int a = o.cpu_a, b = o.cpu_b;
    if (a < 0 && (o.pin || n == "pingpong_far") && g_cpus.size() >= 2) {
      a = g_cpus.front();
      b = (n == "pingpong_far") ? g_cpus.back() : g_cpus[1];
    }
    bench_pingpong(o, n.c_str(), a, b);
  } else if (n == "tinywork")
    bench_tinywork(o);
  else
    usage(argv[0]);
  return 0;
}
