#include "offline_rl/evaluation/policy_evaluation.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/policy_runtime/artifact_policy.h"
#include "compiler_driver/policy_runtime/pipeline_measurement.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/session/baselines.h"
#include "compiler_driver/session/pass_target.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "nlohmann/json.hpp"
#include "staging_harness/variants/corpus_variants.h"

namespace phaseloop::evaluation {
namespace {

using Clock = std::chrono::steady_clock;
namespace pr = policy_runtime;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// What the evaluation needs of a policy: a pipeline for one loaded module.
struct LoadedPolicy {
  std::string kind;
  std::string version;
  std::string objective;
  std::unique_ptr<pr::ArtifactPolicy> artifact;  // or
  std::unique_ptr<cc_wrapper::PolicyRunner> wrapper_policy;
};

bool FileStartsWithMagic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return pr::LooksLikePolicyArtifactFile(head);
}

absl::StatusOr<LoadedPolicy> Load(const EvalOptions& options) {
  LoadedPolicy loaded;
  absl::string_view spec = options.policy;
  std::string artifact_path;
  if (absl::ConsumePrefix(&spec, "artifact:")) {
    artifact_path = std::string(spec.substr(0, spec.find('?')));
  } else if (FileStartsWithMagic(options.policy)) {
    artifact_path = options.policy;
  }
  if (!artifact_path.empty()) {
    absl::StatusOr<v1::PolicyArtifact> artifact =
        pr::ReadPolicyArtifactFile(artifact_path);
    if (!artifact.ok()) return artifact.status();
    pr::InferenceOptions inference;
    absl::StatusOr<pr::InferenceMode> mode =
        pr::ParseInferenceMode(options.mode);
    if (!mode.ok()) return mode.status();
    inference.mode = *mode;
    inference.top_k = options.top_k;
    inference.budget = options.budget;
    loaded.objective = artifact->objective();
    absl::StatusOr<std::unique_ptr<pr::ArtifactPolicy>> policy =
        pr::ArtifactPolicy::Create(*std::move(artifact), inference);
    if (!policy.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy artifact ", artifact_path, ": ", policy.status().message()));
    }
    loaded.kind = "artifact";
    loaded.version = (*policy)->version();
    loaded.artifact = std::move(*policy);
    return loaded;
  }
  absl::StatusOr<std::unique_ptr<cc_wrapper::PolicyRunner>> runner =
      cc_wrapper::LoadPolicy(options.policy);
  if (!runner.ok()) return runner.status();
  loaded.kind = (*runner)->kind();
  loaded.version = (*runner)->version();
  loaded.wrapper_policy = std::move(*runner);
  return loaded;
}

// The level a module's policy output is tuned and code-generated at. A
// real-build module's own (-Oz, -O3); a research-convention module (-O0
// frontend) at -Oz, like the -Oz reference it is compared with: at the
// stored level its code generation would be -O0's, so every module would
// read larger than -Oz.
ir::OptLevel MeasuredLevel(const staging::CorpusModule& input) {
  const ir::OptLevel stored =
      ir::ParseOptLevel(input.opt_level).value_or(ir::OptLevel::kOz);
  return stored == ir::OptLevel::kO0 ? ir::OptLevel::kOz : stored;
}

// Fills `row` for one module; errors go into row.error.
void EvaluateModule(const staging::CorpusModule& input,
                    const LoadedPolicy& policy,
                    const std::vector<std::string>& fixed_references,
                    ModuleEval& row) {
  const auto start = Clock::now();
  auto fail = [&](absl::string_view stage, const absl::Status& status) {
    row.error = absl::StrCat(stage, ": ", status.message().substr(0, 300));
    row.total_ms = MillisSince(start);
  };
  const ir::OptLevel level = MeasuredLevel(input);
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::LoadModule(input.path, ir::FrontendOptions(), context);
  if (!module.ok()) return fail("load", module.status());
  absl::StatusOr<std::vector<session::Baseline>> baselines =
      session::ModuleBaselines(**module,
                               {ir::OptLevel::kO0, ir::OptLevel::kOz});
  if (!baselines.ok()) return fail("baselines", baselines.status());
  row.ir_count_o0 = (*baselines)[0].ir_count;
  row.text_size_o0 = (*baselines)[0].text_size;
  row.ir_count_oz = (*baselines)[1].ir_count;
  row.text_size_oz = (*baselines)[1].text_size;
  row.alloc_size_oz = (*baselines)[1].alloc_size;
  if (input.opt_level == "Oz") {
    absl::StatusOr<std::vector<session::Baseline>> clang_oz =
        session::ModuleBaselines(**module, {ir::OptLevel::kOz},
                                 passes::PipelineFlavor::kClang);
    if (!clang_oz.ok()) return fail("clang -Oz", clang_oz.status());
    row.alloc_size_clang_oz = (*clang_oz)[0].alloc_size;
    row.text_size_clang_oz = (*clang_oz)[0].text_size;
  }

  absl::StatusOr<std::unique_ptr<codegen::ObjectEmitter>> emitter =
      codegen::ObjectEmitter::ForModule(**module, ir::CodegenLevel(level));
  if (!emitter.ok()) return fail("codegen", emitter.status());
  passes::PassRunner runner(
      session::PassTargetMachine(**emitter, passes::PipelineFlavor::kOpt),
      passes::TuningFor(level, passes::PipelineFlavor::kOpt));
  runner.set_always_inline_first(true);  // as the wrapper runs policies

  const auto policy_start = Clock::now();
  const auto autophase = observation::ComputeAutophase(**module);
  if (policy.artifact != nullptr) {
    const auto inst_count = observation::ComputeInstCount(**module);
    absl::StatusOr<pr::PolicyChoice> choice = policy.artifact->Choose(
        **module, autophase, inst_count, {&runner, emitter->get()});
    if (!choice.ok()) return fail("policy", choice.status());
    row.pipeline = choice->pipeline;
    row.note = choice->note;
  } else {
    cc_wrapper::PolicyInput policy_input;
    // Only tables key on the module hash (bitcode writing costs ms).
    if (policy.kind == "table") {
      policy_input.module_hash = ir::ModuleHash(**module);
    }
    policy_input.autophase = &autophase;
    policy_input.opt_level = ir::OptLevelName(level);
    row.pipeline = policy.wrapper_policy->Decide(policy_input);
  }
  row.policy_ms = MillisSince(policy_start);
  // Each fixed reference on a clone, tuned and emitted like the policy's.
  for (const std::string& pipeline : fixed_references) {
    absl::StatusOr<pr::PipelineMeasurement> fixed = pr::MeasurePipeline(
        llvm::CloneModule(**module), pipeline, runner, emitter->get());
    if (absl::IsInvalidArgument(fixed.status())) {
      return fail(absl::StrCat("fixed reference '", pipeline, "'"),
                  fixed.status());
    }
    row.fixed_alloc_size.push_back(fixed.ok() ? fixed->alloc_size : -1);
  }
  // Run and emitted as the wrapper does: the module itself, consumed.
  absl::StatusOr<pr::PipelineMeasurement> measured = pr::MeasurePipeline(
      *std::move(module), row.pipeline, runner, emitter->get());
  if (!measured.ok()) return fail("pipeline", measured.status());
  row.ir_count = measured->ir_count;
  row.text_size = measured->text_size;
  row.alloc_size = measured->alloc_size;
  row.total_ms = MillisSince(start);
}

double Geomean(double log_sum, int n) {
  return n > 0 ? std::exp(log_sum / n) : 0.0;
}

}  // namespace

