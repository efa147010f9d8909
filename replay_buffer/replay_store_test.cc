#include "replay_buffer/replay_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/testing/test_util.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using test_records::MakeDecision;
using test_records::MakeEpisode;
using test_records::MakeModule;
using test_records::MakeReward;

std::unique_ptr<ReplayStore> Open(const std::string& path) {
  auto store = OpenReplayStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

// Every stored record, serialized, in scan order.
std::vector<std::string> Dump(ReplayStore& store) {
  std::vector<std::string> records;
  absl::Status status = store.Scan(7, [&](const WriteBatch& b) {
    for (const auto& r : b.policy_versions) records.push_back(r.DebugString());
    for (const auto& r : b.deployments) records.push_back(r.DebugString());
    for (const auto& r : b.modules) records.push_back(r.DebugString());
    for (const auto& r : b.best_sequences) records.push_back(r.DebugString());
    for (const auto& r : b.episodes) records.push_back(r.DebugString());
    for (const auto& r : b.rewards) records.push_back(r.DebugString());
    for (const auto& r : b.decisions) records.push_back(r.DebugString());
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  return records;
}

int64_t Rows(ReplayStore& store, const std::string& table) {
  auto stats = store.Stats();
  EXPECT_TRUE(stats.ok()) << stats.status();
  for (const auto& [name, rows] : stats->table_rows) {
    if (name == table) return rows;
  }
  return -1;
}

void RunSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

WriteBatch SampleBatch() {
  WriteBatch b;
  b.modules = {MakeModule("m1", "train"), MakeModule("m2", "test")};
  b.episodes = {MakeEpisode("e1", "m1", 30, 1), MakeEpisode("e2", "m2", 5, 2)};
  b.rewards = {MakeReward("r1", "staging", "e1", 0.25)};
  b.decisions = {MakeDecision("d1", "m1", "b1")};
  v1::DeploymentRecord d;
  d.set_deployment_id("dep1");
  d.set_build_id("b1");
  b.deployments = {d};
  v1::PolicyVersionRecord p;
  p.set_policy_version("p1");
  b.policy_versions = {p};
  b.offsets = {{"g", "episodes", 0, 10}};
  return b;
}

TEST(ReplayStoreTest, WritingTwiceChangesNothing) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_TRUE(store->Write(SampleBatch()).ok());
  const std::vector<std::string> once = Dump(*store);
  ASSERT_TRUE(store->Write(SampleBatch()).ok());
  EXPECT_EQ(Dump(*store), once);
  // 2 modules, 2 episodes, their 2 best sequences, reward, decision,
  // deployment, policy version.
  EXPECT_EQ(once.size(), 10u);
  EXPECT_EQ(Rows(*store, "steps"), 35);
  auto episodes = store->ReadEpisodes({"e2", "e1", "e2"});
  ASSERT_TRUE(episodes.ok()) << episodes.status();
  ASSERT_EQ(episodes->size(), 3u);
  EXPECT_EQ((*episodes)[1].DebugString(),
            MakeEpisode("e1", "m1", 30, 1).DebugString());
  EXPECT_EQ((*episodes)[2].episode_id(), "e2");
  EXPECT_TRUE(absl::IsNotFound(store->ReadEpisodes({"nope"}).status()));
}

TEST(ReplayStoreTest, RewritingAnEpisodeReplacesItsSteps) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  WriteBatch b;
  b.episodes = {MakeEpisode("e1", "m1", 10, 1)};
  ASSERT_TRUE(store->Write(b).ok());
  ASSERT_TRUE(store->SetPriorities({{"e1", 7.0}}).ok());
  b.episodes = {MakeEpisode("e1", "m1", 4, 9)};
  ASSERT_TRUE(store->Write(b).ok());
  auto episodes = store->ReadEpisodes({"e1"});
  ASSERT_TRUE(episodes.ok());
  EXPECT_EQ((*episodes)[0].steps_size(), 4);
  EXPECT_EQ((*episodes)[0].seed(), 9u);
  EXPECT_EQ(Rows(*store, "steps"), 4);
  auto keys = store->ListEpisodes({});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ((*keys)[0].priority, 7.0);  // the learner's priority survives
  EXPECT_FALSE(store->SetPriorities({{"e1", -1}}).ok());
}

TEST(ReplayStoreTest, OffsetsCommitWithTheRowsOrNotAtAll) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  auto store = Open(path);
  ASSERT_TRUE(store->Write(SampleBatch()).ok());
  // Inject a failure after the episodes are written, before the offsets.
  RunSql(path,
         "CREATE TRIGGER boom BEFORE INSERT ON decisions "
         "WHEN NEW.decision_id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); "
         "END");
  WriteBatch b;
  b.episodes = {MakeEpisode("e9", "m1", 3, 3)};
  b.decisions = {MakeDecision("boom", "m1", "b1")};
  b.offsets = {{"g", "episodes", 0, 20}, {"g", "episodes", 1, 5}};
  EXPECT_FALSE(store->Write(b).ok());
  EXPECT_TRUE(absl::IsNotFound(store->ReadEpisodes({"e9"}).status()));
  auto offsets = store->ReadOffsets("g", "episodes");
  ASSERT_TRUE(offsets.ok());
  ASSERT_EQ(offsets->size(), 1u);
  EXPECT_EQ((*offsets)[0].next_offset, 10);

  // Without the failure both land together; offsets never move back.
  b.decisions.clear();
  ASSERT_TRUE(store->Write(b).ok());
  b.episodes.clear();
  b.offsets = {{"g", "episodes", 0, 15}, {"other", "episodes", 0, 1}};
  ASSERT_TRUE(store->Write(b).ok());
  offsets = store->ReadOffsets("g", "episodes");
  ASSERT_TRUE(offsets.ok());
  ASSERT_EQ(offsets->size(), 2u);
  EXPECT_EQ((*offsets)[0].next_offset, 20);
  EXPECT_EQ((*offsets)[1].partition, 1);
  EXPECT_EQ((*offsets)[1].next_offset, 5);
  EXPECT_TRUE(store->ReadOffsets("g", "other-topic")->empty());

  // An offset that replaces the stored one (taken on a recreated topic)
  // moves it back; the next ordinary one moves forward only again.
  b.offsets = {{"g", "episodes", 0, 3, /*replaces_stored=*/true}};
  ASSERT_TRUE(store->Write(b).ok());
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(0).next_offset, 3);
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(1).next_offset, 5);
  b.offsets = {{"g", "episodes", 0, 2}};
  ASSERT_TRUE(store->Write(b).ok());
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(0).next_offset, 3);

  // Each offset keeps the cluster it was taken on: set where none was,
  // kept by an ordinary write, replaced with the offset that replaces.
  b.offsets = {{"g", "episodes", 0, 4, false, "cluster-a"}};
  ASSERT_TRUE(store->Write(b).ok());
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(0).cluster_id, "cluster-a");
  b.offsets = {{"g", "episodes", 0, 5, false, "cluster-b"}};
  ASSERT_TRUE(store->Write(b).ok());
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(0).cluster_id, "cluster-a");
  b.offsets = {{"g", "episodes", 0, 1, true, "cluster-b"}};
  ASSERT_TRUE(store->Write(b).ok());
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(0).next_offset, 1);
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(0).cluster_id, "cluster-b");
  EXPECT_EQ(store->ReadOffsets("g", "episodes")->at(1).cluster_id, "");
}

