// Reads of the SQLite replay store: the episode index, episodes, best
// sequences, modules, decisions, offsets, miscompiles and the block list,
// and the full scan export/import use.
#include <sqlite3.h>

#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/message_lite.h"
#include "replay_buffer/sqlite_replay_store.h"
#include "replay_buffer/sqlite_util.h"

namespace phaseloop::replay_buffer::internal {
namespace {

constexpr char kListEpisodes[] = R"sql(
SELECT e.episode_id, e.num_steps, e.step_return, e.priority
  FROM episodes e LEFT JOIN modules m ON m.module_hash = e.module_hash
 WHERE (?1 = '' OR m.split = ?1) AND (?2 = '' OR e.objective = ?2)
 ORDER BY e.episode_id
)sql";
constexpr char kRewardsBySource[] =
    "SELECT episode_id, AVG(value), COUNT(relative_value), "
    "COALESCE(AVG(relative_value), 0) FROM episode_rewards WHERE source = ?1 "
    "GROUP BY episode_id";
constexpr char kFinalRewards[] = R"sql(
SELECT record FROM final_rewards
 WHERE (?1 = '' OR source = ?1) AND (?2 = '' OR deployment_id = ?2)
   AND window_start_ms >= ?3 AND window_start_ms < ?4
   AND (?5 = 0 OR relative_value IS NOT NULL)
 ORDER BY window_start_ms, reward_id
)sql";
constexpr char kEpisodeHeader[] =
    "SELECT header FROM episodes WHERE episode_id = ?1";
constexpr char kEpisodeSteps[] =
    "SELECT record FROM steps WHERE episode_id = ?1 ORDER BY step_index";

template <typename Proto>
absl::Status Parse(const std::string& bytes, const std::string& what,
                   Proto* proto) {
  if (!proto->ParseFromString(bytes)) {
    return absl::DataLossError(
        absl::StrCat("the stored record of ", what, " does not parse"));
  }
  return absl::OkStatus();
}

// Reads episode `id` (header and steps) with the two prepared statements.
absl::StatusOr<v1::Episode> ReadOne(Statement& header, Statement& steps,
                                    const std::string& id) {
  v1::Episode episode;
  header.Bind(1, id);
  absl::StatusOr<bool> row = header.Step();
  absl::Status status = row.status();
  if (status.ok() && !*row) {
    status = absl::NotFoundError(absl::StrCat("no episode '", id, "'"));
  }
  if (status.ok()) {
    status =
        Parse(header.Text(0), absl::StrCat("episode '", id, "'"), &episode);
  }
  header.Reset();
  if (!status.ok()) return status;
  steps.Bind(1, id);
  for (;;) {
    row = steps.Step();
    if (!row.ok() || !*row) break;
    status = Parse(steps.Text(0), absl::StrCat("a step of '", id, "'"),
                   episode.add_steps());
    if (!status.ok()) break;
  }
  steps.Reset();
  if (!row.ok()) return row.status();
  if (!status.ok()) return status;
  return episode;
}

// Runs `sql` (no parameters) and appends each row's record (column 0),
// parsed as Proto, to `out`; flushes through `flush` every `batch_size`.
template <typename Proto, typename Flush>
absl::Status ScanTable(sqlite3* db, const char* sql, const char* what,
                       std::vector<Proto>* out, Flush flush) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(db, sql);
  if (!stmt.ok()) return stmt.status();
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
    absl::Status status = Parse(stmt->Text(0), what, &out->emplace_back());
    if (status.ok()) status = flush();
    if (!status.ok()) return status;
  }
}

}  // namespace

absl::StatusOr<std::vector<ConsumerOffset>> SqliteReplayStore::ReadOffsets(
    const std::string& group, const std::string& topic) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(
      db_,
      "SELECT partition, next_offset, cluster_id FROM consumer_offsets "
      "WHERE consumer_group = ?1 AND topic = ?2 ORDER BY partition");
  if (!stmt.ok()) return Named(stmt.status());
  stmt->Bind(1, group).Bind(2, topic);
  std::vector<ConsumerOffset> offsets;
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return Named(row.status());
    if (!*row) return offsets;
    ConsumerOffset offset{group, topic, static_cast<int32_t>(stmt->Int(0)),
                          stmt->Int(1)};
    offset.cluster_id = stmt->Text(2);
    offsets.push_back(std::move(offset));
  }
}