EvalAggregates Aggregate(const std::vector<ModuleEval>& modules) {
  EvalAggregates a;
  double text_log = 0, ir_log = 0, gym_log = 0, over_sum = 0, policy_ms = 0;
  double alloc_log = 0, clang_vs_oz_log = 0, clang_log = 0;
  int text_n = 0, ir_n = 0, gym_n = 0, alloc_n = 0;
  for (const ModuleEval& m : modules) {
    if (!m.error.empty()) {
      ++a.failed;
      continue;
    }
    ++a.modules;
    policy_ms += m.policy_ms;
    a.max_policy_ms = std::max(a.max_policy_ms, m.policy_ms);
    if (m.text_size > 0 && m.text_size_oz > 0) {
      text_log += std::log(static_cast<double>(m.text_size_oz) / m.text_size);
      ++text_n;
      a.worst_text_ratio =
          std::max(a.worst_text_ratio,
                   static_cast<double>(m.text_size) / m.text_size_oz);
      if (m.text_size > m.text_size_oz) ++a.text_larger_than_oz;
      if (m.text_size < m.text_size_oz) ++a.text_smaller_than_oz;
    } else {
      ++a.text_excluded;
    }
    if (m.alloc_size > 0 && m.alloc_size_oz > 0) {
      alloc_log +=
          std::log(static_cast<double>(m.alloc_size_oz) / m.alloc_size);
      ++alloc_n;
      a.worst_alloc_ratio =
          std::max(a.worst_alloc_ratio,
                   static_cast<double>(m.alloc_size) / m.alloc_size_oz);
      if (m.alloc_size > m.alloc_size_oz) ++a.alloc_larger_than_oz;
      if (m.alloc_size_clang_oz > 0) {
        const double clang = static_cast<double>(m.alloc_size_clang_oz);
        ++a.clang_oz_modules;
        if (m.alloc_size_clang_oz != m.alloc_size_oz) ++a.clang_oz_differs;
        clang_vs_oz_log += std::log(clang / m.alloc_size_oz);
        clang_log += std::log(clang / m.alloc_size);
      }
    }
    if (m.ir_count > 0 && m.ir_count_oz > 0) {
      over_sum +=
          static_cast<double>(m.ir_count_oz - m.ir_count) / m.ir_count_oz;
      ir_log += std::log(static_cast<double>(m.ir_count_oz) / m.ir_count);
      ++ir_n;
    } else {
      ++a.ir_excluded;
    }
    if (m.ir_count_o0 > m.ir_count_oz && m.ir_count < m.ir_count_o0) {
      gym_log += std::log(static_cast<double>(m.ir_count_o0 - m.ir_count) /
                          (m.ir_count_o0 - m.ir_count_oz));
      ++gym_n;
    } else {
      ++a.gym_excluded;
    }
  }
  a.text_oz_ratio = Geomean(text_log, text_n);
  a.alloc_oz_ratio = Geomean(alloc_log, alloc_n);
  a.clang_oz_vs_oz = Geomean(clang_vs_oz_log, a.clang_oz_modules);
  a.alloc_clang_oz_ratio = Geomean(clang_log, a.clang_oz_modules);
  a.geomean_oz_ratio = Geomean(ir_log, ir_n);
  a.over_oz = ir_n > 0 ? over_sum / ir_n : 0.0;
  a.gym_score = Geomean(gym_log, gym_n);
  a.mean_policy_ms = a.modules > 0 ? policy_ms / a.modules : 0.0;
  return a;
}

