#ifndef PHASELOOP_REPLAY_BUFFER_KAFKA_INGEST_H_
#define PHASELOOP_REPLAY_BUFFER_KAFKA_INGEST_H_

// Moves records from Kafka into the replay buffer, effectively once: search
// episodes (phaseloop.search.episodes, from search workers) and compile
// decisions (phaseloop.decisions, from `phaseloop decisions ship --kafka`),
// read by one consumer subscribed to both. Each batch of rows — episodes,
// the best sequences they show, decisions — and the consumer's next offsets
// are one transaction, and after a restart or rebalance every partition
// resumes from the offsets stored in the buffer, not from Kafka's. A record
// that is not what its topic carries (an Episode with an episode_id, a
// Decision with a decision_id), or a row the buffer would refuse (an
// episode with two steps of one index, ...: ValidateWriteBatch), is counted,
// reported, produced to the dead-letter topic when a producer is given, and
// skipped (its offset is stored with the batch). Counts are of stored
// batches: a batch dropped on a rebalance is read, and counted, again. Episodes
// are upserts by episode_id and decisions by decision_id (the key they travel
// under), so a record delivered or shipped twice is stored once. Records
// deleted from Kafka before they were read (retention; see
// common/kafka/consumer.h) are reported on stderr naming the topic, partition
// and offsets, counted in IngestStats::records_lost, recorded as a
// dead-letter entry (a line in `lost_records_log`, common/kafka/
// lost_records_log.h, and a record on the dead-letter topic when a producer
// is given), and ingest goes on with the records still there.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/idle_exit.h"
#include "common/kafka/producer.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {

struct IngestOptions {
  std::string bootstrap_servers;
  std::string group = "phaseloop-buffer-ingest";
  // The topics read, each "" to leave it out (at least one must be set).
  std::string topic = "phaseloop.search.episodes";      // Episode records
  std::string decisions_topic = "phaseloop.decisions";  // Decision records
  size_t max_batch = 200;  // records per transaction
  std::chrono::milliseconds max_batch_delay{500};
  // Return after this long without a record while the group is settled,
  // partitions held or none (0: run until *stop). Never settled in
  // unassigned_grace (at least idle_exit) and no broker ever answered: an
  // Unavailable error (kafka/idle_exit.h); a broker answered: wait on.
  std::chrono::milliseconds idle_exit{0};
  std::chrono::milliseconds unassigned_grace = kafka::kUnassignedGrace;
  // Return once every assigned partition has been read up to its end offset
  // (high watermark) as last seen, for a bounded ingest of what is there now
  // (the canary's builds). Gaps no record fills (compaction, transaction
  // markers) are left to idle_exit, so set both.
  bool exit_at_end = false;
  // Return after this long in all, whatever is left to read (0: no limit);
  // a bound for callers that must not wait on a topic that never appears.
  std::chrono::milliseconds run_limit{0};
  // Where lost records are recorded (kafka::LostRecordsLogPath); "": nowhere
  // but stderr (`phaseloop buffer ingest` uses the default state directory).
  std::string lost_records_log;
  // librdkafka properties for the consumer (e.g. session.timeout.ms).
  std::map<std::string, std::string> consumer_config;
};

struct IngestStats {
  int64_t records = 0;
  int64_t episodes = 0;
  int64_t decisions = 0;
  int64_t malformed = 0;
  int64_t transactions = 0;
  int64_t records_lost = 0;  // offsets deleted from Kafka before being read
  int64_t losses = 0;        // gaps those offsets came in
  std::map<std::string, int64_t> records_lost_by_topic;  // topics with losses
  // Partitions whose stored offset was past their log's start position:
  // the topic was recreated under the group (e.g. a new embedded cluster)
  // and read from its first record, its offsets replacing the stored ones.
  int64_t recreated_partitions = 0;
  // Why it returned: "end" (exit_at_end), "idle" (idle_exit), "limit"
  // (run_limit: records may be left unread), "stop" (*stop).
  std::string ended_by;
  // Dead letters the producer refused at once (not queued, so not among
  // what Drain returns), kept in the dead-letter spool instead.
  int64_t dead_letters_spooled = 0;
};

// Runs until *stop (checked between polls; may be null), `idle_exit`,
// `exit_at_end`, `run_limit`, or a fatal error; what was read is stored.
// `dead_letters` may be null. A dead letter it refuses at once is kept in
// `dead_letter_spool` before the record's offset is stored; without a
// spool, or when it cannot be kept, ingest stops with that error (the
// record is read again by the next run). InvalidArgument when no topic is
// set.
absl::StatusOr<IngestStats> RunKafkaIngest(
    ReplayStore& store, const IngestOptions& options,
    kafka::Producer* dead_letters, const std::atomic<bool>* stop,
    kafka::DeliverySpool* dead_letter_spool = nullptr);

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_KAFKA_INGEST_H_
