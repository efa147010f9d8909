#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_POLICY_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_POLICY_H_

// The policy the wrapper consults per translation unit: which pass pipeline
// to run on its unoptimised module. One role interface, small
// implementations chosen by LoadPolicy from a spec:
//   baseline           clang's own pipeline for the user's -O level
//   fixed:<pipeline>   the same PassBuilder pipeline text for every module
//   table:<file>       module_hash -> pipeline (e.g. from search); modules
//                      not in the table get the baseline
//   <file>             a policy file: one spec line (baseline, fixed:... or
//                      artifact:..., whose relative path is taken from the
//                      policy file's directory),
//                      a table whose first line is kTableHeader, or a
//                      learned policy artifact (policy_runtime/
//                      policy_artifact.h, detected by its magic line), run
//                      in `single` mode
//   artifact:<file>[?mode=single|topk&k=N&budget=INSTRUCTIONS]
//                      a policy artifact with its inference options (topk:
//                      k candidates besides -Oz measured on the module
//                      while the work fits the budget, counted in IR
//                      instructions compiled, never the clock; default k =
//                      the artifact's default_top_k, budget = 10000;
//                      budget_ms=M, deprecated, reads as M * 20)
// A learned size policy (objective alloc_size, text_size or ir_count) applies
// only at the user's -Oz, a runtime policy only at -O2/-O3; at other levels
// the baseline pipeline runs and the decision's note says why (DESIGN.md: a
// speed policy never replaces the user's pipeline without runtime evidence).

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/IR/Module.h"

namespace phaseloop::cc_wrapper {

inline constexpr char kTableHeader[] = "# phaseloop policy table v1";

// What a policy sees of one translation unit.
struct PolicyInput {
  std::string module_hash;  // ir::ContentHash of the unoptimised bitcode
  const std::array<int64_t, observation::kAutophaseDim>* autophase = nullptr;
  std::string opt_level;  // "O1".."Oz": the user's level
  // For learned policies (all optional, not owned; null when unknown):
  const std::array<int64_t, observation::kInstCountDim>* inst_count = nullptr;
  // The unoptimised module (left unchanged: policies work on clones), the
  // runner and code generator it will be compiled with.
  const llvm::Module* module = nullptr;
  passes::PassRunner* runner = nullptr;
  codegen::ObjectEmitter* emitter = nullptr;
};

// A pipeline and how it was chosen (for the decision record's detail).
struct PolicyDecision {
  std::string pipeline;
  std::string note;
  // Empty when `pipeline` is the policy's choice. Otherwise the baseline
  // runs and this says why, as a decision record's reason
  // (POLICY_NOT_APPLIED in decision.proto): not_applicable_at_level,
  // policy_needs_features, policy_needs_module, policy_failed,
  // module_not_in_table.
  std::string not_applied;
  // Allocated bytes of -Oz's object for this module when the policy
  // measured it (topk of a text_size policy), else -1.
  int64_t oz_alloc_size = -1;
  // Every pipeline the policy measured (topk), -Oz first, with its value
  // (Decision.topk_measured).
  std::vector<std::pair<std::string, int64_t>> measured_pipelines;
  // outcome_cache.h: "hit" (the choice came from the cache), "miss" (it
  // was measured and stored); "" when no cache was consulted.
  std::string outcome_cache;
  // topk's object for `pipeline`, as it measured it (PolicyChoice::object):
  // the wrapper writes it instead of optimising and emitting the module
  // again. Empty when there is none; object_ir_count is its IR instruction
  // count after the pipeline.
  std::string object;
  int64_t object_ir_count = -1;
};

class PolicyRunner {
 public:
  virtual ~PolicyRunner() = default;
  // What LoadPolicy made of the spec: "baseline", "fixed", "table" (a
  // table: spec or table file) or "artifact" (a learned policy artifact, in
  // any mode: an artifact: spec, or an artifact file given directly or named
  // by a policy file).
  virtual const char* kind() const = 0;
  // Content hash of what the policy decides from (for baseline, the word
  // itself): equal policies have equal versions on every machine.
  virtual const std::string& version() const = 0;
  // PassBuilder pipeline text for this module. Pure; cheap except for
  // learned policies in topk mode (which measure candidates on clones).
  virtual std::string Decide(const PolicyInput& input) const = 0;
  // Decide, with a note on how the pipeline was chosen ("" when obvious).
  virtual PolicyDecision DecideWithNote(const PolicyInput& input) const {
    return {Decide(input), ""};
  }
  // For policies whose decision measures candidates (topk): what besides
  // the module, level and target decides it (version and inference
  // options), so outcome_cache.h can key on it; "" for cheap policies,
  // which are never cached.
  virtual std::string OutcomeSpec() const { return ""; }
  // Whether DecideWithNote could ever answer `pipeline` (for a choice
  // stored outside the policy: an outcome cache entry, perhaps from another
  // machine). True unless the policy knows its choices (learned artifacts).
  virtual bool MayChoose(const std::string& pipeline) const {
    (void)pipeline;
    return true;
  }
};

struct LoadPolicyOptions {
  // When not empty, every learned policy artifact the spec reaches must be
  // accepted by policy_runtime/artifact_trust.h under this trust file;
  // otherwise LoadPolicy returns its refusal (PermissionDenied, with
  // common/signing's SignatureRefusalReason: policy_unsigned or
  // policy_untrusted). Specs that are not artifacts (baseline, fixed:,
  // table:, a policy file holding one) come from the user's own command
  // line or config, not from the policy store, and are not checked.
  std::string trust_file;
};

// Errors name the spec or file and say what to fix: an unreadable file, a
// table line that is not `<32 hex digits><TAB><pipeline>`, an unsupported
// format version. Pipelines are not checked here (that needs the pass
// builder); an unparseable one fails when the wrapper runs it.
absl::StatusOr<std::unique_ptr<PolicyRunner>> LoadPolicy(
    const std::string& spec, const LoadPolicyOptions& options = {});

// The pipeline clang runs at `opt_level`: "default<O2>".
std::string BaselinePipeline(const std::string& opt_level);

// The policy shipped with the product, used when no policy is given by flag,
// environment or config file: the first existing file of
//   <exe_dir>/../share/phaseloop/policies/default.plpolicy   (installed)
//   <exe_dir>/../configs/policies/default.plpolicy
//   <exe_dir>/configs/policies/default.plpolicy
// where exe_dir is the directory of the running binary (empty: of
// /proc/self/exe). "" when none exists (the wrapper then runs the baseline).
// The wrapper runs it as policy_runtime::DefaultTopKQuery() says.
std::string FindDefaultPolicy(const std::string& exe_dir = "");

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_POLICY_H_
