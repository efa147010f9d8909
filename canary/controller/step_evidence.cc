#include "canary/controller/step_evidence.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/topic_reader.h"
#include "reward_engine/sli/latency_sketch.h"

namespace phaseloop::canary {
namespace {

// One side's judged windows: per-window figures and the merged sketch.
struct Side {
  std::optional<sli::LatencySketch> merged;
  std::vector<std::pair<int64_t, double>> window_p95_ms;  // (start, p95)
};

// Folds `reward`'s sketch into `side`; false when the record has none that
// can be used (see StepEvidence::windows_without_sketch).
bool MergeSketch(const v1::Reward& reward, Side& side) {
  if (reward.sketch().relative_accuracy() <= 0) return false;
  absl::StatusOr<sli::LatencySketch> sketch =
      sli::LatencySketch::FromProto(reward.sketch());
  if (!sketch.ok() || sketch->count() != reward.count()) return false;
  if (!side.merged.has_value()) {
    side.merged = *std::move(sketch);
    return true;
  }
  return side.merged->Merge(*sketch).ok();
}

// The merged distribution as request latencies in milliseconds: each
// bucket's representative value once per request in it, or, above
// kMaxLatencySamples requests, the values at that many evenly spaced ranks.
std::vector<double> RequestLatenciesMs(const sli::LatencySketch& sketch) {
  const v1::LatencySketch proto = sketch.ToProto();
  std::vector<std::pair<double, int64_t>> buckets;  // (ms, count), ascending
  if (proto.zero_count() > 0) buckets.emplace_back(0.0, proto.zero_count());
  const sli::LogMapping& mapping = sketch.mapping();
  for (int k = 0; k < proto.counts_size(); ++k) {
    if (proto.counts(k) > 0) {
      buckets.emplace_back(mapping.Value(proto.index_offset() + k) * 1000,
                           proto.counts(k));
    }
  }
  for (int k = 0; k < proto.sparse_indexes_size(); ++k) {
    if (proto.sparse_counts(k) > 0) {
      buckets.emplace_back(mapping.Value(proto.sparse_indexes(k)) * 1000,
                           proto.sparse_counts(k));
    }
  }
  int64_t total = 0;
  for (const auto& [value, count] : buckets) total += count;
  std::vector<double> out;
  if (total <= kMaxLatencySamples) {
    out.reserve(total);
    for (const auto& [value, count] : buckets) out.insert(out.end(), count, value);
    return out;
  }
  out.reserve(kMaxLatencySamples);
  // Rank of the i-th value: the middle of the i-th of kMaxLatencySamples
  // equal slices of [0, total).
  size_t bucket = 0;
  int64_t below = 0;  // requests in buckets before `bucket`
  for (int64_t i = 0; i < kMaxLatencySamples; ++i) {
    const int64_t rank = static_cast<int64_t>(
        (static_cast<long double>(i) + 0.5L) * total / kMaxLatencySamples);
    while (rank >= below + buckets[bucket].second) {
      below += buckets[bucket].second;
      ++bucket;
    }
    out.push_back(buckets[bucket].first);
  }
  return out;
}

double InterpolatedP95(const std::optional<sli::LatencySketch>& sketch) {
  if (!sketch.has_value() || sketch->empty()) return 0;
  absl::StatusOr<double> p95 = sketch->InterpolatedQuantile(0.95);
  return p95.ok() ? std::max(*p95, sli::kMinValue) : 0;
}

std::vector<double> InWindowOrder(
    std::vector<std::pair<int64_t, double>> window_values) {
  std::sort(window_values.begin(), window_values.end());
  std::vector<double> out;
  for (const auto& [start, value] : window_values) out.push_back(value);
  return out;
}

}  // namespace

StepEvidence EvidenceFromRewards(const std::vector<v1::Reward>& rewards,
                                 const StepWindowFilter& filter) {
  // The last record per reward_id.
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
  Samples& latency = evidence.metrics["latency_ms"];
  Samples& errors = evidence.metrics["error_rate"];
  Side baseline_side, canary_side;
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
    Side& side = baseline ? baseline_side : canary_side;
    if (!MergeSketch(*reward, side)) ++evidence.windows_without_sketch;
    side.window_p95_ms.emplace_back(reward->window_start_ms(),
                                    reward->p95_seconds() * 1000);
    (baseline ? errors.baseline : errors.canary)
        .push_back(static_cast<double>(reward->error_count()) /
                   static_cast<double>(reward->count()));
    ++(baseline ? evidence.baseline_windows : evidence.canary_windows);
  }
  if (baseline_side.merged.has_value()) {
    latency.baseline = RequestLatenciesMs(*baseline_side.merged);
  }
  if (canary_side.merged.has_value()) {
    latency.canary = RequestLatenciesMs(*canary_side.merged);
  }
  // The same requests again, for a rule on their median (rollout_judge.yaml).
  evidence.metrics["latency_median_ms"] = latency;
  evidence.baseline_window_p95_ms =
      InWindowOrder(std::move(baseline_side.window_p95_ms));
  evidence.canary_window_p95_ms =
      InWindowOrder(std::move(canary_side.window_p95_ms));
  const double baseline_p95 = InterpolatedP95(baseline_side.merged);
  const double canary_p95 = InterpolatedP95(canary_side.merged);
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
