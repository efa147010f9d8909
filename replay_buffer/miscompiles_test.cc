// Miscompiles and the block list they set (ReplayStore::AddMiscompile,
// IsBlocked, BlockedPipelines), and the schema migration that adds them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {
namespace {

std::unique_ptr<ReplayStore> Open(const std::string& path) {
  auto store = OpenReplayStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

v1::Miscompile MakeMiscompile(
    const std::string& run, const std::string& verdict,
    const std::vector<std::pair<std::string, std::string>>& blamed) {
  v1::Miscompile m;
  m.set_workload("bzip2");
  m.set_build_id("build-7");
  m.set_policy_version("p1");
  m.set_candidate("policy:p1");
  m.set_run(run);
  m.set_what("stdout");
  m.set_detail("line 3: expected '42', got '43'");
  m.set_verdict(verdict);
  for (const auto& [module_hash, pipeline] : blamed) {
    v1::BlamedPipeline* b = m.add_blamed();
    b->set_module_hash(module_hash);
    b->set_pipeline(pipeline);
  }
  m.set_unix_time_ms(1000);
  return m;
}

// "module|pipeline|miscompile_id" of every blocked pair.
std::vector<std::string> Blocked(ReplayStore& store,
                                 const std::string& module_hash = "") {
  auto blocked = store.BlockedPipelines(module_hash);
  EXPECT_TRUE(blocked.ok()) << blocked.status();
  std::vector<std::string> out;
  if (!blocked.ok()) return out;
  for (const BlockedPipeline& b : *blocked) {
    out.push_back(b.module_hash + "|" + b.pipeline + "|" + b.miscompile_id);
  }
  return out;
}

// A record whose text is not UTF-8 (a program's Latin-1 output in the
// detail) was stored as it was and could never be read back: every read of
// the buffer's miscompiles failed. Its invalid bytes are stored as \xNN.
TEST(MiscompilesTest, TextThatIsNotUtf8IsStoredReadably) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  v1::Miscompile m =
      MakeMiscompile("run[0]", kVerdictMiscompile, {{"m1", "function(gvn)"}});
  m.set_detail("line 1: expected 'caf\xe9', got 'caf\xe8'");
  ASSERT_TRUE(store->AddMiscompile(m).ok());
  auto stored = store->ReadMiscompiles();
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].detail(),
            "line 1: expected 'caf\\xe9', got 'caf\\xe8'");
  EXPECT_EQ(Blocked(*store).size(), 1u);
}

TEST(MiscompilesTest, AMiscompileBlocksThePairsItBlamesIdempotently) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  const v1::Miscompile m =
      MakeMiscompile("run[0]", kVerdictMiscompile,
                     {{"m1", "function(instcombine),function(gvn)"},
                      {"m2", "function(licm)"}});
  ASSERT_TRUE(store->AddMiscompile(m).ok());
  ASSERT_TRUE(store->AddMiscompile(m).ok());  // again: nothing changes
  const std::string id = "miscompile/bzip2/build-7/policy:p1/run[0]";
  EXPECT_EQ(MiscompileIdOf(m), id);
  EXPECT_EQ(Blocked(*store), (std::vector<std::string>{
                                 "m1|function(instcombine),function(gvn)|" + id,
                                 "m2|function(licm)|" + id}));
  EXPECT_EQ(Blocked(*store, "m2"),
            (std::vector<std::string>{"m2|function(licm)|" + id}));
  EXPECT_TRUE(*store->IsBlocked("m1", "function(instcombine),function(gvn)"));
  // Exact text, exact module: a prefix or another module is not blocked.
  EXPECT_FALSE(*store->IsBlocked("m1", "function(instcombine)"));
  EXPECT_FALSE(*store->IsBlocked("m2", "function(instcombine),function(gvn)"));

  auto stored = store->ReadMiscompiles();
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].miscompile_id(), id);  // filled from the key
  EXPECT_EQ((*stored)[0].detail(), m.detail());
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->miscompiles,
            (std::vector<std::pair<std::string, int64_t>>{{"miscompile", 1}}));
  EXPECT_EQ(stats->blocked_pipelines, 2);
}

TEST(MiscompilesTest, UndefinedBehaviourIsRecordedButBlocksNothing) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store
                  ->AddMiscompile(MakeMiscompile(
                      "run[0]", kVerdictUndefinedBehaviour, {{"m1", "p"}}))
                  .ok());
  EXPECT_FALSE(*store->IsBlocked("m1", "p"));
  EXPECT_EQ(store->ReadMiscompiles()->size(), 1u);
  // "unknown" (no UBSan build to tell) blocks, to be safe.
  ASSERT_TRUE(store
                  ->AddMiscompile(
                      MakeMiscompile("run[1]", kVerdictUnknown, {{"m1", "p"}}))
                  .ok());
  EXPECT_TRUE(*store->IsBlocked("m1", "p"));
}

