#include "replay_buffer/sqlite_util.h"

#include <sqlite3.h>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace phaseloop::replay_buffer::internal {
namespace {

// SQLite names an error by its code ("database is locked"); the message
// adds what usually causes it and the fix.
TEST(SqliteErrorTest, SaysTheLikelyCauseAndTheFix) {
  const absl::Status busy = SqliteError(nullptr, SQLITE_BUSY, "sqlite");
  EXPECT_TRUE(absl::IsUnavailable(busy));
  EXPECT_NE(busy.message().find("another process is writing this buffer"),
            std::string::npos)
      << busy;
  const absl::Status read_only =
      SqliteError(nullptr, SQLITE_READONLY_DIRECTORY, "sqlite");
  EXPECT_TRUE(absl::IsInvalidArgument(read_only));
  EXPECT_NE(read_only.message().find("not writable by this user"),
            std::string::npos)
      << read_only;
  const absl::Status full = SqliteError(nullptr, SQLITE_FULL, "sqlite");
  EXPECT_NE(full.message().find("the disk is full"), std::string::npos)
      << full;
  // Others are SQLite's words alone.
  EXPECT_EQ(SqliteError(nullptr, SQLITE_MISMATCH, "sqlite").message(),
            std::string("sqlite: ") + sqlite3_errstr(SQLITE_MISMATCH));
}

}  // namespace
}  // namespace phaseloop::replay_buffer::internal
