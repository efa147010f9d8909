#ifndef PHASELOOP_OFFLINE_RL_EVALUATION_POLICY_EVALUATION_H_
#define PHASELOOP_OFFLINE_RL_EVALUATION_POLICY_EVALUATION_H_

// `phaseloop eval`: a policy against clang's -Oz on the modules of a corpus
// (`phaseloop corpus build`), with the metrics of DESIGN.md ("Objectives and
// metrics"). Each module is loaded from its bitcode; -O0, -Oz and the
// policy's pipeline run on it in process the way `opt-16 -passes=...` would
// (opt's tuning and target machine, as the corpus manifest's baselines and
// `phaseloop search` on corpus modules do), then codegen with clang-16's
// settings at the module's -O level measures `.text` and the whole
// object's allocated bytes (`alloc_size`).
//
// The policy is any wrapper policy spec (baseline, fixed:<pipeline>,
// table:<file>, a policy file) or a policy artifact (a .plpolicy file,
// detected by its magic, or artifact:<file>), so one tool compares
// everything. Artifacts run in the mode given here (single or topk).
//
// Candidate pipelines run in this process: a pipeline that crashes LLVM
// ends the evaluation. Threading: EvaluatePolicy uses options.threads
// threads, one module per thread at a time.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/policy_runtime/artifact_policy.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"

