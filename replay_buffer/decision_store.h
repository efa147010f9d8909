#ifndef PHASELOOP_REPLAY_BUFFER_DECISION_STORE_H_
#define PHASELOOP_REPLAY_BUFFER_DECISION_STORE_H_

// The replay buffer's table of compile decisions (phaseloop.v1.Decision),
// in a SQLite file (WAL). Writes are idempotent upserts keyed by
// decision_id, one transaction per batch: shipping the same spool file twice
// stores each record once, and a crash mid-batch stores none of it.
// Not thread-safe: one store per thread.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/decision.pb.h"

struct sqlite3;

namespace phaseloop::replay_buffer {

class DecisionStore {
 public:
  // Creates the file and schema if needed. Errors name the path.
  static absl::StatusOr<std::unique_ptr<DecisionStore>> Open(
      const std::string& path);
  ~DecisionStore();

  absl::Status Upsert(const std::vector<v1::Decision>& decisions);

  int64_t Count();
  // (outcome name, reason) -> count, ordered by outcome then reason.
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>
  CountByOutcomeAndReason();

 private:
  explicit DecisionStore(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_DECISION_STORE_H_
