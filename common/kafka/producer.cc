#include "common/kafka/producer.h"

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/client_config.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka {

struct Producer::Impl : public RdKafka::DeliveryReportCb {
  explicit Impl(const ProducerOptions& options)
      : options(options), events("producer") {}

  void dr_cb(RdKafka::Message& message) override;
  absl::Status FailureSummary();

  const ProducerOptions options;
  internal::EventLogger events;
  std::unique_ptr<RdKafka::Producer> producer;  // destroyed before callbacks

  std::atomic<int64_t> produced{0};
  std::atomic<int64_t> delivered{0};
  std::atomic<int64_t> failed_retriable{0};
  std::atomic<int64_t> failed_permanent{0};
  std::atomic<int64_t> failed_fatal{0};
  std::atomic<int64_t> queue_full_waits{0};

  std::mutex mu;
  std::vector<DeliveryFailure> failures;  // guarded by mu
};

void Producer::Impl::dr_cb(RdKafka::Message& message) {
  if (message.err() == RdKafka::ERR_NO_ERROR) {
    ++delivered;
    return;
  }
  DeliveryFailure failure;
  failure.topic = message.topic_name();
  if (message.key() != nullptr) failure.key = *message.key();
  failure.value.assign(static_cast<const char*>(message.payload()),
                       message.len());
  const std::string what = absl::StrCat("delivery to ", failure.topic);
  if (message.err() == RdKafka::ERR__FATAL) {
    failure.status = events.RecordFatal(what);
  } else {
    failure.status = KafkaStatus(message.err(), what, message.errstr());
  }
  failure.possibly_persisted =
      message.status() != RdKafka::Message::MSG_STATUS_NOT_PERSISTED;
  failure.tag = reinterpret_cast<uintptr_t>(message.msg_opaque());
  switch (ClassOf(failure.status)) {
    case ErrorClass::kRetriable:
      ++failed_retriable;
      break;
    case ErrorClass::kFatal:
      ++failed_fatal;
      break;
    default:
      ++failed_permanent;
      break;
  }
  std::lock_guard<std::mutex> lock(mu);
  failures.push_back(std::move(failure));
}

absl::Status Producer::Impl::FailureSummary() {
  std::lock_guard<std::mutex> lock(mu);
  if (failures.empty()) return absl::OkStatus();
  const DeliveryFailure* worst = &failures.front();
  for (const DeliveryFailure& failure : failures) {
    if (ClassOf(failure.status) == ErrorClass::kFatal ||
        (ClassOf(failure.status) == ErrorClass::kPermanent &&
         ClassOf(worst->status) == ErrorClass::kRetriable)) {
      worst = &failure;
    }
  }
  return ClassifiedStatus(
      ClassOf(worst->status),
      absl::StrCat(failures.size(),
                   " records failed delivery (TakeFailures() returns them); "
                   "e.g. ",
                   worst->status.message()));
}

Producer::Producer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<Producer>> Producer::Create(
    const ProducerOptions& options) {
  if (options.bootstrap_servers.empty()) {
    return absl::InvalidArgumentError(
        "Kafka producer: no bootstrap servers; pass --kafka HOST:PORT[,...] "
        "(`phaseloop kafka serve` starts a local cluster)");
  }
  const std::string idempotence = "kept on: records must not duplicate";
  const std::map<std::string, std::string> owned = {
      {"enable.idempotence", idempotence},
      {"acks", idempotence},
      {"request.required.acks", idempotence},
      {"transactional.id", "phaseloop does not rely on transactions"},
      {"partitioner", "records are partitioned by key with murmur2"},
      {"bootstrap.servers", "set from the --kafka option"},
      {"metadata.broker.list", "set from the --kafka option"},
      {"message.timeout.ms", "set from delivery_timeout"},
      {"delivery.timeout.ms", "set from delivery_timeout"},
      {"dr_cb", "delivery reports are checked by the wrapper"},
      {"event_cb", "errors are classified by the wrapper"},
  };
  const std::map<std::string, std::string> base = {
      {"bootstrap.servers", options.bootstrap_servers},
      {"client.id", options.client_id},
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"partitioner", "murmur2_random"},
      {"message.timeout.ms", std::to_string(options.delivery_timeout.count())},
  };
  auto conf = internal::MakeConf("producer", base, options.config, owned);
  if (!conf.ok()) return conf.status();
  auto impl = std::make_unique<Impl>(options);
  std::string error;
  if ((*conf)->set("dr_cb", static_cast<RdKafka::DeliveryReportCb*>(impl.get()),
                   error) != RdKafka::Conf::CONF_OK) {
    return absl::InternalError(absl::StrCat("Kafka producer: dr_cb: ", error));
  }
  absl::Status set =
      internal::SetCallback(conf->get(), "event_cb", &impl->events);
  if (!set.ok()) return set;
  impl->producer.reset(RdKafka::Producer::create(conf->get(), error));
  if (impl->producer == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Kafka producer: librdkafka refused to start: ", error));
  }
  impl->events.set_handle(impl->producer.get());
  return std::unique_ptr<Producer>(new Producer(std::move(impl)));
}

