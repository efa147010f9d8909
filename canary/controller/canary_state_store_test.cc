#include "canary/controller/canary_state_store.h"

#include <fstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

v1::CanaryRun MakeRun(const std::string& id, int64_t created_ms) {
  v1::CanaryRun run;
  run.set_canary_id(id);
  run.set_service("demo");
  run.set_phase("stepping");
  run.set_created_ms(created_ms);
  run.add_steps()->set_outcome("Pass");
  return run;
}

TEST(CanaryStateStoreTest, SavesLoadsAndListsNewestFirst) {
  CanaryStateStore store(testing::MakeTempDir());
  ASSERT_TRUE(store.Save(MakeRun("older", 1000)).ok());
  ASSERT_TRUE(store.Save(MakeRun("newer", 2000)).ok());
  auto loaded = store.Load("older");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->phase(), "stepping");
  ASSERT_EQ(loaded->steps_size(), 1);
  EXPECT_EQ(loaded->steps(0).outcome(), "Pass");
  auto runs = store.List();
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].canary_id(), "newer");
  EXPECT_EQ((*runs)[1].canary_id(), "older");
}

TEST(CanaryStateStoreTest, MissingRunIsNotFoundAndEmptyDirListsNothing) {
  CanaryStateStore store(testing::MakeTempDir());
  EXPECT_TRUE(absl::IsNotFound(store.Load("nothing").status()));
  auto runs = store.List();
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
}

TEST(CanaryStateStoreTest, DamagedStateIsDataLossNamingTheFile) {
  CanaryStateStore store(testing::MakeTempDir());
  ASSERT_TRUE(store.Save(MakeRun("broken", 1)).ok());
  std::ofstream(store.StatePath("broken")) << "{\"phase\": 7, ";
  auto loaded = store.Load("broken");
  ASSERT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_NE(loaded.status().message().find(store.StatePath("broken")),
            std::string::npos);
  EXPECT_FALSE(store.List().ok());
}

TEST(CanaryStateStoreTest, RefusesIdsThatAreNotDirectoryNames) {
  for (const std::string id : {"", "../x", "a/b", ".hidden", "sp ace"}) {
    EXPECT_FALSE(CheckCanaryId(id).ok()) << id;
  }
  EXPECT_TRUE(CheckCanaryId("demo-2026.11_25").ok());
  CanaryStateStore store(testing::MakeTempDir());
  EXPECT_FALSE(store.Save(MakeRun("../escape", 1)).ok());
}

}  // namespace
}  // namespace phaseloop::canary