std::string OzRatioMetric(const std::string& objective) {
  if (objective == "alloc_size") return "alloc_oz_ratio";
  if (objective == "text_size") return "text_oz_ratio";
  if (objective == "ir_count") return "geomean_oz_ratio";
  return "";
}

double OzRatio(const EvalAggregates& a, const std::string& metric) {
  if (metric == "alloc_oz_ratio") return a.alloc_oz_ratio;
  if (metric == "text_oz_ratio") return a.text_oz_ratio;
  if (metric == "geomean_oz_ratio") return a.geomean_oz_ratio;
  return 0;
}

namespace {

// One module's figures, measured in a forked child (staging's
// MeasureEachInChild), as the JSON the parent reads back.
absl::StatusOr<std::string> EvaluateModuleReport(
    const staging::CorpusModule& input, const LoadedPolicy& policy,
    const std::vector<std::string>& fixed_references, const ModuleEval& row) {
  // Test hook (policy_evaluation_test): a module that hangs.
  if (const char* fault = std::getenv("PHASELOOP_TEST_INJECT_FAULT");
      fault != nullptr && std::string(fault) == "hang") {
    for (;;) pause();
  }
  ModuleEval child_row = row;
  EvaluateModule(input, policy, fixed_references, child_row);
  return nlohmann::json{{"ir_count_o0", child_row.ir_count_o0},
                        {"ir_count_oz", child_row.ir_count_oz},
                        {"ir_count", child_row.ir_count},
                        {"text_size_o0", child_row.text_size_o0},
                        {"text_size_oz", child_row.text_size_oz},
                        {"text_size", child_row.text_size},
                        {"alloc_size_oz", child_row.alloc_size_oz},
                        {"alloc_size", child_row.alloc_size},
                        {"alloc_size_clang_oz", child_row.alloc_size_clang_oz},
                        {"text_size_clang_oz", child_row.text_size_clang_oz},
                        {"policy_ms", child_row.policy_ms},
                        {"total_ms", child_row.total_ms},
                        {"pipeline", child_row.pipeline},
                        {"note", child_row.note},
                        {"fixed_alloc_size", child_row.fixed_alloc_size},
                        {"error", child_row.error}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The child's outcome into `row`: its figures, or why the module failed (a
// pipeline that crashes or hangs LLVM fails this module, not the run).
void ReadModuleOutcome(const staging::MeasureOutcome& outcome,
                       double elapsed_ms, ModuleEval& row) {
  if (outcome.kind != staging::MeasureOutcome::kOk) {
    row.error = outcome.message;
    row.total_ms = elapsed_ms;
    return;
  }
  nlohmann::json j = nlohmann::json::parse(outcome.report, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    row.error = "unreadable result from the child process";
    return;
  }
  row.ir_count_o0 = j.value("ir_count_o0", int64_t{0});
  row.ir_count_oz = j.value("ir_count_oz", int64_t{0});
  row.ir_count = j.value("ir_count", int64_t{0});
  row.text_size_o0 = j.value("text_size_o0", int64_t{0});
  row.text_size_oz = j.value("text_size_oz", int64_t{0});
  row.text_size = j.value("text_size", int64_t{0});
  row.alloc_size_oz = j.value("alloc_size_oz", int64_t{0});
  row.alloc_size = j.value("alloc_size", int64_t{0});
  row.alloc_size_clang_oz = j.value("alloc_size_clang_oz", int64_t{0});
  row.text_size_clang_oz = j.value("text_size_clang_oz", int64_t{0});
  row.policy_ms = j.value("policy_ms", 0.0);
  row.total_ms = j.value("total_ms", 0.0);
  row.pipeline = j.value("pipeline", "");
  row.note = j.value("note", "");
  row.fixed_alloc_size = j.value("fixed_alloc_size", std::vector<int64_t>{});
  row.error = j.value("error", "");
}

// What the figures compare, for the report: how the corpus's modules were
// stored and how both sides were measured.
std::string ConventionOf(const std::vector<staging::CorpusModule>& inputs) {
  bool research = false, real_build = false;
  for (const staging::CorpusModule& m : inputs) {
    (m.opt_level == "O0" ? research : real_build) = true;
  }
  const std::string measured =
      "opt-16 tuning and clang-16 codegen at the module's level, -Oz for the "
      "-Oz reference";
  if (research && real_build) {
    return "mixed: real-build modules as stored, research (-O0 frontend) "
           "modules measured at -Oz; " +
           measured;
  }
  if (research) {
    return "research modules (-O0 frontend); the policy's output and the "
           "-Oz reference both with -Oz tuning and codegen";
  }
  return "real-build modules as stored; " + measured;
}

}  // namespace

absl::Status CheckEvalPolicy(const std::string& policy) {
  EvalOptions options;
  options.policy = policy;
  options.mode = "single";
  return Load(options).status();
}

absl::StatusOr<EvalReport> EvaluatePolicy(const EvalOptions& options) {
  absl::StatusOr<LoadedPolicy> policy = Load(options);
  if (!policy.ok()) return policy.status();
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<staging::CorpusModule>> inputs =
      staging::ListCorpusModules(options.corpus_dir, options.split, &warnings);
  if (!inputs.ok()) return inputs.status();
  if (options.progress != nullptr) {
    for (const std::string& w : warnings) *options.progress << w << "\n";
  }
  if (options.max_modules > 0 &&
      static_cast<int>(inputs->size()) > options.max_modules) {
    inputs->resize(options.max_modules);
  }
  if (inputs->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "corpus ", options.corpus_dir, " has no module",
        options.split.empty() ? ""
                              : absl::StrCat(" in split '", options.split, "'"),
        "; check --corpus (a directory built by phaseloop corpus build) and "
        "--split"));
  }
  // eval measures size against -Oz: a module stored at another level (a
  // speed corpus's -O3) would be tuned and code-generated at -O3 against an
  // -Oz reference, unlike with like (an exact -Oz pipeline read 0.92).
  for (const staging::CorpusModule& m : *inputs) {
    if (m.opt_level != "Oz" && m.opt_level != "O0" && !m.opt_level.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "corpus ", options.corpus_dir, " holds modules stored at -",
          m.opt_level, " (", m.name,
          "): eval compares sizes with -Oz, which such modules are not "
          "built for; evaluate size policies on an -Oz corpus (corpus build "
          "--objective size) and speed policies with phaseloop stage"));
    }
  }
  EvalReport report;
  report.policy = options.policy;
  report.policy_kind = policy->kind;
  report.policy_version = policy->version;
  report.objective = policy->objective;
  report.mode = policy->artifact != nullptr ? options.mode : "";
  report.corpus_dir = options.corpus_dir;
  report.split = options.split;
  report.convention = ConventionOf(*inputs);
  report.modules.resize(inputs->size());
  int done = 0;
  staging::ChildMeasureOptions measure_options;
  measure_options.threads = options.threads;
  measure_options.timeout_ms = options.module_timeout_s * 1000;
  for (size_t i = 0; i < inputs->size(); ++i) {
    report.modules[i].name = (*inputs)[i].name;
  }
  staging::MeasureEachInChild(
      inputs->size(), measure_options,
      [&](size_t i) {
        return EvaluateModuleReport(
            (*inputs)[i], *policy, options.fixed_references, report.modules[i]);
      },
      [&](size_t i, const staging::MeasureOutcome& outcome, double elapsed_ms) {
        ModuleEval& row = report.modules[i];
        ReadModuleOutcome(outcome, elapsed_ms, row);
        if (options.progress == nullptr) return;
        ++done;
        *options.progress << absl::StrFormat("[%d/%d] %s: ", done,
                                             inputs->size(), row.name);
        if (!row.error.empty()) {
          *options.progress << "FAILED " << row.error << "\n";
        } else {
          *options.progress << absl::StrFormat(
              "text %d (Oz %d), ir %d (Oz %d), policy %.1f ms\n", row.text_size,
              row.text_size_oz, row.ir_count, row.ir_count_oz, row.policy_ms);
        }
      });
  // The split of each row, from the manifest filter (ListCorpus keeps it
  // implicit): the requested split, or "" when all were evaluated.
  for (ModuleEval& row : report.modules) row.split = options.split;
  report.aggregates = Aggregate(report.modules);
  report.fixed = AggregateFixed(options.fixed_references, report.modules);
  const FixedReferenceEval* best = &report.fixed[0];
  for (const FixedReferenceEval& f : report.fixed) {
    if (f.modules > 0 && f.alloc_oz_ratio > best->alloc_oz_ratio) best = &f;
  }
  report.best_fixed = best->pipeline;
  report.policy_vs_best_fixed = best->policy_vs_fixed;
  return report;
}

}  // namespace phaseloop::evaluation
