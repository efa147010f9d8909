#ifndef PHASELOOP_CANARY_CONTROLLER_RUN_OUTCOME_RECORDS_H_
#define PHASELOOP_CANARY_CONTROLLER_RUN_OUTCOME_RECORDS_H_

// What a finished canary run leaves in the replay buffer: its two
// deployments (baseline = stable's build, candidate) with their status, and
// its final reward (reward_id "canary-run/<canary_id>", source "canary",
// the candidate build's build_id and the stable version it was compared
// with), which the speed learner joins to the builds' decisions
// (offline_rl/learner/canary_values.h). Pure: no I/O, `now_ms` given.

#include <cstdint>

#include "phaseloop/v1/canary.pb.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::canary {

replay_buffer::WriteBatch RunOutcomeRecords(const v1::CanaryRun& run,
                                            int64_t now_ms);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_RUN_OUTCOME_RECORDS_H_
