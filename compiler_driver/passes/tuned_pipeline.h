#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_TUNED_PIPELINE_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_TUNED_PIPELINE_H_

// A standard pipeline built with other tuning: the decision kind beyond pass
// order that sets the parameters LLVM's own pipelines take
// (llvm::PipelineTuningOptions), per module. Spelled as one top-level
// pipeline element, phaseloop's own (LLVM's parser does not know it):
//
//   tuned<LEVEL;KEY[=VALUE];...>     e.g. tuned<O3;inline-threshold=500>
//
// LEVEL is O1|O2|O3|Os|Oz; the pipeline is default<LEVEL> built from the
// compile's tuning with these changes (llvm-16/tuning.tsv lists them):
//   inline-threshold=N         the inliner's default threshold (N in
//                              [-1000, 10000]; clang's are 250 at -O3, 225 at
//                              -O2; functions marked optsize/minsize, as -Os/
//                              -Oz mark all, still cap it at 50/5)
//   [no-]unroll                loop unrolling
//   [no-]interleave            loop interleaving
//   [no-]vectorize             the loop vectorizer
//   [no-]slp                   the SLP vectorizer
//   [no-]merge-functions       merging identical functions (thunks or aliases
//                              only where addresses may be equal)
// Each is a setting of LLVM's standard pipeline, none changes what a program
// means. A key at most once. Pure functions; thread-safe; no LLVM.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::passes {

// The element's name: "tuned".
inline constexpr char kTunedPipelineName[] = "tuned";

struct TunedPipeline {
  std::string level;  // "O1".."Oz"
  std::optional<int> inline_threshold;
  std::optional<bool> unroll;
  std::optional<bool> interleave;
  std::optional<bool> vectorize;
  std::optional<bool> slp;
  std::optional<bool> merge_functions;
};

// Parses the parameters between tuned<...>: "O3;inline-threshold=500".
// InvalidArgument naming the element and the offending parameter.
absl::StatusOr<TunedPipeline> ParseTunedParams(absl::string_view params);

// `element` is a whole top-level element: "tuned<O3;unroll>" -> its parsed
// parameters; nullopt when the element is not tuned<...> at all.
std::optional<absl::StatusOr<TunedPipeline>> ParseTunedElement(
    absl::string_view element);

// The element's canonical text (level first, keys in the order above):
// what a search or a table stores.
std::string TunedPipelineText(const TunedPipeline& tuned);

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_TUNED_PIPELINE_H_
