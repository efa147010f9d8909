#include "common/kafka/consumer.h"

#include <librdkafka/rdkafkacpp.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <utility>
#include <variant>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/kafka/client_config.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka {
namespace {

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
    const std::vector<RdKafka::TopicPartition*>& list) {
  std::vector<TopicPartition> result;
  result.reserve(list.size());
  for (const RdKafka::TopicPartition* tp : list) {
    result.push_back({tp->topic(), tp->partition()});
  }
  return result;
}

std::string Name(const TopicPartition& tp) {
  return absl::StrCat(tp.topic, "/", tp.partition);
}

// The first per-partition error of a commit or committed() call.
absl::Status PartitionErrors(const std::vector<RdKafka::TopicPartition*>& list,
                             const std::string& what) {
  for (const RdKafka::TopicPartition* tp : list) {
    if (tp->err() != RdKafka::ERR_NO_ERROR) {
      return KafkaStatus(tp->err(), absl::StrCat(what, " ", tp->topic(), "/",
                                                 tp->partition()));
    }
  }
  return absl::OkStatus();
}

constexpr absl::string_view kRecordsLostPayload =
    "type.phaseloop.dev/phaseloop.kafka.RecordsLost";

// How long the rebalance callback waits for the group's committed offsets,
// and a record's jump past its expected offset for the log start offset.
constexpr int kCommittedTimeoutMs = 10000;
constexpr int kWatermarkTimeoutMs = 5000;

absl::Status RecordsLostStatus(const RecordsLost& lost,
                               const std::string& why) {
  absl::Status classified = ClassifiedStatus(
      ErrorClass::kPermanent,
      absl::StrCat("Kafka consumer: records lost: ", lost.topic, "/",
                   lost.partition, " offsets ", lost.first_offset, "..",
                   lost.last_offset, " (", lost.count(), " records) ", why,
                   "; consuming goes on after them"));
  absl::Status status(absl::StatusCode::kDataLoss, classified.message());
  classified.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) {
        status.SetPayload(url, payload);
      });
  status.SetPayload(
      kRecordsLostPayload,
      absl::Cord(absl::StrCat(lost.partition, " ", lost.first_offset, " ",
                              lost.last_offset, " ", lost.topic)));
  return status;
}

}  // namespace

std::optional<RecordsLost> RecordsLostOf(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kDataLoss) return std::nullopt;
  auto payload = status.GetPayload(kRecordsLostPayload);
  if (!payload.has_value()) return std::nullopt;
  std::vector<std::string> parts =
      absl::StrSplit(std::string(*payload), absl::MaxSplits(' ', 3));
  RecordsLost lost;
  if (parts.size() != 4 || !absl::SimpleAtoi(parts[0], &lost.partition) ||
      !absl::SimpleAtoi(parts[1], &lost.first_offset) ||
      !absl::SimpleAtoi(parts[2], &lost.last_offset)) {
    return std::nullopt;
  }
  lost.topic = parts[3];
  return lost;
}

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

void Consumer::Impl::Expect(const TopicPartition& tp, int64_t offset) {
  suspected.erase(tp);
  if (offset >= 0) {
    expected[tp] = offset;
  } else if (offset == RdKafka::Topic::OFFSET_BEGINNING) {
    expected[tp] = 0;
  } else {
    expected.erase(tp);
  }
}

void Consumer::Impl::QueueLoss(const RecordsLost& lost,
                               const std::string& why) {
  ++stats.losses;
  stats.records_lost += lost.count();
  pending.emplace_back(RecordsLostStatus(lost, why));
}

void Consumer::Impl::CheckJump(const ConsumedMessage& message) {
  const TopicPartition tp{message.topic, message.partition};
  suspected.erase(tp);
  auto it = expected.find(tp);
  if (it == expected.end()) {
    expected[tp] = message.offset + 1;
    return;
  }
  const int64_t want = it->second;
  it->second = message.offset + 1;
  if (message.offset <= want) return;
  int64_t low = -1;
  int64_t high = -1;
  RdKafka::ErrorCode err = consumer->query_watermark_offsets(
      message.topic, message.partition, &low, &high, kWatermarkTimeoutMs);
  if (err == RdKafka::ERR_NO_ERROR) {
    // Offsets the log still starts at or before were skipped for another
    // reason (compaction, transaction markers): nothing was lost.
    if (low <= want) return;
    QueueLoss({message.topic, message.partition, want,
               std::min(low, message.offset) - 1},
              absl::StrCat("were deleted before this consumer read them (log "
                           "start offset ",
                           low, ")"));
    return;
  }
  QueueLoss({message.topic, message.partition, want, message.offset - 1},
            absl::StrCat("were skipped: the next record came at offset ",
                         message.offset,
                         " and the log start offset could "
                         "not be read (",
                         RdKafka::err2str(err), ")"));
}

