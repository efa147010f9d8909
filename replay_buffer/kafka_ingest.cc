#include "replay_buffer/kafka_ingest.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/dead_letter.h"
#include "common/kafka/end_offset_probe.h"
#include "common/kafka/idle_exit.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/topics.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/unknown_field_set.h"

namespace phaseloop::replay_buffer {
namespace {

// The ingest's name in the dead letters it writes.
constexpr absl::string_view kDeadLetterConsumer = "buffer-ingest";

using Clock = std::chrono::steady_clock;

struct PendingBatch {
  WriteBatch batch;
  kafka::OffsetMap next_offsets;
  Clock::time_point first = Clock::now();
  size_t records = 0;
  // Counted into IngestStats when the batch is stored (a revoked batch is
  // read again, and must not count twice).
  int64_t episodes = 0;
  int64_t decisions = 0;
  int64_t malformed = 0;
};

// Adds the rows of one record of `topic` to `pending`; otherwise what is
// wrong with it: not what that topic carries, or a row the buffer refuses
// (ValidateWriteBatch's rules, checked per record, so that one bad record
// is dead-lettered instead of failing every batch it would join).
// Another message type often parses as this one: its fields land among the
// unknown ones (a SearchJob was stored as a decision). Unknown fields with
// numbers this type already uses (so of another wire type) or leaves
// between its own give it away; numbers above its highest are a newer
// producer's added fields and are kept as protobuf keeps them.
bool LooksLikeAnotherType(const google::protobuf::Message& message) {
  const google::protobuf::Descriptor* type = message.GetDescriptor();
  int highest = 0;
  for (int i = 0; i < type->field_count(); ++i) {
    highest = std::max(highest, type->field(i)->number());
  }
  const google::protobuf::UnknownFieldSet& unknown =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() <= highest) return true;
  }
  return false;
}

// Adds `m` to `pending`, or returns why it cannot be stored, as a dead
// letter's "class: text" reason (common/kafka/dead_letter.h).
std::optional<std::string> AddRecord(const IngestOptions& options,
                                     const kafka::ConsumedMessage& m,
                                     PendingBatch* pending) {
  WriteBatch rows;
  if (m.topic == options.decisions_topic) {
    v1::Decision decision;
    if (!decision.ParseFromString(m.value) || decision.decision_id().empty() ||
        LooksLikeAnotherType(decision)) {
      return "malformed: not a phaseloop.v1.Decision with a decision_id";
    }
    rows.decisions.push_back(std::move(decision));
  } else {
    v1::Episode episode;
    if (!episode.ParseFromString(m.value) || episode.episode_id().empty() ||
        LooksLikeAnotherType(episode)) {
      return "malformed: not a phaseloop.v1.Episode with an episode_id";
    }
    v1::BestSequence best;
    if (BestSequenceOf(episode, &best)) rows.best_sequences.push_back(best);
    rows.episodes.push_back(std::move(episode));
  }
  if (absl::Status valid = ValidateWriteBatch(rows); !valid.ok()) {
    return absl::StrCat("invalid: refused by the buffer: ", valid.message());
  }
  for (v1::Decision& d : rows.decisions) {
    pending->batch.decisions.push_back(std::move(d));
    ++pending->decisions;
  }
  for (v1::Episode& e : rows.episodes) {
    pending->batch.episodes.push_back(std::move(e));
    ++pending->episodes;
  }
  for (v1::BestSequence& b : rows.best_sequences) {
    pending->batch.best_sequences.push_back(std::move(b));
  }
  return std::nullopt;
}

// exit_at_end: where each assigned partition is (next offset to read) and
// where its end was last seen, per topic.
class EndTracker {
 public:
  absl::Status Start(const std::string& bootstrap,
                     const std::vector<std::string>& topics) {
    for (const std::string& topic : topics) {
      auto probe = kafka::EndOffsetProbe::Start(bootstrap, topic,
                                                std::chrono::milliseconds(200));
      if (!probe.ok()) return probe.status();
      probes_[topic] = *std::move(probe);
    }
    return absl::OkStatus();
  }
  bool enabled() const { return !probes_.empty(); }

