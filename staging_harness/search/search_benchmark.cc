// Search throughput: random search over the fixtures with 1 and 2 session
// workers, for each objective; prints episodes/s and steps/s.
//   tools/bazel.sh run -c opt //staging_harness/search:search_benchmark [--
//   BUDGET_SECONDS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "common/testing/test_util.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "staging_harness/search/episode_file.h"
#include "staging_harness/search/search_pool.h"

namespace phaseloop::search {
namespace {

struct Figures {
  double wall = 0;
  double search = 0;  // sum of per-module search time
  int64_t episodes = 0;
  int64_t steps = 0;
  int64_t failed = 0;
  int64_t records = 0;
};

int Bench(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 1.0;
  std::vector<ModuleInput> modules;
  for (const std::string& path : testing::FixturePaths()) {
    modules.push_back(
        {std::filesystem::path(path).filename().string(), path, ""});
  }
  const std::string dir = testing::MakeTempDir();
  std::printf(
      "random search, episodes of 40 steps, %.1f s per module, %zu "
      "fixtures\n\n",
      budget, modules.size());
  std::printf("%-10s %8s %9s %9s %10s %10s %11s %12s\n", "objective", "workers",
              "wall s", "episodes", "steps", "episodes/s", "steps/s",
              "steps/s/wkr");
  for (Objective objective : {Objective::kIrCount, Objective::kTextSize}) {
    for (int workers : {1, 2}) {
      SearchRunOptions options;
      options.worker.worker_binary = "staging_harness/workers/session_worker";
      options.workers = workers;
      options.strategy.strategy = Strategy::kRandom;
      options.objective = objective;
      options.budget_seconds = budget;
      const std::string path = dir + "/episodes-" + ObjectiveName(objective) +
                               "-" + std::to_string(workers) + ".bin";
      auto sink = FileEpisodeSink::Open(path);
      if (!sink.ok()) {
        std::cerr << sink.status() << "\n";
        return 1;
      }
      const auto begin = std::chrono::steady_clock::now();
      auto results = RunSearch(modules, options, {}, **sink);
      Figures f;
      f.wall = phaseloop::timing::SecondsSince(begin);
      if (!results.ok()) {
        std::cerr << results.status() << "\n";
        return 1;
      }
      for (const ModuleResult& r : *results) {
        if (!r.status.ok())
          std::cerr << r.input.name << ": " << r.status << "\n";
        f.search += r.seconds;
        f.episodes += r.episodes;
        f.steps += r.evaluations;
        f.failed += r.failed_steps;
      }
      f.records = (*sink)->records_written();
      std::printf("%-10s %8d %9.1f %9lld %10lld %10.1f %11.0f %12.0f\n",
                  ObjectiveName(objective), workers, f.wall,
                  static_cast<long long>(f.episodes),
                  static_cast<long long>(f.steps), f.episodes / f.wall,
                  f.steps / f.wall, f.steps / f.search);
    }
  }
  std::printf(
      "\nwall: whole run (worker start, -Oz baselines, search, best-sequence "
      "replay);\nsteps/s/wkr: steps over search time only, per worker. Every "
      "step returns ir_count,\nautophase and inst_count (+ text_size for that "
      "objective) and is logged.\n");
  return 0;
}

}  // namespace
}  // namespace phaseloop::search

int main(int argc, char** argv) { return phaseloop::search::Bench(argc, argv); }
