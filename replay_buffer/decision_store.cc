#include "replay_buffer/decision_store.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace phaseloop::replay_buffer {
namespace {

constexpr char kSchema[] = R"sql(
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
  record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_by_module ON decisions(module_hash);
CREATE INDEX IF NOT EXISTS decisions_by_build ON decisions(build_id);
)sql";

constexpr char kUpsert[] = R"sql(
INSERT INTO decisions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
                              ?12, ?13, ?14, ?15, ?16, ?17)
ON CONFLICT(decision_id) DO UPDATE SET
  outcome = excluded.outcome, reason = excluded.reason,
  source = excluded.source, object_path = excluded.object_path,
  opt_level = excluded.opt_level, module_hash = excluded.module_hash,
  pipeline = excluded.pipeline, policy_version = excluded.policy_version,
  build_id = excluded.build_id, compile_time_us = excluded.compile_time_us,
  optimize_time_us = excluded.optimize_time_us,
  ir_count_before = excluded.ir_count_before,
  ir_count_after = excluded.ir_count_after, text_size = excluded.text_size,
  unix_time_ms = excluded.unix_time_ms, record = excluded.record
)sql";

absl::Status Exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    absl::Status status = absl::InternalError(
        absl::StrCat("sqlite: ", message ? message : "unknown error"));
    sqlite3_free(message);
    return status;
  }
  return absl::OkStatus();
}

std::string OutcomeName(v1::DecisionOutcome outcome) {
  switch (outcome) {
    case v1::OPTIMIZED: return "optimized";
    case v1::PASS_THROUGH: return "pass_through";
    case v1::FAIL_OPEN: return "fail_open";
    case v1::DISABLED: return "disabled";
    default: return "unspecified";
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<DecisionStore>> DecisionStore::Open(
    const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open the buffer '", path, "': ", message,
        "; pass a writable path (it is created if missing)"));
  }
  std::unique_ptr<DecisionStore> store(new DecisionStore(db));
  sqlite3_busy_timeout(db, 10000);
  absl::Status status = Exec(db, "PRAGMA journal_mode=WAL");
  if (status.ok()) status = Exec(db, kSchema);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffer '", path, "' is not a usable phaseloop buffer: ",
        status.message()));
  }
  return store;
}

DecisionStore::~DecisionStore() { sqlite3_close(db_); }

absl::Status DecisionStore::Upsert(const std::vector<v1::Decision>& decisions) {
  absl::Status status = Exec(db_, "BEGIN IMMEDIATE");
  if (!status.ok()) return status;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, kUpsert, -1, &stmt, nullptr) != SQLITE_OK) {
    status = absl::InternalError(absl::StrCat("sqlite: ", sqlite3_errmsg(db_)));
  }
  for (size_t i = 0; status.ok() && i < decisions.size(); ++i) {
    const v1::Decision& d = decisions[i];
    const std::string record = d.SerializeAsString();
    const std::string outcome = OutcomeName(d.outcome());
    auto text = [&](int index, const std::string& value) {
      sqlite3_bind_text(stmt, index, value.data(),
                        static_cast<int>(value.size()), SQLITE_TRANSIENT);
    };
    text(1, d.decision_id());
    text(2, outcome);
    text(3, d.reason());
    text(4, d.source());
    text(5, d.object_path());
    text(6, d.opt_level());
    text(7, d.module_hash());
    text(8, d.pipeline());
    text(9, d.policy_version());
    text(10, d.build_id());
    sqlite3_bind_int64(stmt, 11, d.compile_time_us());
    sqlite3_bind_int64(stmt, 12, d.optimize_time_us());
    sqlite3_bind_int64(stmt, 13, d.ir_count_before());
    sqlite3_bind_int64(stmt, 14, d.ir_count_after());
    sqlite3_bind_int64(stmt, 15, d.text_size());
    sqlite3_bind_int64(stmt, 16, d.unix_time_ms());
    sqlite3_bind_blob(stmt, 17, record.data(), static_cast<int>(record.size()),
                      SQLITE_TRANSIENT);
    if (sqlite3_step(stmt) != SQLITE_DONE) {
      status = absl::InternalError(
          absl::StrCat("sqlite: ", sqlite3_errmsg(db_)));
    }
    sqlite3_reset(stmt);
  }
  sqlite3_finalize(stmt);
  if (!status.ok()) {
    (void)Exec(db_, "ROLLBACK");
    return status;
  }
  return Exec(db_, "COMMIT");
}

int64_t DecisionStore::Count() {
  sqlite3_stmt* stmt = nullptr;
  int64_t count = 0;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM decisions", -1, &stmt,
                         nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    count = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  return count;
}

std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>
DecisionStore::CountByOutcomeAndReason() {
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> rows;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT outcome, reason, COUNT(*) FROM decisions "
                         "GROUP BY outcome, reason ORDER BY outcome, reason",
                         -1, &stmt, nullptr) == SQLITE_OK) {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      auto column = [&](int i) {
        const unsigned char* v = sqlite3_column_text(stmt, i);
        return v ? std::string(reinterpret_cast<const char*>(v)) : "";
      };
      rows.push_back({{column(0), column(1)}, sqlite3_column_int64(stmt, 2)});
    }
  }
  sqlite3_finalize(stmt);
  return rows;
}

}  // namespace phaseloop::replay_buffer
