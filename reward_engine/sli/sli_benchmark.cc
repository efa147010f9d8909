// Figures of the SLI library (BENCHMARKS.md, "SLI library (issue #6)"):
// recording rate per core with 1 and 2 threads, sketch merge and window
// decode+merge rates, serialized sizes, and the p50/p95/p99 error of the
// recorded sketch against the exact quantiles.
//
//   tools/bazel.sh run -c opt //reward_engine/sli:sli_benchmark
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/timing/elapsed.h"
#include "reward_engine/sli/latency_sketch.h"
#include "reward_engine/sli/sli_recorder.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::sli {
namespace {

using Clock = std::chrono::steady_clock;

// CPU time of the calling thread: rates per CPU-second are rates per core,
// unaffected by other load on a shared machine.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Rate {
  double per_wall_second = 0;
  double per_cpu_second = 0;
};

std::unique_ptr<SliRecorder> MakeRecorder() {
  SliRecorderOptions options;
  options.service = "bench";
  options.group = "canary";
  options.instance = "host-1";
  options.deployment_id = "dep-1";
  options.policy_version = "pv-1";
  return *SliRecorder::Create(options);
}

// Lognormal latencies around 2 ms, in microseconds (what services record).
std::vector<int64_t> LatenciesUs(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(2000.0), 0.7);
  std::vector<int64_t> out(n);
  for (int64_t& v : out) v = 1 + static_cast<int64_t>(dist(rng));
  return out;
}

// Records/s of each of `threads` threads calling RecordMicros for `seconds`.
std::vector<Rate> RecordingRates(int threads, double seconds) {
  auto recorder = MakeRecorder();
  const std::vector<int64_t> latencies = LatenciesUs(1 << 16, 1);
  std::vector<Rate> rates(threads);
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ++ready;
      while (ready.load() < threads) {
      }
      const auto start = Clock::now();
      const double cpu_start = ThreadCpuSeconds();
      int64_t n = 0;
      while (phaseloop::timing::SecondsSince(start) < seconds) {
        for (int k = 0; k < 65536; ++k, ++n) {
          recorder->RecordMicros(latencies[k], (k & 1023) == 0);
        }
      }
      rates[t].per_wall_second =
          static_cast<double>(n) / phaseloop::timing::SecondsSince(start);
      rates[t].per_cpu_second =
          static_cast<double>(n) / (ThreadCpuSeconds() - cpu_start);
    });
  }
  for (auto& w : workers) w.join();
  int64_t closed = 0;
  for (const auto& w : recorder->CloseAllWindows()) closed += w.count();
  const SliRecorderStats stats = recorder->stats();
  std::printf("  (windows hold %lld records; late %lld, dropped %lld)\n",
              static_cast<long long>(closed),
              static_cast<long long>(stats.late_records),
              static_cast<long long>(stats.dropped_records));
  return rates;
}

// One window's sketch of n lognormal latencies (seconds).
LatencySketch WindowSketchOf(size_t n, uint64_t seed) {
  LatencySketch sketch;
  for (int64_t us : LatenciesUs(n, seed)) {
    if (!sketch.Add(static_cast<double>(us) * 1e-6).ok()) std::abort();
  }
  return sketch;
}

v1::SliWindow WindowOf(const LatencySketch& sketch) {
  v1::SliWindow w;
  w.set_service("bench");
  w.set_group("canary");
  w.set_instance("host-1");
  w.set_deployment_id("dep-1");
  w.set_policy_version("pv-1");
  w.set_window_start_ms(1700000000000);
  w.set_window_length_ms(10000);
  SetWindowSketch(sketch, &w);
  return w;
}

void MergeFigures() {
  std::vector<LatencySketch> sketches;
  std::vector<std::string> serialized;
  for (int k = 0; k < 64; ++k) {
    sketches.push_back(WindowSketchOf(2000, 100 + k));
    serialized.push_back(WindowOf(sketches.back()).SerializeAsString());
  }
  LatencySketch total;
  int64_t merges = 0;
  double cpu_start = ThreadCpuSeconds();
  while (ThreadCpuSeconds() - cpu_start < 1.0) {
    for (const LatencySketch& s : sketches) {
      if (!total.Merge(s).ok()) std::abort();
      ++merges;
    }
  }
  std::printf(
      "sketch merge (2000-value window sketches): %.2f M merges per "
      "CPU-second\n",
      static_cast<double>(merges) / (ThreadCpuSeconds() - cpu_start) / 1e6);
  int64_t windows = 0;
  LatencySketch merged;
  cpu_start = ThreadCpuSeconds();
  while (ThreadCpuSeconds() - cpu_start < 1.0) {
    for (const std::string& bytes : serialized) {
      v1::SliWindow w;
      if (!w.ParseFromString(bytes)) std::abort();
      absl::StatusOr<LatencySketch> s = WindowSketch(w);  // validates
      if (!s.ok() || !merged.Merge(*s).ok()) std::abort();
      ++windows;
    }
  }
  std::printf(
      "SliWindow parse + validate + merge: %.0f k windows per CPU-second\n",
      static_cast<double>(windows) / (ThreadCpuSeconds() - cpu_start) / 1e3);
}