absl::StatusOr<std::vector<EpisodeKey>> SqliteReplayStore::ListEpisodes(
    const EpisodeFilter& filter) {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  struct Rewards {
    double mean = 0;
    int32_t relative = 0;
    double relative_mean = 0;
  };
  std::unordered_map<std::string, Rewards> rewards;
  if (!filter.reward_source.empty()) {
    absl::StatusOr<Statement> stmt = Statement::Prepare(db_, kRewardsBySource);
    if (!stmt.ok()) return Named(stmt.status());
    stmt->Bind(1, filter.reward_source);
    for (;;) {
      absl::StatusOr<bool> row = stmt->Step();
      if (!row.ok()) return Named(row.status());
      if (!*row) break;
      rewards[stmt->Text(0)] = {
          stmt->Double(1), static_cast<int32_t>(stmt->Int(2)), stmt->Double(3)};
    }
  }
  absl::StatusOr<Statement> stmt = Statement::Prepare(db_, kListEpisodes);
  if (!stmt.ok()) return Named(stmt.status());
  stmt->Bind(1, filter.split).Bind(2, filter.objective);
  std::vector<EpisodeKey> keys;
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return Named(row.status());
    if (!*row) break;
    EpisodeKey key;
    key.episode_id = stmt->Text(0);
    if (!filter.reward_source.empty()) {
      auto it = rewards.find(key.episode_id);
      if (it == rewards.end()) continue;
      key.final_reward = it->second.mean;
      key.relative_rewards = it->second.relative;
      key.final_relative_reward = it->second.relative_mean;
    }
    key.num_steps = static_cast<int32_t>(stmt->Int(1));
    key.step_return = stmt->Double(2);
    key.priority = stmt->Double(3);
    keys.push_back(std::move(key));
  }
  return keys;
}

absl::StatusOr<std::vector<v1::FinalReward>>
SqliteReplayStore::ReadFinalRewards(const RewardFilter& filter) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(db_, kFinalRewards);
  if (!stmt.ok()) return Named(stmt.status());
  stmt->Bind(1, filter.source).Bind(2, filter.deployment_id);
  stmt->Bind(3, filter.window_start_from_ms).Bind(4, filter.window_start_to_ms);
  stmt->Bind(5, int64_t{filter.relative_only ? 1 : 0});
  std::vector<v1::FinalReward> out;
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return Named(row.status());
    if (!*row) return out;
    absl::Status parsed =
        Parse(stmt->Text(0), "a final reward", &out.emplace_back());
    if (!parsed.ok()) return Named(parsed);
  }
}

absl::StatusOr<std::vector<v1::ModuleRecord>> SqliteReplayStore::ReadModules(
    const std::vector<std::string>& module_hashes) {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  absl::StatusOr<Statement> stmt = Statement::Prepare(
      db_, "SELECT record FROM modules WHERE module_hash = ?1");
  if (!stmt.ok()) return Named(stmt.status());
  const std::set<std::string> wanted(module_hashes.begin(),
                                     module_hashes.end());
  std::vector<v1::ModuleRecord> out;
  for (const std::string& hash : wanted) {
    stmt->Bind(1, hash);
    absl::StatusOr<bool> row = stmt->Step();
    absl::Status status = row.status();
    if (status.ok() && *row) {
      status = Parse(stmt->Text(0), absl::StrCat("module '", hash, "'"),
                     &out.emplace_back());
    }
    stmt->Reset();
    if (!status.ok()) return Named(status);
  }
  return out;
}

absl::StatusOr<std::vector<v1::Decision>> SqliteReplayStore::ReadDecisions(
    const DecisionFilter& filter) {
  std::vector<v1::Decision> out;
  absl::Status read =
      ForEachDecision(filter, [&out](v1::Decision& d) -> absl::Status {
        out.push_back(std::move(d));
        return absl::OkStatus();
      });
  if (!read.ok()) return read;
  return out;
}

