#include "replay_buffer/sqlite_util.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace phaseloop::replay_buffer::internal {

namespace {

// What usually causes an error SQLite names only by its code, and the fix.
absl::string_view LikelyCause(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return " (another process is writing this buffer, e.g. `phaseloop "
             "rewards run`, `buffer ingest` or a loop; wait for it or stop "
             "it, then run again)";
    case SQLITE_READONLY:
      return " (the buffer file, or its directory, is not writable by this "
             "user: SQLite writes its -wal and -shm files beside the buffer; "
             "fix the permissions or copy the buffer to a writable "
             "directory)";
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return " (its directory is missing or not writable, or the file is not "
             "readable by this user)";
    case SQLITE_FULL:
      return " (the disk is full: free space, then run again; nothing "
             "already stored is lost)";
    default:
      return "";
  }
}

}  // namespace

absl::Status SqliteError(sqlite3* db, int rc, absl::string_view what) {
  const std::string message =
      absl::StrCat(what, ": ", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                   LikelyCause(rc));
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) return SqliteError(db, rc, "sqlite");
  return absl::OkStatus();
}

absl::StatusOr<Statement> Statement::Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(db, rc, "sqlite prepare");
  }
  return Statement(db, stmt);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int index, absl::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindBlob(int index, absl::string_view bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, "sqlite");
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row;
  do {
    row = Step();
  } while (row.ok() && *row);
  Reset();
  return row.status();
}

void Statement::Reset() { sqlite3_reset(stmt_); }

int64_t Statement::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::Double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string Statement::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  return data ? std::string(static_cast<const char*>(data), size)
              : std::string();
}

absl::StatusOr<Transaction> Transaction::Begin(sqlite3* db, bool write) {
  absl::Status status = Exec(db, write ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!status.ok()) return status;
  return Transaction(db);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)Exec(db_, "ROLLBACK");
}

absl::Status Transaction::Commit() {
  absl::Status status = Exec(db_, "COMMIT");
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace phaseloop::replay_buffer::internal
