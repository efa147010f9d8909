#include "replay_buffer/schema.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "replay_buffer/sqlite_util.h"

namespace phaseloop::replay_buffer::internal {
namespace {

// SQLite's busy handler for a buffer another process holds locked (a
// writer's transaction): waits as sqlite3_busy_timeout(30 s) would, and
// once the wait passes a second says so on stderr, naming the file — a
// command waiting silently for 30 s looked hung. `arg` is the connection.
int WaitForLock(void* arg, int attempt) {
  constexpr int kPauseMs[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
  constexpr int kPauses = sizeof(kPauseMs) / sizeof(kPauseMs[0]);
  constexpr int kTimeoutMs = 30000;
  constexpr int kSayAfterMs = 1000;
  auto waited_before = [&](int n) {
    int total = 0;
    for (int i = 0; i < n && i < kPauses; ++i) total += kPauseMs[i];
    if (n > kPauses) total += (n - kPauses) * kPauseMs[kPauses - 1];
    return total;
  };
  const int waited = waited_before(attempt);
  if (waited >= kTimeoutMs) return 0;  // SQLITE_BUSY to the caller
  const int pause =
      std::min(kPauseMs[std::min(attempt, kPauses - 1)], kTimeoutMs - waited);
  if (waited < kSayAfterMs && waited + pause >= kSayAfterMs) {
    const char* file = sqlite3_db_filename(static_cast<sqlite3*>(arg), "main");
    std::fprintf(stderr,
                 "phaseloop: the replay buffer '%s' is locked by another "
                 "process (a writer); waiting up to %d s for it\n",
                 file != nullptr ? file : "?", kTimeoutMs / 1000);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(pause));
  return 1;
}

// Migration N takes a buffer from version N-1 to N. Append, never edit.
// Every table keeps the record's serialized proto (`record`/`header`) so no
// field is lost; the other columns exist to filter and join.
constexpr const char* kMigrations[] = {
    // 1: the first versioned schema. `decisions` keeps the columns of the
    // unversioned DecisionStore so its files are adopted as they are.
    R"sql(
CREATE TABLE modules (
  module_hash TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  split TEXT NOT NULL,
  opt_level TEXT NOT NULL,
  convention TEXT NOT NULL,
  ir_count_oz INTEGER NOT NULL,
  text_size_oz INTEGER NOT NULL,
  record BLOB NOT NULL);
CREATE INDEX modules_by_split ON modules(split);

CREATE TABLE policy_versions (
  policy_version TEXT PRIMARY KEY,
  objective TEXT NOT NULL,
  parent_version TEXT NOT NULL,
  unix_time_ms INTEGER NOT NULL,
  record BLOB NOT NULL);

CREATE TABLE deployments (
  deployment_id TEXT PRIMARY KEY,
  build_id TEXT NOT NULL,
  policy_version TEXT NOT NULL,
  service TEXT NOT NULL,
  environment TEXT NOT NULL,
  role TEXT NOT NULL,
  status TEXT NOT NULL,
  start_unix_ms INTEGER NOT NULL,
  record BLOB NOT NULL);
CREATE INDEX deployments_by_build ON deployments(build_id);

CREATE TABLE episodes (
  episode_id TEXT PRIMARY KEY,
  module_hash TEXT NOT NULL,
  action_space_version TEXT NOT NULL,
  objective TEXT NOT NULL,
  behaviour_policy TEXT NOT NULL,
  num_steps INTEGER NOT NULL,
  step_return REAL NOT NULL,
  final_ir_count INTEGER NOT NULL,
  final_text_size INTEGER NOT NULL,
  unix_time_ms INTEGER NOT NULL,
  priority REAL NOT NULL DEFAULT 1.0,
  header BLOB NOT NULL);  -- the Episode without its steps
CREATE INDEX episodes_by_module ON episodes(module_hash, behaviour_policy);

CREATE TABLE steps (
  episode_id TEXT NOT NULL REFERENCES episodes(episode_id) ON DELETE CASCADE,
  step_index INTEGER NOT NULL,
  action INTEGER NOT NULL,
  action_probability REAL NOT NULL,
  reward REAL NOT NULL,
  ir_count_after INTEGER NOT NULL,
  text_size_after INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  record BLOB NOT NULL,
  PRIMARY KEY (episode_id, step_index)) WITHOUT ROWID;

CREATE TABLE best_sequences (
  module_hash TEXT NOT NULL,
  objective TEXT NOT NULL,
  action_space_version TEXT NOT NULL,
  value INTEGER NOT NULL,
  num_actions INTEGER NOT NULL,
  episode_id TEXT NOT NULL,
  record BLOB NOT NULL,
  PRIMARY KEY (module_hash, objective, action_space_version));

CREATE TABLE final_rewards (
  reward_id TEXT PRIMARY KEY,
  source TEXT NOT NULL CHECK (source IN ('staging', 'canary')),
  module_hash TEXT NOT NULL,
  policy_version TEXT NOT NULL,
  build_id TEXT NOT NULL,
  deployment_id TEXT NOT NULL,
  episode_id TEXT NOT NULL,
  value REAL NOT NULL,
  window_start_ms INTEGER NOT NULL,
  unix_time_ms INTEGER NOT NULL,
  record BLOB NOT NULL);
CREATE INDEX final_rewards_by_episode ON final_rewards(episode_id);
CREATE INDEX final_rewards_by_module
  ON final_rewards(module_hash, policy_version);
CREATE INDEX final_rewards_by_build ON final_rewards(build_id);
CREATE INDEX final_rewards_by_deployment ON final_rewards(deployment_id);

CREATE TABLE IF NOT EXISTS decisions (
  decision_id TEXT PRIMARY KEY,
  outcome TEXT NOT NULL,
  reason TEXT NOT NULL,
  source TEXT,
  object_path TEXT,
  opt_level TEXT,
  module_hash TEXT,
  pipeline TEXT,
  policy_version TEXT,
  build_id TEXT,
  compile_time_us INTEGER,
  optimize_time_us INTEGER,
  ir_count_before INTEGER,
  ir_count_after INTEGER,
  text_size INTEGER,
  unix_time_ms INTEGER,
  record BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS decisions_by_module ON decisions(module_hash);
CREATE INDEX IF NOT EXISTS decisions_by_build ON decisions(build_id);

CREATE TABLE consumer_offsets (
  consumer_group TEXT NOT NULL,
  topic TEXT NOT NULL,
  partition INTEGER NOT NULL,
  next_offset INTEGER NOT NULL,
  PRIMARY KEY (consumer_group, topic, partition)) WITHOUT ROWID;

-- Which final rewards judge which episodes: by episode_id; by
-- (module_hash, policy_version) for the episodes that policy generated on the
-- module; for a whole build (or deployment), through the modules its
-- decisions compiled with their policy.
CREATE VIEW episode_rewards AS
SELECT r.episode_id AS episode_id, r.reward_id, r.source, r.value
  FROM final_rewards r WHERE r.episode_id <> ''
UNION
SELECT e.episode_id, r.reward_id, r.source, r.value
  FROM final_rewards r JOIN episodes e
    ON e.module_hash = r.module_hash
   AND e.behaviour_policy = 'policy:' || r.policy_version
 WHERE r.episode_id = '' AND r.module_hash <> '' AND r.policy_version <> ''
UNION
SELECT e.episode_id, r.reward_id, r.source, r.value
  FROM final_rewards r
  LEFT JOIN deployments dep
    ON r.build_id = '' AND dep.deployment_id = r.deployment_id
  JOIN decisions d ON d.build_id = COALESCE(NULLIF(r.build_id, ''),
                                            dep.build_id)
  JOIN episodes e ON e.module_hash = d.module_hash
   AND e.behaviour_policy = 'policy:' || d.policy_version
 WHERE r.episode_id = '' AND r.module_hash = '';
)sql",
    // 2: miscompiles found by staging's output check and the block list they
    // set: a (module_hash, pipeline) pair a miscompile blames is never
    // proposed again (by search or the learner). blocked_pipelines is derived
    // from miscompiles (verdict other than undefined_behaviour) on write.
    R"sql(
CREATE TABLE miscompiles (
  miscompile_id TEXT PRIMARY KEY,
  workload TEXT NOT NULL,
  build_id TEXT NOT NULL,
  policy_version TEXT NOT NULL,
  candidate TEXT NOT NULL,
  run TEXT NOT NULL,
  what TEXT NOT NULL,
  verdict TEXT NOT NULL
    CHECK (verdict IN ('miscompile', 'undefined_behaviour', 'unknown')),
  unix_time_ms INTEGER NOT NULL,
  record BLOB NOT NULL);

CREATE TABLE blocked_pipelines (
  module_hash TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  miscompile_id TEXT NOT NULL
    REFERENCES miscompiles(miscompile_id) ON DELETE CASCADE,
  unix_time_ms INTEGER NOT NULL,
  PRIMARY KEY (module_hash, pipeline)) WITHOUT ROWID;
CREATE INDEX blocked_pipelines_by_miscompile
  ON blocked_pipelines(miscompile_id);
)sql",
    // 3: canary rewards relative to the baseline, log(p95_baseline /
    // p95_this) (FinalReward.relative_value, NULL where there is none: the
    // baseline itself, staging rewards, and every row stored before this
    // version, whose records do not carry it), and the baseline they were
    // measured against; episode_rewards carries the relative value too.
    R"sql(
ALTER TABLE final_rewards ADD COLUMN relative_value REAL;
ALTER TABLE final_rewards ADD COLUMN baseline_deployment_id TEXT NOT NULL
  DEFAULT '';
CREATE INDEX final_rewards_by_window
  ON final_rewards(source, window_start_ms);

DROP VIEW episode_rewards;
CREATE VIEW episode_rewards AS
SELECT r.episode_id AS episode_id, r.reward_id, r.source, r.value,
       r.relative_value
  FROM final_rewards r WHERE r.episode_id <> ''
UNION
SELECT e.episode_id, r.reward_id, r.source, r.value, r.relative_value
  FROM final_rewards r JOIN episodes e
    ON e.module_hash = r.module_hash
   AND e.behaviour_policy = 'policy:' || r.policy_version
 WHERE r.episode_id = '' AND r.module_hash <> '' AND r.policy_version <> ''
UNION
SELECT e.episode_id, r.reward_id, r.source, r.value, r.relative_value
  FROM final_rewards r
  LEFT JOIN deployments dep
    ON r.build_id = '' AND dep.deployment_id = r.deployment_id
  JOIN decisions d ON d.build_id = COALESCE(NULLIF(r.build_id, ''),
                                            dep.build_id)
  JOIN episodes e ON e.module_hash = d.module_hash
   AND e.behaviour_policy = 'policy:' || d.policy_version
 WHERE r.episode_id = '' AND r.module_hash = '';
)sql",
    // 4: which Kafka cluster a stored offset was taken on ('' before).
    R"sql(
ALTER TABLE consumer_offsets ADD COLUMN cluster_id TEXT NOT NULL DEFAULT '';
)sql",
    // 5: staging's other causes are miscompiles' verdicts too: 'timed_out'
    // (its pairs blocked), 'build_flags' and 'bolt' (no pipeline blamed);
    // version 2's CHECK refused them, so no such result could be stored.
    // SQLite cannot alter a CHECK: both tables are made again, the block
    // list set aside first (dropping `miscompiles` under foreign_keys = ON
    // would cascade to it) and put back unchanged, but for rows whose
    // miscompile is gone (left by a hand edit with foreign keys off: they
    // block on behalf of nothing, and failed the migration).
    R"sql(
CREATE TABLE blocked_pipelines_v4 AS SELECT * FROM blocked_pipelines;
DROP TABLE blocked_pipelines;
CREATE TABLE miscompiles_v5 (
  miscompile_id TEXT PRIMARY KEY,
  workload TEXT NOT NULL,
  build_id TEXT NOT NULL,
  policy_version TEXT NOT NULL,
  candidate TEXT NOT NULL,
  run TEXT NOT NULL,
  what TEXT NOT NULL,
  verdict TEXT NOT NULL
    CHECK (verdict IN ('miscompile', 'undefined_behaviour', 'unknown',
                       'timed_out', 'build_flags', 'bolt')),
  unix_time_ms INTEGER NOT NULL,
  record BLOB NOT NULL);
INSERT INTO miscompiles_v5 SELECT * FROM miscompiles;
DROP TABLE miscompiles;
ALTER TABLE miscompiles_v5 RENAME TO miscompiles;
CREATE TABLE blocked_pipelines (
  module_hash TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  miscompile_id TEXT NOT NULL
    REFERENCES miscompiles(miscompile_id) ON DELETE CASCADE,
  unix_time_ms INTEGER NOT NULL,
  PRIMARY KEY (module_hash, pipeline)) WITHOUT ROWID;
INSERT INTO blocked_pipelines
  SELECT module_hash, pipeline, miscompile_id, unix_time_ms
    FROM blocked_pipelines_v4
   WHERE miscompile_id IN (SELECT miscompile_id FROM miscompiles);
DROP TABLE blocked_pipelines_v4;
CREATE INDEX blocked_pipelines_by_miscompile
  ON blocked_pipelines(miscompile_id);
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion,
              "one migration per schema version");

