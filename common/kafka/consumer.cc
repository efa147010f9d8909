#include "common/kafka/consumer.h"

#include <librdkafka/rdkafkacpp.h>

#include <utility>

#include "absl/strings/str_cat.h"
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

}  // namespace

struct Consumer::Impl : public RdKafka::RebalanceCb {
  explicit Impl(const ConsumerOptions& options)
      : options(options), events("consumer") {}

  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override;
  // Applies offset_lookup's answer to newly assigned `partitions`.
  absl::Status ApplyStoredOffsets(
      const std::vector<RdKafka::TopicPartition*>& partitions);

  const ConsumerOptions options;
  internal::EventLogger events;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  bool closed = false;
  absl::Status broken;           // fatal: set once, returned by every call
  absl::Status rebalance_error;  // retriable: returned by the next Poll
  ConsumerStats stats;
};

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
    if (!broken.ok()) {
      // Never read from offsets the caller's store cannot vouch for.
      if (!cooperative) result = consumer->unassign();
    } else if (cooperative) {
      error.reset(consumer->incremental_assign(partitions));
    } else {
      result = consumer->assign(partitions);
    }
  } else if (err == RdKafka::ERR__REVOKE_PARTITIONS) {
    if (options.on_revoke) options.on_revoke(ToPartitions(partitions));
    if (cooperative) {
      error.reset(consumer->incremental_unassign(partitions));
    } else {
      result = consumer->unassign();
    }
  } else {
    rebalance_error = KafkaStatus(err, "rebalance");
    result = consumer->unassign();
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
  ++impl.stats.messages;
  return std::optional<ConsumedMessage>(std::move(result));
}

absl::Status Consumer::AssignWithOffsets(const OffsetMap& next_offsets) {
  PartitionList partitions;
  for (const auto& [tp, offset] : next_offsets) partitions.Add(tp, offset);
  return KafkaStatus(impl_->consumer->assign(partitions.list), "assign");
}

absl::Status Consumer::Seek(const TopicPartition& partition, int64_t offset,
                            std::chrono::milliseconds timeout) {
  std::unique_ptr<RdKafka::TopicPartition> tp(RdKafka::TopicPartition::create(
      partition.topic, partition.partition, offset));
  return KafkaStatus(
      impl_->consumer->seek(*tp, static_cast<int>(timeout.count())),
      absl::StrCat("seek ", Name(partition), " to ", offset));
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

absl::Status Consumer::Close() {
  if (impl_->closed) return absl::OkStatus();
  impl_->closed = true;
  return KafkaStatus(impl_->consumer->close(), "close");
}

ConsumerStats Consumer::stats() const { return impl_->stats; }

}  // namespace phaseloop::kafka