TEST(MiscompilesTest, AVerdictRevisedToUndefinedBehaviourLiftsOnlyItsBlocks) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  v1::Miscompile first =
      MakeMiscompile("run[0]", kVerdictUnknown, {{"m1", "p"}, {"m1", "q"}});
  v1::Miscompile second =
      MakeMiscompile("run[1]", kVerdictMiscompile, {{"m1", "q"}});
  second.set_unix_time_ms(2000);
  ASSERT_TRUE(store->AddMiscompile(first).ok());
  ASSERT_TRUE(store->AddMiscompile(second).ok());
  // Both pairs carry the first miscompile (it blocked them first).
  EXPECT_EQ(Blocked(*store).size(), 2u);
  // A UBSan build shows the first was the program's own undefined behaviour.
  first.set_verdict(kVerdictUndefinedBehaviour);
  ASSERT_TRUE(store->AddMiscompile(first).ok());
  EXPECT_FALSE(*store->IsBlocked("m1", "p"));
  // q stays blocked: the second miscompile blames it too.
  EXPECT_EQ(Blocked(*store),
            (std::vector<std::string>{"m1|q|" + MiscompileIdOf(second)}));
}

TEST(MiscompilesTest, MalformedMiscompilesAreRefusedNamingTheRecord) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  v1::Miscompile bad_verdict = MakeMiscompile("run[0]", "bad", {{"m1", "p"}});
  absl::Status status = store->AddMiscompile(bad_verdict);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("verdict 'bad'"), std::string::npos)
      << status;
  v1::Miscompile empty_pair =
      MakeMiscompile("run[0]", kVerdictMiscompile, {{"m1", ""}});
  EXPECT_TRUE(absl::IsInvalidArgument(store->AddMiscompile(empty_pair)));
  v1::Miscompile no_workload =
      MakeMiscompile("run[0]", kVerdictMiscompile, {{"m1", "p"}});
  no_workload.clear_workload();
  EXPECT_TRUE(absl::IsInvalidArgument(store->AddMiscompile(no_workload)));
  EXPECT_TRUE(Blocked(*store).empty());
  EXPECT_TRUE(store->ReadMiscompiles()->empty());
}

// Staging's other causes (stage_workload.cc) are stored too: a timed-out
// candidate's pairs are blocked; a difference its build flags or BOLT made
// blames no pipeline. Version 4's CHECK refused all three, and `stage
// --buffer` stored nothing of such a result.
TEST(MiscompilesTest, StagingsOtherCausesAreStored) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store
                  ->AddMiscompile(
                      MakeMiscompile("run[0]", kVerdictTimedOut, {{"m1", "p"}}))
                  .ok());
  ASSERT_TRUE(
      store->AddMiscompile(MakeMiscompile("run[1]", kVerdictBuildFlags, {}))
          .ok());
  ASSERT_TRUE(
      store->AddMiscompile(MakeMiscompile("run[2]", kVerdictBolt, {})).ok());
  EXPECT_TRUE(*store->IsBlocked("m1", "p"));
  auto stored = store->ReadMiscompiles();
  ASSERT_TRUE(stored.ok()) << stored.status();
  std::multiset<std::string> verdicts;
  for (const v1::Miscompile& m : *stored) verdicts.insert(m.verdict());
  EXPECT_EQ(verdicts, (std::multiset<std::string>{
                          kVerdictBolt, kVerdictBuildFlags, kVerdictTimedOut}));
  // Flags and BOLT name no pipeline: a record blaming one is malformed.
  absl::Status status = store->AddMiscompile(
      MakeMiscompile("run[3]", kVerdictBuildFlags, {{"m2", "q"}}));
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_FALSE(*store->IsBlocked("m2", "q"));
}