TEST(ReplayStoreTest, MalformedBatchesAreRejectedWhole) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  WriteBatch b;
  b.episodes = {MakeEpisode("ok", "m1", 2, 1), MakeEpisode("dup", "m1", 2, 1)};
  b.episodes[1].mutable_steps(1)->set_index(0);
  absl::Status status = store->Write(b);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("'dup'"), std::string::npos) << status;
  b.episodes.pop_back();
  b.rewards = {MakeReward("r", "prod", "ok", 1)};
  status = store->Write(b);
  EXPECT_NE(status.message().find("\"canary\""), std::string::npos) << status;
  EXPECT_EQ(Rows(*store, "episodes"), 0);
}

v1::Episode Trajectory(const std::string& id, std::vector<int64_t> ir_counts,
                       std::vector<bool> failed = {}) {
  v1::Episode e;
  e.set_episode_id(id);
  e.set_module_hash("m");
  e.set_objective("ir_count");
  e.set_action_space_version("llvm-16/v1");
  for (size_t i = 0; i < ir_counts.size(); ++i) {
    v1::Step* s = e.add_steps();
    s->set_index(static_cast<int32_t>(i));
    s->set_action(static_cast<int32_t>(10 + i));
    s->set_ir_count_after(ir_counts[i]);
    s->set_failed(i < failed.size() && failed[i]);
  }
  e.set_final_ir_count(ir_counts.empty() ? 0 : ir_counts.back());
  return e;
}

