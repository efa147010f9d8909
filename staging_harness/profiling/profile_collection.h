#ifndef PHASELOOP_STAGING_HARNESS_PROFILING_PROFILE_COLLECTION_H_
#define PHASELOOP_STAGING_HARNESS_PROFILING_PROFILE_COLLECTION_H_

// A workload's execution profile, for profile-guided builds: the workload
// built with clang's frontend instrumentation (-fprofile-instr-generate on
// every compile and link, runner::Variant::profile_instrumented), its run
// commands run once on its inputs (each process writes a raw profile), and
// the raw profiles merged by llvm-profdata into one indexed profile. A build
// given it as -fprofile-instr-use=FILE (CFLAGS, or StageOptions::
// candidate_cflags) has clang's frontend write the counts into the IR as
// branch weights, entry counts and the profile summary, which the policy's
// pipeline then optimises with (phaseloop-cc reads it in process). The
// counts belong to the sources and flags they were taken from: a function
// whose code changed since is reported by clang (-Wprofile-instr-out-of-
// date) and optimised without its counts.
//
// The instrumented run is not checked against a baseline (it is not a
// candidate): a command that exits unlike its check's exit status, times
// out, or writes no profile makes the collection fail, naming the command.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::profiling {

struct ProfileOptions {
  std::string opt_level = "O3";  // of the instrumented build
  std::string work_dir;          // scratch: source copy, build, runs
  runner::Compilers compilers;
  std::string out;  // the indexed profile; "" = <work_dir>/<name>.profdata
  std::string llvm_profdata = "llvm-profdata-16";
  // Generated inputs made from this seed instead of their own, so the
  // profile can come from other data than the runs it is judged on
  // (shipped inputs stay as they are). nullopt: the workload's seeds.
  std::optional<uint64_t> input_seed;
  std::vector<std::string> link_flags;  // runner::Variant::link_flags
};

struct CollectedProfile {
  std::string path;      // the indexed profile, absolute
  int raw_profiles = 0;  // processes that wrote one (merged)
  double build_s = 0;
  double run_s = 0;          // wall time of the instrumented pass
  int generated_inputs = 0;  // inputs made by a generator (with input_seed)
  std::string summary;  // llvm-profdata show's counts (functions, max count)
};

// The flag that makes a build read `profile` (-fprofile-instr-use= with
// its absolute path): what `stage --profile` and `search --profile` add to
// the candidate's CFLAGS. InvalidArgument, naming `--profile` and the
// command that writes one, when it is not a file.
absl::StatusOr<std::string> ProfileUseFlag(const std::string& profile);

absl::StatusOr<CollectedProfile> CollectProfile(
    const workloads::Workload& workload, const ProfileOptions& options,
    std::ostream& progress);

}  // namespace phaseloop::profiling

#endif  // PHASELOOP_STAGING_HARNESS_PROFILING_PROFILE_COLLECTION_H_
