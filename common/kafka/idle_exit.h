#ifndef PHASELOOP_COMMON_KAFKA_IDLE_EXIT_H_
#define PHASELOOP_COMMON_KAFKA_IDLE_EXIT_H_

// When a consumer run with --exit-when-idle-ms N stops: N ms without a
// record while it holds partitions. While it holds none, the time counts
// too, but only past a grace of at least kUnassignedGrace: joining a group
// takes seconds (the old rule, never counting it, kept a batch job waiting
// for ever on a broker it could not reach). A consumer that never held a
// partition when it stops is told apart (never_assigned), so its command
// can say that the cluster may be unreachable.
//
// A pure clock-driven rule: the caller passes the time, tests pass their own.

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace phaseloop::kafka {

inline constexpr std::chrono::milliseconds kUnassignedGrace{30'000};

class IdleExit {
 public:
  using Clock = std::chrono::steady_clock;

  // `idle` 0: never due.
  IdleExit(std::chrono::milliseconds idle, Clock::time_point now,
           std::chrono::milliseconds unassigned_grace = kUnassignedGrace);

  // A record (or a job) arrived.
  void Input(Clock::time_point now) { last_input_ = now; }

  // Whether to stop now, with `assigned` whether partitions are held.
  bool Due(bool assigned, Clock::time_point now);

  // Never held a partition (meaningful once Due returned true).
  bool never_assigned() const { return !ever_assigned_; }
  // How long it waited without partitions before it was due.
  std::chrono::milliseconds unassigned_wait() const { return wait_; }

 private:
  const std::chrono::milliseconds idle_;
  const std::chrono::milliseconds unassigned_grace_;
  Clock::time_point last_input_;
  Clock::time_point unassigned_since_;
  bool unassigned_ = true;
  bool ever_assigned_ = false;
  std::chrono::milliseconds wait_{0};
};

// What `who` ("buffer ingest") fails with when it stopped idle without a
// partition and no broker at `bootstrap` ever answered (no cluster id):
// Unavailable, naming the address, the wait and `last_error` if any.
absl::Status NoBrokerAnswered(absl::string_view who,
                              const std::string& bootstrap,
                              const IdleExit& idle,
                              const absl::Status& last_error);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_IDLE_EXIT_H_
