#ifndef PHASELOOP_OFFLINE_RL_LEARNER_POLICY_EXPORT_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_POLICY_EXPORT_H_

// The trained network as the driver's PolicyArtifact (proto/phaseloop/v1/
// policy.proto): format version, objective, formulation, the pass action
// space's names, the normalisation, the layers, the candidates, max_steps
// and metadata (algorithm, exact training command, data snapshot, config
// text, seed, metrics). Deterministic: equal inputs give equal bytes, hence
// equal policy_version. No libtorch here.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner_config.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::offline_rl {

struct ExportInputs {
  const LearnerConfig* config = nullptr;
  const Dataset* data = nullptr;
  std::vector<std::string> pass_names;  // the action space, by index
  Normalization normalization;
  std::vector<v1::DenseLayer> layers;
  std::string training_command;
  std::string parent_version;
  std::map<std::string, double> metrics;
  float single_abstain_margin = 0;  // candidate formulation; 0: none
  // [data->candidates], true: CandidatePipeline.single_excluded; empty:
  // none.
  std::vector<bool> single_excluded;
};

// Builds and validates (policy_runtime::ValidatePolicyArtifact) the
// artifact. InvalidArgument when it does not validate.
absl::StatusOr<v1::PolicyArtifact> BuildPolicyArtifact(
    const ExportInputs& inputs);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_POLICY_EXPORT_H_
