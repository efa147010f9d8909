#include "common/kafka/lost_records_log.h"

#include <string>

#include "common/files/atomic_file.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

LostRecordsEntry Entry(const std::string& topic, int64_t first, int64_t last) {
  LostRecordsEntry entry;
  entry.lost = {topic, 3, first, last};
  entry.group = "group \"g\"\\1";
  entry.consumer = "buffer ingest";
  entry.time_ms = 1714564800123;
  return entry;
}

TEST(LostRecordsLogTest, LinesNameEverythingAndReadBack) {
  const std::string line = LostRecordsLine(Entry("phaseloop.sli", 10, 19));
  EXPECT_EQ(
      line,
      "{\"time\":\"2024-05-01T12:00:00.123Z\",\"time_ms\":1714564800123,"
      "\"topic\":\"phaseloop.sli\",\"partition\":3,\"first_offset\":10,"
      "\"last_offset\":19,\"count\":10,\"group\":\"group \\\"g\\\"\\\\1\","
      "\"consumer\":\"buffer ingest\"}\n");
  const std::string path =
      phaseloop::testing::MakeTempDir() + "/state/lost-records.jsonl";
  ASSERT_TRUE(AppendLostRecords(path, Entry("a", 0, 4)).ok());
  ASSERT_TRUE(AppendLostRecords(path, Entry("b", 5, 5)).ok());
  ASSERT_TRUE(files::AppendDurably(path, "{\"time\":\"torn").ok());
  auto entries = ReadLostRecordsLog(path);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].lost.topic, "a");
  EXPECT_EQ((*entries)[0].lost.count(), 5);
  EXPECT_EQ((*entries)[0].group, "group \"g\"\\1");
  EXPECT_EQ((*entries)[1].lost.topic, "b");
  EXPECT_EQ((*entries)[1].lost.partition, 3);
  EXPECT_EQ((*entries)[1].lost.first_offset, 5);
  EXPECT_EQ((*entries)[1].time_ms, 1714564800123);
  EXPECT_TRUE(absl::IsNotFound(ReadLostRecordsLog(path + ".none").status()));
}

TEST(LostRecordsLogTest, StateDirFollowsTheEnvironment) {
  setenv("PHASELOOP_STATE_DIR", "/srv/pl", 1);
  EXPECT_EQ(DefaultStateDir(), "/srv/pl");
  unsetenv("PHASELOOP_STATE_DIR");
  setenv("XDG_STATE_HOME", "/x", 1);
  EXPECT_EQ(DefaultStateDir(), "/x/phaseloop");
  unsetenv("XDG_STATE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultStateDir(), "/home/u/.local/state/phaseloop");
  EXPECT_EQ(LostRecordsLogPath("/s"), "/s/lost-records.jsonl");
}

}  // namespace
}  // namespace phaseloop::kafka