TEST(ReplayStoreTest, BestSequenceIsTheBestPrefixAndOnlyImproves) {
  v1::BestSequence best;
  ASSERT_TRUE(BestSequenceOf(Trajectory("a", {190, 150, 170, 150}), &best));
  EXPECT_EQ(best.value(), 150);
  EXPECT_EQ(best.actions_size(), 2);
  // A failed (rolled back) step is not part of the sequence.
  ASSERT_TRUE(BestSequenceOf(
      Trajectory("b", {190, 100, 180}, {false, true, false}), &best));
  EXPECT_EQ(best.value(), 180);
  EXPECT_EQ(std::vector<int32_t>(best.actions().begin(), best.actions().end()),
            (std::vector<int32_t>{10, 12}));
  EXPECT_FALSE(BestSequenceOf(Trajectory("c", {}), &best));

  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  auto write = [&](v1::Episode e) {
    WriteBatch b;
    b.episodes = {std::move(e)};
    ASSERT_TRUE(store->Write(b).ok());
  };
  auto stored = [&] {
    auto sequences = store->ReadBestSequences("m");
    EXPECT_TRUE(sequences.ok());
    return sequences->empty() ? v1::BestSequence() : (*sequences)[0];
  };
  write(Trajectory("first", {190, 160, 170}));
  EXPECT_EQ(stored().episode_id(), "first");
  write(Trajectory("worse", {190, 165}));
  EXPECT_EQ(stored().episode_id(), "first");
  write(Trajectory("longer tie", {195, 190, 160}));
  EXPECT_EQ(stored().episode_id(), "first");
  write(Trajectory("shorter tie", {160}));
  EXPECT_EQ(stored().episode_id(), "shorter tie");
  write(Trajectory("better", {190, 180, 150}));
  EXPECT_EQ(stored().value(), 150);
  WriteBatch explicit_best;
  explicit_best.best_sequences = {stored()};
  explicit_best.best_sequences[0].set_value(900);
  ASSERT_TRUE(store->Write(explicit_best).ok());
  EXPECT_EQ(stored().value(), 150);
}

// The size objective is the whole object: an alloc_size episode's best
// sequence follows the allocated bytes, not .text, and the buffer's
// statistics compare it with the module's -Oz object.
TEST(ReplayStoreTest, AllocSizeEpisodesFollowTheWholeObject) {
  v1::Episode e = Trajectory("alloc", {190, 150, 170});
  e.set_objective("alloc_size");
  // .text keeps shrinking; the object (e.g. .rodata) grows after step 1.
  const int64_t text[] = {900, 850, 800};
  const int64_t alloc[] = {1300, 1200, 1250};
  for (int i = 0; i < 3; ++i) {
    e.mutable_steps(i)->set_text_size_after(text[i]);
    e.mutable_steps(i)->set_alloc_size_after(alloc[i]);
  }
  e.set_final_text_size(800);
  e.set_final_alloc_size(1250);
  v1::BestSequence best;
  ASSERT_TRUE(BestSequenceOf(e, &best));
  EXPECT_EQ(best.objective(), "alloc_size");
  EXPECT_EQ(best.value(), 1200);
  EXPECT_EQ(best.actions_size(), 2);

  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  WriteBatch b;
  b.modules = {MakeModule("m", "train")};
  b.modules[0].set_alloc_size_oz(1260);
  b.episodes = {e};
  ASSERT_TRUE(store->Write(b).ok());
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  bool found = false;
  for (const auto& row : stats->best_vs_oz) {
    if (row.objective != "alloc_size") continue;
    found = true;
    EXPECT_EQ(row.modules, 1);
    EXPECT_EQ(row.better_than_oz, 1);
    EXPECT_NEAR(row.geomean_oz_ratio, 1260.0 / 1200, 1e-12);
  }
  EXPECT_TRUE(found);
}

TEST(ReplayStoreTest, FinalRewardsJoinEpisodesByIdPolicyAndBuild) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  WriteBatch b;
  b.modules = {MakeModule("m1", "train"), MakeModule("m2", "train")};
  b.episodes = {
      MakeEpisode("by-id", "m1", 3, 1), MakeEpisode("by-policy", "m1", 3, 2),
      MakeEpisode("by-build", "m2", 3, 3), MakeEpisode("unjudged", "m2", 3, 4)};
  b.episodes[1].set_behaviour_policy("policy:p1");
  b.episodes[2].set_behaviour_policy("policy:p1");
  b.decisions = {MakeDecision("d", "m2", "build7")};  // policy p1
  b.rewards = {MakeReward("r1", "staging", "by-id", 1.0),
               MakeReward("r2", "canary", "", 2.0),
               MakeReward("r3", "canary", "", 4.0)};
  b.rewards[1].set_module_hash("m1");
  b.rewards[1].set_policy_version("p1");
  b.rewards[2].set_deployment_id("dep7");
  v1::DeploymentRecord dep;
  dep.set_deployment_id("dep7");
  dep.set_build_id("build7");
  b.deployments = {dep};
  ASSERT_TRUE(store->Write(b).ok());
  auto ids = [&](const std::string& source) {
    std::vector<std::string> out;
    auto keys = store->ListEpisodes({"", "", source});
    EXPECT_TRUE(keys.ok()) << keys.status();
    for (const EpisodeKey& k : *keys) {
      out.push_back(k.episode_id + "=" + std::to_string(k.final_reward));
    }
    return out;
  };
  EXPECT_EQ(ids("staging"), std::vector<std::string>({"by-id=1.000000"}));
  EXPECT_EQ(ids("canary"), std::vector<std::string>(
                               {"by-build=4.000000", "by-policy=2.000000"}));
  EXPECT_EQ(store->ListEpisodes({})->size(), 4u);
  EXPECT_EQ(store->ListEpisodes({"test", "", ""})->size(), 0u);
}

