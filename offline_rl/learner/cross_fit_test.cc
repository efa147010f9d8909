#include "offline_rl/learner/cross_fit.h"

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/policy_scores.h"
#include "offline_rl/learner/test_buffers.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl {
namespace {

class CrossFitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(testing::WriteCandidateBuffer(**store, 90, 0, 5).ok());
    ASSERT_TRUE(testing::WriteCandidatesFile(dir + "/c.json").ok());
    DatasetOptions options = testing::Llvm16DatasetOptions();
    options.candidates =
        *ReadCandidatesFile(dir + "/c.json", options.pass_names);
    config_.algorithm = "bc";
    config_.validation_split = "";
    config_.network.hidden = {32, 32};
    config_.optimizer.steps = 200;
    config_.optimizer.batch_size = 32;
    config_.optimizer.learning_rate = 3e-3;
    config_.seed = 2;
    auto data = BuildDataset(**store, config_, options);
    ASSERT_TRUE(data.ok()) << data.status();
    data_ = *std::move(data);
  }

  LearnerConfig config_;
  Dataset data_;
};

// Every module is scored by a network that did not train on it; on this
// learnable buffer those held-out picks are still right, and the same seed
// gives the same scores.
TEST(CrossFitFoldsTest, DealsTheModulesEvenlyAndReproducibly) {
  const std::vector<int> folds = CrossFitFolds(7, 10, 3);
  ASSERT_EQ(folds.size(), 10u);
  int count[3] = {0, 0, 0};
  for (int f : folds) {
    ASSERT_GE(f, 0);
    ASSERT_LT(f, 3);
    ++count[f];
  }
  EXPECT_EQ(count[0], 4);
  EXPECT_EQ(count[1], 3);
  EXPECT_EQ(count[2], 3);
  EXPECT_EQ(CrossFitFolds(7, 10, 3), folds);
  EXPECT_NE(CrossFitFolds(8, 10, 3), folds);  // another shuffle
}

TEST_F(CrossFitTest, ScoresEveryModuleOutOfFoldAndReproducibly) {
  std::vector<int> folds_done;
  auto scores = CrossFitScores(config_, data_, 3, 1,
                               [&](int f) { folds_done.push_back(f); });
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_EQ(folds_done, (std::vector<int>{0, 1, 2}));
  const int k = static_cast<int>(data_.candidates.size());
  ASSERT_EQ(scores->size(), data_.train.table.module_hashes.size() * k);
  const CandidateScore s =
      ScoreCandidateChoices(data_.train.table, k, *scores, 0);
  EXPECT_EQ(s.modules, 90);
  EXPECT_GE(s.best_choice_rate, 0.9);
  auto again = CrossFitScores(config_, data_, 3, 1, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *scores);
}

TEST_F(CrossFitTest, RefusesBadFoldCountsAndTheStepwiseFormulation) {
  for (int folds : {0, 1, 91}) {
    auto scores = CrossFitScores(config_, data_, folds, 1, nullptr);
    EXPECT_EQ(scores.status().code(), absl::StatusCode::kInvalidArgument)
        << folds;
  }
  Dataset stepwise = data_;
  stepwise.formulation = "stepwise";
  EXPECT_EQ(CrossFitScores(config_, stepwise, 3, 1, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace phaseloop::offline_rl
