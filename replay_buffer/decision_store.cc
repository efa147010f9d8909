#include "replay_buffer/decision_store.h"

namespace phaseloop::replay_buffer {

absl::StatusOr<std::unique_ptr<DecisionStore>> DecisionStore::Open(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<ReplayStore>> store = OpenReplayStore(path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<DecisionStore>(new DecisionStore(*std::move(store)));
}

absl::Status DecisionStore::Upsert(const std::vector<v1::Decision>& decisions) {
  WriteBatch batch;
  batch.decisions = decisions;
  return store_->Write(batch);
}

int64_t DecisionStore::Count() {
  int64_t count = 0;
  for (const auto& [key, n] : CountByOutcomeAndReason()) count += n;
  return count;
}

std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>
DecisionStore::CountByOutcomeAndReason() {
  absl::StatusOr<BufferStats> stats = store_->Stats();
  if (!stats.ok()) return {};
  return stats->decisions;
}

}  // namespace phaseloop::replay_buffer
