#ifndef PHASELOOP_COMMON_KAFKA_PRODUCER_H_
#define PHASELOOP_COMMON_KAFKA_PRODUCER_H_

// An idempotent Kafka producer (enable.idempotence=true, so acks=all and
// in-order, duplicate-free retries per partition) whose every delivery report
// is checked and counted. Records are partitioned by key with the murmur2
// partitioner (Java clients' mapping), so one key's records stay in order in
// one partition.
//
// Failure handling, by class (kafka_error.h):
//  - a full local queue is waited out inside Produce (poll and retry) up to
//    `queue_full_timeout`, then Produce returns a retriable error;
//  - librdkafka retries retriable broker errors itself until
//    `delivery_timeout`; a message that still fails is reported by Flush and
//    returned by TakeFailures (to produce again, safe because outputs are
//    keyed so a replay overwrites, or to dead-letter);
//  - a fatal error (the idempotence guarantee cannot be kept) is reported by
//    every later call: the producer refuses further records; destroy it and
//    create a new one.
//
// Thread-safety: all methods may be called from several threads. Delivery
// reports are served by Produce, Poll and Flush on the calling thread.
// librdkafka's log lines and the errors it recovers from by itself go to
// stderr, prefixed "kafka producer".

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::kafka {

struct ProducerOptions {
  // Comma-separated host:port list (every component's --kafka flag).
  std::string bootstrap_servers;
  std::string client_id = "phaseloop";
  // How long librdkafka keeps retrying one record before reporting it failed
  // (message.timeout.ms).
  std::chrono::milliseconds delivery_timeout{120000};
  // How long Produce waits for room when the local queue is full.
  std::chrono::milliseconds queue_full_timeout{30000};
  // How long the destructor flushes outstanding records.
  std::chrono::milliseconds close_timeout{10000};
  // Extra librdkafka properties (e.g. linger.ms, compression.type,
  // max.in.flight <= 5). Those the guarantees rest on (idempotence, acks,
  // partitioner, bootstrap) and mock-only ones are rejected.
  std::map<std::string, std::string> config;
};

// A record librdkafka gave up on, with what is needed to produce it again.
struct DeliveryFailure {
  std::string topic;
  std::string key;
  std::string value;
  absl::Status status;  // classified: ClassOf(status)
  // The broker may have stored it before the failure (e.g. timed out
  // waiting for the acknowledgement): producing it again may duplicate it.
  bool possibly_persisted = false;
  uint64_t tag = 0;  // as given to Produce
};

struct ProducerStats {
  int64_t produced = 0;   // accepted by Produce
  int64_t delivered = 0;  // acknowledged by all in-sync replicas
  int64_t failed_retriable = 0;
  int64_t failed_permanent = 0;
  int64_t failed_fatal = 0;
  int64_t queue_full_waits = 0;  // times Produce polled for queue room
  int64_t client_errors = 0;     // non-fatal errors librdkafka recovered from
  int64_t in_flight() const {
    return produced - delivered - failed_retriable - failed_permanent -
           failed_fatal;
  }
};

class Producer {
 public:
  // InvalidArgument names a bad option or property. Connecting is lazy: an
  // unreachable cluster shows as retriable delivery failures.
  static absl::StatusOr<std::unique_ptr<Producer>> Create(
      const ProducerOptions& options);

  // Flushes for at most options.close_timeout; records still undelivered
  // then are lost to this process (call Flush first to learn of them).
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues one record (copied). `key` chooses the partition; an empty key is
  // a null key (records spread over partitions). OK means queued, not
  // delivered: the outcome comes with Flush / TakeFailures. Errors:
  // retriable (queue still full after queue_full_timeout), permanent (record
  // too large, unknown topic), fatal (the producer is unusable). `tag` comes
  // back in the record's DeliveryFailure, if it fails.
  absl::Status Produce(absl::string_view topic, absl::string_view key,
                       absl::string_view value, uint64_t tag = 0);

  // Serves delivery reports for up to `timeout`.
  void Poll(std::chrono::milliseconds timeout);

  // Fetches the metadata of `topics` now (each waits up to `timeout`), so
  // the first record to each is sent at once: librdkafka otherwise looks
  // unknown topics up only once a second, holding that record back up to
  // 1 s. For latency-sensitive producers, at start-up. Retriable error
  // naming the topic when the cluster does not answer in time.
  absl::Status LoadTopicMetadata(const std::vector<std::string>& topics,
                                 std::chrono::milliseconds timeout);

  // Waits up to `timeout` for every queued record's delivery report. OK
  // means every record produced so far was delivered or its failure was
  // already taken with TakeFailures. Otherwise: fatal if the producer is
  // unusable; DeadlineExceeded (retriable) naming how many records are still
  // in flight; or the class of the worst untaken delivery failure, with
  // their count.
  absl::Status Flush(std::chrono::milliseconds timeout);

  // Delivery failures since the last call (oldest first).
  std::vector<DeliveryFailure> TakeFailures();

  // For shutting down without losing records: waits up to `timeout` for
  // every delivery report, then purges what is still queued or in flight
  // (ERR__PURGE_QUEUE / ERR__PURGE_INFLIGHT, retriable; in-flight ones are
  // possibly_persisted) and returns every delivery failure not taken yet,
  // purged ones included. Afterwards nothing is in flight. What the caller
  // does not produce again or keep (delivery_spool.h) is lost.
  std::vector<DeliveryFailure> Drain(std::chrono::milliseconds timeout);

  // The fatal error, or OK while the producer is usable.
  absl::Status fatal_error() const;
  ProducerStats stats() const;

 private:
  struct Impl;
  explicit Producer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_PRODUCER_H_
