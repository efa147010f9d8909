#include "reward_engine/engine/budget_history.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/kafka/topic_reader.h"

namespace phaseloop::reward_engine {

BudgetHistory HistoryFromRewards(const std::vector<v1::Reward>& rewards) {
  std::map<std::string, const v1::Reward*> latest;  // by reward_id
  for (const v1::Reward& reward : rewards) latest[reward.reward_id()] = &reward;
  struct Window {
    slo::SloWindowObservation observation;
    // Each SLO's good requests come from the records' sketches; one record
    // without a readable sketch of its count leaves `good` (the strictest
    // threshold's) for every SLO of the window.
    bool sketches_usable = true;
  };
  std::map<std::tuple<std::string, std::string, int64_t>, Window> windows;
  BudgetHistory history;
  for (const auto& [id, reward] : latest) {
    Window& w = windows[{reward->service(), reward->group(),
                         reward->window_start_ms()}];
    slo::SloWindowObservation& o = w.observation;
    o.service = reward->service();
    o.group = reward->group();
    o.window_start_ms = reward->window_start_ms();
    o.window_end_ms = reward->window_end_ms();
    o.total += reward->count();
    o.good += reward->good_count();
    o.errors += reward->error_count();
    absl::StatusOr<sli::LatencySketch> sketch =
        sli::LatencySketch::FromProto(reward->sketch());
    if (!sketch.ok() || sketch->count() != reward->count()) {
      w.sketches_usable = false;
    } else if (w.sketches_usable) {
      if (!o.latencies) {
        o.latencies = *std::move(sketch);
      } else if (!o.latencies->Merge(*sketch).ok()) {
        w.sketches_usable = false;
      }
    }
    // Failures of a record whose error sketch cannot be read count as of
    // unknown latency (within every threshold), as in older records.
    if (reward->has_error_sketch()) {
      absl::StatusOr<sli::LatencySketch> failures =
          sli::LatencySketch::FromProto(reward->error_sketch());
      if (failures.ok() && failures->count() <= reward->error_count()) {
        o.error_latencies.Merge(*failures).IgnoreError();
      }
    }
    history.newest_window_end_ms =
        std::max(history.newest_window_end_ms, reward->window_end_ms());
  }
  history.observations.reserve(windows.size());
  for (auto& [key, w] : windows) {
    if (!w.sketches_usable) w.observation.latencies.reset();
    history.observations.push_back(std::move(w.observation));
  }
  return history;
}

absl::StatusOr<BudgetHistory> ReadBudgetHistory(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds timeout) {
  std::vector<v1::Reward> rewards;
  int64_t malformed = 0;
  kafka::TopicReadOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = topic;
  options.client_id = "phaseloop-rewards-history";
  options.timeout = timeout;
  options.wait_for_cluster = true;  // brokers may be restarting
  absl::StatusOr<kafka::TopicReadStats> read =
      kafka::ReadTopicToEnd(options, [&](const kafka::ConsumedMessage& m) {
        v1::Reward reward;
        if (!reward.ParseFromString(m.value) || reward.reward_id().empty() ||
            reward.service().empty()) {
          ++malformed;
          return;
        }
        rewards.push_back(std::move(reward));
      });
  if (!read.ok()) return read.status();
  BudgetHistory history = HistoryFromRewards(rewards);
  history.records = read->records;
  history.malformed = malformed;
  return history;
}

}  // namespace phaseloop::reward_engine