void Consumer::Impl::CheckIdle() {
  for (auto& [tp, want] : expected) {
    int64_t low = -1;
    int64_t high = -1;
    if (consumer->get_watermark_offsets(tp.topic, tp.partition, &low, &high) !=
            RdKafka::ERR_NO_ERROR ||
        low <= want) {
      suspected.erase(tp);
      continue;
    }
    auto seen = suspected.find(tp);
    if (seen == suspected.end() || seen->second != want) {
      suspected[tp] = want;
      continue;
    }
    suspected.erase(seen);
    QueueLoss({tp.topic, tp.partition, want, low - 1},
              absl::StrCat("were deleted before this consumer read them (log "
                           "start offset ",
                           low, ")"));
    want = low;
  }
}

absl::Status Consumer::Impl::ApplyCommittedOffsets(
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  PartitionList unplaced;
  for (const RdKafka::TopicPartition* tp : partitions) {
    if (tp->offset() < 0) {
      unplaced.Add({tp->topic(), tp->partition()},
                   RdKafka::Topic::OFFSET_INVALID);
    }
  }
  if (unplaced.list.empty()) return absl::OkStatus();
  RdKafka::ErrorCode err =
      consumer->committed(unplaced.list, kCommittedTimeoutMs);
  absl::Status status = KafkaStatus(err, "committed offsets");
  if (status.ok())
    status = PartitionErrors(unplaced.list, "committed offset of");
  if (!status.ok()) {
    return ClassifiedStatus(
        ErrorClass::kFatal,
        absl::StrCat("Kafka consumer: the group's committed offsets of ",
                     unplaced.list.size(),
                     " newly assigned partitions could not be read (",
                     status.message(),
                     "); without them records lost before the start cannot be "
                     "detected: this consumer reads nothing more: close it "
                     "and create a new one"));
  }
  std::map<TopicPartition, int64_t> committed;
  for (const RdKafka::TopicPartition* tp : unplaced.list) {
    committed[{tp->topic(), tp->partition()}] = tp->offset();
  }
  for (RdKafka::TopicPartition* tp : partitions) {
    if (tp->offset() >= 0) continue;
    auto found = committed.find({tp->topic(), tp->partition()});
    tp->set_offset(
        found != committed.end() && found->second >= 0 ? found->second : 0);
  }
  return absl::OkStatus();
}

absl::Status Consumer::Impl::ApplyStoredOffsets(
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  if (!options.offset_lookup) return absl::OkStatus();
  absl::StatusOr<OffsetMap> offsets =
      options.offset_lookup(ToPartitions(partitions));
  if (!offsets.ok()) {
    return ClassifiedStatus(
        ErrorClass::kFatal,
        absl::StrCat(
            "Kafka consumer: offset lookup for ", partitions.size(),
            " newly assigned partitions failed: ", offsets.status().message(),
            "; this consumer reads nothing more: close it and create "
            "a new one"));
  }
  for (RdKafka::TopicPartition* tp : partitions) {
    auto found = offsets->find({tp->topic(), tp->partition()});
    if (found == offsets->end()) continue;
    if (found->second < 0) {
      return ClassifiedStatus(
          ErrorClass::kFatal,
          absl::StrCat("Kafka consumer: offset lookup returned offset ",
                       found->second, " for ", Name(found->first),
                       "; stored next offsets are >= 0"));
    }
    tp->set_offset(found->second);
  }
  return absl::OkStatus();
}

