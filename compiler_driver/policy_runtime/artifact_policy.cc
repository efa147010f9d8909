#include "compiler_driver/policy_runtime/artifact_policy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler_driver/ir/faithful_clone.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/pipeline_measurement.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::policy_runtime {
namespace {

// Indices of `scores` from best to worst (ties: lower index first).
std::vector<int> Ranked(const std::vector<float>& scores) {
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace

absl::StatusOr<InferenceMode> ParseInferenceMode(absl::string_view text) {
  if (text == "single") return InferenceMode::kSingle;
  if (text == "topk") return InferenceMode::kTopK;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown inference mode '", text, "'; use single or topk"));
}

const char* InferenceModeName(InferenceMode mode) {
  return mode == InferenceMode::kTopK ? "topk" : "single";
}

ArtifactPolicy::ArtifactPolicy(v1::PolicyArtifact artifact,
                               InferenceOptions options, PolicyNetwork network)
    : artifact_(std::move(artifact)),
      options_(options),
      network_(std::move(network)),
      version_(PolicyVersionOf(artifact_)),
      single_excluded_(SingleExcludedOf(artifact_)) {}

absl::StatusOr<std::unique_ptr<ArtifactPolicy>> ArtifactPolicy::Create(
    v1::PolicyArtifact artifact, InferenceOptions options) {
  absl::StatusOr<PolicyNetwork> network = PolicyNetwork::Create(artifact);
  if (!network.ok()) return network.status();
  if (options.top_k < 0 || options.budget < 0) {
    return absl::InvalidArgumentError(
        "topk needs k >= 0 and a budget >= 0 instructions");
  }
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  std::vector<std::string> pipelines;
  std::vector<bool> allowed;
  for (const std::string& name : artifact.action_names()) {
    std::optional<int> index = space.Find(name);
    if (!index) {
      return absl::InvalidArgumentError(
          absl::StrCat("the policy uses action '", name,
                       "', which is not in this "
                       "driver's action space ",
                       space.version(), " (the artifact says ",
                       artifact.action_space_version(),
                       "); retrain it for this action space"));
    }
    pipelines.push_back(space.at(*index).pipeline);
    // An action of the space a policy may not run (pipeline_check.h) is
    // never taken: Score masks it.
    allowed.push_back(
        passes::CheckPolicyPipeline(space.at(*index).pipeline).ok());
  }
  if (artifact.formulation() == kFormulationStepwise &&
      std::find(allowed.begin(), allowed.end(), true) == allowed.end()) {
    return absl::InvalidArgumentError(
        "every action of this stepwise policy is one no policy may run "
        "(compiler_driver/passes/pipeline_check.h); retrain it");
  }
  // A candidate holding a pass no policy may run (ValidatePolicyArtifact
  // let it through) is never measured or chosen.
  std::vector<bool> candidate_allowed;
  for (const v1::CandidatePipeline& c : artifact.candidates()) {
    absl::Status checked = passes::CheckWholePolicyPipeline(
        c.pipeline(), absl::StrCat("candidate '", c.name(), "'"));
    if (!checked.ok() && !passes::IsNotForPolicies(checked)) return checked;
    candidate_allowed.push_back(checked.ok());
  }
  if (artifact.formulation() == kFormulationCandidate &&
      std::find(candidate_allowed.begin(), candidate_allowed.end(), true) ==
          candidate_allowed.end()) {
    return absl::InvalidArgumentError(
        "every candidate of this policy runs a pass no policy may run "
        "(compiler_driver/passes/pipeline_check.h); retrain it");
  }
  std::unique_ptr<ArtifactPolicy> policy(
      new ArtifactPolicy(std::move(artifact), options, std::move(*network)));
  policy->action_pipelines_ = std::move(pipelines);
  policy->action_allowed_ = std::move(allowed);
  for (size_t c = 0; c < candidate_allowed.size(); ++c) {
    if (!candidate_allowed[c] && c < policy->single_excluded_.size()) {
      policy->single_excluded_[c] = true;
    }
  }
  policy->candidate_allowed_ = std::move(candidate_allowed);
  return policy;
}

int ArtifactPolicy::top_k() const {
  if (options_.top_k > 0) return options_.top_k;
  return artifact_.default_top_k() > 0 ? artifact_.default_top_k()
                                       : kDefaultTopK;
}

bool ArtifactPolicy::is_size_policy() const {
  return IsObjectSizeObjective(artifact_.objective()) ||
         artifact_.objective() == kObjectiveIrCount;
}

bool ArtifactPolicy::MayChoose(const std::string& pipeline) const {
  if (pipeline == kOzPipeline) return true;
  if (artifact_.formulation() == kFormulationStepwise) {
    return passes::CheckWholePolicyPipeline(pipeline).ok();
  }
  for (int i = 0; i < artifact_.candidates_size(); ++i) {
    if (candidate_allowed_[i] && artifact_.candidates(i).pipeline() == pipeline)
      return true;
  }
  return false;
}

bool ArtifactPolicy::NeedsModule() const {
  return artifact_.formulation() == kFormulationStepwise ||
         (options_.mode == InferenceMode::kTopK && is_size_policy());
}

std::vector<float> ArtifactPolicy::Score(
    absl::Span<const int64_t> autophase, absl::Span<const int64_t> inst_count,
    absl::Span<const int32_t> actions_taken) const {
  std::vector<float> state(network_.input_dim());
  BuildState(autophase, inst_count, actions_taken,
             artifact_.action_names_size(), absl::MakeSpan(state));
  std::vector<float> scores(network_.output_dim());
  network_.Forward(state, absl::MakeSpan(scores));
  if (artifact_.formulation() == kFormulationStepwise) {
    for (size_t a = 0; a < scores.size() && a < action_allowed_.size(); ++a) {
      if (!action_allowed_[a]) {
        scores[a] = -std::numeric_limits<float>::infinity();
      }
    }
  }
  return scores;
}

PolicyChoice ArtifactPolicy::ChooseFromFeatures(
    absl::Span<const int64_t> autophase,
    absl::Span<const int64_t> inst_count) const {
  assert(artifact_.formulation() == kFormulationCandidate);
  const std::vector<float> scores = Score(autophase, inst_count, {});
  const float margin = artifact_.single_abstain_margin();
  const int oz = OzCandidateIndex(artifact_);
  const SingleModeChoice single =
      ChooseSingleMode(scores.data(), static_cast<int>(scores.size()), oz,
                       margin, single_excluded_);
  const int best = single.best;
  PolicyChoice choice;
  if (single.pick != best) {
    choice.pipeline = artifact_.candidates(oz).pipeline();
    choice.note = absl::StrCat(
        "single: -Oz (best candidate ", artifact_.candidates(best).name(),
        " beats it by ", scores[best] - scores[oz], " < margin ", margin, ")");
    return choice;
  }
  const v1::CandidatePipeline& candidate = artifact_.candidates(best);
  choice.pipeline = candidate.pipeline();
  choice.note = absl::StrCat("single: candidate ", candidate.name(), " (score ",
                             scores[best], ")");
  return choice;
}

std::string ArtifactPolicy::PipelineOf(
    const std::vector<int32_t>& actions) const {
  std::vector<std::string> parts;
  for (int32_t a : actions) parts.push_back(action_pipelines_[a]);
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<std::vector<int32_t>> ArtifactPolicy::Rollout(
    const llvm::Module& module, absl::Span<const int64_t> autophase,
    absl::Span<const int64_t> inst_count, int first,
    passes::PassRunner& runner) const {
  std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module);
  std::array<int64_t, observation::kAutophaseDim> ap;
  std::array<int64_t, observation::kInstCountDim> ic;
  std::copy(autophase.begin(), autophase.end(), ap.begin());
  std::copy(inst_count.begin(), inst_count.end(), ic.begin());
  std::vector<int32_t> taken;
  for (int step = 0; step < artifact_.max_steps(); ++step) {
    int action = first;
    if (step > 0 || first < 0) {
      const std::vector<float> scores = Score(ap, ic, taken);
      action = static_cast<int>(std::max_element(scores.begin(), scores.end()) -
                                scores.begin());
    }
    absl::Status ran = runner.Run(*clone, action_pipelines_[action]);
    if (!ran.ok()) return ran;
    taken.push_back(action);
    if (step + 1 < artifact_.max_steps()) {
      ap = observation::ComputeAutophase(*clone);
      ic = observation::ComputeInstCount(*clone);
    }
  }
  return taken;
}

absl::StatusOr<PolicyChoice> ArtifactPolicy::Choose(
    const llvm::Module& module, absl::Span<const int64_t> autophase,
    absl::Span<const int64_t> inst_count, const ModuleEnvironment& env) const {
  if (options_.mode == InferenceMode::kTopK && is_size_policy()) {
    return ChooseTopK(module, autophase, inst_count, env);
  }
  if (artifact_.formulation() == kFormulationCandidate) {
    return ChooseFromFeatures(autophase, inst_count);
  }
  if (env.runner == nullptr) {
    return absl::FailedPreconditionError(
        "a stepwise policy needs a pass runner to apply its actions");
  }
  absl::StatusOr<std::vector<int32_t>> actions =
      Rollout(module, autophase, inst_count, -1, *env.runner);
  if (!actions.ok()) return actions.status();
  PolicyChoice choice;
  choice.pipeline = PipelineOf(*actions);
  choice.note = absl::StrCat("single: stepwise, ", actions->size(), " actions");
  return choice;
}

absl::StatusOr<PolicyChoice> ArtifactPolicy::ChooseTopK(
    const llvm::Module& module, absl::Span<const int64_t> autophase,
    absl::Span<const int64_t> inst_count, const ModuleEnvironment& env) const {
  const bool text = IsObjectSizeObjective(artifact_.objective());
  if (env.runner == nullptr || (text && env.emitter == nullptr)) {
    return absl::FailedPreconditionError(
        "topk needs a pass runner (and a code generator for a size policy) "
        "to measure candidates");
  }
  PolicyChoice best;
  best.pipeline = kOzPipeline;
  // One measurement's work: the unoptimised module's instructions.
  const int64_t unit = std::max<int64_t>(1, inst_count[0]);
  const bool stepwise = artifact_.formulation() == kFormulationStepwise;
  const int64_t candidate_cost = stepwise ? 2 * unit : unit;
  // Measuring -Oz alone would only confirm -Oz: unless a candidate fits
  // beside it, nothing is measured.
  if (unit + candidate_cost > options_.budget || top_k() == 0) {
    best.note = absl::StrCat("topk: kept -Oz unmeasured: ", inst_count[0],
                             " instructions, -Oz and a candidate over the "
                             "budget of ",
                             options_.budget);
    return best;
  }
  std::vector<std::string> skipped;
  // Runs `pipeline` on a faithful copy of the module (ir::FaithfulCopier:
  // read back from its bitcode with use-list order, its symbol tables'
  // unique-name counters set to the module's) and measures the objective.
  // Each copy lives in an LLVMContext of its own, made for it: the
  // module's context is left as it was (under -flto the module's bitcode
  // is the output, and code generation teaches its context metadata kinds
  // — heapallocsite — that the bitcode writer then lists: topk's bitcode
  // differed from clang's), and each copy's types keep their names.
  // The object is emitted from the optimised copy itself: byte for byte
  // what the pipeline gives the module, which an outcome-cache hit writes
  // (a CloneModule copy gave another object for 9 of 150 real C files).
  // A size policy compares whole objects (alloc_size: every allocated
  // section), never .text alone, so no object it keeps is larger than
  // -Oz's in total (a pipeline that trimmed crc32.c's .text by 19 bytes
  // grew its .rodata by 18 kB).
  // Each measurement's object is kept (size policies) and moves into
  // PolicyChoice::object with the choice: the wrapper writes it rather than
  // running the chosen pipeline again.
  // A candidate whose IR comes out equal to an earlier measurement's (with
  // the same codegen options) is not emitted again (MeasurementMemo): its
  // size equals that earlier one's, so it cannot be chosen over it (a
  // choice needs a strictly smaller size) and needs no object.
  MeasurementMemo memo;
  const ir::FaithfulCopier copier(module);
  // -Oz's warnings are printed (they reach clang through the fallback they
  // cause); a candidate's fail it (MeasurePipeline's warnings_fail).
  auto measure_copy =
      [&](const std::string& pipeline,
          std::string* bitcode) -> absl::StatusOr<PipelineMeasurement> {
    // Declared before the copy: it outlives it (MeasurePipeline destroys
    // the copy before it returns).
    llvm::LLVMContext context;
    absl::StatusOr<std::unique_ptr<llvm::Module>> copy = copier.Copy(context);
    if (!copy.ok()) return copy.status();
    MeasureOptions options;
    options.keep_object = text;
    options.memo = text ? &memo : nullptr;
    options.optimised_bitcode = bitcode;
    options.warnings_fail = pipeline != kOzPipeline;
    return MeasurePipeline(*std::move(copy), pipeline, *env.runner,
                           text ? env.emitter : nullptr, options);
  };
  auto measure =
      [&](const std::string& pipeline) -> absl::StatusOr<PipelineMeasurement> {
    return measure_copy(pipeline, nullptr);
  };
  auto value_of = [&](const PipelineMeasurement& m) {
    return text ? m.alloc_size : m.ir_count;
  };
  auto choose = [&](PipelineMeasurement& m) {
    best.measured = value_of(m);
    best.object = std::move(m.object);
    best.object_ir_count = best.object.empty() ? -1 : m.ir_count;
  };
  // -Oz's optimised IR is kept for the candidates that begin with -Oz.
  std::string oz_bitcode;
  absl::StatusOr<PipelineMeasurement> oz =
      measure_copy(kOzPipeline, text ? &oz_bitcode : nullptr);
  best.evaluated = 1;
  best.work = unit;
  if (!oz.ok()) {
    best.note =
        absl::StrCat("topk: -Oz could not be measured (",
                     oz.status().message().substr(0, 200), "); kept -Oz");
    return best;
  }
  const int64_t oz_value = value_of(*oz);
  choose(*oz);
  best.oz_measured = oz_value;
  best.measured_pipelines.emplace_back(kOzPipeline, oz_value);
  std::string best_name = "oz";

  // The pipelines to try, best-scored first.
  std::vector<std::pair<std::string, std::string>> tries;  // name, pipeline
  const int k = top_k();
  if (artifact_.formulation() == kFormulationCandidate) {
    // The k best-scored. Measuring -Oz with the machine outliner first,
    // whatever its score, was tried (2026-11-27) and lost: on whole objects
    // it is larger than -Oz's on 11 of 27 validation and 20 of 43 test
    // modules of the Debian corpus, and the slot it took from the network
    // cost the default 1.0081 -> 1.0060 (validation) and 1.0169 -> 1.0059
    // (test) in alloc_oz_ratio (BENCHMARKS.md, "topk and the best fixed
    // pipeline").
    const std::vector<float> scores = Score(autophase, inst_count, {});
    for (int index : Ranked(scores)) {
      if (static_cast<int>(tries.size()) >= k) break;
      const v1::CandidatePipeline& c = artifact_.candidates(index);
      if (c.pipeline() == kOzPipeline) continue;  // measured already
      if (!candidate_allowed_[index]) continue;   // no policy runs it
      tries.emplace_back(c.name(), c.pipeline());
    }
  } else {
    const std::vector<float> scores = Score(autophase, inst_count, {});
    std::vector<int> firsts = Ranked(scores);
    firsts.resize(std::min<size_t>(firsts.size(), k));
    for (int first : firsts) {
      // An action not for policies (Score gave it -infinity).
      if (std::isinf(scores[first]) && scores[first] < 0) continue;
      tries.emplace_back(
          absl::StrCat("rollout:", artifact_.action_names(first)),
          std::to_string(first));  // rolled out lazily below
    }
  }
  // A candidate beginning with -Oz continues from a copy of -Oz's IR
  // (OzContinuation): it costs its own passes and code generation, not -Oz
  // again. Such a copy's object is not kept, so when one leads, the best
  // measured the whole way stays in `best` and the leader is only noted;
  // at the end it is measured the whole way for its object. Choices are the
  // ones measuring every candidate whole gives, as both ways measure the
  // same sizes; the work counted is the same either way.
  const OzContinuation from_oz(std::move(oz_bitcode),
                               module.getModuleIdentifier());
  from_oz.RememberOz(*oz, &memo);
  struct Leader {
    std::string name, pipeline;
    int64_t value;
  };
  std::optional<Leader> continued_leader;
  int continued = 0;
  for (const auto& [name, spec] : tries) {
    if (best.work + candidate_cost > options_.budget) break;
    best.work += candidate_cost;
    std::string pipeline = spec;
    if (stepwise) {
      absl::StatusOr<std::vector<int32_t>> actions =
          Rollout(module, autophase, inst_count, std::stoi(spec), *env.runner);
      if (!actions.ok()) {
        skipped.push_back(name);
        continue;
      }
      pipeline = PipelineOf(*actions);
    }
    const bool from_oz_ir = text && from_oz.Continues(pipeline);
    absl::StatusOr<PipelineMeasurement> m =
        from_oz_ir ? from_oz.Measure(pipeline, *env.runner, env.emitter, &memo)
                   : measure(pipeline);
    ++best.evaluated;
    if (!m.ok()) {
      skipped.push_back(name);
      continue;
    }
    if (from_oz_ir) ++continued;
    const int64_t value = value_of(*m);
    best.measured_pipelines.emplace_back(pipeline, value);
    const int64_t leading =
        continued_leader ? std::min(best.measured, continued_leader->value)
                         : best.measured;
    if (value >= leading) continue;
    if (from_oz_ir) {
      continued_leader = Leader{name, pipeline, value};
    } else {
      choose(*m);
      best.pipeline = pipeline;
      best_name = name;
      continued_leader.reset();
    }
  }
  std::string remeasured;
  if (continued_leader) {
    // The leader's object, made the whole way as the wrapper makes it.
    absl::StatusOr<PipelineMeasurement> whole =
        measure(continued_leader->pipeline);
    const int64_t value = whole.ok() ? value_of(*whole) : -1;
    if (whole.ok() && value < best.measured) {
      choose(*whole);
      best.pipeline = continued_leader->pipeline;
      best_name = continued_leader->name;
    }
    if (value != continued_leader->value) {
      // Not expected (the sizes agreed on all 4,704 pairs measured); the
      // whole run's figure is the one recorded.
      for (auto& [pipeline, recorded] : best.measured_pipelines) {
        if (pipeline == continued_leader->pipeline && value > 0) {
          recorded = value;
        }
      }
      remeasured = absl::StrCat("; ", continued_leader->name, " measured ",
                                continued_leader->value, " from -Oz's IR, ",
                                value, " whole");
    }
  }
  best.note = absl::StrCat("topk: ", best_name, " ",
                           text ? "alloc_size" : artifact_.objective(), " ",
                           best.measured, " vs -Oz ", oz_value, " (",
                           best.evaluated, " measured of ", tries.size() + 1,
                           ", work ", best.work, " of ", options_.budget, ")");
  if (continued > 0) {
    absl::StrAppend(&best.note, "; ", continued, " continued from -Oz's IR",
                    remeasured);
  }
  if (memo.reused() > 0) {
    absl::StrAppend(&best.note, "; ", memo.reused(),
                    " left the IR as an earlier one did (not emitted)");
  }
  if (!skipped.empty()) {
    absl::StrAppend(&best.note, "; failed: ", absl::StrJoin(skipped, " "));
  }
  return best;
}

}  // namespace phaseloop::policy_runtime
