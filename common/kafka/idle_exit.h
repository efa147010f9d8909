#ifndef PHASELOOP_COMMON_KAFKA_IDLE_EXIT_H_
#define PHASELOOP_COMMON_KAFKA_IDLE_EXIT_H_

// When a consumer run with --exit-when-idle-ms N stops: N ms without a
// record while its group is settled (Consumer::GroupSettled: it holds its
// share, partitions or none — more members than partitions, a topic nobody
// created). A join or rebalance is not idling: a member that died holds one
// up for its whole session timeout, 45 s by default. And one case more: a
// consumer whose group has not settled once in the grace (at least N) since
// it started is asked to check whether any broker ever answered
// (Consumer::ClusterId); when none did, it fails (NoBrokerAnswered)
// instead of waiting for ever on an address where nothing listens; when
// one did, it says so (ClusterAnswered) and waits for the group.
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

  // `idle` 0: never due, never asks.
  IdleExit(std::chrono::milliseconds idle, Clock::time_point now,
           std::chrono::milliseconds unassigned_grace = kUnassignedGrace);

  // A record (or a job) arrived.
  void Input(Clock::time_point now) { last_input_ = now; }

  // Whether to stop now, idle, with `settled` whether the group is.
  bool Due(bool settled, Clock::time_point now);

  // Whether to check that a broker answered: the group never settled in
  // the grace since the start, and no broker was found to answer yet.
  bool ShouldCheckBroker(bool settled, Clock::time_point now);
  // A broker answered: a join, not an unreachable cluster; never ask again.
  void ClusterAnswered() { answered_ = true; }

  // How long since the start (for the message).
  std::chrono::milliseconds waited(Clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now -
                                                                 started_);
  }

 private:
  const std::chrono::milliseconds idle_;
  const std::chrono::milliseconds unassigned_grace_;
  const Clock::time_point started_;
  Clock::time_point last_input_;
  bool ever_settled_ = false;
  bool answered_ = false;
};

// What `what` ("the ingest") fails with when no broker at `bootstrap`
// answered in `waited` (no cluster id): Unavailable, naming the address,
// the wait and `last_error` if any.
absl::Status NoBrokerAnswered(absl::string_view what,
                              const std::string& bootstrap,
                              std::chrono::milliseconds waited,
                              const absl::Status& last_error);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_IDLE_EXIT_H_
