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
#include "common/kafka/consumer_internal.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka {

using consumer_internal::kRecordsLostPayload;
using consumer_internal::Name;
using consumer_internal::PartitionErrors;
using consumer_internal::PartitionList;
using consumer_internal::ToPartitions;

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
