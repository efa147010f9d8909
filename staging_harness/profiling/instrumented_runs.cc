#include "staging_harness/profiling/instrumented_runs.h"

#include <ostream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace phaseloop::profiling {

InstrumentedWorkload ForInstrumentedRuns(const workloads::Workload& workload,
                                         std::optional<uint64_t> input_seed) {
  InstrumentedWorkload instrumented{workload, 0};
  for (workloads::Input& input : instrumented.workload.inputs) {
    if (input.generate.empty()) continue;
    ++instrumented.generated_inputs;
    if (input_seed) input.seed = *input_seed;
  }
  for (workloads::RunCommand& run : instrumented.workload.runs) {
    run.timeout_s *= kInstrumentedTimeoutFactor;
  }
  return instrumented;
}

absl::StatusOr<double> RunInstrumentedPass(
    const workloads::Workload& instrumented, const std::string& run_dir,
    const runner::PassOptions& pass, const std::string& prefix,
    const std::string& what, std::ostream& progress) {
  progress << "  " << prefix << ": " << instrumented.name << ": "
           << instrumented.runs.size() << " run command(s), " << what << " ..."
           << std::flush;
  absl::StatusOr<std::vector<runner::CommandRun>> runs =
      runner::RunPass(instrumented, run_dir, pass);
  if (!runs.ok()) {
    progress << " failed\n";
    return runs.status();
  }
  double wall_s = 0;
  for (size_t i = 0; i < runs->size(); ++i) {
    const runner::CommandRun& run = (*runs)[i];
    wall_s += run.measurement.wall_s;
    const int expected = instrumented.runs[i].check.exit_status;
    if (run.measurement.timed_out || run.measurement.exit_status != expected) {
      progress << " failed\n";
      return absl::FailedPreconditionError(absl::StrCat(
          instrumented.path, ": ", run.name, ": the ", what, " run ",
          run.measurement.timed_out
              ? absl::StrCat("ran over ", instrumented.runs[i].timeout_s,
                             " s (", kInstrumentedTimeoutFactor,
                             "x its timeout_s)")
              : absl::StrCat("exited ", run.measurement.exit_status, ", not ",
                             expected),
          "; its directory: ", run_dir));
    }
  }
  progress << " " << wall_s << " s\n";
  return wall_s;
}

absl::StatusOr<process::ProcessResult> RunProfileTool(
    const std::vector<std::string>& argv, absl::string_view what,
    absl::string_view install_hint) {
  process::ProcessSpec spec;
  spec.argv = argv;
  spec.timeout_seconds = 600;
  absl::StatusOr<process::ProcessResult> result = process::RunProcess(spec);
  if (!result.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", argv[0], " (", what,
                     "): ", result.status().message(), install_hint));
  }
  if (result->timed_out || result->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        argv[0], result->timed_out ? " ran over 600 s (" : " failed (", what,
        "): ", process::ShortReason(result->output), install_hint));
  }
  return result;
}

}  // namespace phaseloop::profiling
