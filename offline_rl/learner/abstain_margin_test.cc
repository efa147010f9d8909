#include "offline_rl/learner/abstain_margin.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace phaseloop::offline_rl {
namespace {

TEST(AbstainingChoiceTest, TakesTheBestOnlyWhenItBeatsOzByTheMargin) {
  const float scores[] = {1.0f, 3.0f, 2.5f};  // oz = 0
  EXPECT_EQ(AbstainingChoice(scores, 3, 0, 0.0), 1);
  EXPECT_EQ(AbstainingChoice(scores, 3, 0, 2.0), 1);   // gap 2 >= 2
  EXPECT_EQ(AbstainingChoice(scores, 3, 0, 2.01), 0);  // gap 2 < 2.01
  const float oz_best[] = {5.0f, 3.0f};
  EXPECT_EQ(AbstainingChoice(oz_best, 2, 0, 100.0), 0);
  // No -Oz candidate: plain argmax.
  EXPECT_EQ(AbstainingChoice(scores, 3, -1, 100.0), 1);
  // An excluded candidate is never taken: the best of the others is.
  EXPECT_EQ(AbstainingChoice(scores, 3, 0, 0.0, {false, true, false}), 2);
  EXPECT_EQ(AbstainingChoice(scores, 3, 0, 1.6, {false, true, false}), 0);
  EXPECT_EQ(AbstainingChoice(scores, 3, 0, 0.0, {false, true, true}), 0);
}

// Four modules, candidates {oz, a, b}. The network is sure (gap 5) on two
// modules where its pick is 3 % smaller than -Oz, and unsure (gap 1) on two
// where its pick is 4 % larger.
CandidateTable Table() {
  CandidateTable t;
  t.module_hashes = {"m0", "m1", "m2", "m3"};
  t.object_sizes = {1000, 970,  1010,  //
                    1000, 1020, 970,   //
                    1000, 1040, 990,   //
                    1000, 995,  1040};
  t.values.assign(12, 0.0f);
  t.start_states.assign(4, 0.0f);
  return t;
}
const std::vector<float> kScores = {0, 5, 1,  //
                                    0, 1, 5,  //
                                    0, 1, 0,  //
                                    0, 0, 1};

TEST(ChooseAbstainMarginTest, AbstainsWhereTheNetworkIsUnsure) {
  auto choice = ChooseAbstainMargin(Table(), 3, kScores, 0, 0.01, 0);
  ASSERT_TRUE(choice.ok()) << choice.status();
  // Margin 0 (first on the curve) takes every pick: two 4 % larger.
  const AbstainPoint& never = choice->curve.front();
  EXPECT_EQ(never.margin, 0);
  EXPECT_EQ(never.switched, 4);
  EXPECT_EQ(never.over_tolerance, 2);
  EXPECT_NEAR(never.worst_excess, 0.04, 1e-9);
  // The chosen margin keeps the sure picks only.
  const AbstainPoint& chosen = choice->chosen;
  EXPECT_GT(chosen.margin, 1);
  EXPECT_LE(chosen.margin, 5);
  EXPECT_EQ(chosen.switched, 2);
  EXPECT_EQ(chosen.over_tolerance, 0);
  EXPECT_EQ(chosen.worst_excess, 0);
  EXPECT_NEAR(chosen.size_oz_ratio, std::sqrt(1000.0 / 970.0), 1e-9);
  // The last margin abstains everywhere.
  EXPECT_EQ(choice->curve.back().switched, 0);
  EXPECT_EQ(choice->curve.back().size_oz_ratio, 1.0);
  for (size_t i = 1; i < choice->curve.size(); ++i) {
    EXPECT_GT(choice->curve[i].margin, choice->curve[i - 1].margin);
  }
}

TEST(ChooseAbstainMarginTest, AllowedOverModulesBuyGain) {
  // A fifth, unsure module whose pick is 20 % smaller: margin 0 now has the
  // best geomean, but two modules over 1 %, so it wins only when two are
  // allowed.
  CandidateTable t = Table();
  t.module_hashes.push_back("m4");
  t.object_sizes.insert(t.object_sizes.end(), {1000, 800, 1000});
  t.values.assign(15, 0.0f);
  t.start_states.assign(5, 0.0f);
  std::vector<float> scores = kScores;
  scores.insert(scores.end(), {0, 1, 0});
  auto strict = ChooseAbstainMargin(t, 3, scores, 0, 0.01, 0);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->chosen.switched, 2);
  EXPECT_EQ(strict->chosen.over_tolerance, 0);
  auto loose = ChooseAbstainMargin(t, 3, scores, 0, 0.01, 2);
  ASSERT_TRUE(loose.ok());
  EXPECT_EQ(loose->chosen.margin, 0);
  EXPECT_EQ(loose->chosen.switched, 5);
  EXPECT_EQ(loose->chosen.over_tolerance, 2);
  EXPECT_GT(loose->chosen.size_oz_ratio, strict->chosen.size_oz_ratio);
}

