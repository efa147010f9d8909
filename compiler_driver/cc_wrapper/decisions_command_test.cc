#include "compiler_driver/cc_wrapper/decisions_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "nlohmann/json.hpp"

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

  // A mistyped --buffer is an error naming it, and creates nothing.
  const std::string typo = dir + "/bufer.db";
  std::ostringstream typo_out, typo_err;
  EXPECT_EQ(RunStats({spool, typo, false}, typo_out, typo_err), 2);
  EXPECT_NE(typo_err.str().find("--buffer: no replay buffer at '" + typo),
            std::string::npos)
      << typo_err.str();
  EXPECT_FALSE(std::filesystem::exists(typo));
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

// A spool file copied (or two concatenated) holds records already
// counted: each decision_id counts once, and the output says so.
TEST(DecisionsCommandTest, StatsCountARecordMetTwiceOnce) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  v1::DecisionBatch batch;
  for (int i = 0; i < 2; ++i) {
    v1::Decision* d = batch.add_decisions();
    d->set_decision_id(NewDecisionId());
    d->set_outcome(v1::OPTIMIZED);
    d->set_policy_version("aaaa");
  }
  std::string error;
  for (int copy = 0; copy < 2; ++copy) {
    ASSERT_TRUE(WriteSpoolFile(spool, batch.SerializeAsString(), &error))
        << error;
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunStats({spool, "", true}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"records\": 2"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"duplicate_records\": 2"), std::string::npos)
      << out.str();
  out.str("");
  ASSERT_EQ(RunStats({spool, "", false}, out, err), 0);
  EXPECT_NE(out.str().find("2 records met twice"), std::string::npos)
      << out.str();
}

// What one phaseloop-cc-opt invocation with three sources records: one
// optimized by topk (-Oz's object measured), one by single mode (not
// measured), one where the size policy did not apply (-O2).
v1::DecisionBatch ThreeSourceBatch() {
  v1::DecisionBatch batch;
  auto add = [&](v1::DecisionOutcome outcome, const char* reason) {
    v1::Decision* d = batch.add_decisions();
    d->set_decision_id(NewDecisionId());
    d->set_outcome(outcome);
    d->set_reason(reason);
    d->set_policy_version("aaaa");
    d->set_unix_time_ms(UnixTimeMs());
    d->set_compile_time_us(50000);  // the invocation's, on each record
    d->set_optimize_time_us(10000);
    d->set_policy_time_us(2000);
    return d;
  };
  v1::Decision* topk = add(v1::OPTIMIZED, "");
  topk->set_source("crc32.c");
  topk->set_alloc_size(10000);
  topk->set_oz_alloc_size(10787);
  topk->set_outcome_cache("miss");
  v1::MeasuredPipeline* measured = topk->add_topk_measured();
  measured->set_pipeline("default<Oz>");
  measured->set_value(10787);
  add(v1::OPTIMIZED, "")->set_alloc_size(5000);
  // Under -flto=thin: bitcode, no size measured.
  add(v1::POLICY_NOT_APPLIED, "not_applicable_at_level")->set_lto("thin");
  return batch;
}