  // A new assignment, each partition starting at `next` (absent: 0).
  void Assigned(const std::vector<kafka::TopicPartition>& assigned,
                const kafka::OffsetMap& next) {
    std::map<std::string, std::set<int32_t>> watched;
    for (const kafka::TopicPartition& tp : assigned) {
      auto it = next.find(tp);
      positions_[tp] = it == next.end() ? 0 : it->second;
      read_.erase(tp);
      watched[tp.topic].insert(tp.partition);
    }
    for (auto& [topic, probe] : probes_) probe->Watch(watched[topic]);
  }
  // The first record (or loss) of a partition tells where the consumer
  // really is: below the stored offset when the topic was recreated.
  void Reached(const kafka::TopicPartition& tp, int64_t next) {
    int64_t& position = positions_[tp];
    position = read_.insert(tp).second ? next : std::max(position, next);
  }
  // Every partition of `assignment` read up to its known end.
  bool AtEnd(const std::vector<kafka::TopicPartition>& assignment) const {
    if (assignment.empty()) return false;
    for (const kafka::TopicPartition& tp : assignment) {
      auto probe = probes_.find(tp.topic);
      if (probe == probes_.end()) return false;
      const std::map<int32_t, int64_t> ends = probe->second->EndOffsets();
      auto end = ends.find(tp.partition);
      auto position = positions_.find(tp);
      if (end == ends.end() || position == positions_.end() ||
          position->second < end->second) {
        return false;
      }
      // Placed past the end of a log that has records: a recreated topic,
      // which the consumer reads from its start (Reached moves it back).
      if (position->second > end->second && end->second > 0 &&
          read_.count(tp) == 0) {
        return false;
      }
    }
    return true;
  }

 private:
  std::map<std::string, std::unique_ptr<kafka::EndOffsetProbe>> probes_;
  kafka::OffsetMap positions_;
  std::set<kafka::TopicPartition> read_;  // read (or lost) since assigned
};

