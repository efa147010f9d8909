// WorkloadStager's correctness checks: the baseline's own (twice, and an
// -O0 reference), a candidate's difference confirmed before it is called a
// miscompile, and the executed-IR count beside the time.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_loader.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/staging/stage_workload_impl.h"

namespace phaseloop::staging {

using runner::BuiltVariant;
using runner::CommandRun;

// The baseline twice (same outputs, passing the check), then the -O0
// reference (the baseline's outputs too).
absl::Status WorkloadStager::Impl::CheckBaseline(const BuiltVariant& baseline) {
  checked = true;
  progress << "  check: baseline twice, -O0 reference\n";
  absl::StatusOr<std::vector<CommandRun>> first =
      CheckedPass(baseline, "baseline-1");
  if (!first.ok()) return first.status();
  absl::StatusOr<std::vector<CommandRun>> second =
      CheckedPass(baseline, "baseline-2");
  if (!second.ok()) return second.status();
  auto differs =
      FirstMismatch(*first, *second, {"first baseline", "second baseline"});
  if (!differs.ok()) return differs.status();
  if (differs->has_value()) {
    unusable = absl::StrCat(
        "the baseline's runs fail the check, or their outputs differ from "
        "run to run (",
        Describe(**differs), "; each run's stdout and stderr are kept under ",
        Dir("check"), ")");
    return absl::OkStatus();
  }
  absl::StatusOr<BuiltVariant> reference = Build("O0", "baseline", "O0");
  if (!reference.ok()) return reference.status();
  absl::StatusOr<std::vector<CommandRun>> at_o0 =
      CheckedPass(*reference, "O0", kSlowBuildTimeoutScale);
  if (!at_o0.ok()) return at_o0.status();
  differs = FirstMismatch(*first, *at_o0, {"baseline", "-O0 reference"});
  if (!differs.ok()) return differs.status();
  if (differs->has_value() && (*differs)->second.what == "timed_out") {
    unusable = absl::StrCat(
        "the -O0 reference ran past ", kSlowBuildTimeoutScale,
        " times the time limit (", Describe(**differs),
        "): raise that run's timeout_s, or give it a smaller input");
    return absl::OkStatus();
  }
  if (differs->has_value()) {
    unusable = absl::StrCat(
        "the -O0 reference's outputs differ from the baseline's (",
        Describe(**differs), "): undefined behaviour in the program?");
    return absl::OkStatus();
  }
  this->reference = *std::move(first);
  return absl::OkStatus();
}

absl::StatusOr<WorkloadStager::Impl::DifferenceCheck>
WorkloadStager::Impl::CheckDifferenceAgain(const BuiltVariant& baseline,
                                           const BuiltVariant& candidate,
                                           const std::string& label) {
  DifferenceCheck check;
  progress << "  check: the difference again (" << kConfirmRuns
           << " more runs of the candidate, then of the baseline)\n";
  for (int i = 1; i <= kConfirmRuns; ++i) {
    const std::string again = absl::StrCat(label, "-again-", i);
    absl::StatusOr<std::vector<CommandRun>> runs =
        CheckedPass(candidate, again);
    if (!runs.ok()) return runs.status();
    auto differs = FirstMismatch(reference, *runs, {"baseline", again});
    if (!differs.ok()) return differs.status();
    ++check.candidate_runs;
    if (differs->has_value()) ++check.candidate_differed;
  }
  const int baseline_runs = check.candidate_differed < check.candidate_runs
                                ? 3 * kConfirmRuns
                                : kConfirmRuns;
  for (int i = 1; i <= baseline_runs; ++i) {
    const std::string again = absl::StrCat("baseline-again-", i);
    absl::StatusOr<std::vector<CommandRun>> runs = CheckedPass(baseline, again);
    if (!runs.ok()) return runs.status();
    auto differs = FirstMismatch(reference, *runs, {"baseline", again});
    if (!differs.ok()) return differs.status();
    if (differs->has_value()) {
      check.workload_varies =
          absl::StrCat("the baseline's own outputs differ on a later run (",
                       Describe(**differs), "): they vary from run to run");
      break;
    }
  }
  return check;
}

// A counting build of `policy` as variant `name`, each run command once
// (outputs checked against the reference), its executed IR instructions.
// What keeps the figure from being right makes it unavailable, with why;
// only what stops the harness itself (a run that cannot start, a directory
// that cannot be made) is an error.
absl::StatusOr<ExecutedIr> WorkloadStager::Impl::CountExecuted(
    const std::string& name, const std::string& policy,
    const std::string& extra_cflags) {
  ExecutedIr counted;
  auto unavailable = [&](std::string why) {
    progress << "  count: " << name << ": unavailable: " << why << "\n";
    counted.available = false;
    counted.unavailable = std::move(why);
    return counted;
  };
  absl::StatusOr<BuiltVariant> built =
      Build(name, policy, options.opt_level, extra_cflags,
            /*count_executed=*/true);
  if (!built.ok()) {
    return unavailable(
        absl::StrCat("the counting build failed: ", built.status().message()));
  }
  if (std::string why = UncountedUnits(built->decisions); !why.empty()) {
    return unavailable(why);
  }
  const std::string run_dir = Dir("run-" + name);
  if (absl::Status ready =
          runner::PrepareRunDirectory(workload, *built, inputs, run_dir);
      !ready.ok()) {
    return ready;
  }
  runner::PassOptions pass;
  pass.keep_outputs_dir = Dir("check/" + name);
  pass.executed_out_dir = Dir("executed/" + name);
  pass.timeout_scale = kSlowBuildTimeoutScale;
  absl::StatusOr<std::vector<CommandRun>> runs =
      runner::RunPass(workload, run_dir, pass);
  if (!runs.ok()) return runs.status();
  auto differs = FirstMismatch(reference, *runs, {"baseline", name});
  if (!differs.ok()) return differs.status();
  if (differs->has_value()) {
    return unavailable(absl::StrCat(
        "the counting build's outputs differ from the baseline's (",
        Describe(**differs), ")"));
  }
  for (size_t i = 0; i < workload.runs.size(); ++i) {
    absl::StatusOr<std::string> text =
        ir::ReadFile(runner::ExecutedOutPath(pass.executed_out_dir, i));
    AddExecutedCounts(workload.runs[i].name, text.ok() ? *text : "", &counted);
  }
  if (!counted.available) return unavailable(counted.unavailable);
  progress << "  count: " << name << ": " << counted.count
           << " executed IR instructions (" << counted.processes
           << (counted.processes == 1 ? " process" : " processes") << ")\n";
  return counted;
}

}  // namespace phaseloop::staging