void SizeFigures() {
  for (size_t n : {10, 100, 1000, 10000, 1000000}) {
    const LatencySketch sketch = WindowSketchOf(n, 7);
    const v1::SliWindow w = WindowOf(sketch);
    std::printf(
        "serialized, %7zu latencies: sketch %5zu B (%s, %d buckets), "
        "SliWindow %5zu B\n",
        n, w.sketch().ByteSizeLong(),
        w.sketch().counts_size() > 0 ? "dense " : "sparse",
        w.sketch().counts_size() + w.sketch().sparse_counts_size(),
        w.ByteSizeLong());
  }
}

struct Distribution {
  const char* name;
  std::function<double(std::mt19937_64&)> seconds;
};

void AccuracyFigures() {
  const std::vector<Distribution> distributions = {
      {"lognormal 2 ms",
       [](std::mt19937_64& r) {
         return std::lognormal_distribution<double>(std::log(0.002), 0.7)(r);
       }},
      {"uniform 1-100 ms",
       [](std::mt19937_64& r) {
         return std::uniform_real_distribution<double>(0.001, 0.1)(r);
       }},
      {"bimodal 5/200 ms",
       [](std::mt19937_64& r) {
         const bool slow = std::bernoulli_distribution(0.08)(r);
         return std::lognormal_distribution<double>(
             std::log(slow ? 0.2 : 0.005), 0.2)(r);
       }},
      {"pareto 1.1 from 1 ms",
       [](std::mt19937_64& r) {
         const double u = std::uniform_real_distribution<double>(0, 1)(r);
         return std::min(0.001 / std::pow(1 - u, 1 / 1.1), 1e6);
       }},
  };
  double worst = 0;
  for (const Distribution& d : distributions) {
    auto recorder = MakeRecorder();
    std::mt19937_64 rng(5);
    std::vector<int64_t> ns(1000000);
    for (int64_t& v : ns) {
      v = static_cast<int64_t>(d.seconds(rng) * 1e9 + 0.5);
      recorder->RecordNanosAt(1700000000000, v, false);
    }
    std::vector<v1::SliWindow> windows = recorder->CloseAllWindows();
    absl::StatusOr<LatencySketch> sketch = WindowSketch(windows.at(0));
    if (!sketch.ok()) std::abort();
    std::sort(ns.begin(), ns.end());
    std::printf("  %-22s", d.name);
    for (double q : {0.5, 0.95, 0.99}) {
      const double exact =
          static_cast<double>(ns[static_cast<size_t>(q * (ns.size() - 1))]) *
          1e-9;
      const double error = std::abs(*sketch->Quantile(q) - exact) / exact;
      worst = std::max(worst, error);
      std::printf("  p%-2.0f %8.4f ms err %.3f %%", q * 100, exact * 1e3,
                  error * 100);
    }
    std::printf("\n");
  }
  std::printf(
      "worst relative error over p50/p95/p99: %.3f %% (target <= 1 %%)\n",
      worst * 100);
}

}  // namespace
}  // namespace phaseloop::sli

int main() {
  using phaseloop::sli::RecordingRates;
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf("SLI library benchmark (%u cores)\n\n", cores);
  std::printf(
      "recording (RecordMicros: coarse clock + sketch bucket + exact "
      "stats), target >= 10 M/s per core\n");
  const auto one = RecordingRates(1, 2.0);
  std::printf("  1 thread : %5.1f M records per CPU-second (%5.1f M/s wall)\n",
              one[0].per_cpu_second / 1e6, one[0].per_wall_second / 1e6);
  const auto two = RecordingRates(2, 2.0);
  for (int t = 0; t < 2; ++t) {
    std::printf(
        "  2 threads, thread %d: %5.1f M records per CPU-second (%5.1f M/s "
        "wall)\n",
        t + 1, two[t].per_cpu_second / 1e6, two[t].per_wall_second / 1e6);
  }
  std::printf("  2 threads together: %.1f M records/s wall\n",
              (two[0].per_wall_second + two[1].per_wall_second) / 1e6);
  std::printf("\n");
  phaseloop::sli::MergeFigures();
  std::printf("\n");
  phaseloop::sli::SizeFigures();
  std::printf(
      "\nrecorded sketch vs exact quantiles (1 M latencies each, "
      "through SliRecorder)\n");
  phaseloop::sli::AccuracyFigures();
  return 0;
}
