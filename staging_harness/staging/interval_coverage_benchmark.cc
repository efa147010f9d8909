// How often the harness's own timing loop (TimeInterleaved: its stopping
// rule, its interval) gets the verdicts right on simulated times,
// where the truth is known: A/A (equal sides) must give an interval that
// holds 1 with |median - 1| < 1 %, a 3 % slowdown an interval below 1.
// No processes run: each pass draws its time from a noise model, so the
// figures isolate the statistics from the machine (BENCHMARKS.md
// "Staging"; the real A/A and sensitivity runs are stage_benchmark's).
//
// Noise models, per pass (a run's time is base × noise):
//   lognormal SD   multiplicative log-normal noise of that SD;
//   bimodal        lognormal 1.1 % plus, 1 pass in 5, a 7 % slower mode
//                  (what one bundled workload's times looked like).
// Usage: interval_coverage_benchmark [--runs 2000] [--seed 1]
//          [--confidence 0.99] [--min-pairs 10] [--max-pairs 60]
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "staging_harness/staging/interleaved_timing.h"

namespace phaseloop::staging {
namespace {

struct NoiseModel {
  std::string name;
  double log_sd = 0;
  double slow_mode_share = 0;  // passes in the slower mode
  double slow_mode = 1;        // that mode's factor
};

struct Tally {
  int runs = 0, hits = 0;
  double pairs = 0;
};

Tally Simulate(const NoiseModel& noise, double candidate_factor,
               const TimingOptions& options, int runs, std::mt19937_64& rng) {
  std::normal_distribution<double> gauss(0, noise.log_sd);
  std::uniform_real_distribution<double> uniform(0, 1);
  Tally tally;
  for (int r = 0; r < runs; ++r) {
    RunSide run = [&](Side side) -> absl::StatusOr<PassSample> {
      double t = std::exp(gauss(rng));
      if (uniform(rng) < noise.slow_mode_share) t *= noise.slow_mode;
      if (side == Side::kCandidate) t *= candidate_factor;
      return PassSample{t, t, false, 0, 0};
    };
    TimingOptions budgetless = options;
    budgetless.budget_s = 1e9;
    absl::StatusOr<TimingResult> result =
        TimeInterleaved(run, budgetless, nullptr);
    if (!result.ok()) {
      std::cerr << result.status().message() << "\n";
      std::exit(2);
    }
    const stats::SpeedupInterval& w = result->wall;
    ++tally.runs;
    tally.pairs += static_cast<double>(result->baseline.size());
    if (candidate_factor == 1) {
      tally.hits += w.low <= 1 && w.high >= 1 && std::abs(w.median - 1) < 0.01;
    } else {
      tally.hits += w.high < 1;
    }
  }
  tally.pairs /= runs;
  return tally;
}

int Run(int argc, char** argv) {
  CLI::App app{"The timing loop's A/A and 3 % verdicts on simulated times"};
  int runs = 2000;
  uint64_t seed = 1;
  TimingOptions options;
  options.warmup_passes = 0;
  app.add_option("--runs", runs, "simulated stagings per row")
      ->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  app.add_option("--confidence", options.confidence)->capture_default_str();
  app.add_option("--min-pairs", options.min_pairs)->capture_default_str();
  app.add_option("--max-pairs", options.max_pairs)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const std::vector<NoiseModel> models = {
      {"lognormal 1.1 %", 0.011, 0, 1},
      {"bimodal", 0.011, 0.2, 1.07},
      {"lognormal 2 %", 0.02, 0, 1},
  };
  std::mt19937_64 rng(seed);
  std::cout << absl::StrFormat(
      "confidence %.3g, pairs %d..%d, stop at ±1 %%, %d runs per row\n",
      options.confidence, options.min_pairs, options.max_pairs, runs);
  std::cout << absl::StrFormat("%-16s %18s %10s %18s %10s\n", "noise",
                               "A/A holds 1", "pairs", "3 % detected",
                               "pairs");
  for (const NoiseModel& model : models) {
    const Tally aa = Simulate(model, 1.0, options, runs, rng);
    const Tally slow = Simulate(model, 1.03, options, runs, rng);
    std::cout << absl::StrFormat(
        "%-16s %10d/%d %5.1f%% %10.1f %10d/%d %5.1f%% %10.1f\n", model.name,
        aa.hits, aa.runs, 100.0 * aa.hits / aa.runs, aa.pairs, slow.hits,
        slow.runs, 100.0 * slow.hits / slow.runs, slow.pairs);
  }
  return 0;
}

}  // namespace
}  // namespace phaseloop::staging

int main(int argc, char** argv) { return phaseloop::staging::Run(argc, argv); }
