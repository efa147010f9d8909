#ifndef PHASELOOP_COMMON_KAFKA_CONSUMER_H_
#define PHASELOOP_COMMON_KAFKA_CONSUMER_H_

// A Kafka consumer-group member that hands out one record at a time and
// never commits on its own (enable.auto.commit=false,
// enable.auto.offset.store=false, auto.offset.reset=earliest). Where a
// partition starts after a rebalance is decided, in order, by:
//   1. the caller's offset store: `offset_lookup` is called with the newly
//      assigned partitions and returns the next offset to read for those it
//      knows (the replay buffer keeps them in SQLite, in the same transaction
//      as the rows they produced, and resumes exactly after them);
//   2. the group's committed offset (Commit / CommitMessage), asked for in
//      the rebalance callback (a failure makes the consumer fatal, like a
//      failed offset lookup);
//   3. offset 0 (the earliest record, after the loss check below).
// Only the single-record consume API is used (the 2.0.x batch APIs have a
// known bug).
//
// Errors come out of Poll by class (kafka_error.h): retriable ones (broker
// down, topic not created yet) are reported and consuming continues; a fatal
// one (the client's own, or a failed offset lookup, after which the consumer
// holds partitions it must not read) is returned by every later call: close
// the consumer and create a new one.
//
// Lost records are never skipped silently. Every assigned partition is owed
// every record from where it starts (the stored offset, else the group's
// committed offset, else offset 0: a consumer with no position is owed the
// partition's whole history) onwards, one offset after another. When records
// it is owed are gone from the partition (deleted by retention before it read
// them: its start or next offset is below the partition's log start offset),
// Poll returns a DataLoss status, once per gap, before the next record of that
// partition: RecordsLostOf(status) gives the topic, partition and the first
// and last offset lost, the message names them too, and stats().records_lost
// counts them. The consumer is fine: keep polling and it goes on from the log
// start offset (the next Poll returns the first record still there). A caller
// that treats every non-retriable status as the end stops there, loudly.
// How a gap is found: librdkafka resets a position below the log start offset
// to the earliest record (auto.offset.reset=earliest; it only logs a
// warning), so the wrapper compares each record's offset with the one
// expected; a jump is a loss for the offsets below the log start offset
// (asked from the leader; gaps the log start offset does not explain, e.g.
// compaction or transaction markers, are not losses, and if the leader cannot
// be asked the whole jump is reported). When nothing arrives, the log start
// offset cached from fetches is compared with the expected offset (twice, one
// empty Poll apart, so records already fetched are not reported lost).
//
// Thread-safety: one thread at a time. Rebalance callbacks (offset_lookup,
// on_revoke) run inside Poll and Close, on the calling thread. librdkafka's
// log lines go to stderr, prefixed "kafka consumer".

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phaseloop::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator<(const TopicPartition& other) const {
    return std::tie(topic, partition) < std::tie(other.topic, other.partition);
  }
  bool operator==(const TopicPartition& other) const {
    return topic == other.topic && partition == other.partition;
  }
};

// Next offset to read (last processed offset + 1), per partition.
using OffsetMap = std::map<TopicPartition, int64_t>;

// Records a consumer was owed that are gone from the partition: offsets
// first_offset..last_offset (inclusive) of topic/partition.
struct RecordsLost {
  std::string topic;
  int32_t partition = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;
  int64_t count() const { return last_offset - first_offset + 1; }
};

// The lost range carried by a DataLoss status from Consumer::Poll; nullopt
// for any other status.
std::optional<RecordsLost> RecordsLostOf(const absl::Status& status);

struct ConsumedMessage {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;  // "" for a null key
  std::string value;
  int64_t timestamp_ms = -1;  // producer's create time, or -1 if unknown
};

