#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_POLICY_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_POLICY_H_

// Choosing a pass pipeline for one module with a policy artifact, in process
// and without libtorch. Two inference modes:
//   single  one chain of forward passes. Candidate formulation: argmax over
//           the candidates' scores (those marked single_excluded left out:
//           training saw them make modules larger than -Oz) -> that
//           candidate's pipeline, except that -Oz is kept when the argmax
//           beats the -Oz candidate's score by less than the artifact's
//           single_abstain_margin. Stepwise:
//           build the state, forward, apply the argmax action to a clone of
//           the module, recompute Autophase + InstCount, repeat for
//           max_steps; pipeline = the chosen actions' pipelines joined by ','.
//   topk    evaluates `default<Oz>` first, then the k best-scored candidates
//           (stepwise: the greedy rollouts that start with the k best first
//           actions) on clones of the module, measuring the policy's
//           objective (text_size: codegen with the caller's emitter, the
//           whole object's allocated bytes compared, never .text alone;
//           ir_count: instruction count), within a per-module work budget
//           (instructions compiled, never the clock);
//           keeps the best, -Oz unless a candidate is strictly better, so a
//           size policy's object is never larger in total than -Oz's on the
//           module it measured.
//           Runtime policies have nothing to measure in process: topk falls
//           back to single for them.
//
// Threading: an ArtifactPolicy is immutable after Create and may be shared by
// threads; each Choose call must get its own ModuleEnvironment (PassRunner
// and ObjectEmitter are single-threaded). Candidate pipelines come from the
// artifact: a pipeline that crashes LLVM crashes the caller, so callers that
// must survive run Choose in a child process (as the wrapper does).

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/policy_network.h"
#include "compiler_driver/policy_runtime/topk_defaults.h"
#include "llvm/IR/Module.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::policy_runtime {

enum class InferenceMode { kSingle, kTopK };

struct InferenceOptions {
  InferenceMode mode = InferenceMode::kSingle;
  int top_k = 0;  // 0: the artifact's default_top_k, else kDefaultTopK
  // topk: what one module may spend on measurements, counted in work, never
  // the clock, so the same module gets the same object on any machine under
  // any load (a build cache may hold one object per action key). Measuring
  // a pipeline costs the unoptimised module's instruction count (the
  // pipeline and code generation run on a clone of it); a stepwise
  // candidate's greedy rollout costs as much again. -Oz is measured first
  // when it fits, then candidates best-scored first while the total fits;
  // a module whose -Oz alone does not fit keeps -Oz unmeasured.
  int64_t budget = kDefaultTopKBudget;
};

// "single" or "topk"; InvalidArgument naming the text otherwise.
absl::StatusOr<InferenceMode> ParseInferenceMode(absl::string_view text);
const char* InferenceModeName(InferenceMode mode);

// What the policy may use to run and measure pipelines on the module: the
// caller's runner (its tuning and target machine are the ones the module
// will be compiled with) and, for text_size in topk, its code generator.
// Not owned; emitter may be null when only single mode is used.
struct ModuleEnvironment {
  passes::PassRunner* runner = nullptr;
  codegen::ObjectEmitter* emitter = nullptr;
};

struct PolicyChoice {
  std::string pipeline;  // PassBuilder text to run on the module
  std::string note;      // how it was chosen, for decision records and logs
  int evaluated = 0;     // topk: pipelines measured (incl. -Oz)
  int64_t work = 0;      // topk: budget spent (InferenceOptions::budget)
  // topk: the chosen pipeline's measured value: the object's alloc_size
  // (every allocated section) for a text_size policy, else ir_count.
  int64_t measured = -1;
  int64_t oz_measured = -1;  // topk: the same measure of -Oz
  // topk: every pipeline measured, -Oz first, with its measured value (a
  // candidate that failed to run or measure is not listed).
  std::vector<std::pair<std::string, int64_t>> measured_pipelines;
  // topk of a size policy: the chosen pipeline's object as measured (its IR
  // verified), so the wrapper writes it instead of optimising and emitting
  // the module a second time; its IR instruction count after the pipeline.
  // Empty (and -1) when not kept (PipelineMeasurement::object).
  std::string object;
  int64_t object_ir_count = -1;
};

