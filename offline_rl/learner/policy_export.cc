#include "offline_rl/learner/policy_export.h"

#include "absl/strings/str_cat.h"
#include "common/protobuf/utf8_strings.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/state_features.h"

namespace phaseloop::offline_rl {

absl::StatusOr<v1::PolicyArtifact> BuildPolicyArtifact(
    const ExportInputs& inputs) {
  const LearnerConfig& config = *inputs.config;
  const Dataset& data = *inputs.data;
  v1::PolicyArtifact a;
  a.set_format_version(policy_runtime::kPolicyFormatVersion);
  a.set_objective(config.policy_objective.empty() ? config.objective
                                                  : config.policy_objective);
  a.set_formulation(config.formulation);
  a.set_action_space_version(data.action_space_version);
  for (const std::string& name : inputs.pass_names) a.add_action_names(name);
  v1::FeatureNormalization* norm = a.mutable_normalization();
  norm->set_layout(policy_runtime::kStateLayoutV1);
  norm->mutable_mean()->Add(inputs.normalization.mean.begin(),
                            inputs.normalization.mean.end());
  norm->mutable_scale()->Add(inputs.normalization.scale.begin(),
                             inputs.normalization.scale.end());
  for (const v1::DenseLayer& layer : inputs.layers) *a.add_layers() = layer;
  if (!inputs.single_excluded.empty() &&
      inputs.single_excluded.size() != data.candidates.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "single mode's exclusions name ", inputs.single_excluded.size(),
        " candidates; the policy has ", data.candidates.size()));
  }
  for (size_t i = 0; i < data.candidates.size(); ++i) {
    const Candidate& c = data.candidates[i];
    v1::CandidatePipeline* p = a.add_candidates();
    p->set_name(c.name);
    p->mutable_actions()->Add(c.actions.begin(), c.actions.end());
    p->set_pipeline(c.pipeline);
    if (!inputs.single_excluded.empty() && inputs.single_excluded[i]) {
      p->set_single_excluded(true);
      a.set_format_version(policy_runtime::kPolicyFormatVersionSingleExcluded);
    }
  }
  a.set_max_steps(config.max_steps);
  a.set_default_top_k(config.default_top_k);
  a.set_single_abstain_margin(inputs.single_abstain_margin);
  v1::PolicyMetadata* m = a.mutable_metadata();
  m->set_algorithm(config.algorithm);
  m->set_training_command(inputs.training_command);
  m->set_data_snapshot(data.snapshot);
  m->set_parent_version(inputs.parent_version);
  m->set_config(config.text);
  m->set_seed(config.seed);
  for (const auto& [name, value] : inputs.metrics) {
    (*m->mutable_metrics())[name] = value;
  }
  // The command line and the config are the user's bytes (a path named in
  // Latin-1): made valid UTF-8, or the artifact could be written but never
  // loaded.
  protobuf::MakeStringsValidUtf8(&a);
  absl::Status valid = policy_runtime::ValidatePolicyArtifact(a);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the exported policy artifact is invalid: ", valid.message()));
  }
  return a;
}

}  // namespace phaseloop::offline_rl