TEST(DecisionsCommandTest, StatsSeparateNotAppliedAndShowBytesAndTime) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  std::string error;
  ASSERT_TRUE(WriteSpoolFile(spool, ThreeSourceBatch().SerializeAsString(),
                             &error, {3, kDefaultSpoolMaxSize}))
      << error;
  Spool(spool, Outcome::kFailOpen, "policy_refused");
  std::ostringstream out, err;
  ASSERT_EQ(RunStats({spool, "", true}, out, err), 0) << err.str();
  const std::string json = out.str();
  EXPECT_NE(json.find("\"by_outcome\": {\"fail_open\": 1, \"optimized\": 2, "
                      "\"policy_not_applied\": 1}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"policy_not_applied\": {\"not_applicable_at_level\": "
                      "1}"),
            std::string::npos)
      << json;
  // Bytes: only the topk object has -Oz to compare with.
  EXPECT_NE(json.find("\"bytes\": {\"measured_vs_oz\": 1, \"oz_alloc_size\": "
                      "10787, \"alloc_size\": 10000, \"saved\": 787, "
                      "\"larger_than_oz\": 0, \"not_measured\": 1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"outcome_cache\": {\"hits\": 0, \"misses\": 1}"),
            std::string::npos)
      << json;
  // Time: the invocation once (not once per source), the optimiser's and
  // the policy's per record.
  EXPECT_NE(json.find("\"time_us\": {\"invocations\": 1, \"wrapper\": 50000, "
                      "\"optimize\": 30000, \"policy\": 6000}"),
            std::string::npos)
      << json;

  out.str("");
  ASSERT_EQ(RunStats({spool, "", false}, out, err), 0) << err.str();
  const std::string table = out.str();
  for (const char* expected : {"policy_not_applied", "not_applicable_at_level",
                               "saved 787 (7.3 %)", "not measured", "1 objects",
                               "optimiser (policy, passes, codegen) "
                               "30.0 ms (60.0 %)",
                               "dropped",
                               "topk outcome cache: 0 choices from the cache "
                               "(one pipeline each), 1 measured and stored"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << expected << "\n"
                                                       << table;
  }
}