TEST(ReplayStoreTest, NewerSchemaIsAClearErrorAndTheFileIsUntouched) {
  const std::string path = testing::MakeTempDir() + "/future.db";
  RunSql(path,
         "PRAGMA application_id = 1346915408; PRAGMA user_version = 99; "
         "CREATE TABLE future (x)");
  const std::string before = testing::ReadFileOrEmpty(path);
  auto store = OpenReplayStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status()));
  EXPECT_NE(store.status().message().find("schema version 99"),
            std::string::npos)
      << store.status();
  EXPECT_NE(store.status().message().find(path), std::string::npos);
  EXPECT_EQ(testing::ReadFileOrEmpty(path), before);
}

TEST(ReplayStoreTest, NonBuffersAreRefusedAndLeftUntouched) {
  const std::string dir = testing::MakeTempDir();
  const std::string text = dir + "/notes.txt";
  std::ofstream(text) << "not a database, my notes\n";
  // A buffer whose header was overwritten.
  const std::string damaged = dir + "/damaged.db";
  Open(damaged)->Write(SampleBatch()).IgnoreError();
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.write("garbage garbage!", 16);
  }
  const std::string foreign = dir + "/foreign.db";
  RunSql(foreign, "CREATE TABLE customers (name TEXT)");
  for (const std::string& path : {text, damaged, foreign}) {
    const std::string before = testing::ReadFileOrEmpty(path);
    auto store = OpenReplayStore(path);
    ASSERT_FALSE(store.ok()) << path;
    EXPECT_TRUE(absl::IsDataLoss(store.status())) << store.status();
    EXPECT_NE(store.status().message().find(path), std::string::npos);
    EXPECT_NE(store.status().message().find("not a phaseloop replay buffer"),
              std::string::npos)
        << store.status();
    EXPECT_EQ(testing::ReadFileOrEmpty(path), before) << path;
  }
  OpenOptions existing;
  existing.create = false;
  auto missing = OpenReplayStore(dir + "/missing.db", existing);
  EXPECT_TRUE(absl::IsInvalidArgument(missing.status()));
  EXPECT_NE(missing.status().message().find("missing.db"), std::string::npos);
  // An empty file is not made a buffer by a command that only reads (buffer
  // stats did); one that creates buffers may still start from it.
  const std::string empty = dir + "/empty.db";
  std::ofstream(empty).flush();
  auto read = OpenReplayStore(empty, existing);
  EXPECT_TRUE(absl::IsInvalidArgument(read.status())) << read.status();
  EXPECT_NE(read.status().message().find("is an empty file"), std::string::npos)
      << read.status();
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
  EXPECT_TRUE(OpenReplayStore(empty).ok());
}

TEST(ReplayStoreTest, UnversionedDecisionFilesAreAdopted) {
  const std::string path = testing::MakeTempDir() + "/old.db";
  RunSql(path,
         "CREATE TABLE decisions (decision_id TEXT PRIMARY KEY, outcome TEXT "
         "NOT NULL, reason TEXT NOT NULL, source TEXT, object_path TEXT, "
         "opt_level TEXT, module_hash TEXT, pipeline TEXT, policy_version "
         "TEXT, build_id TEXT, compile_time_us INTEGER, optimize_time_us "
         "INTEGER, ir_count_before INTEGER, ir_count_after INTEGER, text_size "
         "INTEGER, unix_time_ms INTEGER, record BLOB NOT NULL);"
         "INSERT INTO decisions (decision_id, outcome, reason, record) "
         "VALUES ('old', 'optimized', '', x'0a036f6c64')");
  auto store = Open(path);
  ASSERT_NE(store, nullptr);
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->schema_version, 5);
  EXPECT_EQ(Rows(*store, "decisions"), 1);
  ASSERT_TRUE(store->Write(SampleBatch()).ok());
  EXPECT_EQ(Rows(*store, "decisions"), 2);
}

}  // namespace
}  // namespace phaseloop::replay_buffer
