#include "offline_rl/learner/canary_exploration.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace phaseloop::offline_rl {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Candidates: c0 = -O3, c1..c3. Modules: lab "a" (c1, c2 measured; c3
// never), service "s1" and "s2" (canary rows). State = one number, the
// module's index; Q rows come from `q` by that index.
class CanaryExplorationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int c = 0; c < 4; ++c) {
      data_.candidates.push_back(
          {"c" + std::to_string(c),
           {},
           c == 0 ? "default<O3>" : "p" + std::to_string(c)});
    }
    CandidateTable& t = data_.train.table;
    t.module_hashes = {"a", "s1", "s2"};
    t.start_states = {0, 1, 2};
    t.values = {0, 0.01f, 0.02f, kNaN,   // a
                0, 0.04f, kNaN,  kNaN,   // s1
                0, 0.04f, kNaN,  kNaN};  // s2
    // Canary run 1 judged c1 on both service modules.
    data_.train.canary_judged = {{"s1", {0, 1, 0, 0}}, {"s2", {0, 1, 0, 0}}};
    q_ = {{0, 1, 2, 5},   // a
          {0, 4, 1, 9},   // s1: c3 is high but never measured anywhere
          {0, 4, 3, 9}};  // s2
  }

  CanaryExploration Choose(int baseline = 0,
                           const std::set<std::string>& skip = {}) {
    return ChooseCanaryExploration(
        data_,
        [&](const std::vector<float>& states) {
          std::vector<float> out;
          for (float s : states) {
            for (int c = 0; c < 4; ++c) {
              out.push_back(q_[static_cast<int>(s)][c] - bias_[c]);
            }
          }
          return out;
        },
        baseline, 100.0, skip);
  }

  Dataset data_;
  std::vector<std::vector<float>> q_;
  std::vector<float> bias_ = {0, 0, 0, 0};
};

TEST_F(CanaryExplorationTest, TriesTheBestMeasuredCandidateNoCanaryJudged) {
  // The greedy choice would be c3 everywhere, but c3 is unmeasured: only
  // where it is not greedy does this hold, so take it out of Q.
  bias_ = {0, 0, 0, 100};
  const CanaryExploration e = Choose();
  ASSERT_TRUE(e.exploring) << e.reason;
  EXPECT_EQ(e.candidate, 2);  // c1 judged, c3 unmeasured, c0 is -O3
  EXPECT_EQ(e.modules, 2);
  // Just enough to beat c1 on s1 (4 - 1) and s2 (4 - 3), plus the margin.
  EXPECT_FLOAT_EQ(e.bias, 3.1f);
  EXPECT_NE(e.reason.find("canaries have judged every choice the policy "
                          "makes on the service's 2 modules (c1 on 2); "
                          "trying c2 (p2)"),
            std::string::npos)
      << e.reason;

  std::vector<v1::DenseLayer> layers(2);
  for (int o = 0; o < 4; ++o) layers[1].add_bias(1);
  AddOutputBias(e.candidate, e.bias, &layers);
  EXPECT_FLOAT_EQ(layers[1].bias(2), 4.1f);
  EXPECT_FLOAT_EQ(layers[1].bias(1), 1.0f);
  EXPECT_EQ(layers[0].bias_size(), 0);
}

TEST_F(CanaryExplorationTest, NoExplorationWhileTheGreedyChoiceIsNew) {
  bias_ = {0, 0, 0, 100};
  q_[2] = {0, 4, 6, 9};  // on s2 the policy already prefers c2: new
  const CanaryExploration e = Choose();
  EXPECT_FALSE(e.exploring);
  EXPECT_NE(e.reason.find("no canary judged (c2)"), std::string::npos)
      << e.reason;
}

TEST_F(CanaryExplorationTest, NoExplorationBeforeAnyCanaryOrAfterAllWereTried) {
  bias_ = {0, 0, 0, 100};
  Dataset judged = data_;
  data_.train.canary_judged.clear();
  EXPECT_FALSE(Choose().exploring);
  EXPECT_NE(Choose().reason.find("no canary has judged"), std::string::npos);

  data_ = judged;
  data_.train.canary_judged["s2"] = {0, 1, 1, 0};  // c2 judged on s2
  const CanaryExploration e = Choose();
  EXPECT_FALSE(e.exploring);
  EXPECT_NE(e.reason.find("judged every measured candidate"), std::string::npos)
      << e.reason;
}

TEST_F(CanaryExplorationTest, APipelineTriedBeforeWithoutACanaryIsSkipped) {
  bias_ = {0, 0, 0, 100};
  const CanaryExploration e = Choose(0, {"p2"});
  EXPECT_FALSE(e.exploring);  // c2 skipped, c3 unmeasured
}

TEST_F(CanaryExplorationTest, WithStableKnownOnlyABuildLikeStablesExplores) {
  bias_ = {0, 0, 0, 100};
  data_.train.stable_choice_read = true;
  // Stable is plain -O3 on s1, c1 on s2: the policy (c1 on both) rolls
  // something out that differs from stable, so nothing is explored.
  data_.train.stable_choice = {{"s1", 0}, {"s2", 1}};
  CanaryExploration e = Choose();
  EXPECT_FALSE(e.exploring);
  EXPECT_NE(e.reason.find("builds 1 of the service's 2 modules unlike stable"),
            std::string::npos)
      << e.reason;
  // Stable is what the policy would build: explore.
  data_.train.stable_choice = {{"s1", 1}, {"s2", 1}};
  e = Choose();
  ASSERT_TRUE(e.exploring) << e.reason;
  EXPECT_EQ(e.candidate, 2);
  EXPECT_NE(e.reason.find("would build the service's 2 modules exactly like "
                          "stable (c1 on 2)"),
            std::string::npos)
      << e.reason;
  // Stable's choice unknown on a module: treated as unlike.
  data_.train.stable_choice.erase("s2");
  EXPECT_FALSE(Choose().exploring);
}

TEST_F(CanaryExplorationTest, MinusO3IsNeverTheExplorationEvenWhenUntried) {
  bias_ = {0, 0, 0, 100};
  q_[1] = {3.9f, 4, 1, 9};
  q_[2] = {3.9f, 4, 1, 9};
  const CanaryExploration e = Choose(/*baseline=*/0);
  ASSERT_TRUE(e.exploring);
  EXPECT_EQ(e.candidate, 2);
}

}  // namespace
}  // namespace phaseloop::offline_rl
