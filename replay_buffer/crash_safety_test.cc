// Crash safety of the replay buffer: writer processes, each consuming one
// partition of a simulated Kafka topic the way an ingest consumer does (read
// its stored offset, write the next batch with the new offset in the same
// transaction, re-delivering the previous message as at-least-once delivery
// does), are SIGKILLed at random moments and restarted, many times, two at a
// time on one buffer. Afterwards every batch a writer reported committed is
// there, every stored episode is whole, rows and offsets agree exactly, and
// nothing is duplicated.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

constexpr int kWriters = 2;  // = partitions
constexpr int kBatch = 20;   // messages per transaction
constexpr int kRounds = 250;
constexpr int64_t kMaxOffset = 40000;  // a writer stops there (idles)
const char kGroup[] = "ingest";
const char kTopic[] = "phaseloop.search.episodes";

std::string EpisodeId(int partition, int64_t offset) {
  char id[32];
  std::snprintf(id, sizeof id, "p%d-%08lld", partition,
                static_cast<long long>(offset));
  return id;
}

// The message at (partition, offset): an episode of 1-10 steps.
v1::Episode Message(int partition, int64_t offset) {
  return test_records::MakeEpisode(
      EpisodeId(partition, offset), absl::StrCat("m", offset % 5),
      1 + static_cast<int>(offset % 10), partition * 1000003ULL + offset);
}

// Runs in a forked child until killed; reports each committed batch's new
// offset on `log_fd` after Write() returned.
[[noreturn]] void WriterLoop(const std::string& path, int partition,
                             int log_fd) {
  auto store = OpenReplayStore(path);
  if (!store.ok()) {
    std::fprintf(stderr, "writer %d: %s\n", partition,
                 std::string(store.status().message()).c_str());
    _exit(3);
  }
  for (;;) {
    auto offsets = (*store)->ReadOffsets(kGroup, kTopic);
    if (!offsets.ok()) {
      std::fprintf(stderr, "writer %d: %s\n", partition,
                   std::string(offsets.status().message()).c_str());
      _exit(4);
    }
    int64_t next = 0;
    for (const ConsumerOffset& o : *offsets) {
      if (o.partition == partition) next = o.next_offset;
    }
    if (next >= kMaxOffset) pause();
    WriteBatch batch;
    for (int64_t o = std::max<int64_t>(0, next - 1); o < next + kBatch; ++o) {
      batch.episodes.push_back(Message(partition, o));
      batch.rewards.push_back(
          test_records::MakeReward("r-" + EpisodeId(partition, o), "staging",
                                   EpisodeId(partition, o), 0.5));
      batch.decisions.push_back(test_records::MakeDecision(
          "d-" + EpisodeId(partition, o), "m0", "b1"));
    }
    batch.offsets = {{kGroup, kTopic, partition, next + kBatch}};
    if (!(*store)->Write(batch).ok()) _exit(5);
    const std::string line = absl::StrCat(next + kBatch, "\n");
    if (write(log_fd, line.data(), line.size()) !=
        static_cast<ssize_t>(line.size())) {
      _exit(6);
    }
  }
}

pid_t StartWriter(const std::string& path, int partition, int log_fd) {
  const pid_t pid = fork();
  if (pid == 0) WriterLoop(path, partition, log_fd);
  return pid;
}

// The highest offset a writer reported committed.
int64_t ReportedOffset(const std::string& log_path) {
  std::istringstream lines(testing::ReadFileOrEmpty(log_path));
  int64_t highest = 0, value = 0;
  while (lines >> value) highest = std::max(highest, value);
  return highest;
}

