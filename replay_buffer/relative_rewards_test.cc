// Canary rewards relative to their baseline (FinalReward.relative_value):
// stored beside the absolute value, read back by ReadFinalRewards (what a
// canary controller reads) and ListEpisodes (what the learner reads), shown
// by Stats; and schema migration 3, which adds them to buffers written
// before it without losing a row.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <optional>

#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using test_records::MakeEpisode;
using test_records::MakeModule;
using test_records::MakeReward;

std::unique_ptr<ReplayStore> Open(const std::string& path) {
  auto store = OpenReplayStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
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

// A canary window's reward of `deployment`, judging episode `episode_id`;
// relative to "dep-base" when `relative` is given.
v1::FinalReward CanaryReward(const std::string& deployment, int64_t window,
                             double value, std::optional<double> relative,
                             const std::string& episode_id = "") {
  v1::FinalReward r = MakeReward(
      "canary/checkout/" + deployment + "/" + std::to_string(window) + "/g",
      "canary", episode_id, value);
  r.set_deployment_id(deployment);
  r.set_window_start_ms(window);
  if (relative.has_value()) {
    r.set_relative_value(*relative);
    r.set_baseline_deployment_id("dep-base");
  }
  return r;
}

std::vector<std::string> Ids(const std::vector<v1::FinalReward>& rewards) {
  std::vector<std::string> ids;
  for (const v1::FinalReward& r : rewards) ids.push_back(r.reward_id());
  return ids;
}

TEST(RelativeRewardsTest, StoredAndReadBackByDeploymentWindowAndEpisode) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  WriteBatch b;
  b.modules = {MakeModule("m1", "train")};
  b.episodes = {MakeEpisode("e1", "m1", 3, 1)};
  b.rewards = {CanaryReward("dep-can", 20000, -0.1, 0.03, "e1"),
               CanaryReward("dep-can", 10000, -0.2, -0.01, "e1"),
               CanaryReward("dep-base", 10000, -0.19, std::nullopt, "e1"),
               CanaryReward("dep-can", 30000, 0.4, std::nullopt)};
  ASSERT_TRUE(store->Write(b).ok());

  RewardFilter filter;
  filter.source = "canary";
  filter.deployment_id = "dep-can";
  filter.relative_only = true;
  auto relative = store->ReadFinalRewards(filter);
  ASSERT_TRUE(relative.ok()) << relative.status();
  // In window order, the record as written (round trip).
  ASSERT_EQ(relative->size(), 2u);
  EXPECT_EQ((*relative)[0].SerializeAsString(),
            b.rewards[1].SerializeAsString());
  EXPECT_EQ((*relative)[1].SerializeAsString(),
            b.rewards[0].SerializeAsString());
  EXPECT_DOUBLE_EQ((*relative)[1].relative_value(), 0.03);
  EXPECT_EQ((*relative)[1].baseline_deployment_id(), "dep-base");

  filter.relative_only = false;
  EXPECT_EQ(Ids(*store->ReadFinalRewards(filter)),
            (std::vector<std::string>{"canary/checkout/dep-can/10000/g",
                                      "canary/checkout/dep-can/20000/g",
                                      "canary/checkout/dep-can/30000/g"}));
  filter.window_start_from_ms = 20000;
  filter.window_start_to_ms = 30000;
  EXPECT_EQ(Ids(*store->ReadFinalRewards(filter)),
            (std::vector<std::string>{"canary/checkout/dep-can/20000/g"}));
  EXPECT_EQ(store->ReadFinalRewards({})->size(), 4u);
  filter = {};
  filter.source = "staging";
  EXPECT_TRUE(store->ReadFinalRewards(filter)->empty());

  // The learner's index: the mean relative reward of the rewards that have
  // one (the baseline's own reward has none).
  auto keys = store->ListEpisodes({"", "", "canary"});
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_NEAR((*keys)[0].final_reward, (-0.1 - 0.2 - 0.19) / 3, 1e-12);
  EXPECT_EQ((*keys)[0].relative_rewards, 2);
  EXPECT_NEAR((*keys)[0].final_relative_reward, (0.03 - 0.01) / 2, 1e-12);

  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->rewards.size(), 1u);
  EXPECT_EQ(stats->rewards[0].rewards, 4);
  EXPECT_EQ(stats->rewards[0].relative, 2);
  EXPECT_NEAR(stats->rewards[0].relative_mean, 0.01, 1e-12);
}

TEST(RelativeRewardsTest, NonFiniteRelativeValuesAreRefusedNamingTheReward) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  WriteBatch b;
  b.rewards = {CanaryReward("dep-can", 0, 0.1, std::nan(""))};
  absl::Status status = store->Write(b);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("canary/checkout/dep-can/0/g"),
            std::string::npos)
      << status;
  EXPECT_NE(status.message().find("relative_value"), std::string::npos);
  EXPECT_TRUE(store->ReadFinalRewards({})->empty());
}

