#include "replay_buffer/decision_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/testing/test_util.h"

namespace phaseloop::replay_buffer {
namespace {

v1::Decision MakeDecision(const std::string& id, v1::DecisionOutcome outcome,
                          const std::string& reason) {
  v1::Decision d;
  d.set_decision_id(id);
  d.set_outcome(outcome);
  d.set_reason(reason);
  d.set_module_hash("0123456789abcdef0123456789abcdef");
  d.add_autophase(7);
  return d;
}

TEST(DecisionStoreTest, UpsertIsIdempotentAndCounts) {
  const std::string path = testing::MakeTempDir() + "/buffer.db";
  auto store = DecisionStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<v1::Decision> batch = {
      MakeDecision("a", v1::OPTIMIZED, ""),
      MakeDecision("b", v1::PASS_THROUGH, "not_compile_only"),
      MakeDecision("c", v1::PASS_THROUGH, "not_compile_only")};
  ASSERT_TRUE((*store)->Upsert(batch).ok());
  ASSERT_TRUE((*store)->Upsert(batch).ok());  // shipped twice
  EXPECT_EQ(*(*store)->Count(), 3);
  auto counted = (*store)->CountByOutcomeAndReason();
  ASSERT_TRUE(counted.ok()) << counted.status();
  const auto& rows = *counted;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].first.first, "optimized");
  EXPECT_EQ(rows[1].first.second, "not_compile_only");
  EXPECT_EQ(rows[1].second, 2);

  // Reopening sees the same rows.
  store->reset();
  auto again = DecisionStore::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*(*again)->Count(), 3);
}

// A reader's mistyped path is an error, and creates nothing.
TEST(DecisionStoreTest, AReaderDoesNotCreateABuffer) {
  const std::string path = testing::MakeTempDir() + "/typo.db";
  OpenOptions reader;
  reader.create = false;
  reader.read_only = true;
  auto store = DecisionStore::Open(path, reader);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(path), std::string::npos)
      << store.status();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(DecisionStoreTest, UnusablePathIsAClearError) {
  auto store = DecisionStore::Open("/nonexistent-dir/x/buffer.db");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("/nonexistent-dir/x/buffer.db"),
            std::string::npos);
}

TEST(DecisionStoreTest, NotADatabaseIsRejectedAndLeftAlone) {
  const std::string path = testing::MakeTempDir() + "/notes.txt";
  FILE* f = fopen(path.c_str(), "w");
  fputs("these are my notes, not a database\n", f);
  fclose(f);
  auto store = DecisionStore::Open(path);
  EXPECT_FALSE(store.ok());
  EXPECT_EQ(testing::ReadFileOrEmpty(path),
            "these are my notes, not a database\n");
}

}  // namespace
}  // namespace phaseloop::replay_buffer
