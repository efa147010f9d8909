#ifndef PHASELOOP_STAGING_HARNESS_RESULTS_STORED_EPISODE_SINKS_H_
#define PHASELOOP_STAGING_HARNESS_RESULTS_STORED_EPISODE_SINKS_H_

// EpisodeSinks beyond the file: the replay buffer itself (one machine), and
// the episodes Kafka topic (distributed search; `phaseloop buffer ingest`
// stores it). Both keep the sink contract: a whole episode or nothing, and
// after Flush everything written is durable (committed / acknowledged).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/producer.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/search/episode_sink.h"

namespace phaseloop::search {

// Writes episodes and the best sequences they show to a ReplayStore, in
// batches of up to `batch` episodes per transaction (Flush writes the rest).
class BufferEpisodeSink : public EpisodeSink {
 public:
  BufferEpisodeSink(replay_buffer::ReplayStore* store, size_t batch = 64)
      : store_(store), batch_(batch) {}
  ~BufferEpisodeSink() override { (void)Flush(); }
  absl::Status Write(const v1::Episode& episode) override;
  absl::Status Flush() override;

 private:
  replay_buffer::ReplayStore* store_;
  size_t batch_;
  replay_buffer::WriteBatch pending_;
};

// Produces episodes keyed by module_hash to `topic` (idempotent producer);
// Flush waits for every delivery report. With a `spool_dir`
// (common/kafka/delivery_spool.h), episodes Kafka does not acknowledge are
// never dropped: Create first produces what an earlier run left in the
// spool, and a Flush whose deliveries fail keeps the undelivered episodes
// there and succeeds (they are durable on disk; kept_for_retry() counts
// them). Without one, such a Flush fails.
class KafkaEpisodeSink : public EpisodeSink {
 public:
  static absl::StatusOr<std::unique_ptr<KafkaEpisodeSink>> Create(
      const std::string& bootstrap, const std::string& topic,
      const std::string& spool_dir = "");
  absl::Status Write(const v1::Episode& episode) override;
  absl::Status Flush() override;

  // What Create's retry of the spool did (all zero without a spool).
  const kafka::SpoolRetry& spool_retry() const { return spool_retry_; }
  // Episodes kept in the spool by Flush so far.
  int64_t kept_for_retry() const { return kept_for_retry_; }
  // "" without a spool.
  std::string spool_dir() const { return spool_ ? spool_->dir() : ""; }

 private:
  KafkaEpisodeSink(std::unique_ptr<kafka::Producer> producer, std::string topic)
      : producer_(std::move(producer)), topic_(std::move(topic)) {}
  std::unique_ptr<kafka::Producer> producer_;
  std::string topic_;
  std::optional<kafka::DeliverySpool> spool_;
  kafka::SpoolRetry spool_retry_;
  int64_t kept_for_retry_ = 0;
};

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_RESULTS_STORED_EPISODE_SINKS_H_
