#ifndef PHASELOOP_REPLAY_BUFFER_SQLITE_REPLAY_STORE_H_
#define PHASELOOP_REPLAY_BUFFER_SQLITE_REPLAY_STORE_H_

// The SQLite (WAL) ReplayStore (private to replay_buffer/; reach it through
// OpenReplayStore). One connection per store; writes are one BEGIN IMMEDIATE
// transaction each with synchronous=FULL, so a committed batch survives a
// crash and concurrent writer processes queue on the busy timeout (30 s).
// Schema: schema.cc.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "replay_buffer/replay_store.h"

struct sqlite3;

namespace phaseloop::replay_buffer::internal {

absl::StatusOr<std::unique_ptr<ReplayStore>> OpenSqliteReplayStore(
    const std::string& path, const OpenOptions& options);

class SqliteReplayStore : public ReplayStore {
 public:
  // Takes ownership of `db`, opened by OpenDatabase.
  SqliteReplayStore(sqlite3* db, std::string path)
      : db_(db), path_(std::move(path)) {}
  ~SqliteReplayStore() override;

  absl::Status Write(const WriteBatch& batch) override;
  absl::StatusOr<std::vector<ConsumerOffset>> ReadOffsets(
      const std::string& group, const std::string& topic) override;
  absl::StatusOr<std::vector<EpisodeKey>> ListEpisodes(
      const EpisodeFilter& filter) override;
  absl::StatusOr<std::vector<v1::Episode>> ReadEpisodes(
      const std::vector<std::string>& ids) override;
  absl::StatusOr<std::vector<EpisodeStep>> ReadSteps(
      const std::vector<std::pair<std::string, int32_t>>& steps) override;
  absl::StatusOr<std::vector<v1::FinalReward>> ReadFinalRewards(
      const RewardFilter& filter) override;
  absl::StatusOr<std::vector<v1::ModuleRecord>> ReadModules(
      const std::vector<std::string>& module_hashes) override;
  absl::StatusOr<std::vector<v1::Decision>> ReadDecisions(
      const DecisionFilter& filter) override;
  absl::Status ForEachDecision(
      const DecisionFilter& filter,
      const std::function<absl::Status(v1::Decision&)>& visit) override;
  absl::StatusOr<std::vector<v1::BestSequence>> ReadBestSequences(
      const std::string& module_hash) override;
  absl::Status SetPriorities(
      const std::vector<std::pair<std::string, double>>& priorities) override;
  absl::StatusOr<BufferStats> Stats() override;  // sqlite_stats.cc
  absl::StatusOr<std::vector<v1::Miscompile>> ReadMiscompiles() override;
  absl::StatusOr<bool> IsBlocked(const std::string& module_hash,
                                 const std::string& pipeline) override;
  absl::StatusOr<std::vector<BlockedPipeline>> BlockedPipelines(
      const std::string& module_hash) override;
  absl::Status Scan(
      int batch_size,
      const std::function<absl::Status(const WriteBatch&)>& visit) override;
  absl::Status Snapshot(const std::string& path) override;
  absl::Status CheckIntegrity() override;

 private:
  absl::Status WriteLocked(const WriteBatch& batch);
  // Prefixes errors with the buffer's path.
  absl::Status Named(const absl::Status& status) const;

  sqlite3* db_;
  std::string path_;
};

}  // namespace phaseloop::replay_buffer::internal

#endif  // PHASELOOP_REPLAY_BUFFER_SQLITE_REPLAY_STORE_H_
