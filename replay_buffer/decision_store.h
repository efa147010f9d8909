#ifndef PHASELOOP_REPLAY_BUFFER_DECISION_STORE_H_
#define PHASELOOP_REPLAY_BUFFER_DECISION_STORE_H_

// The compile decisions (phaseloop.v1.Decision) of a replay buffer: a narrow
// view of ReplayStore for `phaseloop decisions ship` and `phaseloop stats`.
// Writes are idempotent upserts keyed by decision_id, one transaction per
// batch: shipping the same spool file twice stores each record once, and a
// crash mid-batch stores none of it. Not thread-safe: one store per thread.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/decision.pb.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {

class DecisionStore {
 public:
  // Opens the buffer at `path`, creating it if needed unless `options` say
  // not to (a reader: a mistyped path is an error, not a new empty buffer).
  // Errors name the path.
  static absl::StatusOr<std::unique_ptr<DecisionStore>> Open(
      const std::string& path, const OpenOptions& options = {});

  absl::Status Upsert(const std::vector<v1::Decision>& decisions);

  // Errors (a locked or damaged buffer) name the path.
  absl::StatusOr<int64_t> Count();
  // (outcome name, reason) -> count, ordered by outcome then reason.
  absl::StatusOr<
      std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>>
  CountByOutcomeAndReason();

 private:
  explicit DecisionStore(std::unique_ptr<ReplayStore> store)
      : store_(std::move(store)) {}
  std::unique_ptr<ReplayStore> store_;
};

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_DECISION_STORE_H_
