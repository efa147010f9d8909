#ifndef PHASELOOP_STAGING_HARNESS_PROFILING_INSTRUMENTED_RUNS_H_
#define PHASELOOP_STAGING_HARNESS_PROFILING_INSTRUMENTED_RUNS_H_

// What every profile collection shares (clang's PGO profile, BOLT's): the
// workload as an instrumented build runs it, each run command once, and
// the check that every run ended as its check expects. The instrumented
// runs are not compared with a baseline (they are not a candidate).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/process/subprocess.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::profiling {

// Instrumented code runs slower than the build the run limits were set for.
inline constexpr double kInstrumentedTimeoutFactor = 4;

struct InstrumentedWorkload {
  // The workload with every run's timeout_s x kInstrumentedTimeoutFactor
  // and, with an input seed, every generated input made from it (so the
  // profile can come from other data than the runs it is judged on;
  // shipped inputs stay as they are).
  workloads::Workload workload;
  int generated_inputs = 0;
};
InstrumentedWorkload ForInstrumentedRuns(const workloads::Workload& workload,
                                         std::optional<uint64_t> input_seed);

// Each run command once in `run_dir` (prepared by the caller) with `pass`;
// the pass's wall time. A command that exits unlike its check's exit
// status or runs over is FailedPrecondition naming the workload file, the
// command and the directory. Progress lines start with `prefix`
// ("profile", "bolt"); `what` names the build ("instrumented",
// "BOLT-instrumented").
absl::StatusOr<double> RunInstrumentedPass(
    const workloads::Workload& instrumented, const std::string& run_dir,
    const runner::PassOptions& pass, const std::string& prefix,
    const std::string& what, std::ostream& progress);

// Runs a profile tool (llvm-profdata, llvm-bolt, merge-fdata) to the end
// (10 minutes at most). One that cannot start, fails or runs over is
// FailedPrecondition naming the tool, `what` it was doing, its last lines,
// and `install_hint` (where the tool comes from).
absl::StatusOr<process::ProcessResult> RunProfileTool(
    const std::vector<std::string>& argv, absl::string_view what,
    absl::string_view install_hint);

}  // namespace phaseloop::profiling

#endif  // PHASELOOP_STAGING_HARNESS_PROFILING_INSTRUMENTED_RUNS_H_
