// Opening, writing and snapshotting the SQLite replay store; reads are in
// sqlite_replay_store_read.cc, statistics in sqlite_replay_store_stats.cc.
#include "replay_buffer/sqlite_replay_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/process/process_gone.h"
#include "common/protobuf/utf8_strings.h"
#include "replay_buffer/schema.h"
#include "replay_buffer/sqlite_util.h"

namespace phaseloop::replay_buffer::internal {
namespace {

constexpr char kUpsertModule[] =
    "INSERT OR REPLACE INTO modules VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr char kUpsertPolicyVersion[] =
    "INSERT OR REPLACE INTO policy_versions VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr char kUpsertDeployment[] =
    "INSERT OR REPLACE INTO deployments "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
// The learner-set priority survives a re-write of the episode.
constexpr char kUpsertEpisode[] = R"sql(
INSERT INTO episodes (episode_id, module_hash, action_space_version, objective,
  behaviour_policy, num_steps, step_return, final_ir_count, final_text_size,
  unix_time_ms, header)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT(episode_id) DO UPDATE SET
  module_hash = excluded.module_hash,
  action_space_version = excluded.action_space_version,
  objective = excluded.objective, behaviour_policy = excluded.behaviour_policy,
  num_steps = excluded.num_steps, step_return = excluded.step_return,
  final_ir_count = excluded.final_ir_count,
  final_text_size = excluded.final_text_size,
  unix_time_ms = excluded.unix_time_ms, header = excluded.header
)sql";
constexpr char kDeleteSteps[] = "DELETE FROM steps WHERE episode_id = ?1";
constexpr char kInsertStep[] =
    "INSERT INTO steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
constexpr char kUpsertBest[] = R"sql(
INSERT INTO best_sequences VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT(module_hash, objective, action_space_version) DO UPDATE SET
  value = excluded.value, num_actions = excluded.num_actions,
  episode_id = excluded.episode_id, record = excluded.record
WHERE excluded.value < best_sequences.value
   OR (excluded.value = best_sequences.value
       AND excluded.num_actions < best_sequences.num_actions)
)sql";
constexpr char kUpsertReward[] =
    "INSERT OR REPLACE INTO final_rewards (reward_id, source, module_hash, "
    "policy_version, build_id, deployment_id, episode_id, value, "
    "window_start_ms, unix_time_ms, record, relative_value, "
    "baseline_deployment_id) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
constexpr char kUpsertDecision[] =
    "INSERT OR REPLACE INTO decisions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
    "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
constexpr char kUpsertMiscompile[] = R"sql(
INSERT INTO miscompiles VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
ON CONFLICT(miscompile_id) DO UPDATE SET
  workload = excluded.workload, build_id = excluded.build_id,
  policy_version = excluded.policy_version, candidate = excluded.candidate,
  run = excluded.run, what = excluded.what, verdict = excluded.verdict,
  unix_time_ms = excluded.unix_time_ms, record = excluded.record
)sql";
constexpr char kUnblock[] =
    "DELETE FROM blocked_pipelines WHERE miscompile_id = ?1";
// A pair already blocked keeps the miscompile that blocked it first.
constexpr char kBlock[] =
    "INSERT OR IGNORE INTO blocked_pipelines VALUES (?1, ?2, ?3, ?4)";
constexpr char kBlockingMiscompiles[] =
    "SELECT record FROM miscompiles WHERE verdict <> 'undefined_behaviour' "
    "ORDER BY unix_time_ms, miscompile_id";
constexpr char kUpsertOffset[] = R"sql(
INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset,
                              cluster_id)
VALUES (?1, ?2, ?3, ?4, ?6)
ON CONFLICT(consumer_group, topic, partition) DO UPDATE SET
  next_offset = CASE WHEN ?5 THEN excluded.next_offset
                     ELSE MAX(next_offset, excluded.next_offset) END,
  cluster_id = CASE WHEN ?5 OR cluster_id = '' THEN excluded.cluster_id
                    ELSE cluster_id END
)sql";

