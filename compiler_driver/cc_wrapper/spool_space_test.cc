// The spool's cap: the oldest shipped files make room; unshipped records
// are never deleted, and a batch that does not fit is dropped and counted.
#include "compiler_driver/cc_wrapper/spool_space.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"

namespace phaseloop::cc_wrapper {
namespace {

constexpr int64_t kBlock = 4096;

bool Write(const std::string& dir, int64_t max_size, int records = 1) {
  std::string error;
  return WriteSpoolFile(
      dir, EncodeLauncherBatch({Outcome::kPassThrough, "linking", "", ""}),
      &error, {records, max_size});
}

std::vector<std::string> Paths(const std::string& dir, bool with_shipped) {
  std::vector<std::string> paths;
  auto contents = ReadSpool(dir, with_shipped);
  EXPECT_TRUE(contents.ok());
  for (const SpoolFile& f : contents->files) paths.push_back(f.path);
  return paths;
}

TEST(SpoolSpaceTest, SizesParseLikeCcache) {
  int64_t bytes = -1;
  EXPECT_TRUE(ParseSize("64Mi", &bytes));
  EXPECT_EQ(bytes, int64_t{64} << 20);
  EXPECT_TRUE(ParseSize("64MiB", &bytes));
  EXPECT_EQ(bytes, int64_t{64} << 20);
  EXPECT_TRUE(ParseSize("500M", &bytes));
  EXPECT_EQ(bytes, 500000000);
  EXPECT_TRUE(ParseSize("1G", &bytes));
  EXPECT_EQ(bytes, 1000000000);
  EXPECT_TRUE(ParseSize("4096", &bytes));
  EXPECT_EQ(bytes, 4096);
  EXPECT_TRUE(ParseSize("0", &bytes));
  EXPECT_EQ(bytes, 0);
  for (const char* bad : {"", "M", "-1", "12X", "1.5G", "64 Mi"}) {
    EXPECT_FALSE(ParseSize(bad, &bytes)) << bad;
  }
  EXPECT_EQ(SpoolBytes(1), kBlock);
  EXPECT_EQ(SpoolBytes(4097), 2 * kBlock);
}

TEST(SpoolSpaceTest, FullOfUnshippedRecordsDropsNewOnesAndCountsThem) {
  const std::string dir = testing::MakeTempDir() + "/spool";
  const int64_t cap = 3 * kBlock;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Write(dir, cap));
  EXPECT_FALSE(Write(dir, cap, /*records=*/2));
  EXPECT_FALSE(Write(dir, cap));
  // Nothing already spooled was deleted; the three dropped are counted.
  EXPECT_EQ(Paths(dir, false).size(), 3u);
  SpoolCounters c;
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.dropped_records, 3);
  EXPECT_EQ(c.bytes, 3 * kBlock);
  EXPECT_EQ(c.shipped_bytes, 0);
  std::string error;
  EXPECT_FALSE(WriteSpoolFile(dir, "x", &error, {1, cap}));
  EXPECT_NE(error.find("full of unshipped records"), std::string::npos)
      << error;
  EXPECT_NE(error.find(dir), std::string::npos);
}

// A disk full, a directory without permission: records the wrapper could
// not write were lost with no word (phaseloop stats said 0 dropped).
TEST(SpoolSpaceTest, RecordsThatCouldNotBeWrittenAreCounted) {
  const std::string dir = testing::MakeTempDir() + "/spool";
  ASSERT_TRUE(Write(dir, 0));
  std::string error;
  EXPECT_FALSE(WriteWithinCap(
      dir, 100, 3, 0, [] { return false; }, &error));
  SpoolCounters c;
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.failed_records, 3);
  EXPECT_EQ(c.dropped_records, 0);
  EXPECT_EQ(c.bytes, kBlock);  // the failed file takes no room

  // A counters line from before failed_records counts it 0.
  const std::string old = testing::MakeTempDir() + "/spool";
  ASSERT_TRUE(Write(old, 0));
  {
    std::ofstream(old + "/" + kCountersFile, std::ios::trunc)
        << "phaseloop-spool-counters-v1 4096 0 2 1\n";
  }
  ASSERT_TRUE(ReadSpoolCounters(old, &c));
  EXPECT_EQ(c.dropped_records, 2);
  EXPECT_EQ(c.evicted_files, 1);
  EXPECT_EQ(c.failed_records, 0);

  // No directory to write to at all (HOME unset, /tmp's taken): an error
  // saying so, never a file at the filesystem's root.
  EXPECT_FALSE(WriteSpoolFile("", "x", &error, {1, 0}));
  EXPECT_NE(error.find("no spool directory"), std::string::npos) << error;
}

