#include "common/kafka/topic_reader.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka {
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

using Watermarks = std::map<int32_t, std::pair<int64_t, int64_t>>;  // low, high

// One attempt through a metadata-only handle: the partitions of `topic` and
// their watermarks; empty when the topic does not exist.
rd_kafka_resp_err_t QueryOnce(rd_kafka_t* rk, const std::string& topic,
                              Clock::time_point deadline, Watermarks* out) {
  // All topics' metadata: asking for one topic would auto-create it on
  // brokers that allow auto-creation.
  const struct rd_kafka_metadata* metadata = nullptr;
  rd_kafka_resp_err_t code = rd_kafka_metadata(
      rk, /*all_topics=*/1, nullptr, &metadata, RemainingMs(deadline));
  if (code != RD_KAFKA_RESP_ERR_NO_ERROR) return code;
  out->clear();
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& mt = metadata->topics[t];
    if (topic != mt.topic || mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    for (int p = 0; p < mt.partition_cnt; ++p) {
      (*out)[mt.partitions[p].id] = {0, 0};
    }
  }
  rd_kafka_metadata_destroy(metadata);
  for (auto& [partition, marks] : *out) {
    code = rd_kafka_query_watermark_offsets(rk, topic.c_str(), partition,
                                            &marks.first, &marks.second,
                                            RemainingMs(deadline));
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR) return code;
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

absl::StatusOr<Watermarks> QueryWatermarks(const TopicReadOptions& options,
                                           Clock::time_point deadline) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"bootstrap.servers",
                                            options.bootstrap_servers},
        {"client.id", options.client_id},
        {"log_level", "3"}}) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(
          absl::StrCat("--kafka ", options.bootstrap_servers, ": ", err));
    }
  }
  std::unique_ptr<rd_kafka_t, HandleDeleter> rk(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(
        absl::StrCat("--kafka ", options.bootstrap_servers, ": ", err));
  }
  Watermarks partitions;
  rd_kafka_resp_err_t code;
  while ((code = QueryOnce(rk.get(), options.topic, deadline, &partitions)) !=
             RD_KAFKA_RESP_ERR_NO_ERROR &&
         options.wait_for_cluster && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat(
        "cannot reach the Kafka cluster at ", options.bootstrap_servers,
        " to read ", options.topic, " (", rd_kafka_err2str(code),
        "); check --kafka and that it is running"));
  }
  return partitions;
}

}  // namespace

absl::StatusOr<TopicReadStats> ReadTopicToEnd(
    const TopicReadOptions& options,
    const std::function<void(const ConsumedMessage&)>& each) {
  const Clock::time_point deadline = Clock::now() + options.timeout;
  absl::StatusOr<Watermarks> partitions = QueryWatermarks(options, deadline);
  if (!partitions.ok()) return partitions.status();
  TopicReadStats stats;
  stats.topic_exists = !partitions->empty();
  OffsetMap start;
  std::map<int32_t, int64_t> remaining_to;  // partition -> high watermark
  for (const auto& [partition, marks] : *partitions) {
    if (marks.second > marks.first) {
      start[{options.topic, partition}] = marks.first;
      remaining_to[partition] = marks.second;
    }
  }
  if (start.empty()) return stats;

  ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = options.bootstrap_servers;
  // Required by the client; never joined (partitions are assigned directly)
  // and nothing is committed.
  consumer_options.group_id = options.client_id;
  consumer_options.client_id = options.client_id;
  absl::StatusOr<std::unique_ptr<Consumer>> consumer =
      Consumer::Create(consumer_options);
  if (!consumer.ok()) return consumer.status();
  if (absl::Status s = (*consumer)->AssignWithOffsets(start); !s.ok()) {
    return s;
  }
  while (!remaining_to.empty()) {
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "read ", stats.records, " records of ", options.topic, " from ",
          options.bootstrap_servers, " but ", remaining_to.size(),
          " partition(s) did not reach their end within ",
          options.timeout.count(), " ms"));
    }
    auto message = (*consumer)->Poll(std::chrono::milliseconds(100));
    if (!message.ok()) {
      if (ClassOf(message.status()) == ErrorClass::kRetriable) continue;
      return message.status();
    }
    if (!message->has_value()) continue;
    const ConsumedMessage& m = **message;
    auto pending = remaining_to.find(m.partition);
    if (pending != remaining_to.end() && m.offset + 1 >= pending->second) {
      remaining_to.erase(pending);
    }
    ++stats.records;
    each(m);
  }
  (*consumer)->Close().IgnoreError();
  return stats;
}

}  // namespace phaseloop::kafka
