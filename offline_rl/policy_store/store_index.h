#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_STORE_INDEX_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_STORE_INDEX_H_

// The directory store's index file (DIR/index.json, private to this
// folder): the stored versions and every channel with its history, as JSON
// a person can read. Pure functions; thread-compatible.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "offline_rl/policy_store/policy_store.h"

namespace phaseloop::policy_store::internal {

// v1: versions and channels. v2 adds a version's "verdict" object; an index
// is written as v1 while no version has a verdict (so older phaseloops still
// open it) and as v2 once one has (so they refuse it rather than drop the
// verdicts when they rewrite it). Both are read.
inline constexpr char kStoreIndexFormatV1[] = "phaseloop-policy-store/v1";
inline constexpr char kStoreIndexFormat[] = "phaseloop-policy-store/v2";

struct StoreIndex {
  // StoredPolicy::channels is not stored (derived from `channels`).
  std::vector<StoredPolicy> policies;
  std::map<std::string, ChannelState> channels;  // by name
};

// True for 32 lowercase hex digits (a PolicyVersionOf result).
bool IsPolicyVersion(absl::string_view text);

std::string StoreIndexToJson(const StoreIndex& index);

// Parses an index file's text; `source` names it in errors. An index of
// another format version is FailedPrecondition (written by a newer
// phaseloop); anything malformed is DataLoss naming the defect.
absl::StatusOr<StoreIndex> StoreIndexFromJson(absl::string_view json,
                                              absl::string_view source);

}  // namespace phaseloop::policy_store::internal

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_STORE_INDEX_H_
