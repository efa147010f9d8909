#ifndef PHASELOOP_REWARD_ENGINE_SLO_BUDGET_PUBLISHER_H_
#define PHASELOOP_REWARD_ENGINE_SLO_BUDGET_PUBLISHER_H_

// Publishes BudgetStatus records to the budget topic (kafka::kBudgetTopic),
// keyed kafka::BudgetKey(service, group, slo_name), value the serialized
// proto. Readers keep the latest record per key (one key's records share a
// partition, in order), so the topic may be compacted on a real cluster.
// Publishing the same status again is harmless (a reader keeps the latest).
//
// Ownership: the publisher borrows a Producer (the engine's, shared with its
// other outputs) or owns one it made. Thread-safety: as the Producer.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/producer.h"
#include "common/kafka/topics.h"
#include "phaseloop/v1/slo.pb.h"

namespace phaseloop::slo {

class BudgetPublisher {
 public:
  // Borrows `producer`, which must outlive the publisher.
  explicit BudgetPublisher(
      kafka::Producer& producer,
      std::string topic = std::string(kafka::kBudgetTopic));
  // Makes and owns an idempotent producer for `bootstrap`.
  static absl::StatusOr<std::unique_ptr<BudgetPublisher>> Create(
      const std::string& bootstrap,
      std::string topic = std::string(kafka::kBudgetTopic));

  // Queues one record; the outcome comes with Flush (Producer::Produce).
  absl::Status Publish(const v1::BudgetStatus& status);
  // Queues every status; stops at the first error.
  absl::Status PublishAll(const std::vector<v1::BudgetStatus>& statuses);
  // Waits for delivery (Producer::Flush).
  absl::Status Flush(std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<kafka::Producer> owned_;
  kafka::Producer* producer_;
  std::string topic_;
};

}  // namespace phaseloop::slo

#endif  // PHASELOOP_REWARD_ENGINE_SLO_BUDGET_PUBLISHER_H_