TEST(CrashSafetyTest, KilledWritersLoseNothingCommittedAndLeaveNoPartialRows) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/buffer.db";
  std::vector<int> log_fds;
  for (int p = 0; p < kWriters; ++p) {
    log_fds.push_back(open(absl::StrCat(dir, "/log", p).c_str(),
                           O_WRONLY | O_CREAT | O_APPEND, 0644));
    ASSERT_GE(log_fds.back(), 0);
  }
  std::mt19937 rng(20261122);
  std::vector<pid_t> pids(kWriters);
  for (int p = 0; p < kWriters; ++p) pids[p] = StartWriter(path, p, log_fds[p]);
  int kills = 0;
  for (int round = 0; round < kRounds; ++round) {
    // Mostly mid-write; sometimes during open, schema creation or recovery.
    const int ms = rng() % 4 == 0 ? static_cast<int>(rng() % 3)
                                  : 5 + static_cast<int>(rng() % 60);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const int victim = static_cast<int>(rng() % kWriters);
    kill(pids[victim], SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pids[victim], &status, 0), pids[victim]);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "writer " << victim << " stopped by itself with status " << status;
    ++kills;
    pids[victim] = StartWriter(path, victim, log_fds[victim]);
  }
  for (int p = 0; p < kWriters; ++p) {
    kill(pids[p], SIGKILL);
    waitpid(pids[p], nullptr, 0);
    close(log_fds[p]);
  }

  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* check = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &check, nullptr);
  ASSERT_EQ(sqlite3_step(check), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(check, 0)),
               "ok");
  sqlite3_finalize(check);
  sqlite3_close(raw);

  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto offsets = (*store)->ReadOffsets(kGroup, kTopic);
  ASSERT_TRUE(offsets.ok());
  ASSERT_EQ(offsets->size(), static_cast<size_t>(kWriters));
  std::vector<std::string> expected_ids;
  int64_t expected_steps = 0;
  for (const ConsumerOffset& o : *offsets) {
    const int64_t reported =
        ReportedOffset(absl::StrCat(dir, "/log", o.partition));
    // No committed batch lost (a kill between commit and report is fine).
    EXPECT_GE(o.next_offset, reported) << "partition " << o.partition;
    EXPECT_GE(reported, 10 * kBatch) << "too little progress to mean much";
    EXPECT_EQ(o.next_offset % kBatch, 0);
    for (int64_t i = 0; i < o.next_offset; ++i) {
      expected_ids.push_back(EpisodeId(o.partition, i));
      expected_steps += 1 + i % 10;
    }
    std::printf("partition %d: %lld messages stored, %lld reported\n",
                o.partition, static_cast<long long>(o.next_offset),
                static_cast<long long>(reported));
  }
  std::printf("%d SIGKILLs\n", kills);
  // Rows match the offsets exactly: nothing beyond them, nothing missing.
  auto keys = (*store)->ListEpisodes({});
  ASSERT_TRUE(keys.ok());
  std::vector<std::string> ids;
  for (const EpisodeKey& k : *keys) ids.push_back(k.episode_id);
  std::sort(expected_ids.begin(), expected_ids.end());
  ASSERT_EQ(ids, expected_ids);
  // Every episode whole and exactly as sent.
  auto episodes = (*store)->ReadEpisodes(ids);
  ASSERT_TRUE(episodes.ok());
  for (const v1::Episode& e : *episodes) {
    const int partition = e.episode_id()[1] - '0';
    const int64_t offset = std::stoll(e.episode_id().substr(3));
    ASSERT_EQ(e.SerializeAsString(),
              Message(partition, offset).SerializeAsString())
        << e.episode_id();
  }
  // No duplicates in any table.
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.ok());
  const int64_t n = static_cast<int64_t>(ids.size());
  for (const auto& [table, rows] : stats->table_rows) {
    if (table == "episodes" || table == "final_rewards" ||
        table == "decisions") {
      EXPECT_EQ(rows, n) << table;
    }
    if (table == "steps") {
      EXPECT_EQ(rows, expected_steps);
    }
    if (table == "consumer_offsets") {
      EXPECT_EQ(rows, kWriters);
    }
  }
}

}  // namespace
}  // namespace phaseloop::replay_buffer
