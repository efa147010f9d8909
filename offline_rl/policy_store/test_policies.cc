#include "offline_rl/policy_store/test_policies.h"

#include "absl/strings/str_cat.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/state_features.h"

namespace phaseloop::policy_store::testing {

v1::PolicyArtifact TinyPolicy(int seed) {
  v1::PolicyArtifact artifact;
  artifact.set_format_version(policy_runtime::kPolicyFormatVersion);
  artifact.set_objective(policy_runtime::kObjectiveTextSize);
  artifact.set_formulation(policy_runtime::kFormulationCandidate);
  artifact.set_action_space_version("llvm-16/v1");
  for (const char* name : {"instcombine", "simplifycfg", "sroa"}) {
    artifact.add_action_names(name);
  }
  const int inputs = policy_runtime::StateDim(artifact.action_names_size());
  v1::FeatureNormalization* normalization = artifact.mutable_normalization();
  normalization->set_layout(policy_runtime::kStateLayoutV1);
  for (int i = 0; i < inputs; ++i) {
    normalization->add_mean(0.0f);
    normalization->add_scale(1.0f);
  }
  v1::DenseLayer* layer = artifact.add_layers();
  layer->set_inputs(inputs);
  layer->set_outputs(2);
  for (int i = 0; i < 2 * inputs; ++i) {
    layer->add_weights(static_cast<float>((i * 7 + seed * 13) % 17) / 17.0f -
                       0.5f);
  }
  layer->add_bias(0.1f * static_cast<float>(seed));
  layer->add_bias(0.0f);
  v1::CandidatePipeline* oz = artifact.add_candidates();
  oz->set_name("oz");
  oz->set_pipeline("default<Oz>");
  v1::CandidatePipeline* c001 = artifact.add_candidates();
  c001->set_name("c001");
  c001->add_actions(0);
  c001->add_actions(1);
  c001->set_pipeline("instcombine,simplifycfg");
  artifact.set_max_steps(1);
  artifact.set_default_top_k(2);
  v1::PolicyMetadata* metadata = artifact.mutable_metadata();
  metadata->set_algorithm("bc");
  metadata->set_training_command(absl::StrCat("test --seed ", seed));
  metadata->set_seed(static_cast<uint64_t>(seed));
  (*metadata->mutable_metrics())["validation_oz_ratio"] = 0.97;
  return artifact;
}

std::string TinyPolicyFile(int seed) {
  return policy_runtime::SerializePolicyArtifactFile(TinyPolicy(seed));
}

}  // namespace phaseloop::policy_store::testing
