#ifndef PHASELOOP_COMMON_KAFKA_CONSUMER_INTERNAL_H_
#define PHASELOOP_COMMON_KAFKA_CONSUMER_INTERNAL_H_

// Consumer's insides, shared by its two source files: consumer.cc (the
// public calls) and consumer_rebalance.cc (assignments, offsets placed on
// them, and records found lost). Not for other users.

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/kafka/client_config.h"
#include "common/kafka/consumer.h"

namespace phaseloop::kafka {
namespace consumer_internal {

// Owns librdkafka TopicPartition objects.
struct PartitionList {
  PartitionList() = default;
  PartitionList(const PartitionList&) = delete;
  PartitionList& operator=(const PartitionList&) = delete;
  ~PartitionList() { RdKafka::TopicPartition::destroy(list); }
  void Add(const TopicPartition& tp, int64_t offset) {
    list.push_back(
        RdKafka::TopicPartition::create(tp.topic, tp.partition, offset));
  }
  std::vector<RdKafka::TopicPartition*> list;
};

std::vector<TopicPartition> ToPartitions(
    const std::vector<RdKafka::TopicPartition*>& list);

// "topic/partition".
std::string Name(const TopicPartition& tp);

// The first per-partition error of a commit or committed() call.
absl::Status PartitionErrors(const std::vector<RdKafka::TopicPartition*>& list,
                             const std::string& what);

inline constexpr absl::string_view kRecordsLostPayload =
    "type.phaseloop.dev/phaseloop.kafka.RecordsLost";

// How long the rebalance callback waits for the group's committed offsets,
// and a record's jump past its expected offset for the log start offset.
inline constexpr int kCommittedTimeoutMs = 10000;
inline constexpr int kWatermarkTimeoutMs = 5000;

// A DataLoss status naming `lost`, with RecordsLostOf's payload.
absl::Status RecordsLostStatus(const RecordsLost& lost, const std::string& why);

}  // namespace consumer_internal

struct Consumer::Impl : public RdKafka::RebalanceCb {
  explicit Impl(const ConsumerOptions& options)
      : options(options), events("consumer") {}

  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override;
  // Applies offset_lookup's answer to newly assigned `partitions`.
  absl::Status ApplyStoredOffsets(
      const std::vector<RdKafka::TopicPartition*>& partitions);
  // Gives the partitions the offset_lookup did not place the group's
  // committed offset, else offset 0, so every start offset is known.
  absl::Status ApplyCommittedOffsets(
      const std::vector<RdKafka::TopicPartition*>& partitions);
  // Records `offset` as the next one owed for `tp` (negative: unknown).
  void Expect(const TopicPartition& tp, int64_t offset);
  // Compares a delivered record's offset with the one expected; queues a
  // RecordsLost status for a jump over deleted records.
  void CheckJump(const ConsumedMessage& message);
  // With nothing delivered: compares the cached log start offsets with the
  // expected offsets (a loss is reported on the second sighting).
  void CheckIdle();
  void QueueLoss(const RecordsLost& lost, const std::string& why);

  const ConsumerOptions options;
  internal::EventLogger events;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  bool closed = false;
  absl::Status broken;           // fatal: set once, returned by every call
  absl::Status rebalance_error;  // retriable: returned by the next Poll
  // Between an assignment (even an empty one) and the next revocation: the
  // group has settled and this member holds what it was given.
  bool settled = false;
  ConsumerStats stats;
  // Next offset owed per assigned partition (absent: not known yet, e.g.
  // after a seek to a logical offset; the next record sets it).
  std::map<TopicPartition, int64_t> expected;
  // Expected offsets seen below the cached log start offset by the last
  // empty Poll (reported if still so at the next one).
  std::map<TopicPartition, int64_t> suspected;
  // What Poll returns before consuming again: RecordsLost statuses and the
  // record that revealed them.
  std::deque<std::variant<absl::Status, ConsumedMessage>> pending;
};

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_CONSUMER_INTERNAL_H_
