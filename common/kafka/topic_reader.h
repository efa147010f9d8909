#ifndef PHASELOOP_COMMON_KAFKA_TOPIC_READER_H_
#define PHASELOOP_COMMON_KAFKA_TOPIC_READER_H_

// Reading a whole topic once, as it is now: every partition from its low to
// its high watermark (taken at the start), without joining a consumer group
// (the partitions are assigned directly, nothing is committed). For readers
// that rebuild state from a topic — `phaseloop slo status` (latest budgets)
// and the reward engine's budget history at start-up.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "common/kafka/consumer.h"

namespace phaseloop::kafka {

struct TopicReadOptions {
  std::string bootstrap_servers;
  std::string topic;
  std::string client_id;  // also the (never joined) group id
  std::chrono::milliseconds timeout{10000};
  // Keep asking for the watermarks until the timeout while the cluster
  // cannot be reached (brokers restarting), instead of failing at once.
  bool wait_for_cluster = false;
};

struct TopicReadStats {
  bool topic_exists = false;  // an absent topic is read as empty, not created
  int64_t records = 0;
};

// Calls `each` for every record, in each partition's order (partitions
// interleaved). Errors: InvalidArgument for unusable bootstrap servers,
// Unavailable when the cluster cannot be reached ("cannot reach the Kafka
// cluster at ..."), DeadlineExceeded when the records up to the high
// watermarks did not all arrive within the timeout.
absl::StatusOr<TopicReadStats> ReadTopicToEnd(
    const TopicReadOptions& options,
    const std::function<void(const ConsumedMessage&)>& each);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_TOPIC_READER_H_
