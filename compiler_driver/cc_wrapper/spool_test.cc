// The spool's writer (no protobuf, used by the launcher) and reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"

namespace phaseloop::cc_wrapper {
namespace {

TEST(SpoolTest, LauncherRecordsParseWithTheGeneratedClass) {
  LauncherRecord record{Outcome::kPassThrough, "not_compile_only",
                        std::string(300, 'x'), "build-42", "src/a.c"};
  v1::DecisionBatch batch;
  ASSERT_TRUE(batch.ParseFromString(EncodeLauncherBatch(record)));
  ASSERT_EQ(batch.decisions_size(), 1);
  const v1::Decision& d = batch.decisions(0);
  EXPECT_EQ(d.outcome(), v1::PASS_THROUGH);
  EXPECT_EQ(d.reason(), "not_compile_only");
  EXPECT_EQ(d.detail(), std::string(300, 'x'));  // multi-byte length varint
  EXPECT_EQ(d.build_id(), "build-42");
  EXPECT_EQ(d.source(), "src/a.c");
  EXPECT_EQ(d.decision_id().size(), 32u);
  EXPECT_GT(d.unix_time_ms(), 1700000000000);
}

// A pass-through of a source named in Latin-1: the record's text is made
// valid UTF-8, or no reader could parse it.
TEST(SpoolTest, LauncherRecordsOfTextThatIsNotUtf8Parse) {
  LauncherRecord record{Outcome::kPassThrough, "special_output",
                        "output caf\xe9.o", "build-\xff"};
  v1::DecisionBatch batch;
  ASSERT_TRUE(batch.ParseFromString(EncodeLauncherBatch(record)));
  ASSERT_EQ(batch.decisions_size(), 1);
  EXPECT_EQ(batch.decisions(0).detail(), "output caf\\xe9.o");
  EXPECT_EQ(batch.decisions(0).build_id(), "build-\\xff");
}

TEST(SpoolTest, DecisionIdsDiffer) {
  EXPECT_NE(NewDecisionId(), NewDecisionId());
}

TEST(SpoolTest, WrittenFilesAreReadBackWholeAndCorruptOnesListed) {
  const std::string dir = testing::MakeTempDir() + "/nested/spool";
  std::string error;
  ASSERT_TRUE(WriteSpoolFile(
      dir, EncodeLauncherBatch({Outcome::kDisabled, "kill_switch", "", ""}),
      &error))
      << error;
  ASSERT_TRUE(WriteSpoolFile(
      dir, EncodeLauncherBatch({Outcome::kFailOpen, "config_invalid", "", ""}),
      &error));
  std::ofstream(dir + "/junk" + kSpoolSuffix) << "\xff\xff\xff not proto";
  std::ofstream(dir + "/in-progress.tmp") << "partial";
  // Cut short before its data reached the disk: parsed as an empty batch
  // and shipped as if whole.
  std::ofstream(dir + "/1700000000000-1-deadbeef" + kSpoolSuffix);

  auto contents = ReadSpool(dir);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->files.size(), 2u);
  EXPECT_EQ(contents->corrupt.size(), 2u);
  EXPECT_NE(ReadSpoolFile(dir + "/1700000000000-1-deadbeef" + kSpoolSuffix)
                .status()
                .message()
                .find("holds no decision record"),
            std::string::npos);
  // Both written within a millisecond may sort either way.
  std::set<std::string> outcomes = {
      OutcomeName(contents->files[0].batch.decisions(0).outcome()),
      OutcomeName(contents->files[1].batch.decisions(0).outcome())};
  EXPECT_EQ(outcomes, (std::set<std::string>{"disabled", "fail_open"}));
}

TEST(SpoolTest, MissingSpoolIsEmptyAndUnwritableIsAnError) {
  auto contents = ReadSpool("/nonexistent/phaseloop/spool");
  ASSERT_TRUE(contents.ok());
  EXPECT_TRUE(contents->files.empty());
  std::string error;
  EXPECT_FALSE(WriteSpoolFile("/proc/phaseloop-spool", "x", &error));
  EXPECT_NE(error.find("/proc/phaseloop-spool"), std::string::npos);
}

// Compiles that found no home directory wrote to the fallback spool: a
// command reading the default spool says so, with how to read them.
TEST(SpoolTest, AFallbackSpoolHoldingRecordsIsNoted) {
  const std::string base = testing::MakeTempDir();
  const std::string spool = base + "/spool";
  const std::string fallback = base + "/phaseloop-spool-1000";
  EXPECT_EQ(FallbackSpoolNote(spool, fallback), "");  // missing
  std::filesystem::create_directories(fallback);
  std::filesystem::permissions(fallback, std::filesystem::perms::owner_all);
  std::ofstream(fallback + "/1-2-ab.decisions.tmp") << "x";
  std::ofstream(fallback + "/1-2-cd.shipped") << "x";
  EXPECT_EQ(FallbackSpoolNote(spool, fallback), "");  // nothing unshipped
  std::ofstream(fallback + "/1-2-ef.decisions") << "x";
  const std::string note = FallbackSpoolNote(spool, fallback);
  EXPECT_NE(note.find("note: " + fallback + " holds 1 unshipped record file "),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("--spool " + fallback), std::string::npos) << note;
  std::ofstream(fallback + "/1-3-ef.decisions") << "x";
  EXPECT_NE(FallbackSpoolNote(spool, fallback).find("2 unshipped record files"),
            std::string::npos);
  EXPECT_EQ(FallbackSpoolNote(fallback, fallback), "");  // it is the spool
  // Writable by others: what it holds may be anyone's; not offered.
  std::filesystem::permissions(fallback, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  EXPECT_EQ(FallbackSpoolNote(spool, fallback), "");
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
