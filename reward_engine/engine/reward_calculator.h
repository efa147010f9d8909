#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_REWARD_CALCULATOR_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_REWARD_CALCULATOR_H_

// From a closed window (every group of one service, sketches merged) to what
// the engine publishes and stores: one v1::Reward per (group, deployment)
// for phaseloop.rewards, the same as a "canary" v1::FinalReward for the
// replay buffer (value = reward; relative_value and baseline_deployment_id
// when the Reward has a relative reward), and the good/total counts the error
// budget needs. Pure and deterministic: the same window gives byte-identical
// records (no wall-clock time inside), which is what lets a replay overwrite
// instead of count twice.
//
//   reward          = log(slo_threshold / p95)
//   relative_reward = log(p95 of the baseline / p95 of this group), set for
//                     every non-baseline deployment when the window has
//                     exactly one deployment of group kBaselineGroup
//   good            = requests with latency <= threshold that did not fail
//                     (slo::GoodRequests over the merged sketches: failures
//                     of unknown latency count as within the threshold)
// A p95 of 0 (every request under 1 ns) is taken as 1 ns so the logarithm
// stays finite. Groups without requests give no reward (counted in
// `empty_groups`).

#include <cstdint>
#include <string>
#include <vector>

#include "phaseloop/v1/reward.pb.h"
#include "proto/phaseloop/v1/episode.pb.h"
#include "reward_engine/engine/event_time_windows.h"
#include "reward_engine/slo/error_budget.h"

namespace phaseloop::reward_engine {

inline constexpr char kBaselineGroup[] = "baseline";

struct WindowRewards {
  std::vector<v1::Reward> rewards;             // in the window's group order
  std::vector<v1::FinalReward> final_rewards;  // one per reward
  // One per group (its deployments in the window summed).
  std::vector<slo::SloWindowObservation> observations;
  int64_t empty_groups = 0;
};

// "canary/<service>/<deployment_id>/<window_start_ms>/<group>".
std::string RewardId(const std::string& service, const std::string& group,
                     const std::string& deployment_id, int64_t window_start_ms);

// `slo_threshold_seconds` > 0: the service's SLO latency threshold.
WindowRewards ComputeRewards(const ClosedWindow& window,
                             double slo_threshold_seconds);

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_REWARD_CALCULATOR_H_