std::string OutcomeName(v1::DecisionOutcome outcome) {
  // The enum's own names, lower-cased: "optimized", "pass_through", ...
  return absl::AsciiStrToLower(v1::DecisionOutcome_Name(outcome));
}

// Prepares `sql` only if `count` > 0, then runs `bind` for each i < count.
template <typename BindFn>
absl::Status ForEach(sqlite3* db, const char* sql, size_t count, BindFn bind) {
  if (count == 0) return absl::OkStatus();
  absl::StatusOr<Statement> stmt = Statement::Prepare(db, sql);
  if (!stmt.ok()) return stmt.status();
  for (size_t i = 0; i < count; ++i) {
    bind(i, *stmt);
    absl::Status status = stmt->Run();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void BindBest(Statement& stmt, const v1::BestSequence& b) {
  stmt.Bind(1, b.module_hash()).Bind(2, b.objective());
  stmt.Bind(3, b.action_space_version()).Bind(4, b.value());
  stmt.Bind(5, static_cast<int64_t>(b.actions_size()));
  stmt.Bind(6, b.episode_id()).BindBlob(7, b.SerializeAsString());
}

absl::Status WriteEpisodes(sqlite3* db,
                           const std::vector<v1::Episode>& episodes) {
  if (episodes.empty()) return absl::OkStatus();
  absl::StatusOr<Statement> upsert = Statement::Prepare(db, kUpsertEpisode);
  absl::StatusOr<Statement> remove = Statement::Prepare(db, kDeleteSteps);
  absl::StatusOr<Statement> step = Statement::Prepare(db, kInsertStep);
  absl::StatusOr<Statement> best = Statement::Prepare(db, kUpsertBest);
  for (const auto* s : {&upsert, &remove, &step, &best}) {
    if (!s->ok()) return s->status();
  }
  for (const v1::Episode& e : episodes) {
    double step_return = 0;
    for (const v1::Step& s : e.steps()) step_return += s.reward();
    v1::Episode header = e;
    header.clear_steps();
    upsert->Bind(1, e.episode_id()).Bind(2, e.module_hash());
    upsert->Bind(3, e.action_space_version()).Bind(4, e.objective());
    upsert->Bind(5, e.behaviour_policy());
    upsert->Bind(6, static_cast<int64_t>(e.steps_size()));
    upsert->Bind(7, step_return).Bind(8, e.final_ir_count());
    upsert->Bind(9, e.final_text_size()).Bind(10, e.unix_time_ms());
    upsert->BindBlob(11, header.SerializeAsString());
    absl::Status status = upsert->Run();
    if (status.ok()) status = remove->Bind(1, e.episode_id()).Run();
    for (int i = 0; status.ok() && i < e.steps_size(); ++i) {
      const v1::Step& s = e.steps(i);
      step->Bind(1, e.episode_id()).Bind(2, static_cast<int64_t>(s.index()));
      step->Bind(3, static_cast<int64_t>(s.action()));
      step->Bind(4, s.action_probability()).Bind(5, s.reward());
      step->Bind(6, s.ir_count_after()).Bind(7, s.text_size_after());
      step->Bind(8, static_cast<int64_t>(s.failed() ? 1 : 0));
      step->BindBlob(9, s.SerializeAsString());
      status = step->Run();
    }
    v1::BestSequence sequence;
    if (status.ok() && BestSequenceOf(e, &sequence)) {
      BindBest(*best, sequence);
      status = best->Run();
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("writing episode '", e.episode_id(),
                                       "': ", status.message()));
    }
  }
  return absl::OkStatus();
}

// Blocks the pairs `m` blames (as miscompile `id`) unless it is undefined
// behaviour.
absl::Status BlockPairs(Statement& block, const v1::Miscompile& m,
                        const std::string& id) {
  if (m.verdict() == kVerdictUndefinedBehaviour) return absl::OkStatus();
  for (const v1::BlamedPipeline& b : m.blamed()) {
    block.Bind(1, b.module_hash()).Bind(2, b.pipeline()).Bind(3, id);
    absl::Status status = block.Bind(4, m.unix_time_ms()).Run();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// Upserts the miscompiles and keeps the block list their function: a
// re-stored miscompile first drops the blocks it set, then blocks what it
// blames now; pairs it no longer blocks go back to any other stored
// miscompile that blames them.
absl::Status WriteMiscompiles(sqlite3* db,
                              const std::vector<v1::Miscompile>& miscompiles) {
  if (miscompiles.empty()) return absl::OkStatus();
  absl::StatusOr<Statement> upsert = Statement::Prepare(db, kUpsertMiscompile);
  absl::StatusOr<Statement> unblock = Statement::Prepare(db, kUnblock);
  absl::StatusOr<Statement> block = Statement::Prepare(db, kBlock);
  for (const auto* s : {&upsert, &unblock, &block}) {
    if (!s->ok()) return s->status();
  }
  bool lifted = false;
  for (const v1::Miscompile& given : miscompiles) {
    v1::Miscompile m = given;
    if (m.miscompile_id().empty()) m.set_miscompile_id(MiscompileIdOf(m));
    const std::string& id = m.miscompile_id();
    upsert->Bind(1, id).Bind(2, m.workload()).Bind(3, m.build_id());
    upsert->Bind(4, m.policy_version()).Bind(5, m.candidate());
    upsert->Bind(6, m.run()).Bind(7, m.what()).Bind(8, m.verdict());
    upsert->Bind(9, m.unix_time_ms()).BindBlob(10, m.SerializeAsString());
    absl::Status status = upsert->Run();
    if (status.ok()) status = unblock->Bind(1, id).Run();
    lifted = lifted || sqlite3_changes(db) > 0;
    if (status.ok()) status = BlockPairs(*block, m, id);
    if (!status.ok()) {
      return absl::Status(
          status.code(),
          absl::StrCat("writing miscompile '", id, "': ", status.message()));
    }
  }
  if (!lifted) return absl::OkStatus();
  absl::StatusOr<Statement> blocking =
      Statement::Prepare(db, kBlockingMiscompiles);
  if (!blocking.ok()) return blocking.status();
  for (;;) {
    absl::StatusOr<bool> row = blocking->Step();
    if (!row.ok() || !*row) return row.status();
    v1::Miscompile m;
    if (!m.ParseFromString(blocking->Text(0))) {
      return absl::DataLossError(
          "the stored record of a miscompile does not "
          "parse");
    }
    absl::Status status = BlockPairs(*block, m, m.miscompile_id());
    if (!status.ok()) return status;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReplayStore>> OpenSqliteReplayStore(
    const std::string& path, const OpenOptions& options) {
  absl::StatusOr<sqlite3*> db = OpenDatabase(path, options);
  if (!db.ok()) return db.status();
  return std::make_unique<SqliteReplayStore>(*db, path);
}

SqliteReplayStore::~SqliteReplayStore() { sqlite3_close(db_); }

absl::Status SqliteReplayStore::Named(const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("replay buffer '", path_,
                                                  "': ", status.message()));
}

namespace {

// Calls `visit` on every record of `batch` (offsets are no records).
template <typename Batch, typename Visit>
void ForEachRecord(Batch& batch, Visit visit) {
  for (auto& m : batch.modules) visit(m);
  for (auto& e : batch.episodes) visit(e);
  for (auto& r : batch.rewards) visit(r);
  for (auto& d : batch.decisions) visit(d);
  for (auto& b : batch.best_sequences) visit(b);
  for (auto& d : batch.deployments) visit(d);
  for (auto& p : batch.policy_versions) visit(p);
  for (auto& m : batch.miscompiles) visit(m);
}

// A canary window's reward id names its service, deployment, group and the
// window's start, not its length: an engine with another --window-ms (a
// second engine on the same SLIs, a replay with other flags) computes
// rewards for other windows under the same ids. Replacing the stored ones
// would mix two window lengths in one deployment's history without a word.
absl::Status CheckRewardWindows(sqlite3* db,
                                const std::vector<v1::FinalReward>& rewards) {
  absl::StatusOr<Statement> stored = Statement::Prepare(
      db,
      "SELECT unix_time_ms - window_start_ms FROM final_rewards "
      "WHERE reward_id = ?1 AND source = 'canary'");
  if (!stored.ok()) return stored.status();
  for (const v1::FinalReward& r : rewards) {
    if (r.source() != "canary" || !absl::StartsWith(r.reward_id(), "canary/")) {
      continue;
    }
    stored->Reset();
    stored->Bind(1, r.reward_id());
    absl::StatusOr<bool> row = stored->Step();
    if (!row.ok()) return row.status();
    const int64_t length = r.unix_time_ms() - r.window_start_ms();
    if (*row && stored->Int(0) != length) {
      return absl::FailedPreconditionError(absl::StrCat(
          "final reward '", r.reward_id(), "' is stored for a window of ",
          stored->Int(0), " ms and would be replaced by one of ", length,
          " ms: one deployment's rewards need one window length. Run the "
          "reward engine with --window-ms ",
          stored->Int(0), ", or give it another buffer; nothing was written"));
    }
  }
  return absl::OkStatus();
}

bool HasInvalidUtf8(const WriteBatch& batch) {
  bool invalid = false;
  ForEachRecord(batch, [&](const google::protobuf::Message& record) {
    invalid = invalid || protobuf::HasInvalidUtf8(record);
  });
  return invalid;
}

}  // namespace

absl::Status SqliteReplayStore::Write(const WriteBatch& batch) {
  // A string field that is not UTF-8 (a path named in Latin-1, a program's
  // output in a miscompile's detail) is stored as \xNN: stored as it was,
  // its record could never be parsed again.
  if (HasInvalidUtf8(batch)) {
    WriteBatch valid = batch;
    ForEachRecord(valid, [](google::protobuf::Message& record) {
      protobuf::MakeStringsValidUtf8(&record);
    });
    return Write(valid);
  }
  absl::Status status = ValidateWriteBatch(batch);
  if (!status.ok()) return status;
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/true);
  if (!txn.ok()) return Named(txn.status());
  status = WriteLocked(batch);
  if (status.ok()) status = txn->Commit();
  return Named(status);  // ~Transaction rolls back unless committed
}

absl::Status SqliteReplayStore::WriteLocked(const WriteBatch& b) {
  absl::Status status =
      ForEach(db_, kUpsertPolicyVersion, b.policy_versions.size(),
              [&](size_t i, Statement& s) {
                const v1::PolicyVersionRecord& p = b.policy_versions[i];
                s.Bind(1, p.policy_version()).Bind(2, p.objective());
                s.Bind(3, p.parent_version()).Bind(4, p.unix_time_ms());
                s.BindBlob(5, p.SerializeAsString());
              });
  if (!status.ok()) return status;
  status = ForEach(db_, kUpsertDeployment, b.deployments.size(),
                   [&](size_t i, Statement& s) {
                     const v1::DeploymentRecord& d = b.deployments[i];
                     s.Bind(1, d.deployment_id()).Bind(2, d.build_id());
                     s.Bind(3, d.policy_version()).Bind(4, d.service());
                     s.Bind(5, d.environment()).Bind(6, d.role());
                     s.Bind(7, d.status()).Bind(8, d.start_unix_ms());
                     s.BindBlob(9, d.SerializeAsString());
                   });
  if (!status.ok()) return status;
  status = ForEach(db_, kUpsertModule, b.modules.size(),
                   [&](size_t i, Statement& s) {
                     const v1::ModuleRecord& m = b.modules[i];
                     s.Bind(1, m.module_hash()).Bind(2, m.name());
                     s.Bind(3, m.split()).Bind(4, m.opt_level());
                     s.Bind(5, m.convention()).Bind(6, m.ir_count_oz());
                     s.Bind(7, m.text_size_oz());
                     s.BindBlob(8, m.SerializeAsString());
                   });
  if (!status.ok()) return status;
  // Given best sequences before the episodes' own: on a tie the given one
  // (e.g. an imported buffer's choice) stays.
  status = ForEach(
      db_, kUpsertBest, b.best_sequences.size(),
      [&](size_t i, Statement& s) { BindBest(s, b.best_sequences[i]); });
  if (!status.ok()) return status;
  status = WriteEpisodes(db_, b.episodes);
  if (!status.ok()) return status;
  status = CheckRewardWindows(db_, b.rewards);
  if (!status.ok()) return status;
  status = ForEach(db_, kUpsertReward, b.rewards.size(),
                   [&](size_t i, Statement& s) {
                     const v1::FinalReward& r = b.rewards[i];
                     s.Bind(1, r.reward_id()).Bind(2, r.source());
                     s.Bind(3, r.module_hash()).Bind(4, r.policy_version());
                     s.Bind(5, r.build_id()).Bind(6, r.deployment_id());
                     s.Bind(7, r.episode_id()).Bind(8, r.value());
                     s.Bind(9, r.window_start_ms()).Bind(10, r.unix_time_ms());
                     s.BindBlob(11, r.SerializeAsString());
                     if (r.has_relative_value()) {
                       s.Bind(12, r.relative_value());
                     } else {
                       s.BindNull(12);
                     }
                     s.Bind(13, r.baseline_deployment_id());
                   });
  if (!status.ok()) return status;
  status = ForEach(
      db_, kUpsertDecision, b.decisions.size(), [&](size_t i, Statement& s) {
        const v1::Decision& d = b.decisions[i];
        s.Bind(1, d.decision_id()).Bind(2, OutcomeName(d.outcome()));
        s.Bind(3, d.reason()).Bind(4, d.source());
        s.Bind(5, d.object_path()).Bind(6, d.opt_level());
        s.Bind(7, d.module_hash()).Bind(8, d.pipeline());
        s.Bind(9, d.policy_version()).Bind(10, d.build_id());
        s.Bind(11, d.compile_time_us());
        s.Bind(12, d.optimize_time_us());
        s.Bind(13, d.ir_count_before());
        s.Bind(14, d.ir_count_after()).Bind(15, d.text_size());
        s.Bind(16, d.unix_time_ms());
        s.BindBlob(17, d.SerializeAsString());
      });
  if (!status.ok()) return status;
  status = WriteMiscompiles(db_, b.miscompiles);
  if (!status.ok()) return status;
  return ForEach(db_, kUpsertOffset, b.offsets.size(),
                 [&](size_t i, Statement& s) {
                   const ConsumerOffset& o = b.offsets[i];
                   s.Bind(1, o.group).Bind(2, o.topic);
                   s.Bind(3, static_cast<int64_t>(o.partition));
                   s.Bind(4, o.next_offset);
                   s.Bind(5, static_cast<int64_t>(o.replaces_stored));
                   s.Bind(6, o.cluster_id);
                 });
}

absl::Status SqliteReplayStore::SetPriorities(
    const std::vector<std::pair<std::string, double>>& priorities) {
  for (const auto& [id, priority] : priorities) {
    if (!std::isfinite(priority) || priority < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "priority ", priority, " of episode '", id,
          "' is not a finite number >= 0; no priority was changed"));
    }
  }
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/true);
  if (!txn.ok()) return Named(txn.status());
  absl::Status status =
      ForEach(db_, "UPDATE episodes SET priority = ?2 WHERE episode_id = ?1",
              priorities.size(), [&](size_t i, Statement& s) {
                s.Bind(1, priorities[i].first).Bind(2, priorities[i].second);
              });
  if (status.ok()) status = txn->Commit();
  return Named(status);
}

