#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_POLICY_ARTIFACT_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_POLICY_ARTIFACT_H_

// The policy artifact file: what offline_rl exports, the policy store serves
// and the driver evaluates without libtorch (message phaseloop.v1.
// PolicyArtifact in proto/phaseloop/v1/policy.proto).
//
// File layout (a text header, then the binary payload):
//   phaseloop-policy\n                    the magic line (kPolicyFileMagic)
//   format_version 1\n
//   payload_bytes <decimal>\n
//   payload_blake3 <32 lowercase hex>\n   ir::ContentHash of the payload
//   <payload>                             deterministic PolicyArtifact bytes
//
// Readers refuse any other format version, a short or long payload, a
// checksum mismatch, an unparsable or invalid PolicyArtifact, each with a
// message that names the source, what is wrong and what to do.
//
// The content hash (ir::ContentHash, BLAKE3) lives in libLLVM: binaries and
// tests that link this library must also link "@llvm" (or "@llvm//:static").
// All functions are thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/objectives/objective_names.h"
#include "compiler_driver/policy_runtime/artifact_limits.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::policy_runtime {

// Format 1: every artifact without single-mode exclusions.
inline constexpr uint32_t kPolicyFormatVersion = 1;
// Format 2: format 1 with CandidatePipeline.single_excluded set on some
// candidate. A format-1 driver would ignore the field and take those
// candidates in single mode, so it refuses the file instead; this driver
// reads both.
inline constexpr uint32_t kPolicyFormatVersionSingleExcluded = 2;
inline constexpr char kPolicyFileMagic[] = "phaseloop-policy";
// The conventional file extension of artifact files.
inline constexpr char kPolicyFileExtension[] = ".plpolicy";

// Known PolicyArtifact.objective and .formulation values.
// A size policy is trained on the whole object's allocated bytes
// ("alloc_size", issue 20) or, first generation, on .text ("text_size");
// either way topk compares whole objects (IsObjectSizeObjective).
using objectives::kObjectiveAllocSize;
using objectives::kObjectiveIrCount;
using objectives::kObjectiveRuntime;
using objectives::kObjectiveTextSize;
inline constexpr char kFormulationStepwise[] = "stepwise";
inline constexpr char kFormulationCandidate[] = "candidate";
// The -Oz pipeline: always a topk candidate, and single mode's abstain
// choice (the candidate with this pipeline, PolicyArtifact
// .single_abstain_margin).
inline constexpr char kOzPipeline[] = "default<Oz>";
// -Oz with LLVM's machine outliner: the fixed pipeline `phaseloop eval`
// reports beside a size policy (issue 20 measured it 1.3-5 % below -Oz in
// .text; on whole objects of the Debian corpus it is larger than -Oz's on
// about 40 % of modules: BENCHMARKS.md, "topk and the best fixed pipeline").
inline constexpr char kOzOutlinerPipeline[] =
    "default<Oz>,codegen<machine-outliner>";
// -Oz built with LLVM's function merging (a tuned standard pipeline,
// compiler_driver/passes/tuned_pipeline.h; what clang -Xclang
// -fmerge-functions does): never larger than -Oz's object on the Debian
// corpus's validation and test splits, 0.57 % and 0.03 % smaller in geomean
// (BENCHMARKS.md, "Tuned standard pipelines").
inline constexpr char kOzMergeFunctionsPipeline[] = "tuned<Oz;merge-functions>";

// alloc_size or text_size: a policy that sizes objects (topk measures the
// whole object's allocated bytes for both).
using objectives::IsObjectSizeObjective;

// The index of the candidate whose pipeline is kOzPipeline; -1 if none.
int OzCandidateIndex(const v1::PolicyArtifact& artifact);

// single mode's rule over a candidate policy's scores ([n]): `best` is the
// best-scoring candidate not `excluded` (empty: none is; else [n]), -Oz
// (`oz`) when every other is; `pick` is `best`, or -Oz when `best` beats
// scores[oz] by less than `margin`. `oz` -1: no -Oz candidate (then no
// candidate may be excluded, as validation requires). The driver
// (ArtifactPolicy) and the learner's margin (abstain_margin.h) share it.
struct SingleModeChoice {
  int best = -1;
  int pick = -1;
};
SingleModeChoice ChooseSingleMode(const float* scores, int n, int oz,
                                  double margin,
                                  const std::vector<bool>& excluded);

// [candidates]: each candidate's CandidatePipeline.single_excluded.
std::vector<bool> SingleExcludedOf(const v1::PolicyArtifact& artifact);

// The whole file's bytes for `artifact` (not validated here: call
// ValidatePolicyArtifact first when the artifact comes from elsewhere).
std::string SerializePolicyArtifactFile(const v1::PolicyArtifact& artifact);

// True when `file_bytes` starts with the magic line (cheap sniffing, e.g. to
// tell an artifact file from a policy spec).
bool LooksLikePolicyArtifactFile(absl::string_view file_bytes);

// Parses and validates a whole file. `source_name` (a path, a URL, "store
// version X") is used in error messages only. InvalidArgument (or
// DataLoss for tampering/truncation) on any defect.
absl::StatusOr<v1::PolicyArtifact> ParsePolicyArtifactFile(
    absl::string_view file_bytes, absl::string_view source_name);

// Reads and parses `path`; NotFound when it does not exist.
absl::StatusOr<v1::PolicyArtifact> ReadPolicyArtifactFile(
    const std::string& path);

// Writes the file atomically (temp file beside `path`, then rename). Refuses
// an artifact that fails ValidatePolicyArtifact.
absl::Status WritePolicyArtifactFile(const v1::PolicyArtifact& artifact,
                                     const std::string& path);

// The artifact's content hash: 32 hex digits of BLAKE3 over its
// deterministic protobuf serialization. This is the `policy_version`
// recorded in every decision the policy makes.
std::string PolicyVersionOf(const v1::PolicyArtifact& artifact);

// Structural checks: format_version, objective and formulation known,
// non-empty action_names, normalization layout known and its dims ==
// StateDim(action_names.size()), layers non-empty and chained (first input
// == state dim, each weights/bias size consistent, finite values), output
// dim == action count (stepwise) or candidate count (candidate, >= 1
// candidate), every candidate's actions in range and pipeline non-empty,
// max_steps >= 1 for stepwise, default_top_k >= 0.
absl::Status ValidatePolicyArtifact(const v1::PolicyArtifact& artifact);

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_POLICY_ARTIFACT_H_