TEST(SpoolSpaceTest, OldestShippedFilesMakeRoomUnshippedNeverDo) {
  const std::string dir = testing::MakeTempDir() + "/spool";
  const int64_t cap = 10 * kBlock;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(Write(dir, cap));
  std::vector<std::string> shipped = Paths(dir, false);
  MarkShipped(dir, shipped);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Write(dir, cap));
  std::vector<std::string> unshipped = Paths(dir, false);
  ASSERT_EQ(unshipped.size(), 4u);
  SpoolCounters c;
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.bytes, 10 * kBlock);
  EXPECT_EQ(c.shipped_bytes, 6 * kBlock);

  // Full: the next write deletes the oldest shipped files down to 90 % of
  // the cap (9 blocks with the new one: two shipped files go).
  ASSERT_TRUE(Write(dir, cap));
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.evicted_files, 2);
  EXPECT_EQ(c.bytes, 9 * kBlock);
  EXPECT_EQ(c.dropped_records, 0);
  std::vector<std::string> all = Paths(dir, true);
  for (size_t i = 0; i < 2; ++i) {
    const std::string gone =
        shipped[i].substr(0, shipped[i].size() - 10) + kShippedSuffix;
    EXPECT_EQ(std::count(all.begin(), all.end(), gone), 0) << gone;
  }
  for (const std::string& path : unshipped) {
    EXPECT_EQ(std::count(all.begin(), all.end(), path), 1) << path;
  }

  // Shipped files run out: the rest of the unshipped stay, new ones drop.
  for (int i = 0; i < 8; ++i) Write(dir, cap);
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.shipped_bytes, 0);
  EXPECT_LE(c.bytes, cap);
  EXPECT_GT(c.dropped_records, 0);
  EXPECT_EQ(Paths(dir, false).size() + c.dropped_records, 4u + 1 + 8);
}

// Age does not matter: an old unshipped record outlives newer shipped ones.
TEST(SpoolSpaceTest, OldUnshippedRecordsOutliveNewerShippedOnes) {
  const std::string dir = testing::MakeTempDir() + "/spool";
  const int64_t cap = 4 * kBlock;
  ASSERT_TRUE(Write(dir, cap));
  ASSERT_TRUE(Write(dir, cap));
  const std::vector<std::string> old_unshipped = Paths(dir, false);
  ASSERT_TRUE(Write(dir, cap));
  ASSERT_TRUE(Write(dir, cap));
  std::vector<std::string> newer;
  for (const std::string& path : Paths(dir, false)) {
    if (path != old_unshipped[0] && path != old_unshipped[1]) {
      newer.push_back(path);
    }
  }
  MarkShipped(dir, newer);
  ASSERT_TRUE(Write(dir, cap));
  std::vector<std::string> unshipped = Paths(dir, false);
  for (const std::string& path : old_unshipped) {
    EXPECT_EQ(std::count(unshipped.begin(), unshipped.end(), path), 1) << path;
  }
  SpoolCounters c;
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.evicted_files, 2);
  EXPECT_EQ(c.shipped_bytes, 0);
  EXPECT_EQ(unshipped.size(), 3u);
}

TEST(SpoolSpaceTest, NoCapAndASpoolWithoutCountersAreMeasured) {
  const std::string dir = testing::MakeTempDir() + "/spool";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Write(dir, /*max_size=*/0));
  // An older phaseloop's spool had no counters file: measured once.
  ASSERT_EQ(unlink((dir + "/" + kCountersFile).c_str()), 0);
  ASSERT_TRUE(Write(dir, 4 * kBlock));
  SpoolCounters c;
  ASSERT_TRUE(ReadSpoolCounters(dir, &c));
  EXPECT_EQ(c.bytes, 4 * kBlock);
  EXPECT_FALSE(Write(dir, 4 * kBlock));
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