void Consumer::Impl::rebalance_cb(
    RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
    std::vector<RdKafka::TopicPartition*>& partitions) {
  ++stats.rebalances;
  const bool cooperative = consumer->rebalance_protocol() == "COOPERATIVE";
  RdKafka::ErrorCode result = RdKafka::ERR_NO_ERROR;
  std::unique_ptr<RdKafka::Error> error;
  if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
    if (broken.ok()) broken = ApplyStoredOffsets(partitions);
    if (broken.ok()) broken = ApplyCommittedOffsets(partitions);
    if (broken.ok()) {
      if (!cooperative) expected.clear();
      for (const RdKafka::TopicPartition* tp : partitions) {
        Expect({tp->topic(), tp->partition()}, tp->offset());
      }
    }
    if (!broken.ok()) {
      // Never read from offsets the caller's store cannot vouch for.
      if (!cooperative) result = consumer->unassign();
    } else if (cooperative) {
      error.reset(consumer->incremental_assign(partitions));
    } else {
      result = consumer->assign(partitions);
    }
    settled = broken.ok();
  } else if (err == RdKafka::ERR__REVOKE_PARTITIONS) {
    settled = false;
    if (options.on_revoke) options.on_revoke(ToPartitions(partitions));
    for (const TopicPartition& tp : ToPartitions(partitions)) {
      expected.erase(tp);
      suspected.erase(tp);
    }
    if (cooperative) {
      error.reset(consumer->incremental_unassign(partitions));
    } else {
      result = consumer->unassign();
    }
  } else {
    rebalance_error = KafkaStatus(err, "rebalance");
    settled = false;
    result = consumer->unassign();
    expected.clear();
    suspected.clear();
  }
  if (error != nullptr) result = error->code();
  if (result != RdKafka::ERR_NO_ERROR && rebalance_error.ok()) {
    rebalance_error = KafkaStatus(result, "applying a rebalance",
                                  error != nullptr ? error->str() : "");
  }
}

Consumer::Consumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<Consumer>> Consumer::Create(
    const ConsumerOptions& options) {
  if (options.bootstrap_servers.empty()) {
    return absl::InvalidArgumentError(
        "Kafka consumer: no bootstrap servers; pass --kafka HOST:PORT[,...] "
        "(`phaseloop kafka serve` starts a local cluster)");
  }
  if (options.group_id.empty()) {
    return absl::InvalidArgumentError("Kafka consumer: a group id is required");
  }
  const std::string offsets = "offsets are committed or stored explicitly";
  const std::map<std::string, std::string> owned = {
      {"enable.auto.commit", offsets},
      {"enable.auto.offset.store", offsets},
      {"auto.offset.reset", "unknown positions start at the earliest record"},
      {"group.id", "set from group_id"},
      {"bootstrap.servers", "set from the --kafka option"},
      {"metadata.broker.list", "set from the --kafka option"},
      {"rebalance_cb", "assignments are handled by the wrapper"},
      {"event_cb", "errors are classified by the wrapper"},
  };
  const std::map<std::string, std::string> base = {
      {"bootstrap.servers", options.bootstrap_servers},
      {"group.id", options.group_id},
      {"client.id", options.client_id},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
  };
  auto conf = internal::MakeConf("consumer", base, options.config, owned);
  if (!conf.ok()) return conf.status();
  auto impl = std::make_unique<Impl>(options);
  std::string error;
  if ((*conf)->set("rebalance_cb",
                   static_cast<RdKafka::RebalanceCb*>(impl.get()),
                   error) != RdKafka::Conf::CONF_OK) {
    return absl::InternalError(
        absl::StrCat("Kafka consumer: rebalance_cb: ", error));
  }
  absl::Status set =
      internal::SetCallback(conf->get(), "event_cb", &impl->events);
  if (!set.ok()) return set;
  impl->consumer.reset(RdKafka::KafkaConsumer::create(conf->get(), error));
  if (impl->consumer == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Kafka consumer: librdkafka refused to start: ", error));
  }
  impl->events.set_handle(impl->consumer.get());
  std::unique_ptr<Consumer> consumer(new Consumer(std::move(impl)));
  if (!options.topics.empty()) {
    RdKafka::ErrorCode err =
        consumer->impl_->consumer->subscribe(options.topics);
    if (err != RdKafka::ERR_NO_ERROR) {
      return KafkaStatus(
          err, absl::StrCat("subscribe to ", options.topics.size(), " topics"));
    }
  }
  return consumer;
}

