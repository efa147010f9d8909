#include "compiler_driver/cc_wrapper/decisions_command.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"

namespace phaseloop::cc_wrapper {
namespace {

void Spool(const std::string& dir, Outcome outcome, const std::string& reason) {
  std::string error;
  ASSERT_TRUE(WriteSpoolFile(
      dir, EncodeLauncherBatch({outcome, reason, "", "b1"}), &error))
      << error;
}

TEST(DecisionsCommandTest, ShipMovesRecordsOnceAndStatsCountThem) {
  const std::string dir = testing::MakeTempDir();
  const std::string spool = dir + "/spool", buffer = dir + "/buffer.db";
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  Spool(spool, Outcome::kFailOpen, "optimizer_crashed");

  std::ostringstream out, err;
  ASSERT_EQ(RunStats({spool, "", true}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"records\": 3"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"not_compile_only\": 2"), std::string::npos);
  EXPECT_NE(out.str().find("\"fail_open\": 1"), std::string::npos);
  EXPECT_NE(out.str().find("\"optimized_time_us\": {\"compile\": {\"p50\": 0"),
            std::string::npos);

  out.str("");
  ASSERT_EQ(RunShip({spool, buffer}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("shipped 3 decisions"), std::string::npos);
  auto left = ReadSpool(spool);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->files.empty());

  // Shipped records are counted from the buffer; nothing twice.
  Spool(spool, Outcome::kDisabled, "kill_switch");
  out.str("");
  ASSERT_EQ(RunStats({spool, buffer, false}, out, err), 0);
  EXPECT_NE(out.str().find("4 records"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("optimizer_crashed"), std::string::npos);
}

// Optimised decisions are counted by the policy that made them (which
// artifact built the binaries).
TEST(DecisionsCommandTest, StatsCountOptimizedDecisionsByPolicyVersion) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  v1::DecisionBatch batch;
  for (const char* version : {"aaaa", "aaaa", "bbbb"}) {
    v1::Decision* d = batch.add_decisions();
    d->set_decision_id(NewDecisionId());
    d->set_outcome(v1::OPTIMIZED);
    d->set_policy_version(version);
  }
  std::string error;
  ASSERT_TRUE(WriteSpoolFile(spool, batch.SerializeAsString(), &error))
      << error;
  Spool(spool, Outcome::kPassThrough, "preprocess_only");
  std::ostringstream out, err;
  ASSERT_EQ(RunStats({spool, "", true}, out, err), 0) << err.str();
  EXPECT_NE(
      out.str().find("\"optimized_by_policy\": {\"aaaa\": 2, \"bbbb\": 1}"),
      std::string::npos)
      << out.str();
  out.str("");
  ASSERT_EQ(RunStats({spool, "", false}, out, err), 0);
  EXPECT_NE(out.str().find("by policy_version"), std::string::npos)
      << out.str();
}

TEST(DecisionsCommandTest, BadBufferIsBadInputAndTheSpoolIsKept) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  Spool(spool, Outcome::kPassThrough, "preprocess_only");
  std::ostringstream out, err;
  EXPECT_EQ(RunShip({spool, "/nonexistent/dir/buffer.db"}, out, err), 2);
  EXPECT_NE(err.str().find("/nonexistent/dir/buffer.db"), std::string::npos);
  auto left = ReadSpool(spool);
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->files.size(), 1u);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
