// A writer that finds the buffer locked by another process's transaction
// waits for it (up to 30 s, as before), and says so on stderr once the wait
// passes a second: a command waiting silently looked hung.
#include <gtest/gtest.h>
#include <poll.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

TEST(LockWaitTest, AWriterWaitingForAnotherWritersLockSaysSoThenWrites) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  ASSERT_TRUE(OpenReplayStore(path).ok());
  // Another writer's transaction (another connection holds the write lock).
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int saved_stderr = dup(2);
  dup2(pipe_fds[1], 2);
  close(pipe_fds[1]);
  absl::Status written = absl::UnknownError("not run");
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    auto store = OpenReplayStore(path);
    if (!store.ok()) {
      written = store.status();
      writer_done = true;
      return;
    }
    WriteBatch batch;
    batch.episodes.push_back(test_records::MakeEpisode("e1", "m1", 3, 1));
    written = (*store)->Write(batch);
    writer_done = true;
  });
  // Held until the waiting writer has said so (not for a fixed time: a
  // loaded machine's sleeps run long).
  std::string said;
  char buffer[512];
  while (said.find("waiting up to 30 s") == std::string::npos && !writer_done) {
    pollfd readable{pipe_fds[0], POLLIN, 0};
    if (poll(&readable, 1, 100) <= 0) continue;
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    said.append(buffer, static_cast<size_t>(n));
  }
  EXPECT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr),
            SQLITE_OK);
  writer.join();
  dup2(saved_stderr, 2);
  close(saved_stderr);
  close(pipe_fds[0]);
  sqlite3_close(other);
  EXPECT_NE(said.find("buffer.db' is locked by another process"),
            std::string::npos)
      << said;
  EXPECT_TRUE(written.ok()) << written;
  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok());
  auto keys = (*store)->ListEpisodes({});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), 1u);
}

// Opening a buffer at the current schema takes no write lock: a command
// that only reads (buffer stats) did not wait behind a writer's
// transaction (it waited up to 30 s, then failed).
TEST(LockWaitTest, AReaderDoesNotWaitForAWriter) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  {
    auto store = OpenReplayStore(path);
    ASSERT_TRUE(store.ok());
    WriteBatch batch;
    batch.episodes.push_back(test_records::MakeEpisode("e1", "m1", 3, 1));
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int saved_stderr = dup(2);
  dup2(pipe_fds[1], 2);
  close(pipe_fds[1]);
  auto store = OpenReplayStore(path);
  absl::Status stats = store.ok() ? (*store)->Stats().status() : store.status();
  dup2(saved_stderr, 2);
  close(saved_stderr);
  std::string said;
  char buffer[512];
  pollfd readable{pipe_fds[0], POLLIN, 0};
  while (poll(&readable, 1, 0) > 0) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    said.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(stats.ok()) << stats;
  EXPECT_EQ(said.find("is locked"), std::string::npos) << said;
}

}  // namespace
}  // namespace phaseloop::replay_buffer
