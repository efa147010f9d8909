#include "canary/service/sli_delivery.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/kafka/topics.h"
#include "common/protobuf/utf8_strings.h"

namespace phaseloop::canary {

absl::StatusOr<std::unique_ptr<SliDelivery>> SliDelivery::Create(
    const SliDeliveryOptions& options) {
  if (options.bootstrap_servers.empty()) {
    return absl::InvalidArgumentError(
        "no Kafka bootstrap for the SLI windows: pass --kafka HOST:PORT (or "
        "set PHASELOOP_KAFKA)");
  }
  if (options.spool_dir.empty()) {
    return absl::InvalidArgumentError(
        "no spool directory for undelivered SLI windows: pass --spool DIR "
        "(or set PHASELOOP_STATE_DIR)");
  }
  absl::StatusOr<kafka::DeliverySpool> spool =
      kafka::DeliverySpool::Open(options.spool_dir);
  if (!spool.ok()) return spool.status();
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = options.bootstrap_servers;
  producer_options.client_id = options.client_id;
  producer_options.delivery_timeout = options.delivery_timeout;
  producer_options.close_timeout = options.delivery_timeout;
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(producer_options);
  if (!producer.ok()) return producer.status();
  std::unique_ptr<SliDelivery> delivery(
      new SliDelivery(options, *std::move(producer), *std::move(spool)));
  absl::StatusOr<kafka::SpoolRetry> retried =
      delivery->spool_.Retry(*delivery->producer_, options.delivery_timeout);
  if (!retried.ok()) return retried.status();
  delivery->spool_retry_ = *std::move(retried);
  // The topic's metadata now, so the first window is not held back a
  // second; a cluster that does not answer shows in the first Publish.
  (void)delivery->producer_->LoadTopicMetadata(
      {options.topic}, std::min<std::chrono::milliseconds>(
                           options.delivery_timeout, std::chrono::seconds(5)));
  return delivery;
}

absl::Status SliDelivery::Publish(const v1::SliWindow& window) {
  const std::string key = kafka::SliKey(window.service());
  const std::string value = protobuf::SerializeAsValidUtf8(window);
  if (std::chrono::steady_clock::now() >= kafka_retry_at_) {
    absl::Status produced = producer_->Produce(options_.topic, key, value);
    if (produced.ok()) {
      produced =
          producer_->Flush(options_.delivery_timeout + std::chrono::seconds(5));
    }
    if (produced.ok()) {
      ++delivered_;
      return absl::OkStatus();
    }
    std::cerr << "phaseloop canary serve: SLI window "
              << window.window_start_ms() << " not delivered to "
              << options_.topic << " (" << produced.message()
              << "); keeping it in " << spool_.dir() << std::endl;
    kafka_retry_at_ = std::chrono::steady_clock::now() + options_.backoff;
    // The record, if it was queued, comes back from Drain as a failure.
    absl::StatusOr<int64_t> kept =
        spool_.KeepUndelivered(*producer_, std::chrono::milliseconds(0));
    if (!kept.ok()) return kept.status();
    if (*kept > 0) {
      spooled_ += *kept;
      return absl::OkStatus();
    }
  }
  absl::Status kept = spool_.Keep({{options_.topic, key, value}});
  if (!kept.ok()) return kept;
  ++spooled_;
  return absl::OkStatus();
}

SliDeliveryStats SliDelivery::stats() const {
  SliDeliveryStats stats;
  stats.delivered = delivered_.load();
  stats.spooled = spooled_.load();
  stats.spool_redelivered = spool_retry_.delivered;
  stats.spool_kept = spool_retry_.kept;
  return stats;
}

}  // namespace phaseloop::canary