// Version 5 made both tables again (a CHECK cannot be altered): what a
// version 4 buffer held, records and blocks, comes through whole.
TEST(MiscompilesTest, AVersionFourBufferKeepsItsMiscompilesAndBlocks) {
  const std::string path = testing::MakeTempDir() + "/v4.db";
  {
    auto store = Open(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store
                    ->AddMiscompile(MakeMiscompile("run[0]", kVerdictMiscompile,
                                                   {{"m1", "p"}, {"m2", "q"}}))
                    .ok());
    ASSERT_TRUE(store
                    ->AddMiscompile(MakeMiscompile(
                        "run[1]", kVerdictUndefinedBehaviour, {{"m3", "r"}}))
                    .ok());
  }
  const std::vector<std::string> blocked_before = [&] {
    auto store = Open(path);
    return store ? Blocked(*store) : std::vector<std::string>{};
  }();
  ASSERT_EQ(blocked_before.size(), 2u);
  // Back to version 4's tables: its CHECK, which refused 'timed_out'.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(
          db,
          "PRAGMA foreign_keys = OFF; "
          "CREATE TABLE m4 (miscompile_id TEXT PRIMARY KEY, workload TEXT NOT "
          "NULL, build_id TEXT NOT NULL, policy_version TEXT NOT NULL, "
          "candidate TEXT NOT NULL, run TEXT NOT NULL, what TEXT NOT NULL, "
          "verdict TEXT NOT NULL CHECK (verdict IN ('miscompile', "
          "'undefined_behaviour', 'unknown')), unix_time_ms INTEGER NOT NULL, "
          "record BLOB NOT NULL); INSERT INTO m4 SELECT * FROM miscompiles; "
          "DROP TABLE miscompiles; ALTER TABLE m4 RENAME TO miscompiles; "
          // A block whose miscompile was deleted by hand (foreign keys off).
          "INSERT INTO blocked_pipelines VALUES ('h9', 'p9', 'gone', 9); "
          "PRAGMA user_version = 4",
          nullptr, nullptr, nullptr),
      SQLITE_OK);
  char* error = nullptr;
  EXPECT_NE(sqlite3_exec(db,
                         "INSERT INTO miscompiles VALUES ('x', 'w', 'b', 'p', "
                         "'c', 'r', 'stdout', 'timed_out', 1, x'')",
                         nullptr, nullptr, &error),
            SQLITE_OK);
  sqlite3_free(error);
  sqlite3_close(db);
  auto store = Open(path);
  ASSERT_NE(store, nullptr);
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->schema_version, 5);
  EXPECT_EQ(Blocked(*store), blocked_before);
  EXPECT_EQ(store->ReadMiscompiles()->size(), 2u);
  ASSERT_TRUE(store
                  ->AddMiscompile(
                      MakeMiscompile("run[2]", kVerdictTimedOut, {{"m4", "s"}}))
                  .ok());
  EXPECT_TRUE(*store->IsBlocked("m4", "s"));
  // The foreign key still holds: re-storing run[0] as undefined behaviour
  // lifts its blocks, and only its.
  ASSERT_TRUE(
      store
          ->AddMiscompile(MakeMiscompile("run[0]", kVerdictUndefinedBehaviour,
                                         {{"m1", "p"}, {"m2", "q"}}))
          .ok());
  EXPECT_FALSE(*store->IsBlocked("m1", "p"));
  EXPECT_TRUE(*store->IsBlocked("m4", "s"));
}

TEST(MiscompilesTest, ScanCarriesMiscompilesSoAnImportRebuildsTheBlockList) {
  const std::string dir = testing::MakeTempDir();
  auto source = Open(dir + "/a.db");
  auto target = Open(dir + "/b.db");
  ASSERT_NE(source, nullptr);
  ASSERT_NE(target, nullptr);
  ASSERT_TRUE(source
                  ->AddMiscompile(MakeMiscompile("run[0]", kVerdictMiscompile,
                                                 {{"m1", "p"}}))
                  .ok());
  ASSERT_TRUE(
      source
          ->Scan(10,
                 [&](const WriteBatch& batch) { return target->Write(batch); })
          .ok());
  EXPECT_EQ(Blocked(*target), Blocked(*source));
  EXPECT_EQ(target->ReadMiscompiles()->size(), 1u);
}

TEST(MiscompilesTest, AVersionOneBufferIsMigrated) {
  const std::string path = testing::MakeTempDir() + "/v1.db";
  ASSERT_NE(Open(path), nullptr);
  // Take the buffer back to what schema version 1 had: migration 4's
  // column and migration 3's columns and index gone (its view is replaced
  // by a stand-in, which migration 3 replaces again), migration 2's tables
  // gone.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE consumer_offsets DROP COLUMN "
                         "cluster_id; DROP VIEW episode_rewards; DROP INDEX "
                         "final_rewards_by_window; ALTER TABLE final_rewards "
                         "DROP COLUMN relative_value; ALTER TABLE "
                         "final_rewards DROP COLUMN baseline_deployment_id; "
                         "CREATE VIEW episode_rewards AS SELECT 1; "
                         "DROP TABLE blocked_pipelines; DROP TABLE "
                         "miscompiles; PRAGMA user_version = 1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = Open(path);
  ASSERT_NE(store, nullptr);
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->schema_version, 5);
  ASSERT_TRUE(store
                  ->AddMiscompile(MakeMiscompile("run[0]", kVerdictMiscompile,
                                                 {{"m1", "p"}}))
                  .ok());
  EXPECT_TRUE(*store->IsBlocked("m1", "p"));
}

}  // namespace
}  // namespace phaseloop::replay_buffer
