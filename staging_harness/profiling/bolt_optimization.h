#ifndef PHASELOOP_STAGING_HARNESS_PROFILING_BOLT_OPTIMIZATION_H_
#define PHASELOOP_STAGING_HARNESS_PROFILING_BOLT_OPTIMIZATION_H_

// Post-link optimisation with LLVM's BOLT (bolt-16): a built variant's
// programs and shared libraries rewritten from a profile of the workload's
// own run commands. Each ELF artifact is instrumented by llvm-bolt, every
// run command runs once on the training inputs (instrumented_runs.h), each
// process writes its branch profile, merge-fdata merges an artifact's
// profiles, and llvm-bolt lays the artifact out again: hot blocks
// together (ext-TSP), functions ordered by calls (hfsort+), cold code split
// off. Nothing is folded (BOLT's identical-code folding would give two
// functions one address, which a C program may compare): the rewrite is
// meant to change where code sits and how its branches are laid out, not
// what it does. A rewriter can be wrong too, so the stage checks the
// rewritten program's outputs before any timing.
//
// BOLT needs the link's relocations: every build of a stage with BOLT
// links with kBoltLinkFlag (both sides, so the baseline is the same code).
// An artifact BOLT cannot take (no relocations, no profile written: not
// run, or its processes ended by _exit or a signal; a tool error) stays as
// built, with a note; BoltOptimize fails only when none was rewritten.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::profiling {

inline constexpr char kBoltLinkFlag[] = "-Wl,--emit-relocs";

struct BoltOptions {
  // Debian's bolt-16 finds its instrumentation runtime beside the binary it
  // was started as: /usr/lib/llvm-16/bin/llvm-bolt finds
  // /usr/lib/llvm-16/lib/libbolt_rt_instr.a (/usr/bin/llvm-bolt-16 looks
  // in /usr/lib and does not).
  std::string llvm_bolt = "/usr/lib/llvm-16/bin/llvm-bolt";
  std::string merge_fdata = "/usr/lib/llvm-16/bin/merge-fdata";
  // The training inputs' seed (instrumented_runs.h); nullopt: the
  // workload's own seeds, the inputs the stage times.
  std::optional<uint64_t> input_seed;
};

struct BoltedArtifact {
  std::string path;  // relative, as the workload's build.artifacts names it
  bool optimized = false;  // false: unchanged, `note` says why
  int profiles = 0;        // processes whose profile was merged
  std::string note;
  // BOLT's own estimate from the profile (-dyno-stats), e.g.
  // "taken branches -54.7%, executed instructions -1.2%".
  std::string estimate;
};

struct BoltResult {
  std::string artifacts_dir;   // every artifact, the optimised ones rewritten
  std::string artifacts_hash;  // runner::HashFiles over build.artifacts
  std::string built_artifacts_hash;       // the build's, before BOLT
  std::vector<BoltedArtifact> artifacts;  // the ELF ones
  std::optional<uint64_t> input_seed;
  int generated_inputs = 0;  // inputs input_seed remade (0: none can be)
  double run_s = 0;          // the instrumented pass
  double bolt_s = 0;         // llvm-bolt and merge-fdata, wall
};

// FailedPrecondition naming the tool and the package (bolt-16) when
// llvm-bolt or merge-fdata cannot be run.
absl::Status CheckBoltTools(const BoltOptions& options);

// Rewrites `built`'s ELF artifacts under `work_dir` (replaced): profiles
// from one instrumented pass over the training inputs (with
// options.input_seed, made from `source_tree` under `work_dir`; else
// `timed`, the inputs the stage times), then each artifact a run executed
// optimised. `built` itself is left as it is. FailedPrecondition when a
// training run fails or writes into its inputs, or when no artifact could
// be rewritten (each one's note, e.g. the link flag it lacks).
absl::StatusOr<BoltResult> BoltOptimize(const workloads::Workload& workload,
                                        const std::string& source_tree,
                                        const runner::BuiltVariant& built,
                                        const runner::PreparedInputs& timed,
                                        const BoltOptions& options,
                                        const std::string& work_dir,
                                        std::ostream& progress);

}  // namespace phaseloop::profiling

#endif  // PHASELOOP_STAGING_HARNESS_PROFILING_BOLT_OPTIMIZATION_H_
