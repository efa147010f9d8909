#ifndef PHASELOOP_REPLAY_BUFFER_SQLITE_UTIL_H_
#define PHASELOOP_REPLAY_BUFFER_SQLITE_UTIL_H_

// Small RAII helpers over the SQLite C API for the replay buffer's SQLite
// backend (private to replay_buffer/). Errors become absl::Status: SQLite's
// "corrupt" and "not a database" codes map to DataLoss, "busy"/"locked" to
// Unavailable, the rest to Internal. Not thread-safe (like the connection).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace phaseloop::replay_buffer::internal {

// The status for SQLite result code `rc` on `db`, message prefixed by `what`.
absl::Status SqliteError(sqlite3* db, int rc, absl::string_view what);

// Runs one or more statements that return no rows.
absl::Status Exec(sqlite3* db, const char* sql);

// One prepared statement. Bind indexes are 1-based, column indexes 0-based.
class Statement {
 public:
  static absl::StatusOr<Statement> Prepare(sqlite3* db, const char* sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, absl::string_view text);
  Statement& BindBlob(int index, absl::string_view bytes);
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& BindNull(int index);

  // Steps once: true when a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Steps to completion (for statements that return no rows), then resets.
  absl::Status Run();
  // Clears the bindings' effect and rewinds, keeping the bindings.
  void Reset();

  int64_t Int(int column) const;
  double Double(int column) const;
  bool IsNull(int column) const;
  std::string Text(int column) const;  // text or blob bytes
 private:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE (or a deferred read transaction) on construction via
// Begin(); rolls back on destruction unless Commit() succeeded.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(sqlite3* db, bool write);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  absl::Status Commit();

 private:
  explicit Transaction(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace phaseloop::replay_buffer::internal

#endif  // PHASELOOP_REPLAY_BUFFER_SQLITE_UTIL_H_