absl::StatusOr<int64_t> PragmaInt(sqlite3* db, const char* sql) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(db, sql);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  return *row ? stmt->Int(0) : 0;
}

struct FileFacts {
  int64_t application_id = 0;
  int64_t user_version = 0;
  std::set<std::string> tables;
};

// Reads without writing; the first read fails on a file that is not SQLite.
absl::StatusOr<FileFacts> ReadFacts(sqlite3* db) {
  FileFacts facts;
  absl::StatusOr<Statement> tables = Statement::Prepare(
      db, "SELECT name FROM sqlite_master WHERE type = 'table'");
  if (!tables.ok()) return tables.status();
  for (;;) {
    absl::StatusOr<bool> row = tables->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    facts.tables.insert(tables->Text(0));
  }
  absl::StatusOr<int64_t> id = PragmaInt(db, "PRAGMA application_id");
  if (!id.ok()) return id.status();
  absl::StatusOr<int64_t> version = PragmaInt(db, "PRAGMA user_version");
  if (!version.ok()) return version.status();
  facts.application_id = *id;
  facts.user_version = *version;
  return facts;
}

absl::Status CheckFacts(const std::string& path, const FileFacts& facts,
                        const OpenOptions& options) {
  const std::string untouched = " The file was not modified.";
  if (facts.application_id != 0 && facts.application_id != kApplicationId) {
    return absl::DataLossError(
        absl::StrCat("'", path,
                     "' is a SQLite database of another application "
                     "(application_id ",
                     facts.application_id,
                     "), not a phaseloop replay "
                     "buffer; pass a buffer file, or a new path to create one.",
                     untouched));
  }
  if (facts.user_version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the replay buffer '", path, "' has schema version ",
        facts.user_version, " but this phaseloop knows versions up to ",
        kSchemaVersion,
        "; use a newer phaseloop (schemas only migrate "
        "forward).",
        untouched));
  }
  if (facts.application_id == 0 && facts.user_version == 0) {
    std::set<std::string> foreign = facts.tables;
    foreign.erase("decisions");  // the unversioned DecisionStore's table
    if (!foreign.empty()) {
      return absl::DataLossError(absl::StrCat(
          "'", path,
          "' is a SQLite database that is not a phaseloop replay "
          "buffer (it has tables ",
          absl::StrJoin(foreign, ", "),
          "); pass a buffer file, or a new path to create one.", untouched));
    }
    // A command that only reads (buffer stats) made an empty database a
    // buffer, writing the whole schema into it.
    if (facts.tables.empty() && (!options.create || options.read_only)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", path,
          "' is an empty SQLite database, not a replay buffer; pass a "
          "buffer file.",
          untouched));
    }
  }
  if (options.read_only && facts.user_version < kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the replay buffer '", path, "' has schema version ",
        facts.user_version, ", older than this phaseloop's ", kSchemaVersion,
        ", and was opened read-only; open it once for writing (e.g. "
        "`phaseloop buffer stats --buffer ",
        path, "`) to upgrade it."));
  }
  return absl::OkStatus();
}

