#include "staging_harness/profiling/profile_command.h"

#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "common/files/output_paths.h"
#include "common/process/stop_signals.h"
#include "nlohmann/json.hpp"
#include "staging_harness/profiling/profile_collection.h"
#include "staging_harness/runner/build_options.h"
#include "staging_harness/workloads/workload_files.h"

namespace phaseloop::profiling {
namespace fs = std::filesystem;
namespace {

struct ProfileFlags {
  std::string workload;
  runner::WorkloadBuildFlags build;  // --workloads-dir, --cc, --link-flags
  std::string out;
  std::string opt_level = "O3";
  std::string work_dir;
  std::string llvm_profdata = "llvm-profdata-16";
  int64_t input_seed = -1;
  bool json = false;
};

int RunProfile(const ProfileFlags& f) {
  process::KillChildrenOnStopSignals();
  auto fail = [](const absl::Status& status) {
    std::cerr << "phaseloop profile: " << status.message() << "\n";
    return command::ExitCodeOf(status);
  };
  absl::StatusOr<std::string> file =
      workloads::WorkloadFileFor(f.workload, f.build.workloads_dir);
  if (!file.ok()) return fail(file.status());
  absl::StatusOr<workloads::Workload> workload = workloads::LoadWorkload(*file);
  if (!workload.ok()) return fail(workload.status());
  absl::StatusOr<runner::WorkloadBuildSetup> build =
      runner::ResolveWorkloadBuild(f.build);
  if (!build.ok()) return fail(build.status());

  ProfileOptions options;
  options.opt_level = f.opt_level;
  options.compilers = build->compilers;
  options.link_flags = build->link_flags;
  options.llvm_profdata = f.llvm_profdata;
  if (f.input_seed >= 0) options.input_seed = f.input_seed;
  options.work_dir =
      f.work_dir.empty()
          ? (fs::temp_directory_path() / "phaseloop-profile" / workload->name)
                .string()
          : f.work_dir;
  options.out = f.out.empty() ? workload->name + ".profdata" : f.out;
  // Found before the build and the runs: a directory or a missing parent
  // as --out failed at the end (or made the directory, as root).
  if (absl::Status out = files::CheckOutputPath("--out", options.out);
      !out.ok()) {
    return fail(out);
  }
  // The instrumented builds' CC is a script in the work directory, which
  // make splits at blanks (stage says the same of --link-flags builds).
  if (absl::Status blanks = runner::CheckWorkDirWithoutBlanks(
          fs::absolute(options.work_dir).string(),
          "the instrumented builds' CC is a script in it");
      !blanks.ok()) {
    return fail(blanks);
  }
  absl::StatusOr<CollectedProfile> profile =
      CollectProfile(*workload, options, std::cerr);
  if (!profile.ok()) return fail(profile.status());
  if (f.json) {
    nlohmann::json j = {{"workload", workload->name},
                        {"profile", profile->path},
                        {"raw_profiles", profile->raw_profiles},
                        {"generated_inputs", profile->generated_inputs},
                        {"input_seed", nullptr},
                        {"build_s", profile->build_s},
                        {"run_s", profile->run_s},
                        {"summary", profile->summary}};
    if (f.input_seed >= 0) j["input_seed"] = f.input_seed;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << "profile of " << workload->name << ": " << profile->path
              << "\n  " << profile->raw_profiles << " processes, "
              << profile->summary << "\n  use it: phaseloop stage --workload "
              << workload->name << " --policy P --profile " << profile->path
              << "\n  or in a build: CFLAGS=\"-O3 -fprofile-instr-use="
              << profile->path << "\"\n";
  }
  return command::kExitOk;
}

}  // namespace

void AddProfileCommand(CLI::App& app, int& exit_code) {
  auto [cmd, flags] = command::AddSubcommand<ProfileFlags>(
      app, "profile",
      "Collect a workload's execution profile for profile-guided builds: "
      "build it with clang's frontend instrumentation "
      "(-fprofile-instr-generate), run its run commands once on its inputs, "
      "merge the processes' raw profiles with llvm-profdata. Give the result "
      "to `phaseloop stage --profile` or `phaseloop search --objective "
      "runtime --profile`, or to a build as "
      "-fprofile-instr-use=FILE (phaseloop-cc reads it in process). Exit 0 "
      "written, 1 internal error, 2 bad input (workload, a failed build or "
      "run)",
      exit_code, RunProfile);
  cmd->add_option("--workload", flags->workload,
                  "workload name (configs/workloads/NAME.yaml) or a YAML path")
      ->required();
  cmd->add_option("--out", flags->out,
                  "the indexed profile to write (default: NAME.profdata)");
  cmd->add_option("--opt-level", flags->opt_level,
                  "the instrumented build's level")
      ->check(CLI::IsMember({"O1", "O2", "O3", "Os", "Oz"}))
      ->capture_default_str();
  cmd->add_option("--work-dir", flags->work_dir,
                  "scratch directory (source copy, build, runs, raw "
                  "profiles), kept for inspection (default: "
                  "$TMPDIR/phaseloop-profile/NAME)");
  cmd->add_option("--llvm-profdata", flags->llvm_profdata,
                  "the llvm-profdata that merges the raw profiles")
      ->capture_default_str();
  cmd->add_option("--input-seed", flags->input_seed,
                  "make the generated inputs from this seed instead of the "
                  "workload's own (profile other data than staging times; "
                  "shipped inputs stay as they are)")
      ->check(command::NonNegativeNumber());
  runner::AddWorkloadBuildOptions(*cmd, flags->build);
  cmd->add_flag("--json", flags->json, "print JSON instead of text");
}

}  // namespace phaseloop::profiling