absl::Status SqliteReplayStore::ForEachDecision(
    const DecisionFilter& filter,
    const std::function<absl::Status(v1::Decision&)>& visit) {
  // Only the conditions asked for, so SQLite uses decisions_by_build or
  // decisions_by_module instead of scanning every compile ever recorded.
  std::string sql = "SELECT record FROM decisions WHERE 1";
  std::vector<std::string> values;
  for (const auto& [column, value] :
       {std::pair<const char*, const std::string*>{"build_id",
                                                   &filter.build_id},
        {"policy_version", &filter.policy_version},
        {"module_hash", &filter.module_hash}}) {
    if (value->empty()) continue;
    values.push_back(*value);
    absl::StrAppend(&sql, " AND ", column, " = ?", values.size());
  }
  if (!filter.opt_levels.empty()) {
    absl::StrAppend(&sql, " AND opt_level IN (");
    for (size_t i = 0; i < filter.opt_levels.size(); ++i) {
      values.push_back(filter.opt_levels[i]);
      absl::StrAppend(&sql, i == 0 ? "?" : ", ?", values.size());
    }
    absl::StrAppend(&sql, ")");
  }
  absl::StrAppend(&sql, " ORDER BY module_hash, decision_id");
  absl::StatusOr<Statement> stmt = Statement::Prepare(db_, sql.c_str());
  if (!stmt.ok()) return Named(stmt.status());
  for (size_t i = 0; i < values.size(); ++i) {
    stmt->Bind(static_cast<int>(i + 1), values[i]);
  }
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return Named(row.status());
    if (!*row) return absl::OkStatus();
    v1::Decision decision;
    absl::Status parsed = Parse(stmt->Text(0), "a decision", &decision);
    if (!parsed.ok()) return Named(parsed);
    absl::Status visited = visit(decision);
    if (!visited.ok()) return visited;
  }
}

absl::StatusOr<std::vector<v1::Episode>> SqliteReplayStore::ReadEpisodes(
    const std::vector<std::string>& ids) {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  absl::StatusOr<Statement> header = Statement::Prepare(db_, kEpisodeHeader);
  if (!header.ok()) return Named(header.status());
  absl::StatusOr<Statement> steps = Statement::Prepare(db_, kEpisodeSteps);
  if (!steps.ok()) return Named(steps.status());
  std::unordered_map<std::string, size_t> first;  // id -> index in result
  std::vector<v1::Episode> episodes;
  episodes.reserve(ids.size());
  for (const std::string& id : ids) {
    auto it = first.find(id);
    if (it != first.end()) {
      episodes.push_back(episodes[it->second]);
      continue;
    }
    absl::StatusOr<v1::Episode> episode = ReadOne(*header, *steps, id);
    if (!episode.ok()) return Named(episode.status());
    first[id] = episodes.size();
    episodes.push_back(*std::move(episode));
  }
  return episodes;
}

absl::StatusOr<std::vector<EpisodeStep>> SqliteReplayStore::ReadSteps(
    const std::vector<std::pair<std::string, int32_t>>& refs) {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  absl::StatusOr<Statement> header = Statement::Prepare(db_, kEpisodeHeader);
  if (!header.ok()) return Named(header.status());
  absl::StatusOr<Statement> step =
      Statement::Prepare(db_,
                         "SELECT record FROM steps WHERE episode_id = ?1 "
                         "ORDER BY step_index LIMIT 1 OFFSET ?2");
  if (!step.ok()) return Named(step.status());
  // Steps the bound statement once into `proto`.
  auto read = [](Statement& stmt, const std::string& what,
                 google::protobuf::MessageLite* proto) {
    absl::StatusOr<bool> row = stmt.Step();
    absl::Status status = row.status();
    if (status.ok() && !*row) {
      status = absl::NotFoundError(absl::StrCat("no ", what));
    }
    if (status.ok() && !proto->ParseFromString(stmt.Text(0))) {
      status = absl::DataLossError(
          absl::StrCat("the stored record of ", what, " does not parse"));
    }
    stmt.Reset();
    return status;
  };
  std::vector<EpisodeStep> out(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    const auto& [id, position] = refs[i];
    header->Bind(1, id);
    absl::Status status =
        read(*header, absl::StrCat("episode '", id, "'"), &out[i].episode);
    if (status.ok()) {
      step->Bind(1, id).Bind(2, static_cast<int64_t>(position));
      status = read(*step, absl::StrCat("step ", position, " of '", id, "'"),
                    &out[i].step);
    }
    if (!status.ok()) return Named(status);
  }
  return out;
}

absl::StatusOr<std::vector<v1::BestSequence>>
SqliteReplayStore::ReadBestSequences(const std::string& module_hash) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(
      db_,
      "SELECT record FROM best_sequences WHERE module_hash = ?1 "
      "ORDER BY objective, action_space_version");
  if (!stmt.ok()) return Named(stmt.status());
  stmt->Bind(1, module_hash);
  std::vector<v1::BestSequence> sequences;
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return Named(row.status());
    if (!*row) return sequences;
    absl::Status status =
        Parse(stmt->Text(0), "a best sequence", &sequences.emplace_back());
    if (!status.ok()) return Named(status);
  }
}

absl::StatusOr<std::vector<v1::Miscompile>>
SqliteReplayStore::ReadMiscompiles() {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  std::vector<v1::Miscompile> miscompiles;
  absl::Status status = ScanTable(
      db_,
      "SELECT record FROM miscompiles ORDER BY unix_time_ms, miscompile_id",
      "a miscompile", &miscompiles, [] { return absl::OkStatus(); });
  if (!status.ok()) return Named(status);
  return miscompiles;
}

