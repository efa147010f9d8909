#include "staging_harness/staging/interleaved_timing.h"

#include <chrono>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/timing/elapsed.h"
#include "staging_harness/stats/signed_rank.h"

namespace phaseloop::staging {
namespace {

// Shorter passes (a share) or runs (a warning) spend much of their wall time
// starting processes.
constexpr double kMinShareWall_s = 0.1;

// The figures of the pairs so far.
absl::Status Summarize(const TimingOptions& options, TimingResult& result) {
  std::vector<stats::TimedPair> wall, cpu;
  std::vector<double> wall_a, wall_b, instruction_ratios, share_a, share_b;
  bool counted = true;
  bool pinned = !result.baseline.empty();
  for (size_t i = 0; i < result.baseline.size(); ++i) {
    const PassSample& a = result.baseline[i];
    const PassSample& b = result.candidate[i];
    wall.push_back({a.wall_s, b.wall_s});
    cpu.push_back({a.cpu_s, b.cpu_s});
    wall_a.push_back(a.wall_s);
    wall_b.push_back(b.wall_s);
    // A pass under kMinShareWall_s spends much of its wall time starting
    // processes, and one whose CPU time read 0 (below the kernel's tick)
    // says nothing: neither is a share of the CPU.
    if (a.wall_s >= kMinShareWall_s && a.cpu_s > 0) {
      share_a.push_back(a.cpu_s / a.wall_s);
    }
    if (b.wall_s >= kMinShareWall_s && b.cpu_s > 0) {
      share_b.push_back(b.cpu_s / b.wall_s);
    }
    pinned = pinned && a.pinned && b.pinned;
    counted = counted && a.hardware_counted && b.hardware_counted &&
              b.instructions > 0;
    if (counted) {
      instruction_ratios.push_back(double(a.instructions) / b.instructions);
    }
  }
  absl::StatusOr<stats::SpeedupInterval> wall_interval =
      stats::MedianSpeedupInterval(wall, options.confidence);
  if (!wall_interval.ok()) return wall_interval.status();
  result.wall = *wall_interval;
  // CPU time of a very short run can read 0 (the kernel's tick): then the
  // CPU figure is not reported.
  absl::StatusOr<stats::SpeedupInterval> cpu_interval =
      stats::MedianSpeedupInterval(cpu, options.confidence);
  result.cpu = cpu_interval.ok() ? *cpu_interval : stats::SpeedupInterval{};
  // The pairs' log speedups: each pair's two runs share the machine's
  // moment, which a test of the two samples apart would count as noise.
  std::vector<double> log_speedups;
  for (size_t i = 0; i < wall_a.size(); ++i) {
    if (wall_a[i] > 0 && wall_b[i] > 0) {
      // A difference of logs: a pair and its mirror tie exactly.
      log_speedups.push_back(std::log(wall_a[i]) - std::log(wall_b[i]));
    }
  }
  absl::StatusOr<stats::SignedRankResult> test =
      stats::WilcoxonSignedRank(log_speedups);
  result.p_value = test.ok() ? test->p_value : 1;
  result.instructions_ratio = 0;
  if (counted && !instruction_ratios.empty()) {
    result.instructions_ratio = *stats::Median(instruction_ratios);
  }
  result.narrow = stats::NarrowEnough(result.wall, options.half_width);
  result.all_pinned = pinned;
  absl::StatusOr<double> share = stats::Median(share_a);
  result.machine.baseline_cpu_share = share.ok() ? *share : 0;
  share = stats::Median(share_b);
  result.machine.candidate_cpu_share = share.ok() ? *share : 0;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TimingResult> TimeInterleaved(const RunSide& run,
                                             const TimingOptions& options,
                                             const TimingProgress& progress) {
  if (options.min_pairs < 3 || options.max_pairs < options.min_pairs ||
      !(options.budget_s > 0) || !(options.half_width > 0) ||
      !(options.confidence > 0 && options.confidence < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timing options: need min_pairs >= 3 (got ", options.min_pairs,
        "), max_pairs >= min_pairs (got ", options.max_pairs,
        "), a positive budget (got ", options.budget_s,
        " s), a positive half width (got ", options.half_width,
        ") and a confidence in (0, 1) (got ", options.confidence, ")"));
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return timing::SecondsSince(start); };
  for (int i = 0; i < options.warmup_passes; ++i) {
    for (Side side : {Side::kBaseline, Side::kCandidate}) {
      absl::StatusOr<PassSample> warm = run(side);
      if (!warm.ok()) return warm.status();
    }
  }
  TimingResult result;
  double longest_pair_s = 0;
  const std::optional<ProcStat> stat_start = ReadProcStat();
  const std::optional<double> load_start = ReadLoadAverage();
  while (true) {
    const size_t pair = result.baseline.size();
    const double pair_start = elapsed();
    PassSample a, b;
    for (int k = 0; k < 2; ++k) {
      // Even pairs run the baseline first, odd ones the candidate.
      const Side side =
          (k == 0) == (pair % 2 == 0) ? Side::kBaseline : Side::kCandidate;
      absl::StatusOr<PassSample> sample = run(side);
      if (!sample.ok()) return sample.status();
      (side == Side::kBaseline ? a : b) = *sample;
    }
    longest_pair_s = std::max(longest_pair_s, elapsed() - pair_start);
    result.baseline.push_back(a);
    result.candidate.push_back(b);
    const int pairs = static_cast<int>(result.baseline.size());
    if (pairs < options.min_pairs) {
      // Said too (nothing showed for the first pairs: a minute of silence
      // for a 3 s program); no interval yet.
      if (progress) progress(result);
      continue;
    }
    if (absl::Status summed = Summarize(options, result); !summed.ok()) {
      return summed;
    }
    if (result.narrow) {
      result.stop_reason = "narrow";
    } else if (pairs >= options.max_pairs) {
      result.stop_reason = "max_pairs";
    } else if (elapsed() + longest_pair_s > options.budget_s) {
      result.stop_reason = "budget";
    }
    result.elapsed_s = elapsed();
    if (!result.stop_reason.empty()) {
      const std::optional<ProcStat> stat_end = ReadProcStat();
      const std::optional<double> load_end = ReadLoadAverage();
      if (stat_start && stat_end && load_start && load_end) {
        MachineActivity activity = ActivityBetween(*stat_start, *stat_end);
        activity.load_start = *load_start;
        activity.load_end = *load_end;
        activity.baseline_cpu_share = result.machine.baseline_cpu_share;
        activity.candidate_cpu_share = result.machine.candidate_cpu_share;
        result.machine = activity;
      }
    }
    if (progress) progress(result);
    if (!result.stop_reason.empty()) break;
  }
  return result;
}

std::string ShortRunsWarning(const TimingResult& timing, int commands) {
  // CPU time (user + sys), not wall: a loaded machine stretched the wall
  // time of 0.09 s of work past the threshold, and the same runs read as
  // long enough (stage_test failed on a busy CI machine).
  std::vector<double> cpus;
  for (const PassSample& pass : timing.baseline) cpus.push_back(pass.cpu_s);
  absl::StatusOr<double> median = stats::Median(cpus);
  if (!median.ok() || commands < 1 || *median >= kMinShareWall_s * commands) {
    return "";
  }
  return absl::StrFormat(
      "the baseline's runs are short (median %.1f ms a pass of %d command%s): "
      "starting a command costs a few ms no pipeline changes, so a speedup "
      "reads smaller than the program's and noise weighs more; give inputs "
      "that make each run take 0.2-3 s",
      1000 * *median, commands, commands == 1 ? "" : "s");
}

}  // namespace phaseloop::staging