namespace {

// SQLite's quick_check of `db` (`source`, or a copy of it): DataLoss
// naming the source, its first problem and `consequence` unless it answers
// "ok".
absl::Status QuickCheck(sqlite3* db, const std::string& source,
                        const std::string& consequence) {
  absl::StatusOr<Statement> check =
      Statement::Prepare(db, "PRAGMA quick_check");
  if (!check.ok()) return check.status();
  absl::StatusOr<bool> row = check->Step();
  if (!row.ok()) return row.status();
  const std::string answer = *row ? check->Text(0) : "no answer";
  if (answer == "ok") return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "the buffer '", source, "' is damaged (sqlite quick_check: ", answer,
      "); ", consequence, ": restore it from an earlier export"));
}

// The temporary files of an earlier export to `path` whose process is
// gone (killed: `<path>.tmp-<pid>` and its -journal, as big as the buffer,
// were left for good).
void RemoveDeadExportsTemporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + ".tmp-";
  std::error_code error;
  const fs::path dir =
      target.has_parent_path() ? target.parent_path() : fs::path(".");
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());
    if (const size_t dash = rest.find('-'); dash != std::string::npos) {
      rest = rest.substr(0, dash);  // <pid>-journal
    }
    // A pid (at most 2^22 on Linux), its process gone, and the file left
    // untouched for 10 minutes: another machine or container writing an
    // export into the same directory has a pid this one cannot see.
    int pid = 0;
    if (rest.empty() ||
        rest.find_first_not_of("0123456789") != std::string::npos ||
        !absl::SimpleAtoi(rest, &pid) || pid <= 0 || pid > (1 << 22)) {
      continue;
    }
    std::error_code time_error;
    const auto written = fs::last_write_time(entry.path(), time_error);
    if (time_error ||
        fs::file_time_type::clock::now() - written < std::chrono::minutes(10)) {
      continue;
    }
    if (process::ProcessGone(pid)) {
      std::error_code ignored;
      fs::remove(entry.path(), ignored);
    }
  }
}

}  // namespace

