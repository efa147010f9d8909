#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_SEARCH_RECORDS_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_SEARCH_RECORDS_H_

// What the runtime search reads from a staged build (which module a source
// became, whether the wrapper ran the pipeline asked for) and writes to the
// replay buffer for an evaluation (its episode, module record, decisions,
// staging rewards and any miscompile).

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/decision.pb.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/staging/stage_workload.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runtime_search {

// Whether the candidate build ran `pipeline` for `module_hash`; otherwise
// why not (the decision's outcome and reason).
bool RanPipeline(const runner::BuiltVariant& candidate,
                 const std::string& module_hash, const std::string& pipeline,
                 std::string* why);

// The module hash of `source` in `built` (its one unit the wrapper
// optimised from that source); NotFound or, for several, FailedPrecondition.
absl::StatusOr<std::string> ModuleHashOfSource(
    const runner::BuiltVariant& built, const std::string& source);

// The reference build's decision for `module_hash` (the baseline's, or in a
// profile-guided search the profile alone's): its features are the
// unoptimised module's. Null when it has none with features.
const v1::Decision* BaselineDecision(const runner::BuiltVariant& baseline,
                                     const std::string& module_hash);

// The episode of one evaluated (module, pipeline) and its records. With
// `features` (the reference's decision for the module), the episode has one
// step holding the unoptimised module's features (action -1: the pipeline
// is no sequence of the action space's actions), and the module's record,
// in the workload's split (so the learner's split filter keeps held-out
// workloads' modules out of training).
replay_buffer::WriteBatch RecordsOf(const staging::StageResult& result,
                                    const std::string& module_hash,
                                    const std::string& pipeline,
                                    const char* behaviour, uint64_t seed,
                                    const workloads::Workload& workload,
                                    const v1::Decision* features,
                                    std::string* episode_id);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_SEARCH_RECORDS_H_