absl::Status Migrate(sqlite3* db) {
  // Current already (the common case): no write lock taken, so a command
  // that opens a buffer to read it (buffer stats) does not queue behind a
  // writer's transaction (it waited up to 30 s, then failed).
  if (absl::StatusOr<int64_t> current = PragmaInt(db, "PRAGMA user_version");
      current.ok() && *current == kSchemaVersion) {
    return absl::OkStatus();
  }
  absl::StatusOr<Transaction> txn = Transaction::Begin(db, /*write=*/true);
  if (!txn.ok()) return txn.status();
  // Re-read inside the write lock: another process may have migrated.
  absl::StatusOr<int64_t> version = PragmaInt(db, "PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("a newer phaseloop migrated the buffer to version ",
                     *version, " while it was being opened"));
  }
  if (*version == kSchemaVersion) return absl::OkStatus();
  for (int64_t v = *version; v < kSchemaVersion; ++v) {
    absl::Status status = Exec(db, kMigrations[v]);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("migration to schema version ",
                                              v + 1,
                                              " failed: ", status.message()));
    }
  }
  absl::Status status =
      Exec(db, absl::StrCat("PRAGMA user_version = ", kSchemaVersion,
                            "; PRAGMA application_id = ", kApplicationId)
                   .c_str());
  if (!status.ok()) return status;
  return txn->Commit();
}

}  // namespace