namespace phaseloop::evaluation {

struct EvalOptions {
  std::string policy;           // spec or artifact path (see above)
  std::string corpus_dir;       // holds manifest.json
  std::string split;            // "" = every module; else train/validation/test
  std::string mode = "single";  // artifacts: single or topk
  // topk: work budget per module in IR instructions compiled
  // (policy_runtime::InferenceOptions::budget).
  int64_t budget = policy_runtime::kDefaultTopKBudget;
  int top_k = 0;  // topk: 0 = the artifact's default_top_k
  int threads = 1;
  int max_modules = 0;  // 0 = all (after the split filter), in name order
  // Each module is evaluated in a forked child; one that takes longer (a
  // pipeline hanging LLVM) is killed and reported failed.
  int module_timeout_s = 600;
  // Fixed pipelines measured on every module beside the policy (default<Oz>
  // is always the reference), so a policy that loses to one is visible at
  // once. `phaseloop eval` measures kDefaultFixedReferences unless told.
  std::vector<std::string> fixed_references;
  std::ostream* progress = nullptr;  // one line per module, may be null
};

// What `phaseloop eval` compares a size policy with besides -Oz: -Oz with
// LLVM's machine outliner (issue 20: 1.3-5 % below -Oz in .text with no
// learning), the fixed pipeline a candidate policy's topk always measures;
// and -Oz with function merging (kOzMergeFunctionsPipeline), never larger
// than -Oz and the best fixed pipeline on whole objects of the Debian
// corpus's validation split (BENCHMARKS.md, "Tuned standard pipelines").
inline const std::vector<std::string>& DefaultFixedReferences() {
  static const auto* pipelines =
      new std::vector<std::string>{policy_runtime::kOzOutlinerPipeline,
                                   policy_runtime::kOzMergeFunctionsPipeline};
  return *pipelines;
}

// One module's figures. Sizes are 0 and `error` says why when it failed.
struct ModuleEval {
  std::string name;
  std::string split;
  int64_t ir_count_o0 = 0;
  int64_t ir_count_oz = 0;
  int64_t ir_count = 0;  // with the policy
  int64_t text_size_o0 = 0;
  int64_t text_size_oz = 0;
  int64_t text_size = 0;  // with the policy
  // The whole object's allocated bytes (every SHF_ALLOC section), the
  // truth for size: -Oz's and the policy's.
  int64_t alloc_size_oz = 0;
  int64_t alloc_size = 0;
  // clang's own -Oz on the stored module (clang's tuning, where -Oz above is
  // opt-16's): what `clang-16 -Oz -c` of the module's sources gives.
  // Real-build -Oz modules only; 0 for others (a research module's -O0
  // frontend output lacks what clang's -Oz frontend puts in).
  int64_t alloc_size_clang_oz = 0;
  int64_t text_size_clang_oz = 0;
  double policy_ms = 0;  // the policy's decision (features, forward passes,
                         // topk's measurements)
  double total_ms = 0;   // the module, baselines included
  std::string pipeline;
  std::string note;
  std::string error;
  // The whole object with each of EvalOptions::fixed_references, in order;
  // -1 where that pipeline failed on this module.
  std::vector<int64_t> fixed_alloc_size;
};

// One fixed reference pipeline over the corpus.
struct FixedReferenceEval {
  std::string pipeline;
  int modules = 0;               // measured (policy and pipeline both)
  double alloc_oz_ratio = 0;     // geomean A_Oz / A_fixed
  int alloc_larger_than_oz = 0;  // modules with A_fixed > A_Oz
  // geomean A_fixed / A_policy over the same modules: > 1, the policy's
  // objects are smaller than this pipeline's.
  double policy_vs_fixed = 0;
};

// Over the modules without error. Ratios skip modules whose terms are
// undefined (a zero size), counted in *_excluded.
struct EvalAggregates {
  int modules = 0;
  int failed = 0;
  double text_oz_ratio = 0;     // geomean T_Oz / T (> 1: smaller than -Oz)
  double over_oz = 0;           // mean (IC_Oz - IC) / IC_Oz
  double geomean_oz_ratio = 0;  // geomean IC_Oz / IC
  // geomean (IC_O0 - IC) / (IC_O0 - IC_Oz) over modules where -Oz reduces
  // the count (IC_O0 > IC_Oz) and the policy does too (IC < IC_O0): a
  // geometric mean needs positive terms; the others are in gym_excluded.
  double gym_score = 0;
  int text_excluded = 0;
  int ir_excluded = 0;
  int gym_excluded = 0;
  int text_larger_than_oz = 0;   // modules with T > T_Oz
  int text_smaller_than_oz = 0;  // modules with T < T_Oz
  double worst_text_ratio = 0;   // max T / T_Oz (1.01: 1 % larger than -Oz)
  // The same over whole objects (A = allocated bytes).
  double alloc_oz_ratio = 0;     // geomean A_Oz / A (> 1: smaller than -Oz)
  int alloc_larger_than_oz = 0;  // modules with A > A_Oz
  double worst_alloc_ratio = 0;  // max A / A_Oz
  // Against clang's own -Oz (ModuleEval::alloc_size_clang_oz), over the
  // modules that have it: how many there are, on how many clang's -Oz
  // object differs from opt's in allocated bytes, geomean A_clang / A_Oz
  // (> 1: opt's -Oz reference is the smaller), and geomean A_clang / A
  // (> 1: the policy's objects are smaller than clang -Oz's).
  int clang_oz_modules = 0;
  int clang_oz_differs = 0;
  double clang_oz_vs_oz = 0;
  double alloc_clang_oz_ratio = 0;
  double mean_policy_ms = 0;
  double max_policy_ms = 0;
};

// The aggregate a policy of `objective` is judged by: alloc_oz_ratio for
// alloc_size, text_oz_ratio for text_size, geomean_oz_ratio for ir_count
// (each > 1: smaller than -Oz); "" for other objectives (runtime).
std::string OzRatioMetric(const std::string& objective);

// The named aggregate (one OzRatioMetric returns); 0 for an unknown name.
double OzRatio(const EvalAggregates& aggregates, const std::string& metric);

struct EvalReport {
  std::string policy;
  std::string policy_kind;  // "artifact", "baseline", "fixed", "table"
  std::string policy_version;
  std::string objective;  // the artifact's; "" for other policies
  std::string mode;
  std::string corpus_dir;
  std::string split;
  // How the modules were stored and measured (a research corpus's -O0
  // modules are measured at -Oz, like the reference).
  std::string convention;
  std::vector<ModuleEval> modules;  // in corpus (name) order
  EvalAggregates aggregates;
  // default<Oz> (ratio 1 by definition) and each fixed reference; the best
  // fixed pipeline is the one with the highest alloc_oz_ratio.
  std::vector<FixedReferenceEval> fixed;
  std::string best_fixed;           // its pipeline
  double policy_vs_best_fixed = 0;  // its policy_vs_fixed
};

// The fixed references' figures over `modules` (rows without error), with
// default<Oz> first (exposed for tests).
std::vector<FixedReferenceEval> AggregateFixed(
    const std::vector<std::string>& pipelines,
    const std::vector<ModuleEval>& modules);

// The aggregates of `modules` (exposed for tests and for the learner's
// publish gate, which may combine reports).
EvalAggregates Aggregate(const std::vector<ModuleEval>& modules);

// Errors: the policy cannot be loaded, the corpus cannot be read, or it has
// no module in the split (InvalidArgument/NotFound naming the input). A
// module that fails is reported in its row and counted in `failed`.
absl::StatusOr<EvalReport> EvaluatePolicy(const EvalOptions& options);

// Loads `policy` (an artifact file or any wrapper spec) as EvaluatePolicy
// would, without a corpus: what a publish gate meets after training, found
// before it (`train --gate-against`).
absl::Status CheckEvalPolicy(const std::string& policy);

// A readable table (one row per module, then the aggregates) and the JSON
// form (same fields as the structs, snake_case).
std::string FormatReportTable(const EvalReport& report);
std::string FormatReportJson(const EvalReport& report);

}  // namespace phaseloop::evaluation

#endif  // PHASELOOP_OFFLINE_RL_EVALUATION_POLICY_EVALUATION_H_
