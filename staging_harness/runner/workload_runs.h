#ifndef PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_RUNS_H_
#define PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_RUNS_H_

// Running a built variant: a run directory holding its artifacts (copied)
// and the inputs (hard-linked, so they must not be modified), and one pass
// over the workload's run commands (`sh -c COMMAND` in that directory, each
// with its time limit), measured by common/process/measured_process: wall,
// user+sys CPU (wait4), and instructions/cycles where the kernel allows.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process/measured_process.h"
#include "staging_harness/correctness/output_compare.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runner {

// Makes `run_dir` (replaced when it exists) for `built`.
absl::Status PrepareRunDirectory(const workloads::Workload& workload,
                                 const BuiltVariant& built,
                                 const PreparedInputs& inputs,
                                 const std::string& run_dir);

struct CommandRun {
  std::string name;  // the run command's name
  process::Measurement measurement;
  // Where its stdout and check.files went: under the pass's keep directory,
  // or (timing passes) overwritten by the next pass.
  correctness::RunOutputs outputs;
};

struct PassOptions {
  // When set, each command's stdout is moved, and its check.files copied
  // (a later command may read them), to <keep_outputs_dir>/<command index>/
  // for the correctness check, and its stderr is written there (`stderr`;
  // otherwise it is dropped).
  std::string keep_outputs_dir;
  // Each command's time limit is its timeout_s times this (an -O0 reference
  // or a sanitizer build runs several times slower than the level timed).
  double timeout_scale = 1;
  int cpu = -1;  // pin to this CPU (measured_process.h)
  bool count_hardware = false;
  // When set, command i runs with PHASELOOP_EXECUTED_OUT=<dir>/<i> (the
  // directory created, the file removed first): where a counting build's
  // processes append their executed IR instruction counts
  // (compiler_driver/instrumentation/executed_count.h).
  std::string executed_out_dir;
  // When set, command i runs with LLVM_PROFILE_FILE=<dir>/<i>-%p.profraw
  // (the directory created): where a profile-instrumented build's processes
  // write their profiles (staging_harness/profiling).
  std::string profile_out_dir;
};

// The file command `index` of a pass with `executed_out_dir` counts into.
std::string ExecutedOutPath(const std::string& executed_out_dir, size_t index);

// One run of every command of the workload, in order (all of them, even
// after one failed: the check decides what a failure means).
absl::StatusOr<std::vector<CommandRun>> RunPass(
    const workloads::Workload& workload, const std::string& run_dir,
    const PassOptions& options);

// Sums of a pass's measurements (the workload's time is all its commands').
struct PassTotals {
  double wall_s = 0;
  double cpu_s = 0;               // user + sys
  bool hardware_counted = false;  // every command's counters
  int64_t instructions = 0;
  int64_t cycles = 0;
  bool pinned = false;  // every command ran on the CPU asked for
};
PassTotals Totals(const std::vector<CommandRun>& pass);

}  // namespace phaseloop::runner

#endif  // PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_RUNS_H_
