#include "replay_buffer/decision_store.h"

namespace phaseloop::replay_buffer {

absl::StatusOr<std::unique_ptr<DecisionStore>> DecisionStore::Open(
    const std::string& path, const OpenOptions& options) {
  absl::StatusOr<std::unique_ptr<ReplayStore>> store =
      OpenReplayStore(path, options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<DecisionStore>(new DecisionStore(*std::move(store)));
}

absl::Status DecisionStore::Upsert(const std::vector<v1::Decision>& decisions) {
  WriteBatch batch;
  batch.decisions = decisions;
  return store_->Write(batch);
}

absl::StatusOr<int64_t> DecisionStore::Count() {
  auto rows = CountByOutcomeAndReason();
  if (!rows.ok()) return rows.status();
  int64_t count = 0;
  for (const auto& [key, n] : *rows) count += n;
  return count;
}

absl::StatusOr<
    std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>>
DecisionStore::CountByOutcomeAndReason() {
  absl::StatusOr<BufferStats> stats = store_->Stats();
  if (!stats.ok()) return stats.status();
  return stats->decisions;
}

}  // namespace phaseloop::replay_buffer