// Queues a dead letter. One the producer refuses at once (too large, its
// queue full for too long, the producer unusable) is kept in `spool` before
// its offset can be stored; when it cannot be kept either, the error stops
// the ingest with the offset unstored (the record is read again).
absl::Status DeadLetter(kafka::Producer& producer, kafka::DeliverySpool* spool,
                        const v1::DeadLetter& letter, IngestStats& stats) {
  const kafka::SpooledRecord record{std::string(kafka::kDeadLetterTopic),
                                    letter.key(), letter.SerializeAsString()};
  const std::string label =
      absl::StrCat("of ", letter.source_topic(), "/", letter.source_partition(),
                   "@", letter.source_offset());
  absl::Status queued =
      producer.Produce(record.topic, record.key, record.value);
  if (queued.ok()) return absl::OkStatus();
  std::cerr << "buffer ingest: dead letter " << label
            << " not queued: " << queued.message() << "\n";
  if (spool == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("dead letter ", label, " could not be queued (",
                     queued.message(), ") and there is no spool to keep it"));
  }
  if (absl::Status kept = spool->Keep({record}); !kept.ok()) {
    return absl::UnavailableError(
        absl::StrCat("dead letter ", label, " could not be queued (",
                     queued.message(), ") nor kept (", kept.message(), ")"));
  }
  ++stats.dead_letters_spooled;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<IngestStats> RunKafkaIngest(
    ReplayStore& store, const IngestOptions& options,
    kafka::Producer* dead_letters, const std::atomic<bool>* stop,
    kafka::DeliverySpool* dead_letter_spool) {
  std::vector<std::string> topics;
  for (const std::string* topic : {&options.topic, &options.decisions_topic}) {
    if (!topic->empty()) topics.push_back(*topic);
  }
  if (topics.empty()) {
    return absl::InvalidArgumentError(
        "buffer ingest: no topic to read; name the episodes topic, the "
        "decisions topic or both");
  }
  IngestStats stats;
  PendingBatch pending;
  EndTracker ends;
  if (options.exit_at_end) {
    if (absl::Status started = ends.Start(options.bootstrap_servers, topics);
        !started.ok()) {
      return started;
    }
  }
  // Where each assigned partition was placed (its stored offset), until a
  // record is read from it. A first record below it means the consumer was
  // reset to the log's start (auto.offset.reset earliest): the stored
  // offset was past this log's end, so it was taken on another log (a
  // topic recreated under the group). Such a partition's offsets replace
  // the stored ones at its next commit; kept forward-only, they would be
  // ignored until this log outgrew them, and a restart in between would
  // resume at the old offset and skip this log's records below it.
  kafka::OffsetMap placed_at;
  std::set<kafka::TopicPartition> replacing;
  // The cluster the assigned partitions live on; stored offsets taken on
  // another (an embedded cluster started again, the buffer kept) are not
  // used: its log may have grown past them, and the records below would be
  // skipped without a word.
  kafka::Consumer* self = nullptr;
  std::string cluster_id;
  std::set<kafka::TopicPartition> other_cluster;  // said and counted once
  kafka::ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = options.bootstrap_servers;
  consumer_options.group_id = options.group;
  consumer_options.topics = topics;
  consumer_options.config = options.consumer_config;
  consumer_options.offset_lookup =
      [&](const std::vector<kafka::TopicPartition>& assigned)
      -> absl::StatusOr<kafka::OffsetMap> {
    if (self != nullptr) cluster_id = self->ClusterId(std::chrono::seconds(5));
    kafka::OffsetMap next;
    for (const std::string& topic : topics) {
      absl::StatusOr<std::vector<ConsumerOffset>> stored =
          store.ReadOffsets(options.group, topic);
      if (!stored.ok()) return stored.status();
      for (const ConsumerOffset& offset : *stored) {
        kafka::TopicPartition tp{offset.topic, offset.partition};
        for (const kafka::TopicPartition& a : assigned) {
          if (!(a == tp)) continue;
          if (!cluster_id.empty() && !offset.cluster_id.empty() &&
              offset.cluster_id != cluster_id) {
            // Read from the start (no offset given), and what is stored
            // then replaces the other cluster's offset, though lower.
            replacing.insert(tp);
            if (!other_cluster.insert(tp).second) continue;
            ++stats.recreated_partitions;
            std::cerr << "buffer ingest: the offset stored for " << tp.topic
                      << "/" << tp.partition << " (group " << options.group
                      << ") was taken on Kafka cluster " << offset.cluster_id
                      << ", this is " << cluster_id
                      << ": read from its start; its offsets replace the "
                         "stored ones\n";
            continue;
          }
          next[tp] = offset.next_offset;
        }
      }
    }
    if (ends.enabled()) ends.Assigned(assigned, next);
    placed_at = next;
    return next;
  };
  // Records of revoked partitions may go to another member: what was read
  // but not committed is dropped and read again from the stored offsets.
  consumer_options.on_revoke = [&](const std::vector<kafka::TopicPartition>&) {
    pending = PendingBatch();
    placed_at.clear();
    replacing.clear();
  };
  absl::StatusOr<std::unique_ptr<kafka::Consumer>> consumer =
      kafka::Consumer::Create(consumer_options);
  if (!consumer.ok()) return consumer.status();
  self = consumer->get();

  auto commit = [&]() -> absl::Status {
    if (pending.records == 0) return absl::OkStatus();
    for (const auto& [tp, next] : pending.next_offsets) {
      ConsumerOffset offset{options.group, tp.topic, tp.partition, next,
                            replacing.count(tp) > 0};
      offset.cluster_id = cluster_id;
      pending.batch.offsets.push_back(std::move(offset));
    }
    absl::Status written = store.Write(pending.batch);
    if (!written.ok()) return written;
    for (const auto& [tp, next] : pending.next_offsets) replacing.erase(tp);
    ++stats.transactions;
    stats.records += static_cast<int64_t>(pending.records);
    stats.episodes += pending.episodes;
    stats.decisions += pending.decisions;
    stats.malformed += pending.malformed;
    pending = PendingBatch();
    return absl::OkStatus();
  };

  const Clock::time_point started = Clock::now();
  kafka::IdleExit idle(options.idle_exit, started, options.unassigned_grace);
  absl::Status last_error;  // the last retriable error Poll returned, said
  stats.ended_by = "stop";
  while (stop == nullptr || !stop->load()) {
    if (options.run_limit.count() > 0 &&
        Clock::now() - started >= options.run_limit) {
      stats.ended_by = "limit";
      break;
    }
    absl::StatusOr<std::optional<kafka::ConsumedMessage>> message =
        (*consumer)->Poll(std::chrono::milliseconds(100));
    bool got_record = false;
    if (!message.ok()) {
      if (auto lost = kafka::RecordsLostOf(message.status())) {
        stats.records_lost += lost->count();
        stats.records_lost_by_topic[lost->topic] += lost->count();
        ++stats.losses;
        if (ends.enabled()) {
          ends.Reached({lost->topic, lost->partition}, lost->last_offset + 1);
        }
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
          if (absl::Status s = DeadLetter(
                  *dead_letters, dead_letter_spool,
                  kafka::MakeLostRecordsDeadLetter(entry, kDeadLetterConsumer),
                  stats);
              !s.ok()) {
            return s;
          }
        }
        continue;
      }
      // A subscribed topic nobody has produced to yet (NotFound) is no
      // reason to stop: its partitions are assigned once it exists.
      const bool absent_topic =
          message.status().code() == absl::StatusCode::kNotFound;
      if (!absent_topic &&
          kafka::ClassOf(message.status()) != kafka::ErrorClass::kRetriable) {
        return message.status();
      }
      // Retriable (a topic not created yet, a broker down): the idle and
      // end checks below still apply.
      last_error = message.status();
    } else if (message->has_value()) {
      got_record = true;
      const kafka::ConsumedMessage& m = **message;
      idle.Input(Clock::now());
      if (pending.records == 0) pending.first = Clock::now();
      ++pending.records;
      const kafka::TopicPartition tp{m.topic, m.partition};
      if (auto placed = placed_at.find(tp); placed != placed_at.end()) {
        if (m.offset < placed->second) {
          replacing.insert(tp);
          ++stats.recreated_partitions;
          std::cerr << "buffer ingest: " << m.topic << "/" << m.partition
                    << " starts again at offset " << m.offset
                    << ", below the stored offset " << placed->second
                    << " of group " << options.group
                    << ": the topic was recreated (a new cluster?); read "
                       "from its start, its offsets replace the stored "
                       "ones\n";
        }
        placed_at.erase(placed);
      }
      pending.next_offsets[tp] = m.offset + 1;
      if (ends.enabled()) ends.Reached({m.topic, m.partition}, m.offset + 1);
      if (std::optional<std::string> problem =
              AddRecord(options, m, &pending)) {
        ++pending.malformed;
        std::cerr << "buffer ingest: " << m.topic << "/" << m.partition << "@"
                  << m.offset << " dead-lettered (" << *problem
                  << "); skipped\n";
        if (dead_letters != nullptr) {
          if (absl::Status s = DeadLetter(
                  *dead_letters, dead_letter_spool,
                  kafka::MakeDeadLetter(m, *problem, kDeadLetterConsumer),
                  stats);
              !s.ok()) {
            return s;
          }
        }
      }
    }
    bool full = pending.records >= options.max_batch;
    bool due = pending.records > 0 &&
               Clock::now() - pending.first >= options.max_batch_delay;
    if (full || due || !got_record) {
      absl::Status committed = commit();
      if (!committed.ok()) return committed;
    }
    const std::vector<kafka::TopicPartition> assignment =
        (*consumer)->Assignment();
    if (ends.enabled() && !got_record && ends.AtEnd(assignment)) {
      stats.ended_by = "end";
      break;
    }
    const bool settled = (*consumer)->GroupSettled();
    if (idle.ShouldCheckBroker(settled, Clock::now())) {
      // No cluster id: no broker ever answered (an empty cluster answers).
      if (!(*consumer)->BrokerAnswered(std::chrono::seconds(1))) {
        (void)(*consumer)->Close();
        return kafka::NoBrokerAnswered("the ingest", options.bootstrap_servers,
                                       idle.waited(Clock::now()), last_error);
      }
      idle.ClusterAnswered();  // a slow join: wait for it, as ever
    }
    if (idle.Due(settled, Clock::now())) {
      stats.ended_by = "idle";
      break;
    }
  }
  absl::Status committed = commit();
  if (!committed.ok()) return committed;
  (void)(*consumer)->Close();
  return stats;
}

}  // namespace phaseloop::replay_buffer
