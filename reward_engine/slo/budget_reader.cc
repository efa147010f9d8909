#include "reward_engine/slo/budget_reader.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::slo {
namespace {

using Clock = std::chrono::steady_clock;

struct Watermarks {
  int64_t low = 0;
  int64_t high = 0;
};

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 1));
}

// Partitions of `topic` and their watermarks, through a metadata-only
// handle. An absent topic gives an empty map (and is not created).
absl::StatusOr<std::map<int32_t, Watermarks>> QueryWatermarks(
    const std::string& bootstrap, const std::string& topic,
    Clock::time_point deadline) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err,
                        sizeof err) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "client.id", "phaseloop-slo-status", err,
                        sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(
        absl::StrCat("--kafka ", bootstrap, ": ", err));
  }
  std::unique_ptr<rd_kafka_t, HandleDeleter> rk(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(
        absl::StrCat("--kafka ", bootstrap, ": ", err));
  }
  // All topics' metadata: asking for one topic would auto-create it on
  // brokers that allow auto-creation.
  const struct rd_kafka_metadata* metadata = nullptr;
  rd_kafka_resp_err_t code = rd_kafka_metadata(
      rk.get(), /*all_topics=*/1, nullptr, &metadata, RemainingMs(deadline));
  if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat(
        "cannot reach the Kafka cluster at ", bootstrap, " (",
        rd_kafka_err2str(code), "); check --kafka and that it is running"));
  }
  std::map<int32_t, Watermarks> partitions;
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& mt = metadata->topics[t];
    if (topic != mt.topic || mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    for (int p = 0; p < mt.partition_cnt; ++p) {
      partitions[mt.partitions[p].id] = {};
    }
  }
  rd_kafka_metadata_destroy(metadata);
  for (auto& [partition, marks] : partitions) {
    code = rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), partition,
                                            &marks.low, &marks.high,
                                            RemainingMs(deadline));
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::UnavailableError(
          absl::StrCat("cannot read the offsets of ", topic, "[", partition,
                       "] at ", bootstrap, ": ", rd_kafka_err2str(code)));
    }
  }
  return partitions;
}

}  // namespace

absl::StatusOr<BudgetSnapshot> ReadLatestBudgets(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  auto partitions = QueryWatermarks(bootstrap, topic, deadline);
  if (!partitions.ok()) return partitions.status();

  BudgetSnapshot snapshot;
  snapshot.topic_exists = !partitions->empty();
  kafka::OffsetMap start;
  std::map<int32_t, int64_t> remaining_to;  // partition → high watermark
  for (const auto& [partition, marks] : *partitions) {
    if (marks.high > marks.low) {
      start[{topic, partition}] = marks.low;
      remaining_to[partition] = marks.high;
    }
  }
  if (start.empty()) return snapshot;

  kafka::ConsumerOptions options;
  options.bootstrap_servers = bootstrap;
  // Required by the client; never joined (partitions are assigned directly)
  // and nothing is committed.
  options.group_id = "phaseloop-slo-status";
  options.client_id = "phaseloop-slo-status";
  auto consumer = kafka::Consumer::Create(options);
  if (!consumer.ok()) return consumer.status();
  if (auto s = (*consumer)->AssignWithOffsets(start); !s.ok()) return s;

  struct Kept {
    v1::BudgetStatus status;
    int32_t partition;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Kept> latest;
  while (!remaining_to.empty()) {
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "read ", snapshot.records, " records of ", topic, " from ", bootstrap,
          " but ", remaining_to.size(),
          " partition(s) did not reach their end within ", timeout.count(),
          " ms; try again or raise --timeout-ms"));
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
    ++snapshot.records;
    v1::BudgetStatus status;
    if (!status.ParseFromString(m.value) || status.service().empty()) {
      ++snapshot.malformed;
      continue;
    }
    auto key =
        std::make_tuple(status.service(), status.slo_name(), status.group());
    auto it = latest.find(key);
    if (it == latest.end() || it->second.partition == m.partition ||
        status.as_of_ms() >= it->second.status.as_of_ms()) {
      latest[key] = Kept{std::move(status), m.partition};
    }
  }
  (*consumer)->Close().IgnoreError();
  for (auto& [key, kept] : latest) {
    snapshot.latest.push_back(std::move(kept.status));
  }
  return snapshot;
}

}  // namespace phaseloop::slo
