#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_TOPK_DEFAULTS_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_TOPK_DEFAULTS_H_
// topk's defaults, in one place: the wrapper's default policy spec, the
// Bazel toolchain's policy file and `eval --budget` all read them, so a
// change here reaches every one (header only: the toolchain generator
// depends on it without the policy runtime's LLVM).

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace phaseloop::policy_runtime {

// topk's k when neither the spec nor the artifact (default_top_k) gives one,
// and the k of the default spec below.
inline constexpr int kDefaultTopK = 4;

// topk's default work budget per module, in IR instructions compiled for
// measurement (see InferenceOptions::budget). 10,000 since issue 20's cost
// target: the whole bzip2 build at -Oz took 1.22-1.25x clang's wall time
// cold against 15,000's 1.92x on a quiet machine, while the Debian corpus
// lost 0.03-0.07 % of size (BENCHMARKS.md "topk's cold cost"); a
// measurement costs 0.05-0.09 ms per instruction. Modules of 5,000
// instructions or more (-Oz and a candidate do not fit) keep -Oz unmeasured.
inline constexpr int64_t kDefaultTopKBudget = 10000;

// The deprecated `budget_ms=M` (a clock) is read as M * this many
// instructions: the rate the clock budget was calibrated on.
inline constexpr int64_t kBudgetInstructionsPerMs = 20;

// How the wrapper runs the shipped policy when none is given, as the query
// of an `artifact:FILE?...` spec: "?mode=topk&k=4&budget=10000". topk (-Oz
// and the policy's 4 best-rated candidates measured, the smallest kept), so
// that by default no object is larger than -Oz's; on the validation split
// it was 2 % smaller (configs/policies/README.md). Single mode, one forward
// pass and no extra compilation, is one flag away: --phaseloop-policy=FILE.
inline std::string DefaultTopKQuery() {
  return absl::StrCat("?mode=topk&k=", kDefaultTopK,
                      "&budget=", kDefaultTopKBudget);
}

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_TOPK_DEFAULTS_H_