Producer::~Producer() {
  if (impl_->producer == nullptr) return;
  impl_->producer->flush(
      static_cast<int>(impl_->options.close_timeout.count()));
  impl_->producer.reset();
}

absl::Status Producer::Produce(absl::string_view topic, absl::string_view key,
                               absl::string_view value, uint64_t tag) {
  absl::Status fatal = impl_->events.fatal();
  if (!fatal.ok()) return fatal;
  const std::string topic_name(topic);
  const auto deadline =
      std::chrono::steady_clock::now() + impl_->options.queue_full_timeout;
  while (true) {
    RdKafka::ErrorCode err = impl_->producer->produce(
        topic_name, RdKafka::Topic::PARTITION_UA,
        RdKafka::Producer::RK_MSG_COPY, const_cast<char*>(value.data()),
        value.size(), key.empty() ? nullptr : key.data(), key.size(),
        /*timestamp=*/0,
        /*msg_opaque=*/reinterpret_cast<void*>(static_cast<uintptr_t>(tag)));
    if (err == RdKafka::ERR_NO_ERROR) {
      ++impl_->produced;
      impl_->producer->poll(0);  // serve delivery reports
      return absl::OkStatus();
    }
    if (err == RdKafka::ERR__QUEUE_FULL &&
        std::chrono::steady_clock::now() < deadline) {
      ++impl_->queue_full_waits;
      impl_->producer->poll(100);  // deliveries make room
      continue;
    }
    const std::string what = absl::StrCat("produce to ", topic);
    if (err == RdKafka::ERR__FATAL) return impl_->events.RecordFatal(what);
    return KafkaStatus(err, what);
  }
}

void Producer::Poll(std::chrono::milliseconds timeout) {
  impl_->producer->poll(static_cast<int>(timeout.count()));
}

absl::Status Producer::LoadTopicMetadata(const std::vector<std::string>& topics,
                                         std::chrono::milliseconds timeout) {
  for (const std::string& name : topics) {
    std::string error;
    std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(
        impl_->producer.get(), name, /*conf=*/nullptr, error));
    if (topic == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Kafka producer: topic ", name, ": ", error));
    }
    RdKafka::Metadata* metadata = nullptr;
    RdKafka::ErrorCode err = impl_->producer->metadata(
        /*all_topics=*/false, topic.get(), &metadata,
        static_cast<int>(timeout.count()));
    delete metadata;
    if (err != RdKafka::ERR_NO_ERROR) {
      return KafkaStatus(err, absl::StrCat("metadata of ", name));
    }
  }
  return absl::OkStatus();
}

absl::Status Producer::Flush(std::chrono::milliseconds timeout) {
  impl_->producer->flush(static_cast<int>(timeout.count()));
  absl::Status fatal = impl_->events.fatal();
  if (!fatal.ok()) return fatal;
  const int in_queue = impl_->producer->outq_len();
  if (in_queue > 0) {
    return KafkaStatus(
        RdKafka::ERR__TIMED_OUT, "flush",
        absl::StrCat(in_queue, " records or requests still undelivered after ",
                     timeout.count(), " ms"));
  }
  return impl_->FailureSummary();
}

std::vector<DeliveryFailure> Producer::TakeFailures() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<DeliveryFailure> taken;
  taken.swap(impl_->failures);
  return taken;
}

std::vector<DeliveryFailure> Producer::Drain(
    std::chrono::milliseconds timeout) {
  impl_->producer->flush(static_cast<int>(timeout.count()));
  if (impl_->producer->outq_len() > 0) {
    impl_->producer->purge(RdKafka::Producer::PURGE_QUEUE |
                           RdKafka::Producer::PURGE_INFLIGHT);
    // The purged records' reports are served by the next polls.
    for (int i = 0; i < 100 && impl_->producer->outq_len() > 0; ++i) {
      impl_->producer->poll(50);
    }
    impl_->producer->poll(0);
  }
  return TakeFailures();
}

absl::Status Producer::fatal_error() const { return impl_->events.fatal(); }

ProducerStats Producer::stats() const {
  ProducerStats stats;
  stats.produced = impl_->produced.load();
  stats.delivered = impl_->delivered.load();
  stats.failed_retriable = impl_->failed_retriable.load();
  stats.failed_permanent = impl_->failed_permanent.load();
  stats.failed_fatal = impl_->failed_fatal.load();
  stats.queue_full_waits = impl_->queue_full_waits.load();
  stats.client_errors = impl_->events.errors();
  return stats;
}

}  // namespace phaseloop::kafka
