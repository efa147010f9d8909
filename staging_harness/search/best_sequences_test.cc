#include "staging_harness/search/best_sequences.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/testing/test_util.h"

namespace phaseloop::search {
namespace {

KnownBest Make(const std::string& hash, int64_t value, std::vector<int> actions,
               int64_t total_insts = 100, int64_t first = 10) {
  KnownBest k;
  k.best.set_module_hash(hash);
  k.best.set_objective("ir_count");
  k.best.set_action_space_version("llvm-16/v1");
  for (int a : actions) k.best.add_actions(a);
  k.best.set_value(value);
  k.best.set_episode_id("e-" + hash);
  k.module_name = hash + ".c";
  k.autophase.assign(56, 0);
  k.autophase[0] = first;
  k.autophase[51] = total_insts;
  return k;
}

TEST(BestSequences, WriteReadRoundTrip) {
  const std::string path = testing::MakeTempDir() + "/best.json";
  std::vector<KnownBest> known = {Make("aa", 5, {1, 2, 3}), Make("bb", 7, {})};
  known[1].autophase.clear();
  ASSERT_TRUE(WriteBestSequences(path, known).ok());
  auto read = ReadBestSequences(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].best.SerializeAsString(),
            known[0].best.SerializeAsString());
  EXPECT_EQ((*read)[0].autophase, known[0].autophase);
  EXPECT_EQ((*read)[0].module_name, "aa.c");
  EXPECT_TRUE((*read)[1].autophase.empty());
}

TEST(BestSequences, ReaderIsTolerantAndErrorsNameTheFile) {
  const std::string dir = testing::MakeTempDir();
  {
    std::ofstream out(dir + "/partial.json");
    out << R"({"sequences": [{"module_hash": "x", "objective": "ir_count",
              "actions": [4, 5], "future_field": 1},
              {"module_hash": "no-actions", "objective": "ir_count"},
              {"module_hash": "y", "objective": "ir_count", "actions": [1],
               "autophase": [1, 2]}]})";
  }
  auto read = ReadBestSequences(dir + "/partial.json");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].best.actions_size(), 2);
  EXPECT_TRUE((*read)[1].autophase.empty());  // wrong length: ignored

  {
    std::ofstream out(dir + "/bad.json");
    out << "not json";
  }
  auto bad = ReadBestSequences(dir + "/bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.json"), std::string::npos);
  EXPECT_EQ(ReadBestSequences(dir + "/missing.json").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(BestSequences, MergeKeepsTheLowerValuePerModule) {
  std::vector<KnownBest> known = {Make("aa", 5, {1, 2, 3}), Make("bb", 9, {4})};
  known[1].autophase.clear();
  std::vector<KnownBest> update = {Make("aa", 6, {1}), Make("bb", 8, {4, 5}),
                                   Make("cc", 1, {2})};
  MergeBestSequences(update, known);
  ASSERT_EQ(known.size(), 3u);
  EXPECT_EQ(known[0].best.value(), 5);  // kept: lower
  EXPECT_EQ(known[1].best.value(), 8);  // replaced: lower
  EXPECT_EQ(known[1].autophase.size(), 56u);
  EXPECT_EQ(known[2].best.module_hash(), "cc");
  // Equal value: the shorter sequence wins.
  MergeBestSequences({Make("aa", 5, {9})}, known);
  EXPECT_EQ(known[0].best.actions_size(), 1);
}

TEST(BestSequences, NearestNeighboursByNormalisedFeatures) {
  // Same mix as the query at a different size is nearest; other objectives,
  // action spaces and entries without features are never neighbours.
  std::vector<KnownBest> known = {Make("far", 1, {1}, 100, 90),
                                  Make("scaled", 1, {2}, 1000, 100),
                                  Make("near", 1, {3}, 100, 20)};
  known.push_back(Make("other-objective", 1, {4}, 100, 10));
  known.back().best.set_objective("text_size");
  known.push_back(Make("no-features", 1, {5}, 100, 10));
  known.back().autophase.clear();
  const std::vector<int64_t> query = Make("q", 0, {}, 200, 20).autophase;
  auto nearest = NearestNeighbours(query, known, "ir_count", "llvm-16/v1", 2);
  ASSERT_EQ(nearest.size(), 2u);
  EXPECT_EQ(nearest[0]->best.module_hash(), "scaled");
  EXPECT_EQ(nearest[1]->best.module_hash(), "near");
  EXPECT_TRUE(
      NearestNeighbours(query, known, "ir_count", "llvm-17/v1", 3).empty());
}

}  // namespace
}  // namespace phaseloop::search
