#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_TEST_POLICIES_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_TEST_POLICIES_H_

// Tiny valid policy artifacts for the policy store's tests (testonly).

#include <string>

#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::policy_store::testing {

// A valid candidate-formulation artifact: 3 actions, one dense layer from
// StateDim(3) = 130 inputs to 2 candidates ("oz" and "c001"). Different
// `seed`s give different weights, hence different policy versions.
v1::PolicyArtifact TinyPolicy(int seed);

// SerializePolicyArtifactFile(TinyPolicy(seed)).
std::string TinyPolicyFile(int seed);

}  // namespace phaseloop::policy_store::testing

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_TEST_POLICIES_H_
