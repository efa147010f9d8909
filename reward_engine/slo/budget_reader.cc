#include "reward_engine/slo/budget_reader.h"

#include <map>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/topic_reader.h"

namespace phaseloop::slo {

absl::StatusOr<BudgetSnapshot> ReadLatestBudgets(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds timeout) {
  struct Kept {
    v1::BudgetStatus status;
    int32_t partition;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Kept> latest;
  BudgetSnapshot snapshot;
  kafka::TopicReadOptions options;
  options.bootstrap_servers = bootstrap;
  options.topic = topic;
  options.client_id = "phaseloop-slo-status";
  options.timeout = timeout;
  absl::StatusOr<kafka::TopicReadStats> read =
      kafka::ReadTopicToEnd(options, [&](const kafka::ConsumedMessage& m) {
        v1::BudgetStatus status;
        if (!status.ParseFromString(m.value) || status.service().empty()) {
          ++snapshot.malformed;
          return;
        }
        auto key = std::make_tuple(status.service(), status.slo_name(),
                                   status.group());
        auto it = latest.find(key);
        if (it == latest.end() || it->second.partition == m.partition ||
            status.as_of_ms() >= it->second.status.as_of_ms()) {
          latest[key] = Kept{std::move(status), m.partition};
        }
      });
  if (!read.ok()) {
    if (read.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError(absl::StrCat(
          read.status().message(), "; try again or raise --timeout-ms"));
    }
    return read.status();
  }
  snapshot.topic_exists = read->topic_exists;
  snapshot.records = read->records;
  for (auto& [key, kept] : latest) {
    snapshot.latest.push_back(std::move(kept.status));
  }
  return snapshot;
}

}  // namespace phaseloop::slo