absl::StatusOr<bool> SqliteReplayStore::IsBlocked(
    const std::string& module_hash, const std::string& pipeline) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(
      db_,
      "SELECT 1 FROM blocked_pipelines WHERE module_hash = ?1 AND "
      "pipeline = ?2");
  if (!stmt.ok()) return Named(stmt.status());
  stmt->Bind(1, module_hash).Bind(2, pipeline);
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return Named(row.status());
  return *row;
}

absl::StatusOr<std::vector<BlockedPipeline>>
SqliteReplayStore::BlockedPipelines(const std::string& module_hash) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(
      db_,
      "SELECT module_hash, pipeline, miscompile_id, unix_time_ms "
      "FROM blocked_pipelines WHERE ?1 = '' OR module_hash = ?1 "
      "ORDER BY module_hash, pipeline");
  if (!stmt.ok()) return Named(stmt.status());
  stmt->Bind(1, module_hash);
  std::vector<BlockedPipeline> blocked;
  for (;;) {
    absl::StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return Named(row.status());
    if (!*row) return blocked;
    blocked.push_back(
        {stmt->Text(0), stmt->Text(1), stmt->Text(2), stmt->Int(3)});
  }
}

absl::Status SqliteReplayStore::Scan(
    int batch_size,
    const std::function<absl::Status(const WriteBatch&)>& visit) {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  WriteBatch batch;
  absl::Status visit_error;  // returned as is: it is not this buffer's
  auto flush = [&](bool force) -> absl::Status {
    if (batch.size() == 0 ||
        (!force && batch.size() < static_cast<size_t>(batch_size))) {
      return absl::OkStatus();
    }
    visit_error = visit(batch);
    batch = WriteBatch();
    return visit_error;
  };
  auto maybe_flush = [&] { return flush(false); };
  absl::Status status = ScanTable(
      db_, "SELECT record FROM policy_versions ORDER BY policy_version",
      "a policy version", &batch.policy_versions, maybe_flush);
  if (status.ok()) {
    status =
        ScanTable(db_, "SELECT record FROM deployments ORDER BY deployment_id",
                  "a deployment", &batch.deployments, maybe_flush);
  }
  if (status.ok()) {
    status = ScanTable(db_, "SELECT record FROM modules ORDER BY module_hash",
                       "a module", &batch.modules, maybe_flush);
  }
  // Best sequences before episodes: an importer then keeps the source's
  // choice among equally good sequences (only strictly better replaces).
  if (status.ok()) {
    status = ScanTable(db_,
                       "SELECT record FROM best_sequences "
                       "ORDER BY module_hash, objective, action_space_version",
                       "a best sequence", &batch.best_sequences, maybe_flush);
  }
  if (status.ok()) {
    absl::StatusOr<Statement> ids = Statement::Prepare(
        db_, "SELECT episode_id FROM episodes ORDER BY episode_id");
    absl::StatusOr<Statement> header = Statement::Prepare(db_, kEpisodeHeader);
    absl::StatusOr<Statement> steps = Statement::Prepare(db_, kEpisodeSteps);
    for (const auto* s : {&ids, &header, &steps}) {
      if (status.ok()) status = s->status();
    }
    while (status.ok()) {
      absl::StatusOr<bool> row = ids->Step();
      if (!row.ok() || !*row) {
        status = row.status();
        break;
      }
      absl::StatusOr<v1::Episode> episode =
          ReadOne(*header, *steps, ids->Text(0));
      status = episode.status();
      if (status.ok()) {
        batch.episodes.push_back(*std::move(episode));
        status = maybe_flush();
      }
    }
  }
  if (status.ok()) {
    status =
        ScanTable(db_, "SELECT record FROM final_rewards ORDER BY reward_id",
                  "a final reward", &batch.rewards, maybe_flush);
  }
  if (status.ok()) {
    status = ScanTable(db_, "SELECT record FROM decisions ORDER BY decision_id",
                       "a decision", &batch.decisions, maybe_flush);
  }
  if (status.ok()) {
    status =
        ScanTable(db_, "SELECT record FROM miscompiles ORDER BY miscompile_id",
                  "a miscompile", &batch.miscompiles, maybe_flush);
  }
  if (status.ok()) status = flush(true);
  return visit_error.ok() ? Named(status) : visit_error;
}

}  // namespace phaseloop::replay_buffer::internal
