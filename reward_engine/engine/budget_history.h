#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_BUDGET_HISTORY_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_BUDGET_HISTORY_H_

// The error-budget history a (re)starting engine seeds its
// slo::ErrorBudgetTracker with: the SLO window observations carried by the
// Rewards already on phaseloop.rewards. Without it a restarted engine would
// publish budgets covering only the windows closed since the restart.
//
// The rewards topic is read once, from the beginning of every partition to
// its end offset as of the start, without joining a consumer group (the
// partitions are assigned directly and nothing is committed), like
// slo/budget_reader.h reads the budget topic.
//
// Each Reward is counted once (the last record per reward_id: replays
// overwrite with identical values), and the deployments of one (service,
// group, window) are summed, exactly as ComputeRewards builds the
// observation of a closed window, so ErrorBudgetTracker::Observe (idempotent
// per window) ends in the state an uninterrupted engine has.
//
// Thread-safety: free functions, no shared state.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/reward.pb.h"
#include "reward_engine/engine/event_time_windows.h"
#include "reward_engine/slo/error_budget.h"

namespace phaseloop::reward_engine {

struct BudgetHistory {
  // One per (service, group, window_start_ms), in that order.
  std::vector<slo::SloWindowObservation> observations;
  int64_t newest_window_end_ms = kNoTime;
  int64_t records = 0;    // read
  int64_t malformed = 0;  // not a Reward (skipped)
};

// The observations of `rewards` (in topic order: a later record with the
// same reward_id replaces an earlier one).
BudgetHistory HistoryFromRewards(const std::vector<v1::Reward>& rewards);

// Reads `topic` as described above. Unavailable when the cluster cannot be
// reached (naming `bootstrap`), DeadlineExceeded when the records up to the
// end offsets did not all arrive within `timeout`. An absent topic is an
// empty history (and is not created).
absl::StatusOr<BudgetHistory> ReadBudgetHistory(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds timeout);

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_BUDGET_HISTORY_H_
