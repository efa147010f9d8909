#ifndef PHASELOOP_STAGING_HARNESS_STAGING_INTERLEAVED_TIMING_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_INTERLEAVED_TIMING_H_

// Timing a candidate against a baseline on a shared machine: warm-up passes
// of each (not counted), then interleaved pairs in alternating order (A B,
// B A, A B, ...: a drift or a cache left warm by the previous run hits both
// sides equally), adding pairs until the distribution-free `confidence`
// interval of the median wall-time speedup (stats::MedianSpeedupInterval,
// 99 % by default: stopping once an interval looks narrow favours samples
// whose spread happened to be small, and 95 % held an A/A comparison's 1
// too rarely) is within ±half_width of the median, the pair limit, or the
// time budget. Reports the wall and CPU (user+sys) speedups with their
// intervals, the Wilcoxon signed-rank p-value of the pairs' wall times, and
// the instructions ratio where the hardware counted them (a deterministic
// secondary metric: the same binary retires nearly the same instructions on
// the same input whatever the machine's load).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/staging/machine_activity.h"
#include "staging_harness/stats/speedup.h"

namespace phaseloop::staging {

struct TimingOptions {
  int warmup_passes = 1;  // per side, before the first pair
  int min_pairs = 10;     // before the stopping rule is consulted
  int max_pairs = 60;
  double budget_s = 120;     // the timing phase's wall time
  double half_width = 0.01;  // stats::NarrowEnough
  double confidence = 0.99;  // of the intervals, in (0, 1)
};

// One pass of a side: the workload's run commands once.
struct PassSample {
  double wall_s = 0;
  double cpu_s = 0;
  bool hardware_counted = false;
  int64_t instructions = 0;
  int64_t cycles = 0;
  bool pinned = false;  // ran on the CPU asked for (StageOptions::cpu)
};

enum class Side { kBaseline, kCandidate };
using RunSide = std::function<absl::StatusOr<PassSample>(Side side)>;

struct TimingResult {
  std::vector<PassSample> baseline;  // one per pair, in order
  std::vector<PassSample> candidate;
  stats::SpeedupInterval wall;  // t_baseline / t_candidate: > 1 faster
  stats::SpeedupInterval cpu;
  double p_value = 1;  // Wilcoxon signed-rank, the pairs' wall times
  bool narrow = false;
  std::string stop_reason;  // "narrow", "max_pairs", "budget"
  // Median of the per-pair instructions_baseline / instructions_candidate;
  // 0 when the hardware did not count every pass.
  double instructions_ratio = 0;
  double elapsed_s = 0;  // warm-up included
  // The machine from the first pair to the last, and each side's CPU share
  // (machine_activity.h): how much to trust a figure taken while it was
  // busy.
  MachineActivity machine;
  bool all_pinned = false;  // every pass ran on the CPU asked for
};

// Called after every pair with the figures so far, for live progress;
// before min_pairs the result holds the pairs alone (no interval, no
// p-value yet).
using TimingProgress = std::function<void(const TimingResult&)>;

// InvalidArgument for options that cannot work (min_pairs < 3, max_pairs <
// min_pairs, a non-positive budget, a confidence outside (0, 1)); a failed
// pass is returned as is.
absl::StatusOr<TimingResult> TimeInterleaved(const RunSide& run,
                                             const TimingOptions& options,
                                             const TimingProgress& progress);

// A sentence for a reader when the baseline's runs are too short to time
// well, "" otherwise: its median pass over `commands` run commands under
// 0.1 s of CPU time (user + sys) a command — CPU, so that a busy machine
// does not make short runs read as long. Starting a command costs a few
// milliseconds (sh and exec: ~4 ms here) that no pipeline changes, so a speedup
// reads smaller than the program's, and the timer's and scheduler's noise
// weighs more; the workloads run 0.2-3 s.
std::string ShortRunsWarning(const TimingResult& timing, int commands);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_INTERLEAVED_TIMING_H_