// Reward ids name a window's start, not its length: an engine with another
// window length computes other windows under the same ids. The stored ones
// stay; the same window again is an idempotent replay.
TEST(RelativeRewardsTest, AWindowOfAnotherLengthDoesNotReplaceTheStoredOne) {
  auto store = Open(testing::MakeTempDir() + "/buffer.db");
  ASSERT_NE(store, nullptr);
  WriteBatch b;
  b.rewards = {CanaryReward("dep-can", 60000, 0.1, std::nullopt)};
  b.rewards[0].set_unix_time_ms(70000);  // a 10 s window
  ASSERT_TRUE(store->Write(b).ok());
  ASSERT_TRUE(store->Write(b).ok());

  WriteBatch longer;
  longer.rewards = {CanaryReward("dep-can", 60000, 0.5, std::nullopt),
                    CanaryReward("dep-can", 80000, 0.5, std::nullopt)};
  longer.rewards[0].set_unix_time_ms(80000);  // 20 s, the same id
  longer.rewards[1].set_unix_time_ms(100000);
  absl::Status status = store->Write(longer);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_NE(status.message().find("canary/checkout/dep-can/60000/g"),
            std::string::npos)
      << status;
  EXPECT_NE(status.message().find("--window-ms 10000"), std::string::npos)
      << status;
  auto stored = store->ReadFinalRewards({});
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);  // nothing of the refused batch
  EXPECT_DOUBLE_EQ((*stored)[0].value(), 0.1);

  // Staging rewards and canary runs' own ids are not windows.
  WriteBatch others;
  others.rewards = {MakeReward("canary-run/r1", "canary", "", 0.2)};
  ASSERT_TRUE(store->Write(others).ok());
  others.rewards[0].set_unix_time_ms(5);
  EXPECT_TRUE(store->Write(others).ok());
}

// What schema version 2 had in place of migration 3's changes: the
// final_rewards table without the relative columns and the episode_rewards
// view without relative_value (as migration 1 created them).
constexpr char kBackToVersion2[] = R"sql(
ALTER TABLE consumer_offsets DROP COLUMN cluster_id;
DROP VIEW episode_rewards;
DROP INDEX final_rewards_by_window;
ALTER TABLE final_rewards DROP COLUMN relative_value;
ALTER TABLE final_rewards DROP COLUMN baseline_deployment_id;
CREATE VIEW episode_rewards AS
SELECT r.episode_id AS episode_id, r.reward_id, r.source, r.value
  FROM final_rewards r WHERE r.episode_id <> ''
UNION
SELECT e.episode_id, r.reward_id, r.source, r.value
  FROM final_rewards r JOIN episodes e
    ON e.module_hash = r.module_hash
   AND e.behaviour_policy = 'policy:' || r.policy_version
 WHERE r.episode_id = '' AND r.module_hash <> '' AND r.policy_version <> ''
UNION
SELECT e.episode_id, r.reward_id, r.source, r.value
  FROM final_rewards r
  LEFT JOIN deployments dep
    ON r.build_id = '' AND dep.deployment_id = r.deployment_id
  JOIN decisions d ON d.build_id = COALESCE(NULLIF(r.build_id, ''),
                                            dep.build_id)
  JOIN episodes e ON e.module_hash = d.module_hash
   AND e.behaviour_policy = 'policy:' || d.policy_version
 WHERE r.episode_id = '' AND r.module_hash = '';
PRAGMA user_version = 2;
)sql";

TEST(RelativeRewardsTest, AVersionTwoBufferIsMigratedKeepingItsRewards) {
  const std::string path = testing::MakeTempDir() + "/v2.db";
  v1::FinalReward old_reward =
      CanaryReward("dep-can", 10000, -0.2, std::nullopt, "e1");
  {
    auto store = Open(path);
    ASSERT_NE(store, nullptr);
    WriteBatch b;
    b.modules = {MakeModule("m1", "train")};
    b.episodes = {MakeEpisode("e1", "m1", 3, 1)};
    ASSERT_TRUE(store->Write(b).ok());
  }
  RunSql(path, kBackToVersion2);
  // A row as version 2 stored it: eleven columns.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "INSERT INTO final_rewards VALUES (?1, "
                               "'canary', '', '', '', 'dep-can', 'e1', -0.2, "
                               "10000, 0, ?2)",
                               -1, &insert, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  const std::string bytes = old_reward.SerializeAsString();
  sqlite3_bind_text(insert, 1, old_reward.reward_id().c_str(), -1,
                    SQLITE_TRANSIENT);
  sqlite3_bind_blob(insert, 2, bytes.data(), static_cast<int>(bytes.size()),
                    SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(insert), SQLITE_DONE) << sqlite3_errmsg(db);
  sqlite3_finalize(insert);
  sqlite3_close(db);

  // Read-only, the old file is refused with what to do.
  OpenOptions read_only;
  read_only.read_only = true;
  auto refused = OpenReplayStore(path, read_only);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));

  auto store = Open(path);
  ASSERT_NE(store, nullptr);
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->schema_version, 5);
  // The old row is kept, without a relative value.
  auto all = store->ReadFinalRewards({});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].SerializeAsString(), bytes);
  RewardFilter relative;
  relative.relative_only = true;
  EXPECT_TRUE(store->ReadFinalRewards(relative)->empty());
  auto keys = store->ListEpisodes({"", "", "canary"});
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_DOUBLE_EQ((*keys)[0].final_reward, -0.2);
  EXPECT_EQ((*keys)[0].relative_rewards, 0);

  // New rewards carry their relative value.
  WriteBatch b;
  b.rewards = {CanaryReward("dep-can", 20000, -0.1, 0.02, "e1")};
  ASSERT_TRUE(store->Write(b).ok());
  auto stored = store->ReadFinalRewards(relative);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_DOUBLE_EQ((*stored)[0].relative_value(), 0.02);
  keys = store->ListEpisodes({"", "", "canary"});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ((*keys)[0].relative_rewards, 1);
  EXPECT_DOUBLE_EQ((*keys)[0].final_relative_reward, 0.02);
}

}  // namespace
}  // namespace phaseloop::replay_buffer
