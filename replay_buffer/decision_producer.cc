#include "replay_buffer/decision_producer.h"

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/producer.h"
#include "common/kafka/topics.h"

namespace phaseloop::replay_buffer {
namespace {

absl::Status Named(const absl::Status& status, const std::string& topic,
                   const std::string& bootstrap) {
  // Delivery failures name the topic already.
  if (absl::StrContains(status.message(), topic)) {
    return absl::Status(status.code(), absl::StrCat("Kafka ", bootstrap, ": ",
                                                    status.message()));
  }
  return absl::Status(status.code(),
                      absl::StrCat("Kafka ", bootstrap, ", topic ", topic, ": ",
                                   status.message()));
}

}  // namespace

std::vector<absl::Status> ProduceDecisionBatches(
    const std::string& bootstrap,
    const std::vector<const v1::DecisionBatch*>& batches,
    std::chrono::milliseconds delivery_timeout, const std::string& topic) {
  std::vector<absl::Status> result(batches.size(), absl::OkStatus());
  if (batches.empty()) return result;
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.client_id = "phaseloop-decisions-ship";
  options.delivery_timeout = delivery_timeout;
  options.queue_full_timeout = delivery_timeout;
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(options);
  if (!producer.ok()) {
    for (absl::Status& s : result)
      s = Named(producer.status(), topic, bootstrap);
    return result;
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    for (const v1::Decision& d : batches[i]->decisions()) {
      std::string value;
      d.SerializeToString(&value);
      absl::Status queued = (*producer)->Produce(
          topic, kafka::DecisionKey(d.decision_id()), value, /*tag=*/i);
      if (!queued.ok()) {
        // The rest of this batch would not make it delivered either.
        result[i] = Named(queued, topic, bootstrap);
        break;
      }
    }
    if (!(*producer)->fatal_error().ok()) {
      for (size_t j = i + 1; j < batches.size(); ++j) {
        result[j] = Named((*producer)->fatal_error(), topic, bootstrap);
      }
      break;
    }
  }
  // Every report, or the records purged after the wait: afterwards nothing
  // is in flight, so a batch without a failure was wholly acknowledged.
  for (const kafka::DeliveryFailure& failure :
       (*producer)->Drain(delivery_timeout + std::chrono::seconds(5))) {
    if (failure.tag < result.size() && result[failure.tag].ok()) {
      result[failure.tag] = Named(failure.status, topic, bootstrap);
    }
  }
  // Reports that never came even after the purge: which batches they belong
  // to is unknown, so none counts as delivered (shipping again is harmless).
  if ((*producer)->stats().in_flight() > 0) {
    const absl::Status unknown = Named(absl::DeadlineExceededError(absl::StrCat(
                                           (*producer)->stats().in_flight(),
                                           " records have no delivery report")),
                                       topic, bootstrap);
    for (absl::Status& s : result) {
      if (s.ok()) s = unknown;
    }
  }
  return result;
}

}  // namespace phaseloop::replay_buffer
