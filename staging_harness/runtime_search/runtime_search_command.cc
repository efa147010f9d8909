#include "staging_harness/runtime_search/runtime_search_command.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/files/atomic_file.h"
#include "common/process/shell_quote.h"
#include "common/process/stop_signals.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/profiling/bolt_optimization.h"
#include "staging_harness/runner/build_options.h"
#include "staging_harness/runtime_search/runtime_search.h"
#include "staging_harness/runtime_search/runtime_search_report.h"
#include "staging_harness/staging/stage_command.h"
#include "staging_harness/workloads/workload_files.h"

namespace phaseloop::runtime_search {
namespace {

// --workload NAME is <workloads_dir>/NAME.yaml; a path is taken as it is.
absl::StatusOr<std::string> WorkloadFile(const RuntimeSearchFlags& f) {
  if (f.workload.empty()) {
    return absl::InvalidArgumentError(
        "--objective runtime needs --workload NAME (a file under "
        "--workloads-dir, e.g. example) or a workload YAML path");
  }
  return workloads::WorkloadFileFor(f.workload, f.build.workloads_dir);
}

}  // namespace

void AddRuntimeSearchOptions(CLI::App& search, RuntimeSearchFlags& flags) {
  search.add_option("--workload", flags.workload,
                    "runtime: the workload searched (NAME under "
                    "--workloads-dir, or a YAML path)");
  search.add_option("--policy-out", flags.policy_out,
                    "runtime: write the confirmed winning table policy here "
                    "(`phaseloop stage --policy table:FILE` reproduces it)");
  search
      .add_option("--confirm-budget", flags.confirm_budget_s,
                  "runtime: seconds of timing for the confirmation run of "
                  "the combined winners")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  search
      .add_option("--runoff-contenders", flags.runoff_contenders,
                  "runtime: each hot module's best few pipelines above 1 in "
                  "the short runs are timed again with more pairs before "
                  "the winner is picked (0: the short runs pick)")
      ->capture_default_str()
      ->check(CLI::Range(0, 16));
  search
      .add_option("--runoff-budget", flags.runoff_budget_s,
                  "runtime: seconds of runoff; a module's runoff starts "
                  "only while some remain")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  search.add_flag("--count-executed", flags.count_executed,
                  "runtime: count each measured evaluation's executed IR "
                  "instructions beside its time (two more builds and one "
                  "run of each side per evaluation)");
  search
      .add_option("--max-modules", flags.max_modules,
                  "runtime: at most this many hot modules searched")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  search
      .add_option("--coverage", flags.coverage,
                  "runtime: search the hottest modules until their share of "
                  "the samples reaches this")
      ->capture_default_str()
      ->check(command::NumberInRange(0.01, 1.0));
  search.add_option("--cpu", flags.cpu,
                    "runtime: pin every timed run to this CPU");
  search.add_option("--work-dir", flags.work_dir,
                    "runtime: scratch directory (default: "
                    "$TMPDIR/phaseloop-runtime-search)");
  search.add_option("--profile", flags.profile,
                    "runtime: build every evaluation (not the -O3 baseline) "
                    "with this execution profile (-fprofile-instr-use; "
                    "`phaseloop profile` writes one): the profile alone is "
                    "staged first, then each hot module's pipelines on top");
  search.add_option(
      "--candidate-cflags", flags.candidate_cflags,
      "runtime: compiler flags for every evaluation's build (after "
      "--profile's; not the -O3 baseline's), e.g. -flto (with --link-flags="
      "-fuse-ld=/usr/bin/ld.lld-16): those flags alone are staged first, "
      "then each hot module's pipelines on top (under -flto as clang's "
      "pre-link pipeline)");
  runner::AddWorkloadBuildOptions(search, flags.build, "runtime: ");
  staging::AddBoltOptions(
      search, flags.bolt, flags.bolt_input_seed,
      ": here the search's last step, after its confirmation: the pick (the "
      "winning table, else the build flags alone or -O3) rewritten, timed "
      "in full, chosen when its interval lies above 1 and its median above "
      "the pick's; nothing of it is recorded");
  search.add_flag("--keep-builds", flags.keep_builds,
                  "runtime: keep every evaluation's build and run directories");
  search.add_flag("--no-object-cache", flags.no_object_cache,
                  "runtime: compile every unit of every build (by default "
                  "builds share the wrapper's object cache under the work "
                  "dir, so an evaluation recompiles only its module)");
}

int RunRuntimeSearchCommand(const RuntimeSearchFlags& f, std::ostream& out,
                            std::ostream& err) {
  process::KillChildrenOnStopSignals();
  auto fail = [&err](const absl::Status& status) {
    err << "phaseloop search: " << status.message() << "\n";
    return command::ExitCodeOf(status);
  };
  absl::StatusOr<std::string> file = WorkloadFile(f);
  if (!file.ok()) return fail(file.status());
  absl::StatusOr<workloads::Workload> workload = workloads::LoadWorkload(*file);
  if (!workload.ok()) return fail(workload.status());
  absl::StatusOr<runner::WorkloadBuildSetup> build =
      runner::ResolveWorkloadBuild(f.build);
  if (!build.ok()) return fail(build.status());
  std::unique_ptr<replay_buffer::ReplayStore> store;
  if (!f.buffer.empty()) {
    absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> opened =
        replay_buffer::OpenReplayStore(f.buffer);
    if (!opened.ok()) return fail(opened.status());
    store = *std::move(opened);
  }

  staging::StageOptions stage;
  stage.opt_level = "O3";
  stage.compilers = build->compilers;
  stage.link_flags = build->link_flags;
  stage.cpu = f.cpu;
  stage.count_executed = f.count_executed;
  absl::StatusOr<std::string> candidate_cflags =
      staging::CandidateCflags(f.profile, f.candidate_cflags);
  if (!candidate_cflags.ok()) return fail(candidate_cflags.status());
  stage.candidate_cflags = *std::move(candidate_cflags);
  stage.work_dir = staging::WorkRoot(f.work_dir, "phaseloop-runtime-search") +
                   "/" + workload->name;
  RuntimeSearchOptions options;
  absl::StatusOr<std::optional<profiling::BoltOptions>> bolt =
      staging::BoltFromFlags(f.bolt, f.bolt_input_seed, stage.link_flags);
  if (!bolt.ok()) return fail(bolt.status());
  options.bolt = *std::move(bolt);
  options.budget_s = f.budget_s;
  options.max_evaluations = int(f.max_evaluations);
  options.seed = f.seed;
  options.coverage = f.coverage;
  options.max_modules = f.max_modules;
  options.keep_builds = f.keep_builds;
  options.object_cache = !f.no_object_cache;
  options.confirm_timing.budget_s = f.confirm_budget_s;
  options.runoff_contenders = f.runoff_contenders;
  options.runoff_budget_s = f.runoff_budget_s;
  err << "runtime search: " << workload->name << ", " << f.budget_s
      << " s budget, seed " << f.seed << ", scratch " << stage.work_dir << "\n";
  // The `phaseloop stage` command that builds what the search found.
  auto StageCommand = [&](const std::string& policy, bool bolt) {
    return absl::StrCat(
        "phaseloop stage --workload ", *file, " --policy ", policy,
        f.profile.empty() ? "" : " --profile " + f.profile,
        f.candidate_cflags.empty()
            ? ""
            : " --candidate-cflags=" + process::ShellWord(f.candidate_cflags),
        f.build.link_flags.empty()
            ? ""
            : " --link-flags=" + process::ShellWord(f.build.link_flags),
        bolt ? " --bolt" : "",
        bolt && f.bolt_input_seed >= 0
            ? absl::StrCat(" --bolt-input-seed ", f.bolt_input_seed)
            : "");
  };
  absl::StatusOr<RuntimeSearchResult> result =
      RunRuntimeSearch(*workload, stage, options, store.get(), err);
  if (!result.ok()) return fail(result.status());
  if (result->profile_confirmed) {
    err << "the build flags alone are the confirmed gain: build with "
        << stage.candidate_cflags
        << (f.build.link_flags.empty() ? ""
                                       : " and link with " + f.build.link_flags)
        << " (no table policy to write)\n";
  } else if (!f.policy_out.empty()) {
    if (result->policy_table.empty()) {
      err << "no confirmed gain (the confirmation's interval does not lie "
             "above 1): "
          << f.policy_out << " not written\n";
    } else if (absl::Status w = files::WriteFileAtomically(
                   f.policy_out, result->policy_table);
               !w.ok()) {
      return fail(w);
    } else {
      err << "winning policy written to " << f.policy_out << " ("
          << StageCommand("table:" + f.policy_out, false) << ")\n";
    }
  }
  if (result->bolt_chosen) {
    const bool table = !result->policy_table.empty() && !f.policy_out.empty();
    err << "BOLT on top of the pick is faster still: "
        << StageCommand(table ? "table:" + f.policy_out : "baseline", true)
        << (!result->policy_table.empty() && f.policy_out.empty()
                ? " (with the winning table as --policy: give --policy-out "
                  "to keep it)"
                : "")
        << "\n";
  }
  if (store) {
    err << "episodes, staging rewards and decisions recorded in " << f.buffer
        << "\n";
  }
  if (f.json) {
    out << RuntimeSearchJson(*result).dump(
               2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << FormatRuntimeSearchTable(*result);
  }
  return result->miscompile_found ? staging::kExitMiscompile : command::kExitOk;
}

}  // namespace phaseloop::runtime_search
