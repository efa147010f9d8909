#ifndef PHASELOOP_STAGING_HARNESS_RUNNER_BUILD_OPTIONS_H_
#define PHASELOOP_STAGING_HARNESS_RUNNER_BUILD_OPTIONS_H_

// The options every command that builds workloads shares (`stage`, `search
// --objective runtime`, `profile`): where workload names are looked up, the
// wrapper the builds use, and the link flags of every build.

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "staging_harness/runner/workload_build.h"

namespace phaseloop::runner {

struct WorkloadBuildFlags {
  std::string workloads_dir = "configs/workloads";
  std::string cc;          // phaseloop-cc ("" = FindCompilers' lookup)
  std::string link_flags;  // Variant::link_flags, as one string of words
};

// Adds --workloads-dir, --cc and --link-flags to `cmd`, each help text
// after `help_prefix` (`search` says which objective an option is for).
void AddWorkloadBuildOptions(CLI::App& cmd, WorkloadBuildFlags& flags,
                             const std::string& help_prefix = "");

struct WorkloadBuildSetup {
  Compilers compilers;
  std::vector<std::string> link_flags;
};

// The wrapper found (FindCompilers) and the link flags checked (FlagWords
// for --link-flags): FailedPrecondition or InvalidArgument as those say.
absl::StatusOr<WorkloadBuildSetup> ResolveWorkloadBuild(
    const WorkloadBuildFlags& flags);

// InvalidArgument when `work_root` holds a blank and `why_cc_is_a_script`
// (e.g. "the instrumented builds' CC is a script in it") says the builds'
// CC lives there: make splits $(CC) at blanks.
absl::Status CheckWorkDirWithoutBlanks(const std::string& work_root,
                                       const std::string& why_cc_is_a_script);

}  // namespace phaseloop::runner

#endif  // PHASELOOP_STAGING_HARNESS_RUNNER_BUILD_OPTIONS_H_
