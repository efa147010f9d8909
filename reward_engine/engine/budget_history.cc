#include "reward_engine/engine/budget_history.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::reward_engine {
namespace {

using Clock = std::chrono::steady_clock;

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 1));
}

// Partition -> (low, high) watermark of `topic`, through a metadata-only
// handle; empty when the topic does not exist. Retries until `deadline`
// (brokers may be restarting).
absl::StatusOr<std::map<int32_t, std::pair<int64_t, int64_t>>> Watermarks(
    const std::string& bootstrap, const std::string& topic,
    Clock::time_point deadline) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"bootstrap.servers", bootstrap},
        {"client.id", "phaseloop-rewards-history"},
        {"log_level", "3"}}) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(
          absl::StrCat("--kafka ", bootstrap, ": ", err));
    }
  }
  std::unique_ptr<rd_kafka_t, HandleDeleter> rk(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(
        absl::StrCat("--kafka ", bootstrap, ": ", err));
  }
  rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
  while (true) {
    // All topics' metadata: asking for one topic would auto-create it.
    const struct rd_kafka_metadata* metadata = nullptr;
    code = rd_kafka_metadata(rk.get(), /*all_topics=*/1, nullptr, &metadata,
                             RemainingMs(deadline));
    std::map<int32_t, std::pair<int64_t, int64_t>> partitions;
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int t = 0; t < metadata->topic_cnt; ++t) {
        const rd_kafka_metadata_topic_t& mt = metadata->topics[t];
        if (topic != mt.topic || mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
        for (int p = 0; p < mt.partition_cnt; ++p) {
          partitions[mt.partitions[p].id] = {0, 0};
        }
      }
      rd_kafka_metadata_destroy(metadata);
      for (auto& [partition, marks] : partitions) {
        code = rd_kafka_query_watermark_offsets(
            rk.get(), topic.c_str(), partition, &marks.first, &marks.second,
            RemainingMs(deadline));
        if (code != RD_KAFKA_RESP_ERR_NO_ERROR) break;
      }
      if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return partitions;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::UnavailableError(absl::StrCat(
      "cannot read the end offsets of ", topic, " at ", bootstrap, " (",
      rd_kafka_err2str(code), "); check --kafka and that it is running"));
}

}  // namespace

BudgetHistory HistoryFromRewards(const std::vector<v1::Reward>& rewards) {
  std::map<std::string, const v1::Reward*> latest;  // by reward_id
  for (const v1::Reward& reward : rewards) latest[reward.reward_id()] = &reward;
  std::map<std::tuple<std::string, std::string, int64_t>,
           slo::SloWindowObservation>
      windows;
  BudgetHistory history;
  for (const auto& [id, reward] : latest) {
    slo::SloWindowObservation& o = windows[{
        reward->service(), reward->group(), reward->window_start_ms()}];
    o.service = reward->service();
    o.group = reward->group();
    o.window_start_ms = reward->window_start_ms();
    o.window_end_ms = reward->window_end_ms();
    o.total += reward->count();
    o.good += reward->good_count();
    history.newest_window_end_ms =
        std::max(history.newest_window_end_ms, reward->window_end_ms());
  }
  history.observations.reserve(windows.size());
  for (auto& [key, o] : windows) history.observations.push_back(std::move(o));
  return history;
}

absl::StatusOr<BudgetHistory> ReadBudgetHistory(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  auto partitions = Watermarks(bootstrap, topic, deadline);
  if (!partitions.ok()) return partitions.status();
  kafka::OffsetMap start;
  std::map<int32_t, int64_t> remaining_to;  // partition -> end offset
  for (const auto& [partition, marks] : *partitions) {
    if (marks.second > marks.first) {
      start[{topic, partition}] = marks.first;
      remaining_to[partition] = marks.second;
    }
  }
  if (start.empty()) return BudgetHistory{};

  kafka::ConsumerOptions options;
  options.bootstrap_servers = bootstrap;
  // Required by the client; never joined and nothing is committed.
  options.group_id = "phaseloop-rewards-history";
  options.client_id = "phaseloop-rewards-history";
  auto consumer = kafka::Consumer::Create(options);
  if (!consumer.ok()) return consumer.status();
  if (absl::Status s = (*consumer)->AssignWithOffsets(start); !s.ok()) {
    return s;
  }
  std::vector<v1::Reward> rewards;
  int64_t records = 0;
  int64_t malformed = 0;
  while (!remaining_to.empty()) {
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "read ", records, " records of ", topic, " from ", bootstrap,
          " but ", remaining_to.size(),
          " partition(s) did not reach their end within ", timeout.count(),
          " ms"));
    }
    auto message = (*consumer)->Poll(std::chrono::milliseconds(100));
    if (!message.ok()) {
      if (kafka::ClassOf(message.status()) == kafka::ErrorClass::kRetriable) {
        continue;
      }
      return message.status();
    }
    if (!message->has_value()) continue;
    const kafka::ConsumedMessage& m = **message;
    auto pending = remaining_to.find(m.partition);
    if (pending != remaining_to.end() && m.offset + 1 >= pending->second) {
      remaining_to.erase(pending);
    }
    ++records;
    v1::Reward reward;
    if (!reward.ParseFromString(m.value) || reward.reward_id().empty() ||
        reward.service().empty()) {
      ++malformed;
      continue;
    }
    rewards.push_back(std::move(reward));
  }
  (*consumer)->Close().IgnoreError();
  BudgetHistory history = HistoryFromRewards(rewards);
  history.records = records;
  history.malformed = malformed;
  return history;
}

}  // namespace phaseloop::reward_engine