absl::Status SqliteReplayStore::CheckIntegrity() {
  return QuickCheck(db_, path_, "nothing was read from it");
}

absl::Status SqliteReplayStore::Snapshot(const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(absl::StrCat(
        "'", path, "' exists; pass a new path (nothing was written)"));
  }
  RemoveDeadExportsTemporaries(path);
  const std::string temp = absl::StrCat(path, ".tmp-", getpid());
  sqlite3* out = nullptr;
  int rc = sqlite3_open_v2(temp.c_str(), &out,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  absl::Status status;
  // The export's errors name the export (a full disk is --out's disk).
  const std::string writing =
      absl::StrCat("copying it to the export '", path, "'");
  if (rc != SQLITE_OK) {
    status = absl::InvalidArgumentError(
        absl::StrCat("cannot create '", temp,
                     "': ", out ? sqlite3_errmsg(out) : "out of memory",
                     "; pass a path in a writable directory"));
  } else {
    // One step copies every page under one read transaction: a consistent
    // snapshot even while other processes write.
    sqlite3_backup* backup = sqlite3_backup_init(out, "main", db_, "main");
    if (backup == nullptr) {
      status = SqliteError(out, sqlite3_errcode(out), writing);
    } else {
      rc = sqlite3_backup_step(backup, -1);
      sqlite3_backup_finish(backup);
      // (The backup step returns its error; `out` may not hold it.)
      if (rc != SQLITE_DONE) status = SqliteError(nullptr, rc, writing);
    }
    // A self-contained single file: no -wal beside it.
    if (status.ok()) {
      status = Exec(out, "PRAGMA journal_mode = DELETE");
      if (!status.ok())
        status = absl::Status(status.code(),
                              absl::StrCat(writing, ": ", status.message()));
    }
    // The backup copies pages as they are: a damaged buffer gives a damaged
    // copy, which is no snapshot to restore from.
    if (status.ok()) status = QuickCheck(out, path_, "nothing was exported");
  }
  sqlite3_close(out);
  if (status.ok()) {
    const int fd = open(temp.c_str(), O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) {
      status = absl::InternalError(absl::StrCat("cannot sync '", temp, "'"));
    }
    if (fd >= 0) close(fd);
  }
  if (status.ok() && rename(temp.c_str(), path.c_str()) != 0) {
    status = absl::InternalError(
        absl::StrCat("cannot rename '", temp, "' to '", path, "'"));
  }
  if (!status.ok()) unlink(temp.c_str());
  return Named(status);
}

}  // namespace phaseloop::replay_buffer::internal
