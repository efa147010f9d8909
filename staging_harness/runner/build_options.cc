#include "staging_harness/runner/build_options.h"

#include "absl/strings/str_cat.h"

namespace phaseloop::runner {

void AddWorkloadBuildOptions(CLI::App& cmd, WorkloadBuildFlags& flags,
                             const std::string& help_prefix) {
  cmd.add_option("--workloads-dir", flags.workloads_dir,
                 help_prefix + "where workload names are looked up")
      ->capture_default_str();
  cmd.add_option("--cc", flags.cc,
                 help_prefix +
                     "the phaseloop-cc to build with (default: "
                     "$PHASELOOP_CC, beside this binary, PATH)");
  cmd.add_option(
      "--link-flags", flags.link_flags,
      help_prefix +
          "flags for every command that links, in every build (the "
          "baseline's as the candidate's; through CC/CXX scripts, so "
          "builds whose link lines drop CFLAGS get them too), e.g. "
          "--link-flags=-fuse-ld=/usr/bin/ld.lld-16: LLVM 16 bitcode (a "
          "candidate built with -flto) links with lld 16 only");
}

absl::StatusOr<WorkloadBuildSetup> ResolveWorkloadBuild(
    const WorkloadBuildFlags& flags) {
  WorkloadBuildSetup setup;
  absl::StatusOr<Compilers> compilers = FindCompilers(flags.cc);
  if (!compilers.ok()) return compilers.status();
  setup.compilers = *std::move(compilers);
  absl::StatusOr<std::vector<std::string>> link_flags = FlagWords(
      "--link-flags", flags.link_flags, "-fuse-ld=/usr/bin/ld.lld-16");
  if (!link_flags.ok()) return link_flags.status();
  setup.link_flags = *std::move(link_flags);
  return setup;
}

absl::Status CheckWorkDirWithoutBlanks(const std::string& work_root,
                                       const std::string& why_cc_is_a_script) {
  if (work_root.find_first_of(" \t\n") == std::string::npos) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--work-dir '", work_root, "' holds a blank, and ", why_cc_is_a_script,
      ", which make splits at blanks: give a --work-dir without blanks"));
}

}  // namespace phaseloop::runner
