#include "common/kafka/idle_exit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace phaseloop::kafka {

IdleExit::IdleExit(std::chrono::milliseconds idle, Clock::time_point now,
                   std::chrono::milliseconds unassigned_grace)
    : idle_(idle),
      unassigned_grace_(std::max(idle, unassigned_grace)),
      started_(now),
      last_input_(now) {}

bool IdleExit::Due(bool settled, Clock::time_point now) {
  if (idle_.count() <= 0) return false;
  if (!settled) {
    // Idle time starts afresh once the group settles (a join is not idling).
    last_input_ = now;
    return false;
  }
  ever_settled_ = true;
  return now - last_input_ >= idle_;
}

bool IdleExit::ShouldCheckBroker(bool settled, Clock::time_point now) {
  if (idle_.count() <= 0 || answered_ || ever_settled_) return false;
  if (settled) {
    ever_settled_ = true;
    return false;
  }
  return now - started_ >= unassigned_grace_;
}

absl::Status NoBrokerAnswered(absl::string_view what,
                              const std::string& bootstrap,
                              std::chrono::milliseconds waited,
                              const absl::Status& last_error) {
  return absl::UnavailableError(absl::StrCat(
      "no Kafka broker at ", bootstrap, " answered ", what, " in ",
      waited.count() / 1000, " s",
      last_error.ok() ? std::string()
                      : absl::StrCat(" (", last_error.message(), ")"),
      "; is the cluster running, and is --kafka its address?"));
}

}  // namespace phaseloop::kafka