TEST(DecisionsCommandTest, ShowPrintsEveryRecordReadably) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  std::string error;
  ASSERT_TRUE(WriteSpoolFile(spool, ThreeSourceBatch().SerializeAsString(),
                             &error, {3, kDefaultSpoolMaxSize}));
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  std::ostringstream out, err;
  ASSERT_EQ(RunShow({{}, spool, false}, out, err), 0) << err.str();
  const std::string text = out.str();
  size_t blocks = 0;
  for (size_t at = text.find("decision "); at != std::string::npos;
       at = text.find("decision ", at + 1)) {
    ++blocks;
  }
  EXPECT_EQ(blocks, 4u) << text;
  for (const char* expected :
       {"outcome        optimized", "source         crc32.c",
        "-Oz allocated 10787 B, saved 787 B", "-Oz not measured",
        "topk measured  10787  default<Oz>",
        "policy_not_applied (not_applicable_at_level)",
        "pass_through (not_compile_only)", "not shipped yet", "time  ",
        "lto            thin (LTO bitcode; the pre-link pipeline ran)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n"
                                                      << text;
  }

  // --json: one object per record, numbers as numbers; a file by name.
  auto contents = ReadSpool(spool);
  ASSERT_TRUE(contents.ok());
  std::string batch_file;
  for (const SpoolFile& f : contents->files) {
    if (f.batch.decisions_size() == 3) batch_file = f.path;
  }
  out.str("");
  ASSERT_EQ(RunShow({{batch_file}, "", true}, out, err), 0) << err.str();
  std::istringstream lines(out.str());
  std::string line;
  int records = 0;
  while (std::getline(lines, line)) {
    ++records;
    if (records == 1) {
      EXPECT_NE(line.find("\"outcome\":\"optimized\""), std::string::npos)
          << line;
      EXPECT_NE(line.find("\"oz_alloc_size\":10787"), std::string::npos)
          << line;
      EXPECT_NE(line.find("\"shipped\":false"), std::string::npos) << line;
      // Repeated messages too (topk_measured came out as []).
      EXPECT_NE(line.find("\"topk_measured\":[{"), std::string::npos) << line;
      EXPECT_NE(line.find("10787"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(records, 3);

  out.str("");
  err.str("");
  EXPECT_EQ(RunShow({{spool + "/nope.decisions"}, "", false}, out, err), 2);
  EXPECT_NE(err.str().find("nope.decisions"), std::string::npos) << err.str();
  // A bad file beside a good one: the good one is shown, the bad named.
  out.str("");
  err.str("");
  EXPECT_EQ(
      RunShow({{batch_file, spool + "/nope.decisions"}, "", true}, out, err),
      2);
  const std::string shown = out.str();
  EXPECT_EQ(std::count(shown.begin(), shown.end(), '\n'), 3) << shown;
  EXPECT_NE(err.str().find("nope.decisions"), std::string::npos) << err.str();
}

// One spool file with a record the buffer refuses (no decision_id) held
// back every other file at every run, and was not named: the rest ship, it
// stays, named with the reason.
TEST(DecisionsCommandTest, OneBadFileDoesNotHoldBackTheRest) {
  const std::string dir = testing::MakeTempDir();
  const std::string spool = dir + "/spool", buffer = dir + "/buffer.db";
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  Spool(spool, Outcome::kFailOpen, "optimizer_crashed");
  v1::DecisionBatch bad;
  bad.add_decisions()->set_outcome(v1::OPTIMIZED);  // no decision_id
  std::string error;
  ASSERT_TRUE(WriteSpoolFile(spool, bad.SerializeAsString(), &error, {1, 0}))
      << error;
  std::ostringstream out, err;
  EXPECT_EQ(RunShip({spool, buffer}, out, err), 1);
  EXPECT_NE(out.str().find("shipped 2 decisions from 2 spool files"),
            std::string::npos)
      << out.str() << err.str();
  EXPECT_NE(err.str().find("1 of 3 spool files were not stored"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("decision_id"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find(".decisions: "), std::string::npos) << err.str();
  // The bad file stays unshipped; a second run ships nothing new.
  out.str("");
  err.str("");
  EXPECT_EQ(RunShip({spool, buffer}, out, err), 1);
  EXPECT_NE(out.str().find("shipped 0 decisions"), std::string::npos);
}

// An unreadable spool file (damaged on disk) holds records that were not
// delivered: the ship said so in a warning and exited 0, so a CI step
// passed. It exits 1 naming the file, which stays, and the rest ship.
TEST(DecisionsCommandTest, AnUnreadableSpoolFileFailsTheShip) {
  const std::string dir = testing::MakeTempDir();
  const std::string spool = dir + "/spool", buffer = dir + "/buffer.db";
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  const std::string damaged = spool + "/1-2-3.decisions";
  std::ofstream(damaged) << "\xff\xff\xff not a batch";
  std::ostringstream out, err;
  EXPECT_EQ(RunShip({spool, buffer}, out, err), 1) << err.str();
  EXPECT_NE(out.str().find("shipped 1 decisions from 1 spool files"),
            std::string::npos)
      << out.str();
  EXPECT_NE(err.str().find("1 spool files in " + spool + " are unreadable"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("  " + damaged + "\n"), std::string::npos)
      << err.str();
  EXPECT_TRUE(std::filesystem::exists(damaged));
  out.str("");
  err.str("");
  EXPECT_EQ(RunShip({spool, buffer}, out, err), 1);  // until it is moved
  std::filesystem::remove(damaged);
  EXPECT_EQ(RunShip({spool, buffer}, out, err), 0) << err.str();
}

// A mistyped --spool read as an empty spool without a word ("shipped 0
// decisions", exit 0, in every CI run). A spool not made yet is legitimate
// (a build whose every action was cached compiled nothing): it is said, and
// read as empty; a path that is not a directory is bad input.
TEST(DecisionsCommandTest, AMissingSpoolDirectoryIsSaid) {
  const std::string dir = testing::MakeTempDir();
  const std::string typo = dir + "/spoool", buffer = dir + "/buffer.db";
  std::ostringstream out, err;
  EXPECT_EQ(RunShip({typo, buffer}, out, err), 0) << err.str();
  EXPECT_NE(err.str().find("--spool " + typo + ": no such directory yet"),
            std::string::npos)
      << err.str();
  EXPECT_NE(out.str().find("shipped 0 decisions"), std::string::npos);
  err.str("");
  EXPECT_EQ(RunStats({typo, "", false}, out, err), 0);
  EXPECT_NE(err.str().find("no such directory yet"), std::string::npos);
  const std::string file = dir + "/a-file";
  std::ofstream(file) << "x";
  err.str("");
  EXPECT_EQ(RunShip({file, buffer}, out, err), 2);
  EXPECT_NE(err.str().find("not a directory"), std::string::npos) << err.str();
  // A cap the wrapper cannot read is ignored there silently: said here.
  setenv("PHASELOOP_SPOOL_MAX_SIZE", "8kb", 1);
  err.str("");
  const std::string spool = dir + "/spool";
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  EXPECT_EQ(RunStats({spool, "", false}, out, err), 0) << err.str();
  unsetenv("PHASELOOP_SPOOL_MAX_SIZE");
  EXPECT_NE(err.str().find("PHASELOOP_SPOOL_MAX_SIZE='8kb' is not a size"),
            std::string::npos)
      << err.str();
  // --zero makes the spool's zero point before any compile: allowed.
  // A bootstrap list librdkafka would retry for ever: bad input at once.
  err.str("");
  ShipFlags garbage;
  garbage.spool = typo;
  garbage.kafka = "garbage::::";
  EXPECT_EQ(RunShip(garbage, out, err), 2);
  EXPECT_NE(err.str().find("--kafka 'garbage::::' is not a list of Kafka "
                           "bootstrap servers"),
            std::string::npos)
      << err.str();
  // A new directory is said, so a mistyped path is seen.
  err.str("");
  EXPECT_EQ(RunStats({typo, "", false, /*zero=*/true}, out, err), 0)
      << err.str();
  EXPECT_NE(
      err.str().find("--spool " + typo + ": no such directory yet; made it"),
      std::string::npos)
      << err.str();
}

// --zero moves the zero point; it deletes nothing: what was not shipped is
// still shipped afterwards, and what is shipped stays until space is needed.
TEST(DecisionsCommandTest, ZeroKeepsUnshippedRecords) {
  const std::string dir = testing::MakeTempDir();
  const std::string spool = dir + "/spool", buffer = dir + "/buffer.db";
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  Spool(spool, Outcome::kFailOpen, "optimizer_crashed");
  std::ostringstream out, err;
  ASSERT_EQ(RunStats({spool, "", false, /*zero=*/true}, out, err), 0)
      << err.str();
  EXPECT_NE(out.str().find("no decision record was deleted"),
            std::string::npos);
  out.str("");
  // --json: JSON, as everywhere else.
  ASSERT_EQ(RunStats({spool, "", true, /*zero=*/true}, out, err), 0)
      << err.str();
  const nlohmann::json zeroed = nlohmann::json::parse(out.str());
  EXPECT_EQ(zeroed["zeroed"], true);
  EXPECT_EQ(zeroed["spool"], spool);
  out.str("");
  ASSERT_EQ(RunStats({spool, "", true}, out, err), 0);
  EXPECT_NE(out.str().find("\"records\": 0"), std::string::npos) << out.str();
  EXPECT_EQ(ReadSpool(spool)->files.size(), 2u);

  // Counting starts again from the zero point.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  Spool(spool, Outcome::kDisabled, "kill_switch");
  out.str("");
  ASSERT_EQ(RunStats({spool, "", true}, out, err), 0);
  EXPECT_NE(out.str().find("\"records\": 1, \"unshipped_records\": 1"),
            std::string::npos)
      << out.str();

  out.str("");
  ASSERT_EQ(RunShip({spool, buffer}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("shipped 3 decisions"), std::string::npos)
      << out.str();
  // Shipped files are kept (for stats, within the cap), not shipped again.
  EXPECT_EQ(ReadSpool(spool, /*with_shipped=*/true)->files.size(), 3u);
  out.str("");
  ASSERT_EQ(RunShip({spool, buffer}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("shipped 0 decisions"), std::string::npos);
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

// --kafka through a fake sender (the compile path links no Kafka; the real
// producer is tested in replay_buffer/ and tests/decisions_kafka_test): a
// file is marked shipped only when every record of it was acknowledged.
ShipFlags KafkaFlags(const std::string& spool, KafkaDecisionSender sender) {
  ShipFlags flags;
  flags.spool = spool;
  flags.kafka = "kafka.example:9092";
  flags.kafka_sender = std::move(sender);
  return flags;
}

TEST(DecisionsCommandTest, KafkaShipMarksOnlyAcknowledgedFiles) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  for (int i = 0; i < 3; ++i) {
    Spool(spool, Outcome::kPassThrough, "not_compile_only");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::vector<std::string> bootstraps;
  size_t records = 0;
  // The second file's delivery fails.
  auto sender = [&](const std::string& bootstrap,
                    const std::vector<const v1::DecisionBatch*>& batches) {
    bootstraps.push_back(bootstrap);
    std::vector<absl::Status> result;
    for (const v1::DecisionBatch* batch : batches) {
      records += batch->decisions_size();
      result.push_back(result.size() == 1
                           ? absl::UnavailableError("broker down")
                           : absl::OkStatus());
    }
    return result;
  };
  std::ostringstream out, err;
  EXPECT_EQ(RunShip(KafkaFlags(spool, sender), out, err), 1);
  EXPECT_EQ(bootstraps, std::vector<std::string>{"kafka.example:9092"});
  EXPECT_EQ(records, 3u);
  EXPECT_NE(out.str().find("shipped 2 decisions from 2 spool files"),
            std::string::npos)
      << out.str();
  EXPECT_NE(err.str().find("1 of 3 spool files were not delivered"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("broker down"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("phaseloop decisions ship --spool " + spool +
                           " --kafka kafka.example:9092"),
            std::string::npos)
      << err.str();
  auto left = ReadSpool(spool);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->files.size(), 1u);
  EXPECT_NE(err.str().find(left->files[0].path), std::string::npos)
      << err.str();
  EXPECT_EQ(ReadSpool(spool, /*with_shipped=*/true)->files.size(), 3u);

  // Kafka back: the file left is shipped, and only that one.
  records = 0;
  auto all_ok = [&](const std::string&,
                    const std::vector<const v1::DecisionBatch*>& batches) {
    for (const v1::DecisionBatch* batch : batches) {
      records += batch->decisions_size();
    }
    return std::vector<absl::Status>(batches.size(), absl::OkStatus());
  };
  out.str("");
  err.str("");
  EXPECT_EQ(RunShip(KafkaFlags(spool, all_ok), out, err), 0) << err.str();
  EXPECT_EQ(records, 1u);
  EXPECT_TRUE(ReadSpool(spool)->files.empty());
}

TEST(DecisionsCommandTest, KafkaDownMarksNothing) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  Spool(spool, Outcome::kPassThrough, "not_compile_only");
  Spool(spool, Outcome::kFailOpen, "optimizer_crashed");
  auto down = [](const std::string&,
                 const std::vector<const v1::DecisionBatch*>& batches) {
    return std::vector<absl::Status>(
        batches.size(), absl::DeadlineExceededError("Message timed out"));
  };
  std::ostringstream out, err;
  EXPECT_EQ(RunShip(KafkaFlags(spool, down), out, err), 1);
  EXPECT_NE(err.str().find("2 of 2 spool files were not delivered"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("Check that Kafka answers at kafka.example:9092"),
            std::string::npos)
      << err.str();
  EXPECT_EQ(ReadSpool(spool)->files.size(), 2u);
  EXPECT_EQ(ReadSpool(spool, /*with_shipped=*/true)->files.size(), 2u);
}

TEST(DecisionsCommandTest, ShipNeedsExactlyOneDestination) {
  const std::string spool = testing::MakeTempDir() + "/spool";
  Spool(spool, Outcome::kPassThrough, "preprocess_only");
  std::ostringstream out, err;
  ShipFlags both;
  both.spool = spool;
  both.buffer = testing::MakeTempDir() + "/buffer.db";
  both.kafka = "127.0.0.1:1";
  EXPECT_EQ(RunShip(both, out, err), 2);
  EXPECT_NE(err.str().find("--buffer and --kafka both given"),
            std::string::npos)
      << err.str();
  err.str("");
  ShipFlags neither;
  neither.spool = spool;
  EXPECT_EQ(RunShip(neither, out, err), 2);
  EXPECT_NE(err.str().find("nowhere to ship; pass --kafka"), std::string::npos)
      << err.str();
  err.str("");
  // No sender linked (a test binary): said, nothing marked.
  ShipFlags no_sender;
  no_sender.spool = spool;
  no_sender.kafka = "127.0.0.1:1";
  EXPECT_EQ(RunShip(no_sender, out, err), 1);
  EXPECT_NE(err.str().find("without a Kafka sender"), std::string::npos)
      << err.str();
  EXPECT_EQ(ReadSpool(spool)->files.size(), 1u);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
