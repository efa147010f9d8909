#ifndef PHASELOOP_CANARY_SERVICE_SLI_DELIVERY_H_
#define PHASELOOP_CANARY_SERVICE_SLI_DELIVERY_H_

// Where the service host's SLI windows go: Kafka topic phaseloop.sli (key
// kafka::SliKey(service), value the serialized SliWindow, common/kafka's
// idempotent Producer), and, for every window Kafka did not acknowledge,
// the delivery spool (common/kafka/delivery_spool.h) that the next run
// produces again first. No window is dropped silently: it is acknowledged,
// or on disk in the spool and counted as undelivered, or (only when the
// spool itself cannot be written) Publish fails and the recorder counts it.
//
// After a failed delivery the sink stops trying Kafka for `backoff` and
// spools windows directly, so a cluster that is down costs one delivery
// timeout per backoff period, not one per window (shutdown stays quick).
//
// Threading: Publish from one thread at a time (the recorder's flusher);
// stats() from any thread.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/producer.h"
#include "reward_engine/sli/sli_sink.h"

namespace phaseloop::canary {

struct SliDeliveryOptions {
  std::string bootstrap_servers;
  std::string topic;      // kafka::kSliTopic
  std::string spool_dir;  // created if missing
  std::string client_id = "phaseloop-canary-serve";
  // How long one window may wait for its acknowledgement.
  std::chrono::milliseconds delivery_timeout{10000};
  std::chrono::milliseconds backoff{30000};
};

struct SliDeliveryStats {
  int64_t delivered = 0;          // windows Kafka acknowledged
  int64_t spooled = 0;            // windows kept in the spool (undelivered)
  int64_t spool_redelivered = 0;  // earlier runs' records delivered at start
  int64_t spool_kept = 0;         // earlier runs' records still undelivered
};

class SliDelivery : public sli::SliSink {
 public:
  // InvalidArgument for a missing bootstrap or spool directory. Produces
  // what earlier runs left in the spool first (up to delivery_timeout).
  static absl::StatusOr<std::unique_ptr<SliDelivery>> Create(
      const SliDeliveryOptions& options);

  absl::Status Publish(const v1::SliWindow& window) override;

  SliDeliveryStats stats() const;
  const std::string& spool_dir() const { return spool_.dir(); }
  // What Create's retry of earlier runs' records did.
  const kafka::SpoolRetry& spool_retry() const { return spool_retry_; }

 private:
  SliDelivery(SliDeliveryOptions options,
              std::unique_ptr<kafka::Producer> producer,
              kafka::DeliverySpool spool)
      : options_(std::move(options)),
        producer_(std::move(producer)),
        spool_(std::move(spool)) {}

  const SliDeliveryOptions options_;
  std::unique_ptr<kafka::Producer> producer_;
  kafka::DeliverySpool spool_;
  std::chrono::steady_clock::time_point kafka_retry_at_{};
  std::atomic<int64_t> delivered_{0};
  std::atomic<int64_t> spooled_{0};
  kafka::SpoolRetry spool_retry_;  // set before Create returns
};

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_SLI_DELIVERY_H_