class ArtifactPolicy {
 public:
  // Validates the artifact, builds the network, maps action_names onto the
  // LLVM 16 action space (an unknown name is InvalidArgument: the artifact
  // was trained for another action space).
  static absl::StatusOr<std::unique_ptr<ArtifactPolicy>> Create(
      v1::PolicyArtifact artifact, InferenceOptions options = {});

  const std::string& version() const { return version_; }
  const v1::PolicyArtifact& artifact() const { return artifact_; }
  const InferenceOptions& options() const { return options_; }
  const PolicyNetwork& network() const { return network_; }
  int top_k() const;
  // alloc_size, text_size or ir_count.
  bool is_size_policy() const;
  // True when Choose needs the module (stepwise, or topk of a size policy);
  // false when ChooseFromFeatures suffices.
  bool NeedsModule() const;

  // The network's scores for one state (output_dim values).
  std::vector<float> Score(absl::Span<const int64_t> autophase,
                           absl::Span<const int64_t> inst_count,
                           absl::Span<const int32_t> actions_taken) const;

  // Single mode, candidate formulation: the best-scored candidate. Requires
  // !NeedsModule() (asserted).
  PolicyChoice ChooseFromFeatures(absl::Span<const int64_t> autophase,
                                  absl::Span<const int64_t> inst_count) const;

  // Whether Choose could ever return `pipeline`: -Oz, or (candidate
  // formulation) a candidate's pipeline a policy may run. A stepwise
  // policy's choices are sequences of its actions: any pipeline a policy
  // may run (passes::CheckWholePolicyPipeline) is answered true. For
  // choices stored outside the artifact (the outcome cache).
  bool MayChoose(const std::string& pipeline) const;

  // Any mode and formulation. `module` is left unchanged (clones are
  // optimised and measured); autophase/inst_count are its features.
  // Fails only when the environment cannot run anything (e.g. no emitter
  // for a topk text_size policy); candidates that fail to run or measure
  // are skipped and named in the note.
  absl::StatusOr<PolicyChoice> Choose(const llvm::Module& module,
                                      absl::Span<const int64_t> autophase,
                                      absl::Span<const int64_t> inst_count,
                                      const ModuleEnvironment& env) const;

 private:
  ArtifactPolicy(v1::PolicyArtifact artifact, InferenceOptions options,
                 PolicyNetwork network);

  // Stepwise rollout on a clone: the actions taken, starting with `first`
  // (or the argmax when first < 0).
  absl::StatusOr<std::vector<int32_t>> Rollout(
      const llvm::Module& module, absl::Span<const int64_t> autophase,
      absl::Span<const int64_t> inst_count, int first,
      passes::PassRunner& runner) const;
  std::string PipelineOf(const std::vector<int32_t>& actions) const;
  absl::StatusOr<PolicyChoice> ChooseTopK(const llvm::Module& module,
                                          absl::Span<const int64_t> autophase,
                                          absl::Span<const int64_t> inst_count,
                                          const ModuleEnvironment& env) const;

  v1::PolicyArtifact artifact_;
  InferenceOptions options_;
  PolicyNetwork network_;
  std::string version_;
  // Per candidate: excluded from single mode (the artifact's mark, or not
  // allowed below).
  std::vector<bool> single_excluded_;
  // Per candidate: whether a policy may run its pipeline; topk never
  // measures the others (a pass refused after training: the Attributor).
  std::vector<bool> candidate_allowed_;
  std::vector<std::string> action_pipelines_;  // per artifact action index
  // Per artifact action index: whether a policy may run it
  // (passes::CheckPolicyPipeline); Score gives the others -infinity.
  std::vector<bool> action_allowed_;
};

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_POLICY_H_
