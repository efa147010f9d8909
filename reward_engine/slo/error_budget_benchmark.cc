// Cost of the error budget tracker at its memory bound: 30 days of 10 s SLI
// windows for two groups (518,400 kept windows). Prints Observe throughput,
// Status() latency, and Status() against a baseline measured in the same
// run: summing the same number of counts from a flat vector.
#include <chrono>
#include <cstdio>
#include <vector>

#include "common/timing/elapsed.h"
#include "reward_engine/slo/error_budget.h"

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

int main() {
  using phaseloop::slo::ErrorBudgetTracker;
  using phaseloop::slo::Slo;
  using phaseloop::slo::SloWindowObservation;
  constexpr int64_t kWindowMs = 10000;
  constexpr int64_t kDayMs = 24LL * 3600 * 1000;
  constexpr int64_t kWindows = 30 * kDayMs / kWindowMs;

  Slo slo;
  slo.name = "latency";
  slo.service = "demo-service";
  slo.threshold_ms = 250;
  slo.target = 0.99;
  slo.window_ms = 30 * kDayMs;
  slo.budgeting_method = "Occurrences";
  ErrorBudgetTracker tracker({slo});

  auto start = Clock::now();
  for (int64_t w = 0; w < kWindows; ++w) {
    for (const char* group : {"baseline", "canary"}) {
      tracker.Observe(SloWindowObservation{"demo-service", group, w * kWindowMs,
                                           (w + 1) * kWindowMs, 1000,
                                           990 + w % 11});
    }
  }
  const double observe_s = phaseloop::timing::SecondsSince(start);
  std::printf("observe: %lld windows in %.3f s = %.0f windows/s; kept %zu\n",
              static_cast<long long>(2 * kWindows), observe_s,
              2 * kWindows / observe_s, tracker.kept_windows());

  constexpr int kReps = 20;
  const int64_t now = kWindows * kWindowMs;
  start = Clock::now();
  double sink = 0;
  for (int r = 0; r < kReps; ++r) {
    for (const auto& s : tracker.Status(now)) {
      sink += s.error_budget_remaining();
    }
  }
  const double status_ms =
      phaseloop::timing::SecondsSince(start) * 1000 / kReps;

  std::vector<int64_t> flat(2 * kWindows * 2, 1);
  start = Clock::now();
  int64_t total = 0;
  for (int r = 0; r < kReps; ++r) {
    for (int64_t v : flat) total += v;
  }
  const double baseline_ms =
      phaseloop::timing::SecondsSince(start) * 1000 / kReps;
  std::printf(
      "status (2 groups, 6 lookbacks, one pass): %.2f ms per call; flat "
      "sum of the same counts: %.3f ms; ratio %.1fx (checksum %.3f %lld)\n",
      status_ms, baseline_ms, status_ms / baseline_ms, sink,
      static_cast<long long>(total));
  return 0;
}