Consumer::~Consumer() { Close().IgnoreError(); }

absl::StatusOr<std::optional<ConsumedMessage>> Consumer::Poll(
    std::chrono::milliseconds timeout) {
  Impl& impl = *impl_;
  if (impl.closed) {
    return absl::FailedPreconditionError("Kafka consumer: Poll after Close");
  }
  if (!impl.broken.ok()) return impl.broken;
  auto next_pending = [&]() -> absl::StatusOr<std::optional<ConsumedMessage>> {
    auto item = std::move(impl.pending.front());
    impl.pending.pop_front();
    if (auto* status = std::get_if<absl::Status>(&item)) return *status;
    ++impl.stats.messages;
    return std::optional<ConsumedMessage>(
        std::move(std::get<ConsumedMessage>(item)));
  };
  if (!impl.pending.empty()) return next_pending();
  std::unique_ptr<RdKafka::Message> message(
      impl.consumer->consume(static_cast<int>(timeout.count())));
  if (!impl.broken.ok()) return impl.broken;
  absl::Status fatal = impl.events.fatal();
  if (!fatal.ok()) return fatal;
  if (!impl.rebalance_error.ok()) {
    absl::Status error = std::move(impl.rebalance_error);
    impl.rebalance_error = absl::OkStatus();
    ++impl.stats.retriable_errors;
    return error;
  }
  switch (message->err()) {
    case RdKafka::ERR_NO_ERROR:
      break;
    case RdKafka::ERR__TIMED_OUT:
    case RdKafka::ERR__PARTITION_EOF:
      impl.CheckIdle();
      if (!impl.pending.empty()) return next_pending();
      return std::optional<ConsumedMessage>();
    case RdKafka::ERR__FATAL:
      impl.broken = impl.events.RecordFatal("consume");
      return impl.broken;
    default: {
      absl::Status error = KafkaStatus(
          message->err(),
          message->topic_name().empty()
              ? std::string("consume")
              : absl::StrCat("consume from ", message->topic_name()),
          message->errstr());
      if (ClassOf(error) == ErrorClass::kRetriable)
        ++impl.stats.retriable_errors;
      if (ClassOf(error) == ErrorClass::kFatal) impl.broken = error;
      return error;
    }
  }
  ConsumedMessage result;
  result.topic = message->topic_name();
  result.partition = message->partition();
  result.offset = message->offset();
  if (message->key() != nullptr) result.key = *message->key();
  result.value.assign(static_cast<const char*>(message->payload()),
                      message->len());
  const RdKafka::MessageTimestamp timestamp = message->timestamp();
  result.timestamp_ms =
      timestamp.type == RdKafka::MessageTimestamp::MSG_TIMESTAMP_NOT_AVAILABLE
          ? -1
          : timestamp.timestamp;
  impl.CheckJump(result);
  if (!impl.pending.empty()) {
    impl.pending.emplace_back(std::move(result));
    return next_pending();
  }
  ++impl.stats.messages;
  return std::optional<ConsumedMessage>(std::move(result));
}

absl::Status Consumer::AssignWithOffsets(const OffsetMap& next_offsets) {
  PartitionList partitions;
  for (const auto& [tp, offset] : next_offsets) partitions.Add(tp, offset);
  absl::Status status =
      KafkaStatus(impl_->consumer->assign(partitions.list), "assign");
  if (!status.ok()) return status;
  impl_->pending.clear();
  impl_->expected.clear();
  impl_->suspected.clear();
  for (const auto& [tp, offset] : next_offsets) impl_->Expect(tp, offset);
  return status;
}

absl::Status Consumer::Seek(const TopicPartition& partition, int64_t offset,
                            std::chrono::milliseconds timeout) {
  std::unique_ptr<RdKafka::TopicPartition> tp(RdKafka::TopicPartition::create(
      partition.topic, partition.partition, offset));
  absl::Status status =
      KafkaStatus(impl_->consumer->seek(*tp, static_cast<int>(timeout.count())),
                  absl::StrCat("seek ", Name(partition), " to ", offset));
  if (!status.ok()) return status;
  // A record of this partition held back behind a loss report is from the
  // old position.
  auto& pending = impl_->pending;
  pending.erase(std::remove_if(pending.begin(), pending.end(),
                               [&](const auto& item) {
                                 auto* m = std::get_if<ConsumedMessage>(&item);
                                 return m != nullptr &&
                                        m->topic == partition.topic &&
                                        m->partition == partition.partition;
                               }),
                pending.end());
  impl_->Expect(partition, offset);
  return status;
}

