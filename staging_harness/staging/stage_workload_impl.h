#ifndef PHASELOOP_STAGING_HARNESS_STAGING_STAGE_WORKLOAD_IMPL_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_STAGE_WORKLOAD_IMPL_H_

// WorkloadStager's insides, shared by stage_workload.cc (building, timing)
// and stage_checks.cc (the correctness checks: the baseline's, a
// difference confirmed, the executed-IR count). Not a public header.

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/files/file_lock.h"
#include "staging_harness/correctness/output_compare.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/staging/executed_ir.h"
#include "staging_harness/staging/stage_workload.h"

namespace phaseloop::staging {

inline constexpr char kUbsanFlags[] =
    "-fsanitize=undefined -fno-sanitize-recover=undefined";
// The time limit of builds that run slower than the level staged (the -O0
// reference, the UBSan and counting builds): timeout_s times this.
inline constexpr double kSlowBuildTimeoutScale = 10;
// How often each side runs again to confirm a difference: a program whose
// outputs vary one run in four passes the baseline's own checks (3 runs)
// about 40 % of the time, and was then called a miscompile, its pipeline
// blocked for good; with the candidate's 3 more runs and, since its
// difference then comes and goes, the baseline's 9 more, about 3 %.
inline constexpr int kConfirmRuns = 3;

inline std::string Describe(
    const std::pair<std::string, correctness::Mismatch>& m) {
  return absl::StrCat(m.first, ": ", m.second.what, ": ", m.second.detail);
}

struct WorkloadStager::Impl {
  Impl(const workloads::Workload& w, const StageOptions& o, std::ostream& p)
      : workload(w), options(o), progress(p) {}
  const workloads::Workload workload;
  const StageOptions options;
  std::ostream& progress;
  // Held while the stager lives: one stager at a time in a work directory.
  std::optional<files::FileLock> lock;
  std::string source;
  runner::PreparedInputs inputs;
  // The baseline's checks, made once before the first differing candidate:
  // its first pass's outputs (the reference every candidate is compared
  // with), and why the workload is unusable ("" when it is usable).
  bool checked = false;
  std::vector<runner::CommandRun> reference;
  std::string unusable;
  // The baseline's executed IR instructions, counted once (step 5).
  std::optional<ExecutedIr> baseline_executed;

  std::string Dir(const std::string& name) const {
    return options.work_dir + "/" + name;
  }
  // Two stagers in one work directory (a stage, a runtime search or a
  // training's speed gate each make one; their default directories are
  // shared) replaced each other's builds mid-run: the second is refused.
  absl::Status LockWorkDir() {
    std::error_code made;
    std::filesystem::create_directories(
        std::filesystem::path(options.work_dir).parent_path(), made);
    absl::StatusOr<files::FileLock> held =
        files::FileLock::Acquire(options.work_dir + ".lock", 0);
    if (!held.ok()) {
      return absl::FailedPreconditionError(
          absl::IsUnavailable(held.status())
              ? absl::StrCat("another phaseloop run (a stage, a runtime "
                             "search or a training's speed gate) is using ",
                             options.work_dir, " (", held.status().message(),
                             "); wait for it, or give this one its own "
                             "--work-dir")
              : absl::StrCat("cannot lock ", options.work_dir, " (",
                             held.status().message(),
                             "); give a --work-dir you can write"));
    }
    lock.emplace(*std::move(held));
    return absl::OkStatus();
  }
  absl::StatusOr<runner::BuiltVariant> Build(
      const std::string& name, const std::string& policy,
      const std::string& opt_level, const std::string& extra_cflags = "",
      bool count_executed = false) {
    runner::Variant variant;
    variant.name = name;
    variant.policy = policy;
    variant.opt_level = opt_level;
    variant.extra_cflags = extra_cflags;
    variant.count_executed = count_executed;
    variant.object_cache_dir = options.object_cache_dir;
    variant.link_flags = options.link_flags;
    return runner::BuildVariant(workload, source, options.compilers, variant,
                                Dir("build-" + name), progress);
  }

  // One checked pass of `built`, outputs kept under check/<label>.
  absl::StatusOr<std::vector<runner::CommandRun>> CheckedPass(
      const runner::BuiltVariant& built, const std::string& label,
      double timeout_scale = 1) {
    const std::string run_dir = Dir("run-" + built.variant.name);
    if (absl::Status ready =
            runner::PrepareRunDirectory(workload, built, inputs, run_dir);
        !ready.ok()) {
      return ready;
    }
    runner::PassOptions pass;
    pass.keep_outputs_dir = Dir("check/" + label);
    pass.timeout_scale = timeout_scale;
    absl::StatusOr<std::vector<runner::CommandRun>> runs =
        runner::RunPass(workload, run_dir, pass);
    if (!runs.ok()) return runs;
    if (absl::Status same = runner::InputsUnchanged(
            inputs, run_dir,
            absl::StrCat(workload.path, ": the ", label, " run"));
        !same.ok()) {
      return same;
    }
    return runs;
  }

  // The first command whose outputs differ, with what differed.
  absl::StatusOr<std::optional<std::pair<std::string, correctness::Mismatch>>>
  FirstMismatch(const std::vector<runner::CommandRun>& reference,
                const std::vector<runner::CommandRun>& other,
                const correctness::RunNames& names) {
    for (size_t i = 0; i < workload.runs.size(); ++i) {
      absl::StatusOr<std::optional<correctness::Mismatch>> mismatch =
          correctness::CompareOutputs(reference[i].outputs, other[i].outputs,
                                      workload.runs[i].check, names);
      if (!mismatch.ok()) return mismatch.status();
      if (mismatch->has_value()) {
        return std::make_optional(
            std::make_pair(workload.runs[i].name, **mismatch));
      }
    }
    return std::nullopt;
  }

  absl::Status CheckBaseline(const runner::BuiltVariant& baseline);
  // Before a candidate's difference is called its fault: the candidate runs
  // again kConfirmRuns times, and the baseline as often — three times as
  // often when the candidate's difference came and went, since a program
  // whose outputs vary now and then is then the likelier cause. A baseline
  // that differs from its own reference makes the workload unusable
  // (`workload_varies` says how); otherwise the difference is the
  // candidate's, on `candidate_differed` of its `candidate_runs` runs: a
  // miscompile from 2 on (a pipeline that brings in nondeterminism is
  // blamed like any other), unconfirmed at 1 (Evaluate).
  struct DifferenceCheck {
    std::string workload_varies;
    int candidate_runs = 1;
    int candidate_differed = 1;
  };
  absl::StatusOr<DifferenceCheck> CheckDifferenceAgain(
      const runner::BuiltVariant& baseline,
      const runner::BuiltVariant& candidate, const std::string& label);
  absl::StatusOr<ExecutedIr> CountExecuted(const std::string& name,
                                           const std::string& policy,
                                           const std::string& extra_cflags);
};

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_STAGE_WORKLOAD_IMPL_H_