struct ConsumerOptions {
  std::string bootstrap_servers;  // every component's --kafka flag
  std::string group_id;
  std::string client_id = "phaseloop";
  // Subscribed at Create (may be empty: assign with AssignWithOffsets).
  std::vector<std::string> topics;
  // Next offsets for some of `assigned` from the caller's own store; called
  // on every assignment. An error makes the consumer fatal (it must not
  // read from offsets it cannot trust).
  std::function<absl::StatusOr<OffsetMap>(
      const std::vector<TopicPartition>& assigned)>
      offset_lookup;
  // Called before partitions are taken away (rebalance or Close); records of
  // those partitions are no longer delivered after it returns.
  std::function<void(const std::vector<TopicPartition>& revoked)> on_revoke;
  // Extra librdkafka properties (e.g. session.timeout.ms,
  // partition.assignment.strategy). Commit and offset-reset policy, group
  // and bootstrap are set by the wrapper; mock-only properties are rejected.
  std::map<std::string, std::string> config;
};

struct ConsumerStats {
  int64_t messages = 0;
  int64_t retriable_errors = 0;
  int64_t rebalances = 0;    // assignments and revocations handled
  int64_t records_lost = 0;  // offsets reported lost (RecordsLost counts)
  int64_t losses = 0;        // RecordsLost statuses returned
};

class Consumer {
 public:
  // Creates the consumer and subscribes to options.topics. InvalidArgument
  // names a bad option or property.
  static absl::StatusOr<std::unique_ptr<Consumer>> Create(
      const ConsumerOptions& options);

  // Closes (leaving the group) if Close was not called.
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // The next record, waiting up to `timeout`; nullopt if none came. Errors
  // by class; after a retriable one, keep polling. A DataLoss status
  // (RecordsLostOf gives the range) reports records that are gone; keep
  // polling after it too.
  absl::StatusOr<std::optional<ConsumedMessage>> Poll(
      std::chrono::milliseconds timeout);

  // Replaces the assignment with exactly these partitions, each starting at
  // its offset (what the rebalance callback does with offset_lookup's
  // answer; call it directly for a consumer without a subscription).
  absl::Status AssignWithOffsets(const OffsetMap& next_offsets);

  // Moves an assigned partition's position to `offset` (the partition is
  // then owed the records from `offset` on).
  absl::Status Seek(const TopicPartition& partition, int64_t offset,
                    std::chrono::milliseconds timeout);

  // Commits next offsets to the group (synchronously), for consumers that
  // keep their position in Kafka rather than their own store.
  absl::Status Commit(const OffsetMap& next_offsets);
  // Commits `message.offset + 1` for its partition.
  absl::Status CommitMessage(const ConsumedMessage& message);
  // The group's committed next offsets for `partitions` (absent: none).
  absl::StatusOr<OffsetMap> Committed(
      const std::vector<TopicPartition>& partitions,
      std::chrono::milliseconds timeout);

  // The partitions currently assigned to this consumer.
  std::vector<TopicPartition> Assignment() const;

  // Whether the group has given this member its share, possibly none
  // (more members than partitions, a topic nobody created): true from an
  // assignment until the next revocation, false while joining or
  // rebalancing (which a member that died holds up for its session
  // timeout).
  bool GroupSettled() const;

  // The cluster's id (a real cluster's is stable across restarts; an
  // embedded cluster's gets its first broker's advertised address, an
  // ephemeral port, so each start has its own, however the bootstrap list
  // spells it; "" when its metadata does not come), waiting up to `timeout`
  // for metadata; "" when not known (no broker answered). May be called
  // from offset_lookup.
  std::string ClusterId(std::chrono::milliseconds timeout) const;

  // Whether any broker of the cluster answered (it told its cluster id),
  // waiting up to `timeout`.
  bool BrokerAnswered(std::chrono::milliseconds timeout) const;

  // Leaves the group (on_revoke runs). Idempotent.
  absl::Status Close();

  ConsumerStats stats() const;

 private:
  struct Impl;
  explicit Consumer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_CONSUMER_H_
