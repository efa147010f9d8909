#ifndef PHASELOOP_REPLAY_BUFFER_EPISODE_INGEST_H_
#define PHASELOOP_REPLAY_BUFFER_EPISODE_INGEST_H_

// Moves search episodes from Kafka (phaseloop.search.episodes) into the
// replay buffer, effectively once: each batch of episodes, the best
// sequences they show and the consumer's next offsets are one transaction,
// and after a restart or rebalance every partition resumes from the offsets
// stored in the buffer, not from Kafka's. A record that is not an Episode is
// counted, reported, produced to the dead-letter topic when a producer is
// given, and skipped (its offset is stored with the batch). Episodes are
// upserts by episode_id, so a record delivered twice is stored once.
// Records deleted from Kafka before they were read (retention; see
// common/kafka/consumer.h) are reported on stderr naming the topic, partition
// and offsets, counted in IngestStats::records_lost, recorded as a
// dead-letter entry (a line in `lost_records_log`, common/kafka/
// lost_records_log.h, and a record on the dead-letter topic when a producer
// is given), and ingest goes on with the records still there.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/kafka/producer.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {

struct IngestOptions {
  std::string bootstrap_servers;
  std::string group = "phaseloop-buffer-ingest";
  std::string topic = "phaseloop.search.episodes";
  size_t max_batch = 200;  // records per transaction
  std::chrono::milliseconds max_batch_delay{500};
  // Return after this long without a record once partitions are assigned
  // (0: run until *stop).
  std::chrono::milliseconds idle_exit{0};
  // Where lost records are recorded (kafka::LostRecordsLogPath); "": nowhere
  // but stderr (`phaseloop buffer ingest` uses the default state directory).
  std::string lost_records_log;
  // librdkafka properties for the consumer (e.g. session.timeout.ms).
  std::map<std::string, std::string> consumer_config;
};

struct IngestStats {
  int64_t records = 0;
  int64_t episodes = 0;
  int64_t malformed = 0;
  int64_t transactions = 0;
  int64_t records_lost = 0;  // offsets deleted from Kafka before being read
  int64_t losses = 0;        // gaps those offsets came in
};

// Runs until *stop (checked between polls; may be null), `idle_exit`, or a
// fatal error. `dead_letters` may be null.
absl::StatusOr<IngestStats> RunEpisodeIngest(ReplayStore& store,
                                             const IngestOptions& options,
                                             kafka::Producer* dead_letters,
                                             const std::atomic<bool>* stop);

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_EPISODE_INGEST_H_