absl::Status Consumer::Commit(const OffsetMap& next_offsets) {
  if (next_offsets.empty()) return absl::OkStatus();
  PartitionList partitions;
  for (const auto& [tp, offset] : next_offsets) partitions.Add(tp, offset);
  absl::Status status =
      KafkaStatus(impl_->consumer->commitSync(partitions.list), "commit");
  if (!status.ok()) return status;
  return PartitionErrors(partitions.list, "commit");
}

absl::Status Consumer::CommitMessage(const ConsumedMessage& message) {
  return Commit({{{message.topic, message.partition}, message.offset + 1}});
}

absl::StatusOr<OffsetMap> Consumer::Committed(
    const std::vector<TopicPartition>& partitions,
    std::chrono::milliseconds timeout) {
  PartitionList list;
  for (const TopicPartition& tp : partitions) {
    list.Add(tp, RdKafka::Topic::OFFSET_INVALID);
  }
  absl::Status status = KafkaStatus(
      impl_->consumer->committed(list.list, static_cast<int>(timeout.count())),
      "committed offsets");
  if (!status.ok()) return status;
  status = PartitionErrors(list.list, "committed offset of");
  if (!status.ok()) return status;
  OffsetMap result;
  for (const RdKafka::TopicPartition* tp : list.list) {
    if (tp->offset() >= 0)
      result[{tp->topic(), tp->partition()}] = tp->offset();
  }
  return result;
}

std::vector<TopicPartition> Consumer::Assignment() const {
  std::vector<RdKafka::TopicPartition*> list;
  impl_->consumer->assignment(list);
  std::vector<TopicPartition> result = ToPartitions(list);
  RdKafka::TopicPartition::destroy(list);
  return result;
}

bool Consumer::GroupSettled() const { return impl_->settled; }

std::string Consumer::ClusterId(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string id =
      impl_->consumer->clusterid(static_cast<int>(timeout.count()));
  // librdkafka's mock cluster names itself from addresses in memory, which
  // repeat across starts without address randomisation (or within one
  // process): its first broker's address as the cluster advertises it (an
  // ephemeral port) tells them apart, however the bootstrap list spells it
  // (localhost or 127.0.0.1). Without metadata in time: not known ("", as
  // with no answer), never another spelling of the same cluster's id.
  if (absl::StartsWith(id, "mockCluster")) {
    const auto left =
        std::max(std::chrono::milliseconds(200),
                 std::chrono::duration_cast<std::chrono::milliseconds>(
                     deadline - std::chrono::steady_clock::now()));
    RdKafka::Metadata* metadata = nullptr;
    std::string address;
    if (impl_->consumer->metadata(false, nullptr, &metadata,
                                  static_cast<int>(left.count())) ==
            RdKafka::ERR_NO_ERROR &&
        metadata != nullptr) {
      const RdKafka::BrokerMetadata* first = nullptr;
      for (const RdKafka::BrokerMetadata* broker : *metadata->brokers()) {
        if (first == nullptr || broker->id() < first->id()) first = broker;
      }
      if (first != nullptr) {
        address = absl::StrCat(first->host(), ":", first->port());
      }
    }
    delete metadata;
    if (address.empty()) return "";
    absl::StrAppend(&id, "@", address);
  }
  return id;
}

bool Consumer::BrokerAnswered(std::chrono::milliseconds timeout) const {
  return !impl_->consumer->clusterid(static_cast<int>(timeout.count())).empty();
}

absl::Status Consumer::Close() {
  if (impl_->closed) return absl::OkStatus();
  impl_->closed = true;
  return KafkaStatus(impl_->consumer->close(), "close");
}

ConsumerStats Consumer::stats() const { return impl_->stats; }

}  // namespace phaseloop::kafka