TEST(SingleExcludedCandidatesTest, ExcludesWhatMadeTooManyModulesLarger) {
  // Candidate a is over 1 % larger than -Oz on m1 and m2; b on m0 (1010
  // against 1000 reads a hair over 1 %, as ScoreAbstainMargin counts it)
  // and m3.
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 0, 0.01, 0),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 0, 0.01, 1),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 0, 0.01, 2),
            (std::vector<bool>{false, false, false}));
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 0, 0.05, 0),
            (std::vector<bool>{false, false, false}));
  // -1: none excluded; -Oz itself never is.
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 0, 0.01, -1),
            (std::vector<bool>{false, false, false}));
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 1, 0.0, 0)[1], false);
  // Only the counted modules (cross-fitting: the other folds'): without
  // m1 and m2, a is over on none; b still on m0 and m3.
  EXPECT_EQ(SingleExcludedCandidates(Table(), 3, 0, 0.01, 0,
                                     {true, false, false, true}),
            (std::vector<bool>{false, false, true}));
  // Unmeasured cells do not count.
  CandidateTable unmeasured = Table();
  unmeasured.object_sizes[1 * 3 + 1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(SingleExcludedCandidates(unmeasured, 3, 0, 0.01, 1),
            (std::vector<bool>{false, false, true}));
}

TEST(ChooseAbstainMarginTest, AnExcludedCandidateIsNeverThePick) {
  // With a excluded, single picks among {oz, b}: the margin that keeps
  // m1's sure b (970) and drops m3's unsure one (1040).
  const std::vector<std::vector<bool>> excluded(4, {false, true, false});
  auto choice = ChooseAbstainMargin(Table(), 3, kScores, 0, 0.01, 0, excluded);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->curve.front().switched, 3);        // m0, m1, m3 take b
  EXPECT_EQ(choice->curve.front().over_tolerance, 2);  // m0's, m3's
  EXPECT_EQ(choice->chosen.switched, 1);
  EXPECT_EQ(choice->chosen.over_tolerance, 0);
  EXPECT_GT(choice->chosen.margin, 1);
  EXPECT_NEAR(choice->chosen.size_oz_ratio, std::pow(1000.0 / 970.0, 0.25),
              1e-9);
  // Rows per module: m3 alone may not take b, so margin 0 is safe.
  std::vector<std::vector<bool>> per_module(4, {false, true, false});
  per_module[3] = {false, true, true};
  auto rows = ChooseAbstainMargin(Table(), 3, kScores, 0, 0.01, 0, per_module);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->curve.front().switched, 2);        // m0, m1 take b
  EXPECT_EQ(rows->curve.front().over_tolerance, 1);  // m0's 1010
  // Shapes: one row per module, each of num_candidates flags.
  EXPECT_EQ(ChooseAbstainMargin(Table(), 3, kScores, 0, 0.01, 0, {{true}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseAbstainMargin(Table(), 3, kScores, 0, 0.01, 0,
                                std::vector<std::vector<bool>>(4, {false}))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ChooseAbstainMarginTest, RefusesBadShapesAndMissingSizes) {
  EXPECT_EQ(
      ChooseAbstainMargin(Table(), 3, kScores, 3, 0.01, 0).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ChooseAbstainMargin(Table(), 3, {1, 2, 3}, 0, 0.01, 0).status().code(),
      absl::StatusCode::kInvalidArgument);
  CandidateTable unmeasured = Table();
  unmeasured.object_sizes.assign(12, std::numeric_limits<double>::quiet_NaN());
  auto status = ChooseAbstainMargin(unmeasured, 3, kScores, 0, 0.01, 0);
  EXPECT_EQ(status.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.status().message().find("final_text_size"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::offline_rl
