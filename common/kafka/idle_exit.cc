#include "common/kafka/idle_exit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace phaseloop::kafka {

IdleExit::IdleExit(std::chrono::milliseconds idle, Clock::time_point now,
                   std::chrono::milliseconds unassigned_grace)
    : idle_(idle),
      unassigned_grace_(std::max(idle, unassigned_grace)),
      last_input_(now),
      unassigned_since_(now) {}

bool IdleExit::Due(bool assigned, Clock::time_point now) {
  if (idle_.count() <= 0) return false;
  if (!assigned) {
    if (!unassigned_) {
      unassigned_ = true;
      unassigned_since_ = now;
    }
    // Idle time starts afresh once partitions come (a join is not idling).
    last_input_ = now;
    wait_ = std::chrono::duration_cast<std::chrono::milliseconds>(
        now - unassigned_since_);
    return now - unassigned_since_ >= unassigned_grace_;
  }
  unassigned_ = false;
  ever_assigned_ = true;
  return now - last_input_ >= idle_;
}

absl::Status NoBrokerAnswered(absl::string_view who,
                              const std::string& bootstrap,
                              const IdleExit& idle,
                              const absl::Status& last_error) {
  return absl::UnavailableError(absl::StrCat(
      who, ": no Kafka broker at ", bootstrap, " answered in ",
      idle.unassigned_wait().count() / 1000, " s",
      last_error.ok() ? std::string()
                      : absl::StrCat(" (", last_error.message(), ")"),
      "; is the cluster running, and is --kafka its address?"));
}

}  // namespace phaseloop::kafka
