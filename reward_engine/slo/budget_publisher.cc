#include "reward_engine/slo/budget_publisher.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace phaseloop::slo {

BudgetPublisher::BudgetPublisher(kafka::Producer& producer, std::string topic)
    : producer_(&producer), topic_(std::move(topic)) {}

absl::StatusOr<std::unique_ptr<BudgetPublisher>> BudgetPublisher::Create(
    const std::string& bootstrap, std::string topic) {
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.client_id = "phaseloop-budget";
  auto producer = kafka::Producer::Create(options);
  if (!producer.ok()) return producer.status();
  auto publisher =
      std::make_unique<BudgetPublisher>(**producer, std::move(topic));
  publisher->owned_ = *std::move(producer);
  return publisher;
}

absl::Status BudgetPublisher::Publish(const v1::BudgetStatus& status) {
  std::string value;
  if (!status.SerializeToString(&value)) {
    return absl::InternalError(
        absl::StrCat("cannot serialize the budget status of ", status.service(),
                     "/", status.slo_name()));
  }
  return producer_->Produce(
      topic_,
      kafka::BudgetKey(status.service(), status.group(), status.slo_name()),
      value);
}

absl::Status BudgetPublisher::PublishAll(
    const std::vector<v1::BudgetStatus>& statuses) {
  for (const v1::BudgetStatus& status : statuses) {
    if (auto s = Publish(status); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status BudgetPublisher::Flush(std::chrono::milliseconds timeout) {
  return producer_->Flush(timeout);
}

}  // namespace phaseloop::slo
