#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_TEST_ARTIFACTS_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_TEST_ARTIFACTS_H_

// Valid PolicyArtifacts with seeded random weights, for tests and
// benchmarks (testonly).

#include <cstdint>
#include <string>
#include <vector>

#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::policy_runtime::testing {

struct RandomArtifactOptions {
  std::string objective = "text_size";
  std::string formulation = "candidate";  // or "stepwise"
  std::vector<std::string> action_names;  // empty: "a0".."a{n-1}" x 8
  std::vector<int> hidden = {16};         // RELU hidden layer widths
  // Candidate formulation: the pipelines (name = "c<i>", actions empty).
  // Empty: {"default<Oz>"} plus 3 pipelines of action-space passes (every
  // candidate must pass passes::CheckPolicyPipeline).
  std::vector<std::string> candidate_pipelines;
  int max_steps = 4;
  uint64_t seed = 1;
};

// A random but valid artifact (ValidatePolicyArtifact passes): weights
// uniform in [-0.5, 0.5], mean in [0, 1], scale in [0.5, 1.5].
v1::PolicyArtifact RandomArtifact(const RandomArtifactOptions& options);

}  // namespace phaseloop::policy_runtime::testing

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_TEST_ARTIFACTS_H_
