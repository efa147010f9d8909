#ifndef PHASELOOP_COMMON_KAFKA_CLIENT_CONFIG_H_
#define PHASELOOP_COMMON_KAFKA_CLIENT_CONFIG_H_

// Internal to common/kafka: librdkafka configuration and the event callback
// shared by the producer and the consumer.

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phaseloop::kafka::internal {

// A global librdkafka configuration holding `base` then `user` properties.
// A user property that is one of `owned` (set by the wrapper to keep its
// guarantees) or is mock-only (`test.mock.*`: clients must work unchanged
// against a real cluster) is rejected, naming the property. `role` ("producer",
// "consumer") prefixes messages.
absl::StatusOr<std::unique_ptr<RdKafka::Conf>> MakeConf(
    const std::string& role, const std::map<std::string, std::string>& base,
    const std::map<std::string, std::string>& user,
    const std::map<std::string, std::string>& owned_reasons);

// Sets a callback object on `conf`; InvalidArgument on failure.
absl::Status SetCallback(RdKafka::Conf* conf, const std::string& name,
                         RdKafka::EventCb* event_cb);

// librdkafka events of one client: logs and non-fatal errors go to stderr
// (prefixed with the client role; librdkafka recovers from these itself),
// a fatal error is recorded once and read with fatal(). Thread-safe: events
// arrive on whichever thread polls the client.
class EventLogger : public RdKafka::EventCb {
 public:
  explicit EventLogger(std::string role) : role_(std::move(role)) {}

  // The handle the fatal error is read from; set after the client exists.
  void set_handle(RdKafka::Handle* handle) { handle_.store(handle); }

  void event_cb(RdKafka::Event& event) override;

  // The first fatal error raised by the client (OK while none).
  absl::Status fatal() const;
  // Records a fatal error seen elsewhere (a produce call or a delivery
  // report returning ERR__FATAL): reads the underlying error from the handle.
  absl::Status RecordFatal(const std::string& what);
  int64_t errors() const { return errors_.load(); }

 private:
  const std::string role_;
  std::atomic<RdKafka::Handle*> handle_{nullptr};
  std::atomic<int64_t> errors_{0};
  mutable std::mutex mu_;
  absl::Status fatal_;  // guarded by mu_
};

}  // namespace phaseloop::kafka::internal

#endif  // PHASELOOP_COMMON_KAFKA_CLIENT_CONFIG_H_
