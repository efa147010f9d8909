#include "reward_engine/slo/budget_reader.h"

#include <map>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/topic_reader.h"
#include "common/kafka/topics.h"

namespace phaseloop::slo {

bool IsBudgetStatus(const v1::BudgetStatus& status) {
  return !status.service().empty() && !status.slo_name().empty() &&
         status.target() > 0 && status.target() < 1 && status.window_ms() > 0 &&
         (status.budgeting_method() == "Occurrences" ||
          status.budgeting_method() == "Timeslices") &&
         status.total() >= 0 && status.good() >= 0 && status.bad() >= 0;
}

bool OnlyOtherRecords(const BudgetSnapshot& snapshot) {
  return snapshot.records > 0 && snapshot.malformed == snapshot.records;
}

std::string SkippedRecordsNote(const BudgetSnapshot& snapshot,
                               const std::string& topic) {
  if (snapshot.malformed == 0) return "";
  std::string note =
      absl::StrCat("skipped ", snapshot.malformed, " of ", snapshot.records,
                   " records of ", topic, " that are not budget statuses");
  if (OnlyOtherRecords(snapshot)) {
    absl::StrAppend(&note, ": is ", topic,
                    " the topic the reward engine publishes budgets on? "
                    "Give --topic ",
                    kafka::kBudgetTopic, " (the default) or the engine's");
  }
  return note;
}

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
        if (!status.ParseFromString(m.value) || !IsBudgetStatus(status)) {
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