absl::StatusOr<sqlite3*> OpenDatabaseOnce(const std::string& path,
                                          const OpenOptions& options) {
  // SQLite opens "" as a private temporary database: what was stored there
  // was gone at exit, the command saying it was "added ... to ".
  if (path.empty()) {
    return absl::InvalidArgumentError(
        "the replay buffer's path is empty (an unset shell variable?); "
        "give a buffer file");
  }
  if ((!options.create || options.read_only) &&
      access(path.c_str(), F_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no replay buffer at '", path,
        "'; check the path (a writer such as `phaseloop buffer import` or "
        "`phaseloop decisions ship` creates one)"));
  }
  // An empty file is no buffer to read: SQLite would take it for a new
  // database, and a command that only reads (buffer stats) made it one.
  if (struct stat st; (!options.create || options.read_only) &&
                      stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                      st.st_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path,
        "' is an empty file, not a replay buffer; pass a buffer file (the "
        "file was not modified)"));
  }
  sqlite3* db = nullptr;
  const int flags =
      options.read_only
          ? SQLITE_OPEN_READONLY
          : SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0);
  int rc =
      sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open the replay buffer '", path, "': ", message,
        options.read_only
            ? "; pass a readable buffer file"
            : "; pass a writable path (it is created if missing)"));
  }
  sqlite3_busy_handler(db, WaitForLock, db);
  sqlite3_extended_result_codes(db, 1);
  auto fail = [&](absl::Status status) -> absl::StatusOr<sqlite3*> {
    sqlite3_close(db);
    return status;
  };
  absl::StatusOr<FileFacts> facts = ReadFacts(db);
  if (!facts.ok()) {
    if (absl::IsDataLoss(facts.status())) {
      return fail(absl::DataLossError(absl::StrCat(
          "'", path,
          "' is not a phaseloop replay buffer (not a SQLite "
          "database, or a corrupt one: ",
          facts.status().message(),
          "); pass a buffer file or a new path. The file was not modified; "
          "if it is a damaged buffer, restore it from a `phaseloop buffer "
          "export` copy.")));
    }
    return fail(
        absl::Status(facts.status().code(),
                     absl::StrCat("cannot read the replay buffer '", path,
                                  "': ", facts.status().message())));
  }
  absl::Status status = CheckFacts(path, *facts, options);
  if (!status.ok()) return fail(status);
  status = Exec(db, "PRAGMA foreign_keys = ON");
  if (status.ok() && !options.read_only) {
    status = Exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
    if (status.ok()) status = Migrate(db);
  }
  if (!status.ok()) {
    return fail(absl::Status(
        status.code(), absl::StrCat("cannot set up the replay buffer '", path,
                                    "': ", status.message())));
  }
  return db;
}

absl::StatusOr<sqlite3*> OpenDatabase(const std::string& path,
                                      const OpenOptions& options) {
  // Several processes opening one new buffer at once (ingest workers, the
  // reward engine) contend for its first locks: switching to WAL and the
  // schema migration can meet SQLITE_BUSY where SQLite's busy handler does
  // not wait (a lock upgrade it refuses to wait for, to avoid a deadlock).
  // Such a refusal is retried from the start, within the same 30 s as the
  // busy timeout; every other error is returned at once.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::chrono::milliseconds pause(5);
  for (;;) {
    absl::StatusOr<sqlite3*> db = OpenDatabaseOnce(path, options);
    if (db.ok() || !absl::IsUnavailable(db.status()) ||
        std::chrono::steady_clock::now() + pause > give_up) {
      return db;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

}  // namespace phaseloop::replay_buffer::internal
