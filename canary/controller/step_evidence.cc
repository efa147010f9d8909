#include "canary/controller/step_evidence.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/kafka/topic_reader.h"

namespace phaseloop::canary {
namespace {

double Median(std::vector<double> values) {
  return values.empty() ? 0 : Percentile(std::move(values), 50);
}

}  // namespace

StepEvidence EvidenceFromRewards(const std::vector<v1::Reward>& rewards,
                                 const StepWindowFilter& filter) {
  // The last record per reward_id, in arrival order of first sight.
  std::map<std::string, const v1::Reward*> latest;
  for (const v1::Reward& reward : rewards) {
    if (reward.service() != filter.service) continue;
    const bool baseline =
        reward.deployment_id() == filter.baseline_deployment_id;
    const bool canary = reward.deployment_id() == filter.canary_deployment_id;
    if (!baseline && !canary) continue;
    latest[reward.reward_id()] = &reward;
  }
  StepEvidence evidence;
  Samples& latency = evidence.metrics["p95_latency_ms"];
  Samples& errors = evidence.metrics["error_rate"];
  for (const auto& [id, reward] : latest) {
    const bool baseline =
        reward->deployment_id() == filter.baseline_deployment_id;
    int64_t& newest = baseline ? evidence.baseline_newest_end_ms
                               : evidence.canary_newest_end_ms;
    newest = std::max(newest, reward->window_end_ms());
    if (reward->window_start_ms() < filter.from_ms ||
        reward->window_end_ms() > filter.to_ms || reward->count() <= 0) {
      continue;
    }
    (baseline ? latency.baseline : latency.canary)
        .push_back(reward->p95_seconds() * 1000);
    (baseline ? errors.baseline : errors.canary)
        .push_back(static_cast<double>(reward->error_count()) /
                   static_cast<double>(reward->count()));
    ++(baseline ? evidence.baseline_windows : evidence.canary_windows);
  }
  const double baseline_p95 = Median(latency.baseline);
  const double canary_p95 = Median(latency.canary);
  if (baseline_p95 > 0 && canary_p95 > 0) {
    evidence.relative_reward = std::log(baseline_p95 / canary_p95);
  }
  return evidence;
}

absl::StatusOr<std::vector<v1::Reward>> ReadServiceRewards(
    const std::string& bootstrap, const std::string& topic,
    const std::string& service, int64_t timeout_ms) {
  kafka::TopicReadOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = topic;
  options.client_id = absl::StrCat("phaseloop-canary-", service);
  options.timeout = std::chrono::milliseconds(timeout_ms);
  std::vector<v1::Reward> rewards;
  auto stats =
      kafka::ReadTopicToEnd(options, [&](const kafka::ConsumedMessage& m) {
        v1::Reward reward;
        if (reward.ParseFromString(m.value) && reward.service() == service) {
          rewards.push_back(std::move(reward));
        }
      });
  if (!stats.ok()) return stats.status();
  return rewards;
}

}  // namespace phaseloop::canary
