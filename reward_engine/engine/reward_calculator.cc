#include "reward_engine/engine/reward_calculator.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/kafka/topics.h"

namespace phaseloop::reward_engine {
namespace {

double QuantileOr(const sli::LatencySketch& sketch, double q) {
  absl::StatusOr<double> value = sketch.Quantile(q);
  return value.ok() ? *value : 0;
}

double InterpolatedOr(const sli::LatencySketch& sketch, double q) {
  absl::StatusOr<double> value = sketch.InterpolatedQuantile(q);
  return value.ok() ? *value : 0;
}

}  // namespace

std::string RewardId(const std::string& service, const std::string& group,
                     const std::string& deployment_id,
                     int64_t window_start_ms) {
  // The buffer's reward ids keep their first format (replays overwrite the
  // rows they wrote before); the Kafka key orders the same parts otherwise.
  return absl::StrCat("canary/", service, "/", deployment_id, "/",
                      window_start_ms, "/", group);
}

WindowRewards ComputeRewards(const ClosedWindow& window,
                             double slo_threshold_seconds) {
  WindowRewards out;
  const GroupWindow* baseline = nullptr;
  int baselines = 0;
  for (const GroupWindow& group : window.groups) {
    if (group.group == kBaselineGroup && !group.sketch.empty()) {
      baseline = &group;
      ++baselines;
    }
  }
  if (baselines != 1) baseline = nullptr;
  // The relative reward compares p95s interpolated inside their buckets
  // (LatencySketch::InterpolatedQuantile): a canary 0.5 % faster reads about
  // 0.005, not 0 (plain quantiles move in whole buckets, log gamma = 0.01).
  const double baseline_p95 =
      baseline == nullptr
          ? 0
          : std::max(InterpolatedOr(baseline->sketch, 0.95), sli::kMinValue);

  for (const GroupWindow& group : window.groups) {
    if (group.sketch.empty()) {
      ++out.empty_groups;
      continue;
    }
    v1::Reward reward;
    reward.set_reward_id(RewardId(window.service, group.group,
                                  group.deployment_id, window.window_start_ms));
    reward.set_service(window.service);
    reward.set_group(group.group);
    reward.set_deployment_id(group.deployment_id);
    reward.set_policy_version(group.policy_version);
    reward.set_window_start_ms(window.window_start_ms);
    reward.set_window_end_ms(window.window_end_ms);
    reward.set_sli_windows(group.sli_windows);
    reward.set_count(group.sketch.count());
    reward.set_error_count(group.error_count);
    const double p95 = QuantileOr(group.sketch, 0.95);
    reward.set_p50_seconds(QuantileOr(group.sketch, 0.5));
    reward.set_p95_seconds(p95);
    reward.set_p99_seconds(QuantileOr(group.sketch, 0.99));
    *reward.mutable_sketch() = group.sketch.ToProto();
    if (!group.error_sketch.empty()) {
      *reward.mutable_error_sketch() = group.error_sketch.ToProto();
    }
    reward.set_slo_threshold_seconds(slo_threshold_seconds);
    const int64_t good =
        slo::GoodRequests(group.sketch, group.error_sketch, group.error_count,
                          slo_threshold_seconds);
    reward.set_good_count(good);
    const double p95_floor = std::max(p95, sli::kMinValue);
    reward.set_reward(std::log(slo_threshold_seconds / p95_floor));
    if (baseline != nullptr && &group != baseline) {
      reward.set_has_relative_reward(true);
      reward.set_relative_reward(
          std::log(baseline_p95 / std::max(InterpolatedOr(group.sketch, 0.95),
                                           sli::kMinValue)));
      reward.set_baseline_deployment_id(baseline->deployment_id);
    }

    v1::FinalReward final_reward;
    final_reward.set_reward_id(reward.reward_id());
    final_reward.set_source("canary");
    final_reward.set_policy_version(group.policy_version);
    final_reward.set_deployment_id(group.deployment_id);
    final_reward.set_value(reward.reward());
    if (reward.has_relative_reward()) {
      final_reward.set_relative_value(reward.relative_reward());
      final_reward.set_baseline_deployment_id(reward.baseline_deployment_id());
    }
    final_reward.set_window_start_ms(window.window_start_ms);
    // Event time, not wall time: a replay writes the identical row.
    final_reward.set_unix_time_ms(window.window_end_ms);

    slo::SloWindowObservation observation;
    observation.service = window.service;
    observation.group = group.group;
    observation.window_start_ms = window.window_start_ms;
    observation.window_end_ms = window.window_end_ms;
    observation.total = group.sketch.count();
    observation.good = good;
    observation.latencies = group.sketch;
    observation.errors = group.error_count;
    observation.error_latencies = group.error_sketch;

    out.rewards.push_back(std::move(reward));
    out.final_rewards.push_back(std::move(final_reward));
    // Groups come ordered by (group, deployment): the budget counts a
    // group's deployments in the window together.
    if (!out.observations.empty() &&
        out.observations.back().group == observation.group) {
      slo::SloWindowObservation& same = out.observations.back();
      same.total += observation.total;
      same.good += observation.good;
      same.errors += observation.errors;
      // Sketches of one engine always merge; were one not to, `good` (the
      // strictest threshold's) would count for every SLO.
      if (!same.latencies || !same.latencies->Merge(group.sketch).ok() ||
          !same.error_latencies.Merge(group.error_sketch).ok()) {
        same.latencies.reset();
      }
    } else {
      out.observations.push_back(std::move(observation));
    }
  }
  return out;
}

}  // namespace phaseloop::reward_engine
