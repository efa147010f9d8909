#include "replay_buffer/episode_ingest.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/topics.h"

namespace phaseloop::replay_buffer {
namespace {

using Clock = std::chrono::steady_clock;

struct PendingBatch {
  WriteBatch batch;
  kafka::OffsetMap next_offsets;
  Clock::time_point first = Clock::now();
  size_t records = 0;
};

}  // namespace

absl::StatusOr<IngestStats> RunEpisodeIngest(ReplayStore& store,
                                             const IngestOptions& options,
                                             kafka::Producer* dead_letters,
                                             const std::atomic<bool>* stop) {
  IngestStats stats;
  PendingBatch pending;
  kafka::ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = options.bootstrap_servers;
  consumer_options.group_id = options.group;
  consumer_options.topics = {options.topic};
  consumer_options.config = options.consumer_config;
  consumer_options.offset_lookup =
      [&](const std::vector<kafka::TopicPartition>& assigned)
      -> absl::StatusOr<kafka::OffsetMap> {
    absl::StatusOr<std::vector<ConsumerOffset>> stored =
        store.ReadOffsets(options.group, options.topic);
    if (!stored.ok()) return stored.status();
    kafka::OffsetMap next;
    for (const ConsumerOffset& offset : *stored) {
      kafka::TopicPartition tp{offset.topic, offset.partition};
      for (const kafka::TopicPartition& a : assigned) {
        if (a == tp) next[tp] = offset.next_offset;
      }
    }
    return next;
  };
  // Records of revoked partitions may go to another member: what was read
  // but not committed is dropped and read again from the stored offsets.
  consumer_options.on_revoke = [&](const std::vector<kafka::TopicPartition>&) {
    pending = PendingBatch();
  };
  absl::StatusOr<std::unique_ptr<kafka::Consumer>> consumer =
      kafka::Consumer::Create(consumer_options);
  if (!consumer.ok()) return consumer.status();

  auto commit = [&]() -> absl::Status {
    if (pending.records == 0) return absl::OkStatus();
    for (const auto& [tp, next] : pending.next_offsets) {
      pending.batch.offsets.push_back(
          ConsumerOffset{options.group, tp.topic, tp.partition, next});
    }
    absl::Status written = store.Write(pending.batch);
    if (!written.ok()) return written;
    ++stats.transactions;
    pending = PendingBatch();
    return absl::OkStatus();
  };

  Clock::time_point last_record = Clock::now();
  while (stop == nullptr || !stop->load()) {
    absl::StatusOr<std::optional<kafka::ConsumedMessage>> message =
        (*consumer)->Poll(std::chrono::milliseconds(100));
    if (!message.ok()) {
      if (auto lost = kafka::RecordsLostOf(message.status())) {
        stats.records_lost += lost->count();
        ++stats.losses;
        std::cerr << "buffer ingest: " << message.status().message() << "\n";
        const kafka::LostRecordsEntry entry =
            kafka::MakeLostRecordsEntry(*lost, options.group, "buffer ingest");
        if (!options.lost_records_log.empty()) {
          absl::Status recorded =
              kafka::AppendLostRecords(options.lost_records_log, entry);
          std::cerr << "buffer ingest: "
                    << (recorded.ok()
                            ? "recorded in " + options.lost_records_log
                            : std::string(recorded.message()))
                    << "\n";
        }
        if (dead_letters != nullptr) {
          (void)dead_letters->Produce(
              std::string(kafka::kDeadLetterTopic),
              absl::StrCat(lost->topic, "/", lost->partition, "/",
                           lost->first_offset, "-", lost->last_offset),
              kafka::LostRecordsLine(entry));
        }
        continue;
      }
      if (kafka::ClassOf(message.status()) == kafka::ErrorClass::kRetriable) {
        continue;
      }
      return message.status();
    }
    if (message->has_value()) {
      const kafka::ConsumedMessage& m = **message;
      last_record = Clock::now();
      if (pending.records == 0) pending.first = Clock::now();
      ++pending.records;
      ++stats.records;
      pending.next_offsets[{m.topic, m.partition}] = m.offset + 1;
      v1::Episode episode;
      if (!episode.ParseFromString(m.value) || episode.episode_id().empty()) {
        ++stats.malformed;
        std::cerr << "buffer ingest: " << m.topic << "/" << m.partition << "@"
                  << m.offset << " is not a phaseloop.v1.Episode; skipped\n";
        if (dead_letters != nullptr) {
          (void)dead_letters->Produce(
              std::string(kafka::kDeadLetterTopic),
              absl::StrCat(m.topic, "/", m.partition, "/", m.offset), m.value);
        }
      } else {
        v1::BestSequence best;
        if (BestSequenceOf(episode, &best)) {
          pending.batch.best_sequences.push_back(best);
        }
        pending.batch.episodes.push_back(std::move(episode));
        ++stats.episodes;
      }
    }
    bool full = pending.records >= options.max_batch;
    bool due = pending.records > 0 &&
               Clock::now() - pending.first >= options.max_batch_delay;
    if (full || due || !message->has_value()) {
      absl::Status committed = commit();
      if (!committed.ok()) return committed;
    }
    if (options.idle_exit.count() > 0) {
      // Idle time counts only once partitions are assigned (a group join
      // can take seconds).
      if ((*consumer)->Assignment().empty()) last_record = Clock::now();
      if (Clock::now() - last_record >= options.idle_exit) break;
    }
  }
  absl::Status committed = commit();
  if (!committed.ok()) return committed;
  (void)(*consumer)->Close();
  return stats;
}

}  // namespace phaseloop::replay_buffer
