// The staging harness's targets, measured (BENCHMARKS.md "Staging"): per
// workload,
//   - one A/B staging (baseline against fixed:default<O2>) from nothing:
//     builds, checks and timing, wall seconds (target: 2 minutes);
//   - A/A: the baseline against itself (--time-identical), --aa-runs times:
//     how often the interval contains 1.0 and |median - 1| < 1 % (target
//     95 %);
//   - sensitivity: a candidate slowed by --slowdown (3 %: every process of
//     the program busy-waits that share of its own run time before it
//     exits), --sensitivity-runs times: how often the interval excludes 1.0
//     (target 95 %).
// Usage: stage_benchmark --workload NAME... [--workloads-dir DIR]
//          [--aa-runs 20] [--sensitivity-runs 20] [--slowdown 0.03]
//          [--max-pairs 60] [--confidence 0.99] [--budget-s 90]
//          [--cc PHASELOOP_CC] [--work-dir DIR]
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/timing/elapsed.h"
#include "staging_harness/staging/stage_workload.h"
#include "staging_harness/stats/speedup.h"

namespace phaseloop::staging {
namespace {
namespace fs = std::filesystem;

struct Flags {
  std::vector<std::string> workloads;
  std::string workloads_dir = "configs/workloads";
  int aa_runs = 20;
  int sensitivity_runs = 20;
  double slowdown = 0.03;
  int max_pairs = 60;
  double confidence = 0.99;
  double budget_s = 90;
  std::string cc;
  std::string work_dir = (fs::temp_directory_path() / "phaseloop-stage-bench");
};

// A header that slows every process of the program by `slowdown` of its
// own run time: a constructor notes the start, an exit handler busy-waits
// slowdown x the time since (so a command that runs the program twice is
// slowed by the same share). The weak flag is one symbol however many
// translation units include the header.
std::string SlowHeader(double slowdown) {
  return absl::StrFormat(R"(#include <stdlib.h>
#include <time.h>
__attribute__((weak)) int phaseloop_bench_armed;
__attribute__((weak)) struct timespec phaseloop_bench_start;
static double phaseloop_bench_us(const struct timespec* a,
                                 const struct timespec* b) {
  return (b->tv_sec - a->tv_sec) * 1e6 + (b->tv_nsec - a->tv_nsec) / 1e3;
}
static void phaseloop_bench_spin(void) {
  struct timespec end, now;
  clock_gettime(CLOCK_MONOTONIC, &end);
  const double spin_us =
      %.6f * phaseloop_bench_us(&phaseloop_bench_start, &end);
  do clock_gettime(CLOCK_MONOTONIC, &now);
  while (phaseloop_bench_us(&end, &now) < spin_us);
}
__attribute__((constructor)) static void phaseloop_bench_arm(void) {
  if (phaseloop_bench_armed++) return;
  clock_gettime(CLOCK_MONOTONIC, &phaseloop_bench_start);
  atexit(phaseloop_bench_spin);
}
)",
                         slowdown);
}

double MedianWall(const std::vector<PassSample>& samples) {
  std::vector<double> times;
  for (const PassSample& s : samples) times.push_back(s.wall_s);
  absl::StatusOr<double> median = stats::Median(times);
  return median.ok() ? *median : 0;
}

struct Tally {
  int runs = 0, hits = 0;
  std::vector<double> medians;
  std::vector<int> pairs;
  double seconds = 0;
};

std::string Summary(const Tally& t) {
  std::vector<double> m = t.medians;
  std::sort(m.begin(), m.end());
  double mean_pairs = 0;
  for (int p : t.pairs) mean_pairs += p;
  if (!t.pairs.empty()) mean_pairs /= t.pairs.size();
  return absl::StrFormat(
      "%2d/%2d (%5.1f %%)  medians %.4f..%.4f  pairs %.1f  %.0f s", t.hits,
      t.runs, t.runs ? 100.0 * t.hits / t.runs : 0, m.empty() ? 0 : m.front(),
      m.empty() ? 0 : m.back(), mean_pairs, t.seconds);
}

int Run(const Flags& f) {
  std::error_code error;
  const std::string exe_dir =
      fs::read_symlink("/proc/self/exe", error).parent_path().string();
  absl::StatusOr<runner::Compilers> compilers = runner::FindCompilers(
      f.cc, exe_dir.empty() ? "" : exe_dir + "/../../tools");
  if (!compilers.ok()) {
    std::cerr << compilers.status().message() << "\n";
    return 1;
  }
  std::ofstream quiet("/dev/null");
  for (const std::string& name : f.workloads) {
    absl::StatusOr<workloads::Workload> workload =
        workloads::LoadWorkload(f.workloads_dir + "/" + name + ".yaml");
    if (!workload.ok()) {
      std::cerr << workload.status().message() << "\n";
      return 2;
    }
    StageOptions options;
    options.compilers = *compilers;
    options.timing.max_pairs = f.max_pairs;
    options.timing.confidence = f.confidence;
    options.timing.budget_s = f.budget_s;
    options.work_dir = f.work_dir + "/" + name;

    // One A/B staging from nothing.
    auto start = std::chrono::steady_clock::now();
    options.candidate_policy = "fixed:default<O2>";
    absl::StatusOr<StageResult> ab = StageWorkload(*workload, options, quiet);
    if (!ab.ok()) {
      std::cerr << ab.status().message() << "\n";
      return 1;
    }
    const double ab_s = phaseloop::timing::SecondsSince(start);

    // A/A.
    options.time_identical = true;
    absl::StatusOr<std::unique_ptr<WorkloadStager>> stager =
        WorkloadStager::Prepare(*workload, options, quiet);
    if (!stager.ok()) {
      std::cerr << stager.status().message() << "\n";
      return 1;
    }
    Tally aa;
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < f.aa_runs; ++i) {
      absl::StatusOr<StageResult> r = (*stager)->Evaluate(
          "baseline", absl::StrCat("aa", i), options.timing);
      if (!r.ok() || !r->timing) {
        std::cerr << name << " A/A: "
                  << (r.ok() ? r->detail : std::string(r.status().message()))
                  << "\n";
        return 1;
      }
      const stats::SpeedupInterval& w = r->timing->wall;
      ++aa.runs;
      aa.hits += w.low <= 1 && w.high >= 1 && std::abs(w.median - 1) < 0.01;
      aa.medians.push_back(w.median);
      aa.pairs.push_back(static_cast<int>(r->timing->baseline.size()));
    }
    aa.seconds = phaseloop::timing::SecondsSince(start);

    // Sensitivity: the candidate's processes busy-wait `slowdown` of their
    // run time before they exit.
    const double base_s =
        ab->timing ? MedianWall(ab->timing->baseline) : MedianWall({});
    const std::string header = options.work_dir + "-slow.h";
    std::ofstream(header) << SlowHeader(f.slowdown);
    workloads::Workload slowed = *workload;
    slowed.build.command = absl::StrCat(
        "case \"$PHASELOOP_STAGE_VARIANT\" in slow*) "
        "export CFLAGS=\"$CFLAGS -include ",
        header, "\";; esac; ", workload->build.command);
    options.time_identical = false;
    options.work_dir += "-slow";
    stager = WorkloadStager::Prepare(slowed, options, quiet);
    if (!stager.ok()) {
      std::cerr << stager.status().message() << "\n";
      return 1;
    }
    Tally sensitivity;
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < f.sensitivity_runs; ++i) {
      absl::StatusOr<StageResult> r = (*stager)->Evaluate(
          "baseline", absl::StrCat("slow", i), options.timing);
      if (!r.ok() || !r->timing) {
        std::cerr << name << " sensitivity: "
                  << (r.ok() ? r->detail : std::string(r.status().message()))
                  << "\n";
        return 1;
      }
      const stats::SpeedupInterval& w = r->timing->wall;
      ++sensitivity.runs;
      sensitivity.hits += w.high < 1;
      sensitivity.medians.push_back(w.median);
      sensitivity.pairs.push_back(static_cast<int>(r->timing->baseline.size()));
    }
    sensitivity.seconds = phaseloop::timing::SecondsSince(start);

