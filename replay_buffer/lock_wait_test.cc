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

// Another connection's write transaction on `path`, held until Release.
class WriteLock {
 public:
  explicit WriteLock(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  ~WriteLock() { Release(); }
  void Release() {
    if (db_ == nullptr) return;
    EXPECT_EQ(sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
};

// stderr into a pipe while it lives; Read takes what was written so far,
// waiting up to `wait_ms` for the first byte.
class StderrPipe {
 public:
  StderrPipe() {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    read_fd_ = fds[0];
    saved_ = dup(2);
    dup2(fds[1], 2);
    close(fds[1]);
  }
  ~StderrPipe() {
    Restore();
    close(read_fd_);
  }
  void Restore() {
    if (saved_ < 0) return;
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::string Read(int wait_ms) {
    std::string said;
    char buffer[512];
    pollfd readable{read_fd_, POLLIN, 0};
    while (poll(&readable, 1, said.empty() ? wait_ms : 0) > 0) {
      const ssize_t n = read(read_fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      said.append(buffer, static_cast<size_t>(n));
    }
    return said;
  }

 private:
  int read_fd_ = -1;
  int saved_ = -1;
};

WriteBatch OneEpisode() {
  WriteBatch batch;
  batch.episodes.push_back(test_records::MakeEpisode("e1", "m1", 3, 1));
  return batch;
}

TEST(LockWaitTest, AWriterWaitingForAnotherWritersLockSaysSoThenWrites) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  ASSERT_TRUE(OpenReplayStore(path).ok());
  WriteLock other(path);
  StderrPipe stderr_pipe;
  absl::Status written = absl::UnknownError("not run");
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    auto store = OpenReplayStore(path);
    written = store.ok() ? (*store)->Write(OneEpisode()) : store.status();
    writer_done = true;
  });
  // Held until the waiting writer has said so (not for a fixed time: a
  // loaded machine's sleeps run long).
  std::string said;
  while (said.find("waiting up to 30 s") == std::string::npos && !writer_done) {
    said += stderr_pipe.Read(100);
  }
  other.Release();
  writer.join();
  stderr_pipe.Restore();
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
    ASSERT_TRUE((*store)->Write(OneEpisode()).ok());
  }
  WriteLock other(path);
  StderrPipe stderr_pipe;
  auto store = OpenReplayStore(path);
  absl::Status stats = store.ok() ? (*store)->Stats().status() : store.status();
  stderr_pipe.Restore();
  const std::string said = stderr_pipe.Read(0);
  EXPECT_TRUE(stats.ok()) << stats;
  EXPECT_EQ(said.find("is locked"), std::string::npos) << said;
}

}  // namespace
}  // namespace phaseloop::replay_buffer
