#include "compiler_driver/policy_runtime/test_artifacts.h"

#include <random>

#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/state_features.h"

namespace phaseloop::policy_runtime::testing {

v1::PolicyArtifact RandomArtifact(const RandomArtifactOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<float> weight(-0.5f, 0.5f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  v1::PolicyArtifact artifact;
  artifact.set_format_version(kPolicyFormatVersion);
  artifact.set_objective(options.objective);
  artifact.set_formulation(options.formulation);
  artifact.set_action_space_version("llvm-16/v1");
  std::vector<std::string> names = options.action_names;
  if (names.empty()) {
    // The driver's first eight actions (an artifact naming others is
    // refused: ValidatePolicyArtifact).
    const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
    for (int i = 0; i < 8; ++i) names.push_back(space.at(i).name);
  }
  for (const std::string& name : names) artifact.add_action_names(name);
  const int state_dim = StateDim(static_cast<int>(names.size()));
  auto* norm = artifact.mutable_normalization();
  norm->set_layout(kStateLayoutV1);
  for (int i = 0; i < state_dim; ++i) {
    norm->add_mean(unit(rng));
    norm->add_scale(0.5f + unit(rng));
  }
  const bool stepwise = options.formulation == kFormulationStepwise;
  if (!stepwise) {
    std::vector<std::string> pipelines = options.candidate_pipelines;
    if (pipelines.empty()) {
      pipelines = {"default<Oz>", "function(instcombine)",
                   "function(sroa),function(gvn)", "globaldce"};
    }
    for (size_t c = 0; c < pipelines.size(); ++c) {
      auto* candidate = artifact.add_candidates();
      candidate->set_name(c == 0 && pipelines[c] == "default<Oz>"
                              ? "oz"
                              : "c" + std::to_string(c));
      candidate->set_pipeline(pipelines[c]);
    }
  }
  std::vector<int> widths = options.hidden;
  widths.push_back(stepwise ? static_cast<int>(names.size())
                            : artifact.candidates_size());
  int inputs = state_dim;
  for (size_t l = 0; l < widths.size(); ++l) {
    auto* layer = artifact.add_layers();
    layer->set_inputs(inputs);
    layer->set_outputs(widths[l]);
    for (int i = 0; i < inputs * widths[l]; ++i)
      layer->add_weights(weight(rng));
    for (int i = 0; i < widths[l]; ++i) layer->add_bias(weight(rng));
    layer->set_activation(l + 1 < widths.size() ? v1::DenseLayer::RELU
                                                : v1::DenseLayer::IDENTITY);
    inputs = widths[l];
  }
  artifact.set_max_steps(options.max_steps);
  artifact.set_default_top_k(3);
  artifact.mutable_metadata()->set_algorithm("bc");
  artifact.mutable_metadata()->set_seed(options.seed);
  return artifact;
}

}  // namespace phaseloop::policy_runtime::testing