    std::cout << absl::StrFormat(
                     "%-12s base %.3f s  A/B staging %.0f s (%s, %d pairs)\n"
                     "  A/A          %s\n  %.0f %% slower  %s\n",
                     name, base_s, ab_s, VerdictName(ab->verdict),
                     ab->timing ? int(ab->timing->baseline.size()) : 0,
                     Summary(aa), 100 * f.slowdown, Summary(sensitivity))
              << std::flush;
  }
  return 0;
}

}  // namespace
}  // namespace phaseloop::staging

int main(int argc, char** argv) {
  phaseloop::staging::Flags flags;
  CLI::App app{
      "stage_benchmark: the staging harness's A/A, sensitivity and "
      "time targets"};
  app.add_option("--workload", flags.workloads, "workload names")->required();
  app.add_option("--workloads-dir", flags.workloads_dir)->capture_default_str();
  app.add_option("--aa-runs", flags.aa_runs)->capture_default_str();
  app.add_option("--sensitivity-runs", flags.sensitivity_runs)
      ->capture_default_str();
  app.add_option("--slowdown", flags.slowdown)->capture_default_str();
  app.add_option("--max-pairs", flags.max_pairs)->capture_default_str();
  app.add_option("--confidence", flags.confidence)->capture_default_str();
  app.add_option("--budget-s", flags.budget_s)->capture_default_str();
  app.add_option("--cc", flags.cc,
                 "phaseloop-cc (default: found as stage does)");
  app.add_option("--work-dir", flags.work_dir)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return phaseloop::staging::Run(flags);
}
