#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_SHOW_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_SHOW_H_

// What `phaseloop policy show` prints about one artifact: version,
// objective, formulation, network and normalisation shapes, metadata and
// candidate pipelines, for people (text) or machines (JSON). Pure.

#include <string>

#include "nlohmann/json.hpp"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::policy_store {

// `policy_version` is PolicyVersionOf(artifact); `file_bytes` the file size.
std::string DescribePolicyText(const v1::PolicyArtifact& artifact,
                               const std::string& policy_version,
                               size_t file_bytes);
nlohmann::json DescribePolicyJson(const v1::PolicyArtifact& artifact,
                                  const std::string& policy_version,
                                  size_t file_bytes);

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_SHOW_H_
